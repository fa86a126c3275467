// `hurray info FILE [NAME...] [--json]`: header, flags, alignment, sections, KV metadata
// (typed), tensor and composite counts, sizes. Given a stream, its counts and sizes. Given
// a SafeTensors, GGUF, .npy or .npz file (read through hurray::convert): its format, size,
// counts, sizes and metadata (GGUF keys with their GGUF types, .npz member names). Each
// NAME: that tensor's element type, shape, layout, quantization and buffer sizes.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/input.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/json_out.hpp"
#include "hurray/listing.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/gguf.hpp"
#endif

namespace hurray::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct InfoOptions {
    std::string path;
    std::vector<std::string> names;
    bool json = false;
    RemoteOptions remote;
};

std::vector<std::string> flag_names(uint32_t flags) {
    std::vector<std::string> names;
    if ((flags & file_flags::kHasKvMetadata) != 0) {
        names.emplace_back("HAS_KV_METADATA");
    }
    if ((flags & file_flags::kSortedIndex) != 0) {
        names.emplace_back("SORTED_INDEX");
    }
    if ((flags & file_flags::kHasIndexCrc32c) != 0) {
        names.emplace_back("HAS_INDEX_CRC32C");
    }
    return names;
}

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

struct Totals {
    uint64_t tensors = 0;
    uint64_t composite_heads = 0;
    uint64_t quantized = 0;
    uint64_t data_bytes = 0;
    uint64_t descriptor_bytes = 0;
};

Totals totals_of(const std::vector<ListedTensor>& tensors) {
    Totals t;
    for (const auto& l : tensors) {
        ++t.tensors;
        if (l.descriptor.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            ++t.composite_heads;
        }
        if (l.descriptor.quantization) {
            ++t.quantized;
        }
        const uint64_t b = data_bytes(l.descriptor);
        t.data_bytes = __builtin_add_overflow(t.data_bytes, b, &t.data_bytes) ? UINT64_MAX : t.data_bytes;
        t.descriptor_bytes += l.where.descriptor_length;
    }
    return t;
}

void add_totals(ojson& j, const Totals& t, bool with_descriptors = true) {
    j["tensor_count"] = t.tensors;
    j["composite_count"] = t.composite_heads;
    j["quantized_count"] = t.quantized;
    j["data_bytes"] = t.data_bytes;
    if (with_descriptors) {
        j["descriptor_bytes"] = t.descriptor_bytes;
    }
}

/// The tensors named on the command line, in that order; fails naming the first one the
/// input does not have.
Result<std::vector<const ListedTensor*>> select_named(const std::vector<ListedTensor>& all,
                                                      const std::vector<std::string>& names) {
    std::vector<const ListedTensor*> out;
    for (const auto& n : names) {
        auto it = std::find_if(all.begin(), all.end(), [&](const ListedTensor& t) { return t.name == n; });
        if (it == all.end()) {
            return Error(ErrorCode::kNotFound, "no tensor named \"" + printable(n) + "\" (hurray ls lists them)");
        }
        out.push_back(&*it);
    }
    return out;
}

/// The quantization line of a tensor: the scheme's name, and for libhurray's private GGML
/// blocks scheme, their GGML type.
std::string quantization_line(const TensorDescriptor& d) {
    std::string q = quantization_text(d);
    if (auto type = ggml_blocks_type(d)) {
        auto info = ggml_type_info(*type);
        q += " (GGML blocks: " + (info ? std::string(info->name) : "type " + std::to_string(*type));
        if (info) {
            q += ", " + std::to_string(info->elements) + " values in " + std::to_string(info->bytes) + " bytes";
        }
        q += ")";
    }
    return q;
}

/// One named tensor, in the table form.
void print_tensor(const ListedTensor& t, std::ostream& out) {
    const TensorDescriptor& d = t.descriptor;
    std::string sizes;
    for (const auto& b : d.buffers) {
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(b.byte_size);
    }
    out << "  tensor \"" << printable(t.name) << "\":\n"
        << "    element type:          " << element_type_text(d) << '\n'
        << "    shape:                 " << shape_text(d.shape) << '\n'
        << "    layout:                " << layout_text(d) << '\n'
        << "    quantization:          " << quantization_line(d) << '\n'
        << "    buffers:               " << d.buffers.size() << " (" << (sizes.empty() ? "none" : sizes + " bytes")
        << ")\n"
        << "    data:                  " << bytes_text(data_bytes(d)) << " (" << data_bytes(d) << " bytes)\n";
}

/// One named tensor in JSON: ls --json's form (with placement where the input has it).
ojson named_tensor_json(const ListedTensor& t, bool with_placement) {
    ojson one;
    if (with_placement) {
        one = tensor_json(t.name, t.descriptor, t.where);
    } else {
        one["name"] = t.name;
        one["descriptor"] = descriptor_json(t.descriptor);
    }
    if (auto type = ggml_blocks_type(t.descriptor)) {
        auto info = ggml_type_info(*type);
        one["ggml_type"] = info ? ojson(std::string(info->name)) : ojson(*type);
    }
    return one;
}

/// Whether the input has every named tensor; prints the error for the first it lacks.
bool names_found(const InfoOptions& o, const std::vector<ListedTensor>& all, const Console& console) {
    auto named = select_named(all, o.names);
    if (!named) {
        console.err << "hurray info: " << (o.path == "-" ? std::string("<stdin>") : o.path) << ": "
                    << named.error().message() << '\n';
    }
    return named.ok();
}

/// Prints the named tensors (checked by names_found), or with `j`, adds them to it as
/// `tensors`.
void add_named(const InfoOptions& o, const std::vector<ListedTensor>& all, bool with_placement, ojson* j,
               const Console& console) {
    auto named = select_named(all, o.names);
    if (!named || o.names.empty()) {
        return;
    }
    if (j == nullptr) {
        for (const ListedTensor* t : *named) {
            print_tensor(*t, console.out);
        }
        return;
    }
    ojson list = ojson::array();
    for (const ListedTensor* t : *named) {
        list.push_back(named_tensor_json(*t, with_placement));
    }
    (*j)["tensors"] = std::move(list);
}

int info_file(const InfoOptions& o, Input& input, const Console& console) {
    auto listed = open_and_list_file(input);
    if (!listed) {
        console.err << "hurray info: " << listed.error().message() << '\n';
        return kExitInvalid;
    }
    const FileReader& file = listed->file;
    const FileHeader& h = file.header();
    const FileTrailer& tr = file.trailer();
    if (!names_found(o, listed->tensors, console)) {
        return kExitInvalid;
    }
    const Totals t = totals_of(listed->tensors);
    if (o.json) {
        ojson j;
        j["kind"] = "file";
        j["container_version"] = {h.version_major, h.version_minor};
        j["flags"] = h.flags;
        j["flag_names"] = flag_names(h.flags);
        j["data_buffer_alignment"] = h.data_buffer_alignment;
        j["first_descriptor_offset"] = h.first_descriptor_offset;
        j["tensor_count_hint"] = h.tensor_count_hint == kUnknownTensorCount ? ojson(nullptr) : ojson(h.tensor_count_hint);
        j["file_size"] = file.file_size();
        j["index"] = {{"offset", tr.index_offset}, {"length", tr.index_length}, {"crc32c", tr.index_crc32c}};
        j["kv_section"] = {{"offset", tr.kv_offset}, {"length", tr.kv_length}};
        const auto table = file.descriptor_table_bytes();
        j["descriptor_table_bytes"] = table ? ojson(*table) : ojson(nullptr);
        add_totals(j, t);
        j["kv"] = kv_json(file.kv());
        add_named(o, listed->tensors, true, &j, console);
        console.out << j.dump(2, ' ', false, ojson::error_handler_t::replace) << '\n';
        return kExitOk;
    }

    std::ostream& out = console.out;
    out << input.display_name() << ": HRRYFILE container version " << int{h.version_major} << '.'
        << int{h.version_minor} << ", " << bytes_text(file.file_size()) << " (" << file.file_size() << " bytes)\n";
    std::string names;
    for (const auto& n : flag_names(h.flags)) {
        names += (names.empty() ? "" : ", ") + n;
    }
    out << "  flags:                   " << hex32(h.flags) << (names.empty() ? "" : " (" + names + ")") << '\n';
    out << "  data buffer alignment:   " << h.data_buffer_alignment << '\n';
    out << "  first descriptor offset: " << h.first_descriptor_offset << '\n';
    out << "  tensor count hint:       "
        << (h.tensor_count_hint == kUnknownTensorCount ? std::string("unknown") : std::to_string(h.tensor_count_hint))
        << '\n';
    out << "  index:                   offset " << tr.index_offset << ", " << tr.index_length << " bytes, crc32c "
        << hex32(tr.index_crc32c) << '\n';
    out << "  kv section:              offset " << tr.kv_offset << ", " << tr.kv_length << " bytes\n";
    out << "  tensors:                 " << t.tensors << " (" << t.composite_heads << " composite heads, "
        << t.quantized << " quantized)\n";
    out << "  data:                    " << bytes_text(t.data_bytes) << " (" << t.data_bytes << " bytes)\n";
    out << "  descriptors:             " << t.descriptor_bytes << " bytes\n";
    if (const auto table = file.descriptor_table_bytes()) {
        out << "  descriptor table:        " << *table << " bytes in the kv section (listed from it)\n";
    }
    out << "  kv metadata:             " << file.kv().size() << (file.kv().size() == 1 ? " entry" : " entries")
        << '\n';
    for (const auto& e : file.kv().entries()) {
        out << "    " << printable(e.key) << " (" << kv_type_name(e.value.tag()) << ") = " << kv_value_text(e.value)
            << '\n';
    }
    add_named(o, listed->tensors, true, nullptr, console);
    return kExitOk;
}

int info_stream(const InfoOptions& o, Input& input, const Console& console) {
    auto listing = list_stream(input.source(), input.stream_options());
    if (!listing) {
        console.err << "hurray info: " << error_text(input.display_name() + " (stream)", listing.error()) << '\n';
        return kExitInvalid;
    }
    if (!names_found(o, listing->tensors, console)) {
        return kExitInvalid;
    }
    const Totals t = totals_of(listing->tensors);
    if (o.json) {
        ojson j;
        j["kind"] = "stream";
        j["stream_bytes"] = listing->total_bytes;
        add_totals(j, t);
        add_named(o, listing->tensors, true, &j, console);
        console.out << j.dump(2) << '\n';
        return kExitOk;
    }

    console.out << input.display_name() << ": stream, " << bytes_text(listing->total_bytes) << " ("
                << listing->total_bytes << " bytes)\n"
                << "  tensors:     " << t.tensors << " (" << t.composite_heads << " composite heads, " << t.quantized
                << " quantized)\n"
                << "  data:        " << bytes_text(t.data_bytes) << " (" << t.data_bytes << " bytes)\n"
                << "  descriptors: " << t.descriptor_bytes << " bytes\n";
    add_named(o, listing->tensors, true, nullptr, console);
    return kExitOk;
}

#ifdef HURRAY_CLI_HAS_CONVERT
/// How the table form names a format read through hurray::convert.
std::string format_title(convert::Format f) {
    switch (f) {
        case convert::Format::kSafeTensors: return "SafeTensors file";
        case convert::Format::kGguf: return "GGUF file";
        case convert::Format::kNpy: return "NumPy .npy file";
        case convert::Format::kNpz: return "NumPy .npz archive";
        default: return std::string(convert::format_name(f)) + " file";
    }
}

/// The GGUF type of each key, from the `gguf.kv_types` entry the GGUF reader records
/// ("<gguf type>:<key>" strings); empty for other formats.
std::vector<std::pair<std::string, std::string>> gguf_types(const KvMetadata& kv) {
    std::vector<std::pair<std::string, std::string>> out;  // key, type
    const KvValue* v = kv.find(convert::kGgufKvTypesKey);
    const KvArray* a = v != nullptr ? v->as_array() : nullptr;
    const auto* items = a != nullptr ? std::get_if<std::vector<std::string>>(&a->values) : nullptr;
    if (items == nullptr) {
        return out;
    }
    for (const auto& item : *items) {
        const size_t colon = item.find(':');
        if (colon != std::string::npos) {
            out.emplace_back(item.substr(colon + 1), item.substr(0, colon));
        }
    }
    return out;
}

std::string gguf_type_of(const std::vector<std::pair<std::string, std::string>>& types, const std::string& key) {
    for (const auto& [k, t] : types) {
        if (k == key) {
            return t;
        }
    }
    return {};
}

/// `info` of a SafeTensors, GGUF, .npy or .npz file: what info prints for an HRRYFILE where
/// it applies (format, size, counts, sizes, typed KV), the GGUF type of each GGUF key, the
/// members of a .npz.
int info_foreign(const InfoOptions& o, const Result<ForeignInput>& in, const Console& console) {
    if (!in) {
        const std::string shown = display_path(o.path);  // a URL without credentials or query
        console.err << "hurray info: " << shown << ": " << unprefixed(shown, in.error()).to_string() << '\n';
        return kExitInvalid;
    }
    const convert::TensorSource& src = *in->source;
    std::vector<ListedTensor> tensors;
    for (size_t i = 0; i < src.tensor_count(); ++i) {
        tensors.push_back(ListedTensor{src.tensor(i).name, src.tensor(i).descriptor, {}});
    }
    if (!names_found(o, tensors, console)) {
        return kExitInvalid;
    }
    const Totals t = totals_of(tensors);
    const auto types = gguf_types(src.kv());
    std::vector<std::string> members;
    if (in->format == convert::Format::kNpz) {
        for (const auto& l : tensors) {
            members.push_back(l.name + ".npy");
        }
    }
    if (o.json) {
        ojson j;
        j["kind"] = std::string(convert::format_name(in->format));
        j["file_size"] = in->file_size;
        add_totals(j, t, /*with_descriptors=*/false);
        ojson kv = ojson::array();
        for (const auto& e : src.kv().entries()) {
            ojson one = kv_entry_json(e);
            if (const std::string g = gguf_type_of(types, e.key); !g.empty()) {
                one["gguf_type"] = g;
            }
            kv.push_back(std::move(one));
        }
        j["kv"] = std::move(kv);
        if (in->format == convert::Format::kNpz) {
            j["members"] = members;
        }
        add_named(o, tensors, false, &j, console);
        console.out << j.dump(2, ' ', false, ojson::error_handler_t::replace) << '\n';
        return kExitOk;
    }
    std::ostream& out = console.out;
    out << display_path(o.path) << ": " << format_title(in->format) << ", " << bytes_text(in->file_size) << " (" << in->file_size
        << " bytes), read through hurray::convert\n";
    out << "  tensors:                 " << t.tensors << " (" << t.composite_heads << " composite heads, "
        << t.quantized << " quantized)\n";
    out << "  data:                    " << bytes_text(t.data_bytes) << " (" << t.data_bytes << " bytes)\n";
    if (in->format == convert::Format::kNpz) {
        constexpr size_t kShown = 16;
        std::string list;
        for (size_t k = 0; k < members.size() && k < kShown; ++k) {
            list += (k == 0 ? "" : ", ") + printable(members[k]);
        }
        if (members.size() > kShown) {
            list += ", ... (" + std::to_string(members.size() - kShown) + " more)";
        }
        out << "  members:                 " << members.size() << (members.empty() ? "" : " (" + list + ")") << '\n';
    }
    out << "  kv metadata:             " << src.kv().size() << (src.kv().size() == 1 ? " entry" : " entries")
        << (types.empty() ? "" : " (the GGUF type after ';')") << '\n';
    for (const auto& e : src.kv().entries()) {
        const std::string g = gguf_type_of(types, e.key);
        out << "    " << printable(e.key) << " (" << kv_type_name(e.value.tag()) << (g.empty() ? "" : "; " + g)
            << ") = " << kv_value_text(e.value) << '\n';
    }
    add_named(o, tensors, false, nullptr, console);
    return kExitOk;
}
#endif

int run_info(const InfoOptions& o, const Console& console) {
#ifdef HURRAY_CLI_HAS_CONVERT
    if (auto foreign = open_foreign(o.path, o.remote)) {
        return info_foreign(o, *foreign, console);
    }
#endif
    auto in = open_input_or_report(o.path, console, "info", o.remote);
    if (!in) {
        return kExitInvalid;
    }
    return in->kind() == InputKind::kFile ? info_file(o, *in, console) : info_stream(o, *in, console);
}

}  // namespace

void add_info(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<InfoOptions>();
    CLI::App* cmd = app.add_subcommand(
        "info", "Show an HRRYFILE's header (version, flags, alignment), sections, typed KV metadata, tensor "
                "counts and sizes (for a stream: its counts and sizes; for a SafeTensors, GGUF, .npy or .npz "
                "file, read through hurray::convert: its format, size, counts, sizes and metadata, GGUF keys "
                "with their GGUF types, .npz member names), then each NAME's element type, shape, layout, "
                "quantization and buffer sizes.");
    cmd->add_option("input", opts->path,
                    "HRRYFILE, stream ('-': standard input), http(s):// or s3:// URL of either, SafeTensors, GGUF, .npy or "
                    ".npz file")
        ->required();
    cmd->add_option("names", opts->names, "tensors to describe (a stream's are tensor_0, tensor_1, ...)");
    cmd->add_flag("--json", opts->json,
                  "print one JSON object (KV entries as in 'hurray ls --json'; NAMEs under \"tensors\")");
    add_remote_options(cmd, opts->remote);
    cmd->footer("Exit status: 0 ok, 1 invalid or unreadable input, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_info(*opts, console); });
}

}  // namespace hurray::cli
