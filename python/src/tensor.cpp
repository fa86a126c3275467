// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray.Tensor`: one class for every layout, a descriptor and one byte view
/// per buffer of its buffer table. A Tensor views Python buffers (bytearray,
/// numpy arrays, memoryviews, mmap; held through the buffer protocol) or a
/// file's mapping (held through the `FileTensor`). Only `bytes` given to the
/// constructor are copied, as the reference does: they are immutable, and the
/// Tensor over them is writable.
/// NumPy views of it (`__array__`, `buffer(i)`) keep the Tensor alive.
///
/// The GIL is released while descriptors are decoded, encoded and validated
/// and while data is converted; Python objects are only touched with it held.

#include "tensor.hpp"
#include "layout.hpp"
#include "sections.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/core/validate.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray::python {

namespace {

// The Python side of dtypes and devices (hurray/dtype.py, hurray/device.py),
// registered at import by `_set_tensor_support`. Strong references owned for
// the life of the process on purpose (see errors.cpp).
PyObject* g_dtype_of = nullptr;     // dtype_of(tag: int) -> hurray.Dtype
PyObject* g_make_device = nullptr;  // make_device(kind: str, device_id: int, memory_class: str) -> hurray.Device

constexpr std::array<const char*, 4> kMemoryClassNames = {"standard", "host_pinned", "unified", "peer"};

std::string memory_class_name(MemoryClass m) {
    const auto i = static_cast<size_t>(m);
    if (i < kMemoryClassNames.size()) {
        return kMemoryClassNames.at(i);
    }
    return "private_" + std::to_string(i);
}

std::string device_kind_name(DeviceTag d) {
    if (is_private_device(d)) {
        return "private_" + std::to_string(static_cast<unsigned>(d));
    }
    return std::string(device_name(d));
}

/// The Device's (device_tag, memory_class, device_id) from a `hurray.Device`.
struct Placement {
    DeviceTag tag = DeviceTag::kCpu;
    MemoryClass memory_class = MemoryClass::kStandard;
    int64_t device_id = 0;
};

Placement placement_of(const py::handle& device) {
    if (!py::hasattr(device, "kind") || !py::hasattr(device, "device_id") || !py::hasattr(device, "memory_class")) {
        throw py::type_error("device must be a hurray.Device");
    }
    const auto kind = device.attr("kind").cast<std::string>();
    const auto mc = device.attr("memory_class").cast<std::string>();
    Placement p;
    p.device_id = device.attr("device_id").cast<int64_t>();
    bool found = false;
    for (unsigned t = 0; t <= static_cast<unsigned>(DeviceTag::kOpenCl); ++t) {
        if (device_kind_name(static_cast<DeviceTag>(t)) == kind) {
            p.tag = static_cast<DeviceTag>(t);
            found = true;
        }
    }
    if (!found) {
        raise_kind(PythonError::kInvalidDescriptor, "unknown device kind '" + kind + "'");
    }
    found = false;
    for (size_t i = 0; i < kMemoryClassNames.size(); ++i) {
        if (mc == kMemoryClassNames.at(i)) {
            p.memory_class = static_cast<MemoryClass>(i);
            found = true;
        }
    }
    if (!found) {
        raise_kind(PythonError::kInvalidDescriptor, "unknown memory_class '" + mc + "'");
    }
    return p;
}

/// The ElementType of a `hurray.Dtype` (its `tag`).
ElementType element_type_of(const py::handle& dtype) {
    if (!py::hasattr(dtype, "tag") || !py::hasattr(dtype, "bit_width")) {
        throw py::type_error("dtype must be a hurray.Dtype (hurray.float32, hurray.dtype.int4, ...), not " +
                             std::string(py::str(py::type::handle_of(dtype).attr("__name__"))));
    }
    const auto tag = dtype.attr("tag").cast<int>();
    if (tag <= 0 || tag >= 0xFF) {
        raise_kind(PythonError::kInvalidDescriptor, "dtype tag " + std::to_string(tag) + " is not an element type");
    }
    return static_cast<ElementType>(tag);
}

bool is_composite_head(const TensorDescriptor& d) noexcept { return std::holds_alternative<CompositeLayout>(d.layout); }

bool has_dynamic_dim(const TensorDescriptor& d) noexcept {
    return std::ranges::any_of(d.shape, [](uint64_t dim) { return dim == kDynamicDim; });
}

/// Element count of a shape without dynamic dimensions (nothing on overflow).
std::optional<uint64_t> element_count(std::span<const uint64_t> shape) noexcept {
    uint64_t count = 1;
    for (const uint64_t d : shape) {
        if (d == kDynamicDim || (d != 0 && count > std::numeric_limits<uint64_t>::max() / d)) {
            return std::nullopt;
        }
        count *= d;
    }
    return count;
}

/// Raises hurray.CopyRequiredError (a ValueError) with `message`.
[[noreturn]] void raise_copy_required(const std::string& message) {
    const py::object cls = py::module_::import("hurray._errors").attr("CopyRequiredError");
    PyErr_SetObject(cls.ptr(), cls(message).ptr());
    throw py::error_already_set();
}

/// Marks an array read-only.
void set_read_only(py::array& a) { a.attr("flags").attr("writeable") = false; }

/// A 1-D uint8 array over `bytes`, whose base is `base` (kept alive by it).
py::array byte_view(std::span<const uint8_t> bytes, const py::handle& base, bool writable) {
    if (bytes.empty()) {
        py::array empty(py::dtype("uint8"), std::vector<py::ssize_t>{0});
        set_read_only(empty);
        return empty;
    }
    // SAFETY: `bytes` lies in memory that `base` keeps alive (a Tensor holding
    // the Python buffer or the file mapping); the array (its base is `base`)
    // cannot outlive it. It is writable only when the exporter granted a
    // writable buffer.
    py::array a(py::dtype("uint8"), std::vector<py::ssize_t>{static_cast<py::ssize_t>(bytes.size())}, {},
                static_cast<const void*>(bytes.data()), base);
    if (!writable) {
        set_read_only(a);
    }
    return a;
}

/// Validates what the caller passed: the buffer count, each buffer at least
/// its declared size, then (where the descriptor is complete) the data rules.
/// Trims each span to its declared size. Raises with the GIL held.
void check_buffers(const TensorDescriptor& d, std::vector<std::span<const uint8_t>>& spans, bool check_data) {
    if (spans.size() != d.buffers.size()) {
        raise_kind(PythonError::kBuffer, std::to_string(spans.size()) + " buffers given; the descriptor declares " +
                                           std::to_string(d.buffers.size()));
    }
    for (size_t i = 0; i < spans.size(); ++i) {
        const uint64_t declared = d.buffers[i].byte_size;
        if (spans[i].size() < declared) {
            raise_kind(PythonError::kBuffer, "buffer " + std::to_string(i) + ": " + std::to_string(spans[i].size()) +
                                               " bytes given; the descriptor declares " + std::to_string(declared));
        }
        spans[i] = spans[i].first(static_cast<size_t>(declared));
    }
    if (!check_data || is_composite_head(d) || has_dynamic_dim(d)) {
        return;
    }
    std::optional<Status> st;
    {
        const py::gil_scoped_release release;
        st.emplace(validate_data(d, std::span<const std::span<const uint8_t>>(spans)));
    }
    if (!*st && st->error().code() != ErrorCode::kUnsupported) {
        raise_error(st->error(), PythonSite::kTensor, "tensor data");
    }
}

}  // namespace

HeldBuffer::HeldBuffer(const py::handle& obj, std::string_view what) {
    if (PyObject_CheckBuffer(obj.ptr()) == 0) {
        throw py::type_error(std::string(what) + ": expected an object with the buffer protocol (bytes, bytearray, "
                                                 "memoryview, numpy array), not " +
                             std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
    }
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) == 0) {
        writable_ = true;
    } else {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
            PyErr_Clear();
            raise_kind(PythonError::kBuffer, std::string(what) + ": the buffer is not C-contiguous");
        }
    }
    held_ = true;
}

HeldBuffer::~HeldBuffer() {
    if (held_) {
        PyBuffer_Release(&view_);
    }
}

std::span<const uint8_t> HeldBuffer::bytes() const noexcept {
    if (view_.buf == nullptr || view_.len <= 0) {
        return {};
    }
    // SAFETY: a C-contiguous buffer exported by the object covers `len` bytes
    // from `buf` until PyBuffer_Release (our destructor).
    return {static_cast<const uint8_t*>(view_.buf), static_cast<size_t>(view_.len)};
}

Tensor::~Tensor() = default;

py::object Tensor::dtype() const {
    if (g_dtype_of == nullptr) {
        throw py::type_error("hurray: dtypes are not registered (import the hurray package)");
    }
    return py::reinterpret_borrow<py::object>(g_dtype_of)(py::int_(static_cast<unsigned>(desc.element_type)));
}

py::object Tensor::device() const {
    if (g_make_device == nullptr) {
        throw py::type_error("hurray: devices are not registered (import the hurray package)");
    }
    DeviceTag tag = DeviceTag::kCpu;
    MemoryClass mc = MemoryClass::kStandard;
    if (!desc.buffers.empty()) {
        tag = desc.buffers[0].device_tag;
        mc = desc.buffers[0].memory_class;
    }
    return py::reinterpret_borrow<py::object>(g_make_device)(device_kind_name(tag), device_id, memory_class_name(mc));
}

bool Tensor::on_cpu() const noexcept { return desc.buffers.empty() || desc.buffers[0].device_tag == DeviceTag::kCpu; }

py::object Tensor::finish(std::unique_ptr<Tensor> t, bool check_data) {
    check_buffers(t->desc, t->spans, check_data);
    if (t->writable.size() != t->spans.size()) {
        t->writable.assign(t->spans.size(), false);
    }
    return py::cast(std::move(t));
}

py::object Tensor::from_file(const FileTensor& ft) {
    auto t = std::make_unique<Tensor>();
    if (ft.is_composite()) {
        // A composite head owns no buffers: its members are assembled into a
        // dense row-major copy (materialize_composite).
        std::optional<Result<std::vector<uint8_t>>> bytes;
        std::optional<Result<TensorDescriptor>> dense;
        {
            const py::gil_scoped_release release;
            bytes.emplace(ft.materialize());
            dense.emplace(make_dense(ft.element_type(), Shape(ft.shape().begin(), ft.shape().end())));
        }
        if (!*bytes) {
            raise_error(bytes->error(), PythonSite::kTensor, "tensor '" + std::string(ft.name()) + "'");
        }
        if (!*dense) {
            raise_error(dense->error(), PythonSite::kTensor, "tensor '" + std::string(ft.name()) + "'");
        }
        auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes->value()));
        t->desc = std::move(dense->value());
        t->spans.emplace_back(*owned);
        t->native = std::move(owned);
    } else {
        t->desc = ft.descriptor();
        for (const SharedBuffer& b : ft.buffers()) {
            t->spans.push_back(b.span());
        }
        t->native = std::make_shared<const FileTensor>(ft);
    }
    t->writable.assign(t->spans.size(), false);
    // The reader checked every buffer against its descriptor; the sizes are
    // checked again here, the data rules are not run twice.
    return finish(std::move(t), false);
}

namespace {

/// The constructor's buffer for `obj`: `obj` itself, except a `bytes` object,
/// which is copied into a writable numpy array whose data is 64-byte aligned
/// (the buffer protocol's minimum alignment). The reference copies `bytes` and
/// hands out a writable Tensor; a `memoryview` of the bytes is viewed instead
/// (read-only, no copy).
py::object constructor_buffer(const py::handle& obj) {
    if (PyBytes_CheckExact(obj.ptr()) == 0 || PyBytes_GET_SIZE(obj.ptr()) == 0) {
        return py::reinterpret_borrow<py::object>(obj);
    }
    constexpr size_t kAlign = 64;
    const auto n = static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr()));
    py::array_t<uint8_t> raw(static_cast<py::ssize_t>(n + kAlign));
    uint8_t* base = raw.mutable_data();
    // The distance to the next 64-byte boundary (an address used as a number).
    const size_t skip = (kAlign - reinterpret_cast<uintptr_t>(base) % kAlign) % kAlign;  // NOLINT(*-reinterpret-cast)
    const auto* src = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(obj.ptr()));  // NOLINT(*-reinterpret-cast)
    {
        // SAFETY: `raw` holds n + 64 bytes, so [skip, skip + n) lies inside it;
        // the bytes object (immutable, held by the caller) holds n bytes.
        const py::gil_scoped_release release;
        std::memcpy(base + skip, src, n);
    }
    return raw[py::slice(static_cast<py::ssize_t>(skip), static_cast<py::ssize_t>(skip + n), 1)];
}

/// Whether a failed descriptor check is about how a quantization scheme fits
/// the tensor (storage type, axis, block size against the shape, zero-point
/// range, parameter-buffer sizes): a reader's rule, which the constructor
/// leaves to the writers and to dequantization (see `construct`).
bool is_scheme_fit_error(ErrorCode code) noexcept {
    return code == ErrorCode::kInvalidQuantization || code == ErrorCode::kInvalidQuantizationStorageType ||
           code == ErrorCode::kInvalidQuantizationBuffer;
}

/// `desc` with its buffers sized by the core (`size_buffers`); the sizes the
/// descriptor cannot determine (inner CSF levels) are those of `spans`.
Result<TensorDescriptor> size_for(TensorDescriptor desc, const BufferPlacement& bp,
                                  std::span<const std::span<const uint8_t>> spans) {
    std::vector<uint64_t> data_dependent;
    auto req = required_buffer_sizes(desc);
    if (!req) {
        return req.error();
    }
    for (size_t k = 0; k < req->size() && k < spans.size(); ++k) {
        if ((*req)[k].data_dependent || !(*req)[k].min_size) {
            data_dependent.push_back(spans[k].size());
        }
    }
    return size_buffers(std::move(desc), bp, data_dependent);
}

/// Checks that every buffer index of `q` names a parameter buffer that was
/// given (the layout's `base` buffers come first), and that the buffers given
/// are exactly the layout's and the scheme's: InvalidDescriptorError otherwise.
void check_parameter_indices(const QuantizationDescriptor& q, const LayoutDescriptor& layout, uint32_t base,
                             size_t given) {
    const std::vector<uint32_t> indices = parameter_buffer_indices(q.scheme);
    const std::string scheme(scheme_name(scheme_tag(q.scheme)));
    for (size_t i = 0; i < indices.size(); ++i) {
        const uint32_t index = indices[i];
        const std::string field = scheme + (i == 0 ? ".scale_buffer_index " : ".zero_point_buffer_index ") +
                                  std::to_string(index);
        if (index >= given) {
            raise_kind(PythonError::kInvalidDescriptor,
                       "quantization: " + field + " refers to no buffer; the tensor has " + std::to_string(given) +
                           " (data and " + std::to_string(given - 1) +
                           " aux_buffers): pass the parameters in aux_buffers");
        }
        if (index < base) {
            // Worded as the reference module words it ("quantization buffer index N").
            raise_kind(PythonError::kInvalidDescriptor,
                       "quantization buffer index " + std::to_string(index) + " (" + field.substr(0, field.rfind(' ')) +
                           ") is one of the " + std::string(python_layout_name(layout)) + " layout's own buffers (0.." +
                           std::to_string(base - 1) + "); parameter buffers come after them");
        }
    }
    const size_t distinct = indices.size() == 2 && indices[0] == indices[1] ? 1 : indices.size();
    if (given != base + distinct) {
        raise_kind(PythonError::kInvalidDescriptor,
                   "a " + std::string(python_layout_name(layout)) + " tensor with " + scheme +
                       " quantization has " + std::to_string(base + distinct) + " buffers (" + std::to_string(base) +
                       " of the layout, " + std::to_string(distinct) + " of parameters); " + std::to_string(given) +
                       " given (data and aux_buffers)");
    }
}

/// The descriptor of a tensor with a private or unknown layout, `desc`
/// without buffers: the core cannot know how many buffers such a layout has
/// or how large they are, so the buffers are taken as given (one handle per
/// buffer, its size), and the rest of the descriptor is checked as a writer
/// would (private ids accepted). An unknown tag is checked as if it were a
/// private one, since the core has no rules for it; the format cannot encode
/// it, so writing such a tensor fails later.
Result<TensorDescriptor> extension_descriptor(TensorDescriptor desc,
                                              const std::vector<std::span<const uint8_t>>& spans,
                                              const BufferPlacement& bp) {
    for (const auto& span : spans) {
        BufferHandle h;
        h.byte_size = span.size();
        h.alignment = bp.alignment;
        h.device_tag = bp.device_tag;
        h.sync_mode = bp.sync_mode;
        h.memory_class = bp.memory_class;
        desc.buffers.push_back(h);
    }
    TensorDescriptor probe = desc;
    if (is_unknown_layout(probe.layout)) {
        std::get<ExtensionLayout>(probe.layout).tag = 0xF0;
    }
    DecodeOptions options;
    options.accept_private_extensions = true;
    if (auto st = check_descriptor(probe, options); !st) {
        return st.error();
    }
    return desc;
}

/// `hurray.Tensor(data, dtype, shape, device=None, *, aux_buffers=None,
/// layout=None, quantization=None, statistics=None, shard=None)`.
///
/// Quantization is checked as far as the tensor's usability needs: the scheme
/// object's own rules (its class), and every parameter buffer index resolving
/// to a given buffer after the layout's. When the core finds the scheme does
/// not fit the tensor (a storage type, block size or zero point the spec
/// forbids, parameter buffers of the wrong size), the tensor is still built,
/// with the parameter buffers as given, as the reference module does; writing
/// it (save, streams), and dequantizing it, run the core's full check and
/// raise InvalidDescriptorError, so no such descriptor leaves the process.
std::unique_ptr<Tensor> construct(const py::object& data, const py::object& dtype, const py::object& shape,
                                  const py::object& device, const py::object& aux_buffers, const py::object& layout,
                                  const py::object& quantization, const py::object& statistics,
                                  const py::object& shard) {
    const ElementType type = element_type_of(dtype);
    Shape dims;
    if (!py::isinstance<py::sequence>(shape)) {
        throw py::type_error("shape must be a sequence of ints");
    }
    for (const py::handle dim : shape) {
        if (!py::isinstance<py::int_>(dim) && !py::hasattr(dim, "__index__")) {
            throw py::type_error("shape must be a sequence of ints, not one holding " +
                                 std::string(py::str(py::type::handle_of(dim).attr("__name__"))));
        }
        const auto v = py::reinterpret_steal<py::int_>(PyNumber_Index(dim.ptr()));
        if (!v) {
            throw py::error_already_set();
        }
        const auto value = v.cast<int64_t>();
        if (value < 0) {
            raise_kind(PythonError::kInvalidDescriptor,
                       "shape dimensions must be non-negative, got " + std::to_string(value));
        }
        dims.push_back(static_cast<uint64_t>(value));
    }
    Placement placement;
    if (!device.is_none()) {
        placement = placement_of(device);
    }
    if (placement.device_id < 0) {
        raise_kind(PythonError::kInvalidDescriptor, "device_id must be non-negative");
    }
    BufferPlacement bp;
    bp.device_tag = placement.tag;
    bp.memory_class = placement.memory_class;
    auto t = std::make_unique<Tensor>();
    t->device_id = placement.device_id;
    auto held = std::make_unique<HeldBuffer>(constructor_buffer(data), "Tensor data");
    t->spans.push_back(held->bytes());
    t->writable.push_back(held->writable());
    t->held.push_back(std::move(held));
    if (!aux_buffers.is_none()) {
        size_t i = 1;
        for (const py::handle b : aux_buffers) {
            auto aux = std::make_unique<HeldBuffer>(constructor_buffer(b), "aux_buffers[" + std::to_string(i - 1) + "]");
            t->spans.push_back(aux->bytes());
            t->writable.push_back(aux->writable());
            t->held.push_back(std::move(aux));
            ++i;
        }
    }
    TensorDescriptor desc;
    desc.element_type = type;
    desc.layout = layout.is_none() ? LayoutDescriptor{RowMajorLayout{}} : layout_from_python(layout);
    desc.quantization = quantization_from_python(quantization);
    desc.statistics = statistics_from_python(statistics);
    desc.shard = shard_from_python(shard);
    if (std::holds_alternative<CompositeLayout>(desc.layout)) {
        raise_kind(PythonError::kUnsupported,
                   "a composite head owns no buffers, which hurray.Tensor cannot represent; composites are read "
                   "from files and streams (hurray.open, hurray.StreamReader)");
    }
    const bool extension = std::holds_alternative<ExtensionLayout>(desc.layout);
    const bool row_major = std::holds_alternative<RowMajorLayout>(desc.layout);
    const auto rank = static_cast<uint32_t>(dims.size());
    const uint32_t base = layout_buffer_count(desc.layout, rank);
    if (extension) {
        // A private or unknown layout: its buffer count is not knowable, so
        // neither are the positions of parameter buffers (see extension_descriptor).
    } else if (desc.quantization) {
        check_parameter_indices(*desc.quantization, desc.layout, base, t->spans.size());
    } else if (row_major && t->spans.size() != 1) {
        raise_kind(PythonError::kInvalidDescriptor,
                   "aux_buffers given for a dense row-major tensor, which has one buffer (pass layout=)");
    } else if (t->spans.size() != base) {
        raise_kind(PythonError::kInvalidDescriptor,
                   "a " + std::string(python_layout_name(desc.layout)) + " tensor of rank " +
                       std::to_string(rank) + " has " + std::to_string(base) + " buffers; " +
                       std::to_string(t->spans.size()) + " given (data and aux_buffers)");
    }
    desc.shape = std::move(dims);
    const std::span<const std::span<const uint8_t>> spans(t->spans);
    std::optional<Result<TensorDescriptor>> d;
    bool fits = true;  // the quantization scheme fits the tensor (or there is none)
    if (extension) {
        d.emplace(extension_descriptor(std::move(desc), t->spans, bp));
    } else {
        const py::gil_scoped_release release;
        d.emplace(size_for(desc, bp, spans));
        if (desc.quantization) {
            if (*d) {
                // The parameter buffers must be exactly what the scheme needs.
                for (const uint32_t index : parameter_buffer_indices(desc.quantization->scheme)) {
                    fits = fits && spans[index].size() == (*d)->buffers[index].byte_size;
                }
            } else {
                fits = !is_scheme_fit_error(d->error().code());
            }
        }
        if (!fits) {
            // The layout's buffers sized without the scheme, the parameter
            // buffers as given; everything but the scheme's fit must hold.
            TensorDescriptor plain = desc;
            plain.quantization.reset();
            d.emplace(size_for(std::move(plain), bp, spans.first(base)));
            if (*d) {
                TensorDescriptor out = std::move(d->value());
                for (size_t k = base; k < spans.size(); ++k) {
                    BufferHandle h;
                    h.byte_size = spans[k].size();
                    h.alignment = bp.alignment;
                    h.device_tag = bp.device_tag;
                    h.sync_mode = bp.sync_mode;
                    h.memory_class = bp.memory_class;
                    out.buffers.push_back(h);
                }
                out.quantization = desc.quantization;
                if (const Status st = check_descriptor(out); !st && !is_scheme_fit_error(st.error().code())) {
                    d.emplace(st.error());
                } else {
                    d.emplace(std::move(out));
                }
            }
        }
    }
    if (!*d) {
        raise_error(d->error(), PythonSite::kTensor, "Tensor");
    }
    t->desc = std::move(d->value());
    const uint64_t need = t->desc.buffers.empty() ? 0 : t->desc.buffers[0].byte_size;
    {
        // Buffer by buffer, in table order: the declared layout is never
        // adjusted to fit what was passed.
        const uint32_t own = layout_buffer_count(t->desc.layout, t->desc.rank());
        const size_t first = std::holds_alternative<RowMajorLayout>(t->desc.layout) ? 1 : 0;
        for (size_t k = first; k < t->spans.size() && k < t->desc.buffers.size(); ++k) {
            if (t->spans[k].size() >= t->desc.buffers[k].byte_size) {
                continue;
            }
            const std::string which = k == 0 ? std::string("Tensor data (buffer 0, ")
                                             : "aux_buffers[" + std::to_string(k - 1) + "] (buffer " +
                                                   std::to_string(k) + ", ";
            const std::string role =
                k < own ? std::string(buffer_role(t->desc.layout, k)) : std::string("quantization parameters");
            raise_kind(PythonError::kBuffer, which + role + "): " + std::to_string(t->spans[k].size()) +
                                               " bytes; the " + std::string(python_layout_name(t->desc.layout)) +
                                               " layout needs " + std::to_string(t->desc.buffers[k].byte_size));
        }
    }
    if (t->spans[0].size() < need) {
        std::string dims_text;
        for (const uint64_t dim : t->desc.shape) {
            if (!dims_text.empty()) {
                dims_text += ", ";
            }
            dims_text += std::to_string(dim);
        }
        raise_kind(PythonError::kBuffer, "Tensor data: " + std::to_string(t->spans[0].size()) + " bytes; " +
                                           std::string(type_name(type)) + " [" + dims_text + "] needs " +
                                           std::to_string(need));
    }
    // Trims to `need`; checks packed padding, float8_e8m0 bytes and (when the
    // scheme fits) the parameter values.
    check_buffers(t->desc, t->spans, fits);
    return t;
}

/// `Tensor._from_wire(descriptor, buffers, owner=None, device_id=0)`.
py::object from_wire(const py::object& descriptor, const py::object& buffers, const py::object& owner,
                     int64_t device_id) {
    if (device_id < 0) {
        raise_kind(PythonError::kInvalidDescriptor, "device_id must be non-negative");
    }
    std::optional<Result<TensorDescriptor>> decoded;
    {
        const HeldBuffer encoded(descriptor, "descriptor");
        const std::span<const uint8_t> bytes = encoded.bytes();
        const py::gil_scoped_release release;
        decoded.emplace(decode(bytes));
    }
    if (!*decoded) {
        raise_error(decoded->error(), PythonSite::kTensor, "descriptor");
    }
    auto t = std::make_unique<Tensor>();
    t->desc = std::move(decoded->value());
    t->device_id = device_id;
    t->owner = owner;
    size_t i = 0;
    for (const py::handle b : buffers) {
        auto held = std::make_unique<HeldBuffer>(b, "buffer " + std::to_string(i));
        t->spans.push_back(held->bytes());
        t->writable.push_back(held->writable());
        t->held.push_back(std::move(held));
        ++i;
    }
    return Tensor::finish(std::move(t), true);
}

py::tuple shape_tuple(const Tensor& t) {
    py::tuple out(t.desc.shape.size());
    for (size_t i = 0; i < t.desc.shape.size(); ++i) {
        const uint64_t d = t.desc.shape[i];
        out[i] = d == kDynamicDim ? py::object(py::none()) : py::object(py::int_(d));
    }
    return out;
}

py::object size_of(const Tensor& t) {
    py::object total = py::int_(1);
    for (const uint64_t d : t.desc.shape) {
        if (d == kDynamicDim) {
            return py::none();
        }
        total = total * py::int_(d);  // Python ints: no overflow
    }
    return total;
}

uint64_t nbytes_of(const Tensor& t) {
    uint64_t total = 0;
    for (const BufferHandle& b : t.desc.buffers) {
        if (total > std::numeric_limits<uint64_t>::max() - b.byte_size) {
            raise_kind(PythonError::kBuffer, "total buffer size overflows");
        }
        total += b.byte_size;
    }
    return total;
}

py::array buffer_at(const py::object& self, py::ssize_t i) {
    const auto& t = self.cast<const Tensor&>();
    if (i < 0 || static_cast<size_t>(i) >= t.spans.size()) {
        throw py::index_error("buffer index " + std::to_string(i) + " out of range (the tensor has " +
                              std::to_string(t.spans.size()) + " buffers)");
    }
    const auto k = static_cast<size_t>(i);
    return byte_view(t.spans[k], self, t.writable[k]);
}

/// The layout of the transpose of a rank-2 tensor stored with `layout`, over
/// the same buffers: row-major and column-major swap (element (i, j) of an
/// r x c row-major matrix sits at i * c + j, which is element (j, i) of a
/// c x r column-major one), strided reverses its strides, CSR and CSC swap
/// (CSR's values, column indices and row pointers are, read as CSC of the
/// transposed shape, its values, row indices and column pointers). Nothing
/// for the other layouts: their transpose is a different byte order.
std::optional<LayoutDescriptor> transposed_layout(const LayoutDescriptor& layout) {
    if (std::holds_alternative<RowMajorLayout>(layout)) {
        return LayoutDescriptor(ColumnMajorLayout{});
    }
    if (std::holds_alternative<ColumnMajorLayout>(layout)) {
        return LayoutDescriptor(RowMajorLayout{});
    }
    if (const auto* s = std::get_if<StridedLayout>(&layout)) {
        StridedLayout out = *s;
        std::reverse(out.strides.begin(), out.strides.end());
        return LayoutDescriptor(std::move(out));
    }
    if (const auto* csr = std::get_if<CsrLayout>(&layout)) {
        return LayoutDescriptor(CscLayout{.nnz = csr->nnz});
    }
    if (const auto* csc = std::get_if<CscLayout>(&layout)) {
        return LayoutDescriptor(CsrLayout{.nnz = csc->nnz});
    }
    return std::nullopt;
}

/// `Tensor.T`: the transpose of a rank-2 tensor as a Tensor over the same
/// buffers (no byte is copied; `self` keeps the memory alive), with the
/// transposed shape and layout (`transposed_layout`). ValueError for other
/// ranks (the reference's rule); UnsupportedError for layouts whose transpose
/// is not a relabelling of the same bytes, and for quantized tensors (a
/// per-axis or per-block scheme names an axis of the stored order).
py::object transpose_of(const py::object& self) {
    const auto& t = self.cast<const Tensor&>();
    if (t.desc.shape.size() != 2) {
        throw py::value_error("T needs a rank-2 tensor; this one has rank " + std::to_string(t.desc.shape.size()));
    }
    if (t.desc.quantization) {
        raise_kind(PythonError::kUnsupported,
                   "T: the tensor is quantized (" + std::string(scheme_name(scheme_tag(t.desc.quantization->scheme))) +
                       "); transpose dequantize() instead");
    }
    auto layout = transposed_layout(t.desc.layout);
    if (!layout) {
        raise_kind(PythonError::kUnsupported, "T: a " + std::string(python_layout_name(t.desc.layout)) +
                                                " tensor has no transposed view over the same bytes (transpose "
                                                "np.asarray(t) or to_dense() instead)");
    }
    auto out = std::make_unique<Tensor>();
    out->desc = t.desc;
    std::swap(out->desc.shape[0], out->desc.shape[1]);
    out->desc.layout = std::move(*layout);
    if (out->desc.shard) {
        // The transposed shard of the transposed parent.
        std::reverse(out->desc.shard->parent_shape.begin(), out->desc.shard->parent_shape.end());
        std::reverse(out->desc.shard->shard_offset.begin(), out->desc.shard->shard_offset.end());
    }
    if (out->desc.statistics) {
        // N:M sparsity runs along an axis of the stored order; the value
        // statistics hold for any order.
        out->desc.statistics->computed_mask &= ~static_cast<uint32_t>(kStatNmSparsityValid);
        out->desc.statistics->nm_n = 0;
        out->desc.statistics->nm_m = 0;
    }
    std::optional<Status> st;
    {
        const py::gil_scoped_release release;
        st.emplace(check_descriptor(out->desc));
    }
    if (!*st) {
        raise_error(st->error(), PythonSite::kTensor, "T");
    }
    out->spans = t.spans;
    out->writable = t.writable;
    out->owner = self;  // the parent keeps the memory alive
    out->native = t.native;
    out->device_id = t.device_id;
    // The same bytes under an equivalent descriptor: the data rules that held
    // for `self` hold for its transpose.
    return Tensor::finish(std::move(out), false);
}

/// NumPy byte strides for a zero-copy view of a column-major or strided
/// tensor of whole-byte elements (`item` bytes each; not bools, which Hurray
/// packs) with at least one element, when every element lies inside buffer 0
/// (`size` bytes); nothing otherwise (the caller copies).
std::optional<std::vector<py::ssize_t>> view_strides(const TensorDescriptor& d, size_t size, uint64_t item) {
    if (d.element_type == ElementType::kBool || d.shape.empty()) {
        return std::nullopt;
    }
    const auto item_s = static_cast<int64_t>(item);
    std::vector<int64_t> elems(d.shape.size());  // stride of each dimension, in elements
    if (std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        int64_t run = 1;
        for (size_t k = 0; k < d.shape.size(); ++k) {
            elems[k] = run;
            if (__builtin_mul_overflow(run, static_cast<int64_t>(d.shape[k]), &run)) {
                return std::nullopt;
            }
        }
    } else if (const auto* strided = std::get_if<StridedLayout>(&d.layout)) {
        if (strided->strides.size() != d.shape.size()) {
            return std::nullopt;
        }
        elems = strided->strides;
    } else {
        return std::nullopt;
    }
    // The lowest and highest element offsets, in bytes from byte_offset.
    int64_t lo = 0;
    int64_t hi = 0;
    std::vector<py::ssize_t> out(d.shape.size());
    for (size_t k = 0; k < d.shape.size(); ++k) {
        int64_t bytes = 0;
        int64_t span = 0;
        if (d.shape[k] == 0 || d.shape[k] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            __builtin_mul_overflow(elems[k], item_s, &bytes) ||
            __builtin_mul_overflow(bytes, static_cast<int64_t>(d.shape[k] - 1), &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) {
            return std::nullopt;
        }
        out[k] = static_cast<py::ssize_t>(bytes);
    }
    const auto base = static_cast<int64_t>(d.byte_offset);
    int64_t first = 0;
    int64_t end = 0;
    if (d.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_add_overflow(base, lo, &first) || __builtin_add_overflow(base, hi, &end) ||
        __builtin_add_overflow(end, item_s, &end) || first < 0 || static_cast<uint64_t>(end) > size) {
        return std::nullopt;
    }
    return out;
}

/// `Tensor.__array__(dtype=None, copy=None)`.
py::object to_array(const py::object& self, const py::object& dtype, const py::object& copy) {
    const auto& t = self.cast<const Tensor&>();
    const TensorDescriptor& d = t.desc;
    const std::string type(type_name(d.element_type));
    if (!t.on_cpu()) {
        raise_kind(PythonError::kUnsupported, "__array__: the tensor is on device " + device_kind_name(d.buffers[0].device_tag) +
                                                ", not the cpu");
    }
    if (d.quantization) {
        raise_kind(PythonError::kUnsupported,
                   "__array__: the tensor is quantized (" +
                       std::string(scheme_name(scheme_tag(d.quantization->scheme))) +
                       "); NumPy has no dtype for it (use dequantize() or the file's to_float32)");
    }
    const auto np_name = numpy_name(d.element_type);
    if (!np_name) {
        raise_kind(PythonError::kUnsupported, "__array__: element type " + (type.empty() ? std::string("(private)") : type) +
                                                " has no NumPy dtype");
    }
    if (has_dynamic_dim(d)) {
        raise_kind(PythonError::kUnsupported, "__array__: the shape has a dynamic dimension");
    }
    const auto count = element_count(std::span<const uint64_t>(d.shape));
    if (!count) {
        raise_kind(PythonError::kBuffer, "__array__: element count overflows");
    }
    std::vector<py::ssize_t> shape;
    for (const uint64_t dim : d.shape) {
        if (dim > static_cast<uint64_t>(std::numeric_limits<py::ssize_t>::max())) {
            raise_kind(PythonError::kBuffer, "__array__: dimension " + std::to_string(dim) + " is too large");
        }
        shape.push_back(static_cast<py::ssize_t>(dim));
    }
    const py::dtype dt(*np_name);
    const auto item = static_cast<uint64_t>(dt.itemsize());
    if (*count > std::numeric_limits<uint64_t>::max() / item) {
        raise_kind(PythonError::kBuffer, "__array__: byte count overflows");
    }
    const uint64_t nbytes = *count * item;
    py::array out;
    bool copied = false;
    const bool row_major = std::holds_alternative<RowMajorLayout>(d.layout);
    if (is_indexed_layout(d.layout)) {
        raise_kind(PythonError::kUnsupported, "__array__: a " + std::string(python_layout_name(d.layout)) +
                                                " tensor has no dense array form (to_dense() makes a float32 copy; "
                                                "its buffers are reachable with buffer(i))");
    }
    if (*count == 0) {
        out = py::array(dt, shape);
        copied = true;
    } else if (row_major && d.element_type != ElementType::kBool && !t.spans.empty() &&
               d.byte_offset <= t.spans[0].size() && nbytes <= t.spans[0].size() - d.byte_offset) {
        // SAFETY: bytes [byte_offset, byte_offset + nbytes) lie inside buffer 0
        // (checked just above); row-major dense data is C-contiguous for this
        // shape; the array's base is the Tensor, which keeps the memory alive.
        const uint8_t* data = t.spans[0].data() + d.byte_offset;
        out = py::array(dt, shape, {}, static_cast<const void*>(data), self);
        if (!t.writable[0]) {
            set_read_only(out);
        }
    } else if (auto strides = view_strides(d, t.spans.empty() ? 0 : t.spans[0].size(), item)) {
        // SAFETY: view_strides checked that every element's bytes, at
        // byte_offset + sum(index[k] * strides[k]), lie inside buffer 0; the
        // array's base is the Tensor, which keeps the memory alive.
        const uint8_t* data = t.spans[0].data() + d.byte_offset;
        out = py::array(dt, shape, *strides, static_cast<const void*>(data), self);
        if (!t.writable[0]) {
            set_read_only(out);
        }
    } else {
        // Packed bools and other layouts: a row-major copy made by the core.
        std::optional<Error> error;
        auto values = std::make_unique<std::vector<uint8_t>>();
        {
            const py::gil_scoped_release release;
            auto view = TensorView::make(d, std::span<const std::span<const uint8_t>>(t.spans));
            if (!view) {
                error = view.error();
            } else if (auto bytes = view->materialize(); !bytes) {
                error = bytes.error();
            } else if (d.element_type == ElementType::kBool) {
                const std::vector<uint8_t>& packed = *bytes;
                if (*count > packed.size() * 8U) {
                    error = Error(ErrorCode::kSizeMismatch, "packed bools too short");
                } else {
                    values->resize(static_cast<size_t>(*count));
                    for (uint64_t k = 0; k < *count; ++k) {
                        (*values)[k] = static_cast<uint8_t>((packed[k / 8] >> (k % 8)) & 1U);  // LSB first
                    }
                }
            } else {
                *values = std::move(*bytes);
            }
        }
        if (error) {
            raise_error(*error, PythonSite::kTensor, "__array__");
        }
        if (values->size() != nbytes) {
            raise_kind(PythonError::kInternal, "__array__: " + std::to_string(values->size()) +
                                                 " bytes materialized, expected " + std::to_string(nbytes));
        }
        const uint8_t* data = values->data();
        auto* keep = values.release();
        const py::capsule owner(keep, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
        // SAFETY: `data` holds exactly nbytes bytes (checked above), row-major
        // for this shape; `owner`, the array's base, keeps the vector alive.
        out = py::array(dt, shape, {}, static_cast<const void*>(data), owner);
        copied = true;
    }
    const bool read_only = t.writable.empty() || !t.writable[0];
    if (!copy.is_none() && copy.cast<bool>()) {
        if (!copied) {
            out = py::reinterpret_borrow<py::array>(out.attr("copy")());
        }
    } else if (copied && read_only) {
        set_read_only(out);  // a copy behaves like the memory it stands for
    }
    const bool forbid_copy = !copy.is_none() && !copy.cast<bool>();
    if (forbid_copy && copied && *count != 0) {
        raise_copy_required("__array__(copy=False): this tensor (packed bools, or a layout NumPy strides cannot describe) needs a copy");
    }
    if (!dtype.is_none()) {
        const py::dtype want = py::dtype::from_args(dtype);
        if (forbid_copy && !want.equal(out.dtype())) {
            raise_copy_required("__array__(copy=False): converting " + std::string(*np_name) + " to " +
                                std::string(py::str(static_cast<const py::handle&>(want))) + " needs a copy");
        }
        return out.attr("astype")(want, py::arg("copy") = false);
    }
    return out;
}

/// COO, CSR and CSC tensors print their own form (layout, shape, nnz, dtype,
/// and with sparse_display="content" their component arrays), the same for
/// repr and str.
bool has_sparse_display(const Tensor& t) noexcept {
    return std::holds_alternative<CooLayout>(t.desc.layout) || std::holds_alternative<CsrLayout>(t.desc.layout) ||
           std::holds_alternative<CscLayout>(t.desc.layout);
}

std::string repr_of(const py::object& self) {
    const auto& t = self.cast<const Tensor&>();
    if (has_sparse_display(t)) {
        return py::module_::import("hurray._print_options").attr("_sparse_repr")(self).cast<std::string>();
    }
    const std::string type = type_name(t.desc.element_type).empty() ? "extension"
                                                                    : std::string(type_name(t.desc.element_type));
    if (classify_type_tag(static_cast<uint8_t>(t.desc.element_type)) == TypeTagClass::kTier1 && t.on_cpu() &&
        !t.desc.quantization && std::holds_alternative<RowMajorLayout>(t.desc.layout)) {
        try {
            const py::object arr = to_array(self, py::none(), py::none());
            return "hurray.Tensor(" + std::string(py::str(arr)) + ", dtype=" + type + ")";
        } catch (const py::error_already_set&) {
            // fall back on the metadata form below
        }
    }
    std::string layout;
    if (!std::holds_alternative<RowMajorLayout>(t.desc.layout)) {
        layout += ", layout='" + std::string(py::str(self.attr("layout").attr("name"))) + "'";
    }
    if (t.desc.quantization) {
        layout += ", quantization='" + std::string(scheme_name(scheme_tag(t.desc.quantization->scheme))) + "'";
    }
    return "hurray.Tensor(shape=" + std::string(py::repr(shape_tuple(t))) + ", dtype=" + type + layout +
           ", device=" + std::string(py::repr(t.device())) + ")";
}

}  // namespace

std::optional<TensorRef> tensor_ref_of(const py::handle& obj) {
    if (!py::isinstance<Tensor>(obj)) {
        return std::nullopt;
    }
    const auto& t = obj.cast<const Tensor&>();
    return TensorRef::from_descriptor(t.desc, std::span<const std::span<const uint8_t>>(t.spans));
}

py::object tensor_from_file(const FileTensor& ft) { return Tensor::from_file(ft); }

bool is_indexed_layout(const LayoutDescriptor& layout) noexcept {
    return std::holds_alternative<CooLayout>(layout) || std::holds_alternative<CsrLayout>(layout) ||
           std::holds_alternative<CscLayout>(layout) || std::holds_alternative<CsfLayout>(layout) ||
           std::holds_alternative<BlockPagedLayout>(layout);
}

void register_tensor(py::module_& m) {
    m.def(
        "_set_tensor_support",
        [](const py::object& dtype_of, const py::object& make_device) {
            replace_kept_object(g_dtype_of, dtype_of);
            replace_kept_object(g_make_device, make_device);
        },
        py::arg("dtype_of"), py::arg("make_device"));

    m.def(
        "_element_types",
        []() {
            py::list out;
            for (unsigned tag = 1; tag < 0xFF; ++tag) {
                const TypeTagClass c = classify_type_tag(static_cast<uint8_t>(tag));
                if (c != TypeTagClass::kTier1 && c != TypeTagClass::kTier2) {
                    continue;
                }
                const auto t = static_cast<ElementType>(tag);
                out.append(py::make_tuple(tag, std::string(type_name(t)), bit_width(t),
                                          c == TypeTagClass::kTier1 ? 1 : 2, is_floating_point(t),
                                          is_signed_integer(t), is_unsigned_integer(t), is_sub_byte(t)));
            }
            return out;
        },
        "Every built-in element type: (tag, name, bit_width, tier, is_float, is_signed_int, is_unsigned_int, "
        "is_sub_byte)");

    py::class_<Tensor> cls(m, "Tensor",
                       "A Hurray tensor: a descriptor (element type, shape, layout, quantization) and its buffers, "
                       "viewed without copying. One class for every layout.");
    cls.def(py::init(&construct), py::arg("data"), py::arg("dtype"), py::arg("shape"), py::arg("device") = py::none(),
             py::kw_only(), py::arg("aux_buffers") = py::none(), py::arg("layout") = py::none(),
             py::arg("quantization") = py::none(), py::arg("statistics") = py::none(), py::arg("shard") = py::none(),
             "A tensor viewing `data` (any buffer-protocol object, C-contiguous) without a copy; the Tensor keeps "
             "`data` alive. Dense row-major unless `layout` (any hurray.Layout instance but CompositeLayout: "
             "column-major, strided, tiled, Morton, Hilbert, COO, CSR, CSC, CSF, block-paged, private or unknown) "
             "says otherwise (TypeError for anything else, strings included; InvalidDescriptorError when it does "
             "not fit the shape); `aux_buffers` are its other buffers in descriptor order (the layout's index "
             "buffers, block table, sequence pointers, then quantization parameters). `quantization` (a hurray.PerTensorAffine, PerChannelAffine, "
             "PerBlockAffine, NF4 or MXFP) refers to its parameter buffers by index: an index naming no given "
             "buffer, or one of the layout's, raises InvalidDescriptorError. `statistics` (a hurray.Statistics) and "
             "`shard` (a hurray.Shard) add those descriptor sections. BufferError when a buffer is smaller than the "
             "descriptor needs.")
        .def_static("_from_wire", &from_wire, py::arg("descriptor"), py::arg("buffers"), py::arg("owner") = py::none(),
                    py::arg("device_id") = 0,
                    "A Tensor from an encoded descriptor (bytes) and one buffer-protocol object per buffer, viewed "
                    "without a copy; `owner` is kept alive with it. Validates the buffers against the descriptor.")
        .def(
            "_wire",
            [](const py::object& self) {
                const auto& t = self.cast<const Tensor&>();
                std::optional<Result<std::vector<uint8_t>>> encoded;
                {
                    const py::gil_scoped_release release;
                    encoded.emplace(encode(t.desc));
                }
                if (!*encoded) {
                    raise_error(encoded->error(), PythonSite::kTensor, "_wire");
                }
                const std::vector<uint8_t>& bytes = encoded->value();
                py::list bufs;
                for (const std::span<const uint8_t> span : t.spans) {
                    bufs.append(byte_view(span, self, false));
                }
                // SAFETY: char may alias the vector's bytes; py::bytes copies them.
                return py::make_tuple(py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size()), bufs);
            },
            "(encoded descriptor bytes, [one read-only uint8 array per buffer, zero-copy])")
        .def_property_readonly("dtype", &Tensor::dtype, "The element type, a hurray.Dtype")
        .def_property_readonly("shape", &shape_tuple, "The shape: a tuple of int, None for a dynamic dimension")
        .def_property_readonly("ndim", [](const Tensor& t) { return t.desc.shape.size(); }, "The rank")
        .def_property_readonly("size", &size_of, "The element count, or None when a dimension is dynamic")
        .def_property_readonly("device", &Tensor::device, "The device of its buffers, a hurray.Device")
        .def_property_readonly("device_id", [](const Tensor& t) { return t.device_id; }, "The runtime device index")
        .def_property_readonly("buffer_count", [](const Tensor& t) { return t.spans.size(); },
                               "The number of buffers in the descriptor's buffer table")
        .def_property_readonly("nbytes", &nbytes_of, "Total bytes of every buffer")
        .def_property_readonly(
            "readonly", [](const Tensor& t) { return t.writable.empty() || !t.writable[0]; },
            "Whether buffer 0 is read-only")
        .def("buffer", &buffer_at, py::arg("i"),
             "Buffer `i` as a 1-D uint8 numpy array viewing the tensor's memory (IndexError past the end)")
        .def_property_readonly(
            "T",
            &transpose_of,
            "The transpose of a rank-2 tensor, viewing the same memory (no copy): row-major becomes column-major "
            "and back, strided reverses its strides, CSR becomes CSC and back; np.asarray of it is a view too. "
            "UnsupportedError for other layouts and quantized tensors; ValueError for other ranks")
        .def("__array__", &to_array, py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
             "A numpy array: zero-copy over a dense row-major, column-major or strided Tier 1 tensor (its base "
             "keeps the Tensor alive), a copy for bools and other dense layouts; UnsupportedError for Tier 2, bfloat16, quantized and sparse "
             "tensors (to_dense() converts those)")
        .def(
            "to_scipy",
            [](const py::object& self) { return py::module_::import("hurray._scipy").attr("to_scipy")(self); },
            "A CSR tensor as a scipy.sparse.csr_matrix, a CSC one as a csc_matrix, sharing the values without a "
            "copy (SciPy copies the uint64 indices into its own index type). UnsupportedError for other layouts, "
            "quantized tensors and element types SciPy lacks; ImportError without SciPy")
        .def("__repr__", &repr_of)
        .def(
            "__str__",
            [](const py::object& self) -> std::string {
                std::string r = repr_of(self);
                if (has_sparse_display(self.cast<const Tensor&>())) {
                    return r;
                }
                const std::string head = "hurray.Tensor(";
                // The bare NumPy-style values for Tier 1 cpu tensors, else the repr.
                if (r.rfind(head + "shape=", 0) == 0) {
                    return r;
                }
                return std::string(py::str(to_array(self, py::none(), py::none())));
            },
            "The values as NumPy prints them (Tier 1 cpu tensors), else the repr")
        .def("__len__", [](const Tensor& t) -> uint64_t {
            if (t.desc.shape.empty()) {
                throw py::type_error("len() of a 0-d tensor");
            }
            if (t.desc.shape[0] == kDynamicDim) {
                throw py::type_error("len() of a tensor whose first dimension is dynamic");
            }
            return t.desc.shape[0];
        });
    add_dlpack(cls, m);
    add_inspection(cls, m);
    add_sections(cls, m);
    add_native_protocol(cls, m);
    add_layout_support(m);
}

}  // namespace hurray::python
