// SPDX-License-Identifier: Apache-2.0
/// @file
/// Layout objects <-> `LayoutDescriptor`: reading the parameters of a
/// `hurray.Layout` subclass into the core's model (for `hurray.Tensor(...,
/// layout=)` and `_check_layout`), and building the layout object of a
/// descriptor (`Tensor.layout`). Every rule a layout's parameters must follow
/// is the core's: `_check_layout` runs `required_buffer_sizes` and
/// `check_descriptor` on a small descriptor whose shape fits the layout.

#include "layout.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/text.hpp"

namespace hurray::python {

namespace {

// The package's `hurray.Layout` base class, registered at import; a strong
// reference owned for the life of the process on purpose (see errors.cpp).
PyObject* g_layout_class = nullptr;

// Nested tiled levels followed before giving up (the core accepts 8).
constexpr size_t kMaxTiledChain = 64;


LayoutTag tile_order(const py::handle& name) {
    const auto text = name.cast<std::string>();
    if (text == "row_major") {
        return LayoutTag::kRowMajor;
    }
    if (text == "col_major") {
        return LayoutTag::kColumnMajor;
    }
    if (text == "strided") {
        return LayoutTag::kStrided;
    }
    if (text == "tiled") {
        return LayoutTag::kTiled;
    }
    throw py::value_error("tile order '" + text + "' is not 'row_major', 'col_major', 'strided' or 'tiled'");
}

const char* tile_order_name(LayoutTag tag) noexcept {
    switch (tag) {
        case LayoutTag::kRowMajor: return "row_major";
        case LayoutTag::kColumnMajor: return "col_major";
        case LayoutTag::kStrided: return "strided";
        case LayoutTag::kTiled: return "tiled";
        default: return "extension";
    }
}

std::vector<int64_t> optional_strides(const py::handle& value) {
    return value.is_none() ? std::vector<int64_t>{} : value.cast<std::vector<int64_t>>();
}

py::object strides_or_none(const std::vector<int64_t>& strides) {
    return strides.empty() ? py::object(py::none()) : py::object(py::tuple(py::cast(strides)));
}

TiledLayout tiled_from_python(const py::handle& layout) {
    TiledLayout tiled;
    auto level = py::reinterpret_borrow<py::object>(layout);
    while (!level.is_none()) {
        if (tiled.levels.size() == kMaxTiledChain) {
            throw py::value_error("TiledLayout: more than " + std::to_string(kMaxTiledChain) + " nested levels");
        }
        const py::dict p = level.attr("_params");
        TiledLevel lv;
        lv.tile_shape = p["tile_shape"].cast<std::vector<uint64_t>>();
        lv.outer_layout = tile_order(p["outer_layout"]);
        lv.inner_layout = tile_order(p["inner_layout"]);
        lv.outer_strides = optional_strides(p["outer_strides"]);
        lv.inner_strides = optional_strides(p["inner_strides"]);
        tiled.levels.push_back(std::move(lv));
        level = p["inner_tiled"];
    }
    return tiled;
}

BlockPagedLayout block_paged_from_python(const py::dict& p) {
    BlockPagedLayout b;
    b.page_size = p["page_size"].cast<uint32_t>();
    b.num_pages = p["num_pages"].cast<uint64_t>();
    b.paged_axis = p["paged_axis"].cast<uint32_t>();
    b.num_seqs = p["num_seqs"].cast<uint32_t>();
    const auto role = p["kv_role"].cast<std::string>();
    if (role == "key") {
        b.kv_role = KvRole::kKey;
    } else if (role == "value") {
        b.kv_role = KvRole::kValue;
    } else if (role == "fused") {
        b.kv_role = KvRole::kFused;
    } else {
        throw py::value_error("kv_role '" + role + "' is not 'key', 'value' or 'fused'");
    }
    b.layer_index = p["layer_index"].is_none() ? kNoLayerIndex : p["layer_index"].cast<uint32_t>();
    const auto index = p["block_table_index_type"].cast<std::string>();
    if (index == "uint32") {
        b.index_type = BlockTableIndexType::kUInt32;
    } else if (index == "uint64") {
        b.index_type = BlockTableIndexType::kUInt64;
    } else {
        throw py::value_error("block_table_index_type '" + index + "' is not 'uint32' or 'uint64'");
    }
    return b;
}

CompositeLayout composite_from_python(const py::dict& p) {
    CompositeLayout c;
    const py::object rule = p["composition_rule"];
    if (py::isinstance<py::int_>(rule)) {
        c.rule = static_cast<CompositionRule>(rule.cast<uint8_t>());  // a private rule read permissively
    } else {
        const auto text = rule.cast<std::string>();
        if (text == "partition") {
            c.rule = CompositionRule::kPartition;
        } else if (text == "overlay") {
            c.rule = CompositionRule::kOverlay;
        } else if (text == "group") {
            c.rule = CompositionRule::kGroup;
        } else {
            throw py::value_error("composition_rule '" + text + "' is not 'partition', 'overlay' or 'group'");
        }
    }
    const py::object op = p["combine_op"];
    if (op.is_none()) {
        c.combine_op = CombineOp::kNone;
    } else if (op.cast<std::string>() == "replace") {
        c.combine_op = CombineOp::kReplace;
    } else if (op.cast<std::string>() == "add") {
        c.combine_op = CombineOp::kAdd;
    } else {
        throw py::value_error("combine_op '" + op.cast<std::string>() + "' is not 'replace' or 'add'");
    }
    c.member_count = p["member_count"].cast<uint32_t>();
    return c;
}

std::vector<uint8_t> bytes_of(const py::handle& value) {
    const auto text = value.cast<py::bytes>().cast<std::string>();
    return {text.begin(), text.end()};
}

/// A shape the layout's own rules can be checked against: the rank its
/// parameters imply, dimensions that satisfy the shape rules.
Shape probe_shape(const LayoutDescriptor& layout) {
    // (count, dimension): a shape of `count` equal dimensions (parentheses, not
    // braces: a braced list would be the shape {count, dimension}).
    size_t rank = 1;
    uint64_t dim = 1;
    if (const auto* t = std::get_if<TiledLayout>(&layout)) {
        if (!t->levels.empty()) {
            const auto& tile = t->levels.front().tile_shape;
            return {std::span<const uint64_t>(tile.data(), std::min<size_t>(tile.size(), kMaxRank + 1))};
        }
    } else if (const auto* m = std::get_if<MortonLayout>(&layout)) {
        rank = m->morton_bits.size();
    } else if (const auto* h = std::get_if<HilbertLayout>(&layout)) {
        rank = h->hilbert_rank;
        dim = h->hilbert_order < 63 ? uint64_t{1} << h->hilbert_order : 1;
    } else if (const auto* f = std::get_if<CsfLayout>(&layout)) {
        rank = f->mode_order.size();
    } else if (const auto* s = std::get_if<StridedLayout>(&layout)) {
        rank = s->strides.size();
    } else if (std::holds_alternative<CsrLayout>(layout) || std::holds_alternative<CscLayout>(layout)) {
        rank = 2;
    } else if (std::holds_alternative<BlockPagedLayout>(layout)) {
        rank = 3;
    }
    Shape shape(std::min<size_t>(rank, kMaxRank + 1), dim);
    return shape;
}

/// The core's checks of a layout on a descriptor of `probe_shape`: the
/// buffer requirements (permissive field checks), then every descriptor rule
/// with private extensions accepted (as a writer does).
Status probe(const LayoutDescriptor& layout) {
    TensorDescriptor d;
    d.element_type = ElementType::kUInt8;
    d.shape = probe_shape(layout);
    d.layout = layout;
    auto req = required_buffer_sizes(d);
    if (!req) {
        return req.error();
    }
    for (const BufferRequirement& r : *req) {
        BufferHandle h;
        h.byte_size = r.min_size.value_or(0);
        d.buffers.push_back(h);
    }
    DecodeOptions options;
    options.accept_private_extensions = true;
    return check_descriptor(d, options);
}

/// `_check_layout(layout)`: raises what the core says about the layout's
/// parameters (InvalidDescriptorError); None when they are valid.
void check_layout(const py::handle& obj) {
    const LayoutDescriptor layout = layout_from_python(obj);
    if (const auto* e = std::get_if<ExtensionLayout>(&layout)) {
        if (e->tag == 0x00 || e->tag == 0xFF) {
            raise_kind(PythonError::kInvalidDescriptor, "layout tag " + hurray::hex(e->tag) + " is invalid");
        }
        const py::dict p = obj.attr("_params");
        if (is_unknown_layout(layout) && !p.contains("extension_layout_id")) {
            return;  // an UnknownLayout: the core has no rules for a tag it does not know
        }
    }
    std::optional<Status> st;
    {
        const py::gil_scoped_release release;
        st.emplace(probe(layout));
    }
    if (!*st) {
        raise_error(st->error(), PythonSite::kTensor, type_name_of(obj));
    }
}

const char* kv_role_name(KvRole role) noexcept {
    switch (role) {
        case KvRole::kKey: return "key";
        case KvRole::kValue: return "value";
        case KvRole::kFused: return "fused";
    }
    return "unknown";
}

const char* index_type_name(BlockTableIndexType type) noexcept {
    switch (type) {
        case BlockTableIndexType::kUInt32: return "uint32";
        case BlockTableIndexType::kUInt64: return "uint64";
    }
    return "unknown";
}

py::object rule_name(CompositionRule rule) {
    switch (rule) {
        case CompositionRule::kPartition: return py::str("partition");
        case CompositionRule::kOverlay: return py::str("overlay");
        case CompositionRule::kGroup: return py::str("group");
    }
    return py::str("unknown");
}

py::object combine_name(const CompositeLayout& c) {
    if (c.rule != CompositionRule::kOverlay) {
        return py::none();
    }
    switch (c.combine_op) {
        case CombineOp::kReplace: return py::str("replace");
        case CombineOp::kAdd: return py::str("add");
        case CombineOp::kNone: break;
    }
    return py::str("unknown");
}

py::dict params_of(const LayoutDescriptor& layout) {
    py::dict p;
    std::visit(
        [&p](const auto& l) {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, StridedLayout>) {
                p["strides"] = py::tuple(py::cast(l.strides));
            } else if constexpr (std::is_same_v<L, TiledLayout>) {
                py::list levels;
                for (const TiledLevel& lv : l.levels) {
                    py::dict level;
                    level["tile_shape"] = py::tuple(py::cast(lv.tile_shape));
                    level["outer_layout"] = tile_order_name(lv.outer_layout);
                    level["inner_layout"] = tile_order_name(lv.inner_layout);
                    level["outer_strides"] = strides_or_none(lv.outer_strides);
                    level["inner_strides"] = strides_or_none(lv.inner_strides);
                    levels.append(level);
                }
                p["levels"] = levels;
            } else if constexpr (std::is_same_v<L, MortonLayout>) {
                p["morton_bits"] = py::tuple(py::cast(l.morton_bits));
            } else if constexpr (std::is_same_v<L, HilbertLayout>) {
                p["hilbert_order"] = l.hilbert_order;
                p["hilbert_rank"] = l.hilbert_rank;
            } else if constexpr (std::is_same_v<L, CooLayout>) {
                p["nnz"] = l.nnz;
                p["is_sorted"] = l.is_sorted;
            } else if constexpr (std::is_same_v<L, CsrLayout> || std::is_same_v<L, CscLayout>) {
                p["nnz"] = l.nnz;
            } else if constexpr (std::is_same_v<L, CsfLayout>) {
                p["nnz"] = l.nnz;
                p["mode_order"] = py::tuple(py::cast(l.mode_order));
            } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
                p["page_size"] = l.page_size;
                p["num_pages"] = l.num_pages;
                p["paged_axis"] = l.paged_axis;
                p["num_seqs"] = l.num_seqs;
                p["kv_role"] = kv_role_name(l.kv_role);
                p["layer_index"] = l.layer_index == kNoLayerIndex ? py::object(py::none()) : py::int_(l.layer_index);
                p["block_table_index_type"] = index_type_name(l.index_type);
            } else if constexpr (std::is_same_v<L, CompositeLayout>) {
                p["composition_rule"] = rule_name(l.rule);
                p["member_count"] = l.member_count;
                p["combine_op"] = combine_name(l);
            } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
                // SAFETY: py::bytes copies exactly l.data.size() bytes from the
                // vector's storage, which outlives the call.
                const py::bytes data(reinterpret_cast<const char*>(l.data.data()), l.data.size());
                if (l.tag >= 0xF0 && l.tag <= 0xFE) {
                    p["extension_layout_id"] = l.layout_id;
                    p["extension_data"] = data;
                } else {
                    p["raw_bytes"] = data;
                }
            }
        },
        layout);
    return p;
}

}  // namespace

LayoutDescriptor layout_from_python(const py::handle& layout) {
    if (g_layout_class == nullptr) {
        throw py::type_error("hurray: layout classes are not registered (import the hurray package)");
    }
    const int is_layout = PyObject_IsInstance(layout.ptr(), g_layout_class);
    if (is_layout < 0) {
        throw py::error_already_set();
    }
    if (is_layout == 0) {
        throw py::type_error("layout must be a hurray.Layout instance (hurray.CsrLayout(nnz=4), ...), not " +
                             type_name_of(layout));
    }
    const auto tag = layout.attr("tag").cast<unsigned>();
    const py::dict p = layout.attr("_params");
    // Private and unknown layouts first: their tag alone says nothing about
    // their parameters (a private layout on tag 0x01 is invalid, not row-major).
    if (p.contains("extension_layout_id") && tag <= 0xFF) {
        return ExtensionLayout{static_cast<uint8_t>(tag), p["extension_layout_id"].cast<uint64_t>(),
                               bytes_of(p["extension_data"])};
    }
    if (p.contains("raw_bytes") && tag <= 0xFF) {
        return ExtensionLayout{static_cast<uint8_t>(tag), 0, bytes_of(p["raw_bytes"])};
    }
    switch (tag) {
        case 0x01: return RowMajorLayout{};
        case 0x02: return ColumnMajorLayout{};
        case 0x03: return StridedLayout{p["strides"].cast<std::vector<int64_t>>()};
        case 0x04: return tiled_from_python(layout);
        case 0x05: return MortonLayout{p["morton_bits"].cast<std::vector<uint32_t>>()};
        case 0x06: return CooLayout{p["nnz"].cast<uint64_t>(), p["is_sorted"].cast<bool>()};
        case 0x07: return CsrLayout{p["nnz"].cast<uint64_t>()};
        case 0x08: return CscLayout{p["nnz"].cast<uint64_t>()};
        case 0x09: return CsfLayout{p["nnz"].cast<uint64_t>(), p["mode_order"].cast<std::vector<uint32_t>>()};
        case 0x0A: return block_paged_from_python(p);
        case 0x0B: return composite_from_python(p);
        case 0x40: return HilbertLayout{p["hilbert_order"].cast<uint32_t>(), p["hilbert_rank"].cast<uint32_t>()};
        default: break;
    }
    raise_kind(PythonError::kUnsupported, "layout tag " + hurray::hex(tag & 0xFFU) + " (" +
                                            py::str(layout.attr("name")).cast<std::string>() +
                                            ") has no parameters this module can write");
}

bool is_unknown_layout(const LayoutDescriptor& layout) noexcept {
    const auto* e = std::get_if<ExtensionLayout>(&layout);
    return e != nullptr && (e->tag < 0xF0 || e->tag > 0xFE);
}

std::string_view python_layout_name(const LayoutDescriptor& layout) noexcept {
    if (std::holds_alternative<ColumnMajorLayout>(layout)) {
        return "col_major";
    }
    if (std::holds_alternative<ExtensionLayout>(layout)) {
        return "extension";
    }
    const std::string_view name = layout_name(layout_tag(layout));
    return name.empty() ? std::string_view("extension") : name;
}

std::string_view buffer_role(const LayoutDescriptor& layout, size_t index) noexcept {
    if (index == 0) {
        if (std::holds_alternative<BlockPagedLayout>(layout)) {
            return "page_pool";
        }
        return layout_kind(layout) == LayoutKind::kSparse ? "values" : "data";
    }
    if (std::holds_alternative<CooLayout>(layout)) {
        return index == 1 ? "indices" : "data";
    }
    if (std::holds_alternative<CsrLayout>(layout)) {
        return index == 1 ? "col_indices" : index == 2 ? "row_ptr" : "data";
    }
    if (std::holds_alternative<CscLayout>(layout)) {
        return index == 1 ? "row_indices" : index == 2 ? "col_ptr" : "data";
    }
    if (const auto* f = std::get_if<CsfLayout>(&layout)) {
        if (index <= 2 * f->mode_order.size()) {
            return index % 2 == 1 ? "pos" : "crd";
        }
        return "data";
    }
    if (std::holds_alternative<BlockPagedLayout>(layout)) {
        return index == 1 ? "block_table" : index == 2 ? "seq_ptr" : "data";
    }
    return "data";
}

py::object layout_to_python(const TensorDescriptor& d, const py::handle& make_layout) {
    const uint8_t tag = d.layout_tag();
    return make_layout(tag, std::string(python_layout_name(d.layout)), layout_buffer_count(d.layout, d.rank()),
                       params_of(d.layout));
}

void add_layout_support(py::module_& m) {
    m.def(
        "_set_layout_class", [](const py::object& cls) { replace_kept_object(g_layout_class, cls); }, py::arg("cls"),
        "Registers hurray.Layout, the base every layout= argument must derive from (called by the package)");
    m.def("_check_layout", &check_layout, py::arg("layout"),
          "Checks a layout's own parameters with libhurray's rules (InvalidDescriptorError); used by the "
          "layout classes' constructors");
}

}  // namespace hurray::python
