// SPDX-License-Identifier: Apache-2.0
/// @file
/// DLPack for `hurray.Tensor`: `__dlpack__` / `__dlpack_device__` (export)
/// and `hurray.from_dlpack` (import). Two capsule kinds, chosen by the
/// consumer's `max_version` as the DLPack protocol says: the legacy
/// `"dltensor"` (DLPack 0.6, <dlpack/dlpack.h>), which NumPy 1.24 and PyTorch
/// 1.13 read and which is the answer when `max_version` is None, and the
/// versioned `"dltensor_versioned"` (DLPack 1.x: a version number and flags,
/// among them read-only) when `max_version` is (1, x) or later. The 1.x
/// struct is declared here: Debian 12's dlpack.h predates it.
///
/// Export: the capsule's `DLManagedTensor` holds a strong reference to the
/// Tensor (so its memory stays valid) and the shape it points to; its deleter
/// drops both. An unconsumed capsule calls the deleter when it is destroyed;
/// a consumer renames it `"used_dltensor"` and calls the deleter itself.
/// Import: the capsule is renamed `"used_dltensor"`; the new Tensor calls the
/// producer's deleter exactly once, when it (and every view of it) is gone.

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
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
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"
#include "layout.hpp"
#include "tensor.hpp"

namespace hurray::python {

namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";
constexpr const char* kVersionedCapsuleName = "dltensor_versioned";
constexpr const char* kUsedVersionedCapsuleName = "used_dltensor_versioned";

/// DLPack 1.x `DLPackVersion` (same field order and types as dlpack.h 1.0).
struct DLPackVersion1 {
    uint32_t major;
    uint32_t minor;
};

/// DLPack 1.x `DLManagedTensorVersioned`: the ABI of a "dltensor_versioned"
/// capsule's pointer. DLTensor itself did not change from 0.6 to 1.x.
struct DLManagedTensorVersioned1 {
    DLPackVersion1 version;
    void* manager_ctx;
    void (*deleter)(DLManagedTensorVersioned1* self);
    uint64_t flags;
    DLTensor dl_tensor;
};

/// The DLPack version this module writes into versioned capsules.
constexpr DLPackVersion1 kDLPackVersion{1, 0};
/// DLPack 1.x flag bits.
constexpr uint64_t kDLPackFlagReadOnly = uint64_t{1} << 0U;
constexpr uint64_t kDLPackFlagIsCopied = uint64_t{1} << 1U;

// DLDeviceType values newer than the installed dlpack.h 0.6 (DLPack 0.8+).
constexpr int kDLOneApi = 14;
constexpr int kDLWebGpu = 15;
constexpr int kDLHexagon = 16;

/// Raises the built-in BufferError, the ecosystem's "cannot be represented in
/// DLPack" signal (not hurray.BufferError).
[[noreturn]] void raise_dlpack_buffer_error(const std::string& message) {
    PyErr_SetString(PyExc_BufferError, message.c_str());
    throw py::error_already_set();
}

/// The DLPack device type of a (device_tag, memory_class) pair
/// (python-bindings.md, Device and Memory Class Mapping); UnsupportedError for
/// the pairs DLPack cannot express.
int dlpack_device_type(DeviceTag tag, MemoryClass mc) {
    const bool standard = mc == MemoryClass::kStandard;
    const bool pinned = mc == MemoryClass::kHostPinned;
    const bool unified = mc == MemoryClass::kUnified;
    std::optional<int> out;
    switch (tag) {
        case DeviceTag::kCpu:
            if (standard || pinned || unified) { out = kDLCPU; }
            break;
        case DeviceTag::kCuda:
            if (standard) { out = kDLCUDA; }
            if (pinned) { out = kDLCUDAHost; }
            if (unified) { out = kDLCUDAManaged; }
            break;
        case DeviceTag::kRocm:
            if (standard) { out = kDLROCM; }
            if (pinned) { out = kDLROCMHost; }
            break;
        case DeviceTag::kMetal:
            if (standard || pinned || unified) { out = kDLMetal; }
            break;
        case DeviceTag::kVulkan:
            if (standard || pinned || unified) { out = kDLVulkan; }
            break;
        case DeviceTag::kWebGpu:
            if (standard) { out = kDLWebGpu; }
            break;
        case DeviceTag::kHexagon:
            if (standard || pinned || unified) { out = kDLHexagon; }
            break;
        case DeviceTag::kLevelZero:
            if (standard || pinned || unified) { out = kDLOneApi; }
            break;
        case DeviceTag::kOpenCl:
            if (standard || pinned || unified) { out = kDLOpenCL; }
            break;
        default:
            break;
    }
    if (!out) {
        raise_kind(PythonError::kUnsupported,
                   "__dlpack_device__: device tag " + std::to_string(static_cast<unsigned>(tag)) +
                       " with memory class " + std::to_string(static_cast<unsigned>(mc)) +
                       " has no DLPack device type (use the Hurray wire form, Tensor._wire)");
    }
    return *out;
}

/// The DLPack data type of an element type, or nothing (bool is bit-packed in
/// Hurray; Tier 2 types have no DLPack code).
std::optional<DLDataType> dlpack_type(ElementType t) noexcept {
    auto make = [](DLDataTypeCode code, unsigned bits) {
        return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
    };
    switch (t) {
        case ElementType::kInt8: return make(kDLInt, 8);
        case ElementType::kInt16: return make(kDLInt, 16);
        case ElementType::kInt32: return make(kDLInt, 32);
        case ElementType::kInt64: return make(kDLInt, 64);
        case ElementType::kUInt8: return make(kDLUInt, 8);
        case ElementType::kUInt16: return make(kDLUInt, 16);
        case ElementType::kUInt32: return make(kDLUInt, 32);
        case ElementType::kUInt64: return make(kDLUInt, 64);
        case ElementType::kFloat16: return make(kDLFloat, 16);
        case ElementType::kFloat32: return make(kDLFloat, 32);
        case ElementType::kFloat64: return make(kDLFloat, 64);
        case ElementType::kBFloat16: return make(kDLBfloat, 16);
        case ElementType::kComplex64: return make(kDLComplex, 64);
        case ElementType::kComplex128: return make(kDLComplex, 128);
        default: return std::nullopt;
    }
}

/// The element type of a DLPack data type, or nothing.
std::optional<ElementType> element_type_of(const DLDataType& t) noexcept {
    if (t.lanes != 1) {
        return std::nullopt;
    }
    for (unsigned tag = 1; tag < 0xFF; ++tag) {
        const auto e = static_cast<ElementType>(tag);
        const auto d = dlpack_type(e);
        if (d && d->code == t.code && d->bits == t.bits) {
            return e;
        }
    }
    return std::nullopt;
}

/// What a capsule made by `__dlpack__` owns: the DLManagedTensor, the shape
/// it points to and a strong reference to the exported Tensor.
/// One of the two (the capsule's kind decides which one is handed out).
struct ExportContext {
    DLManagedTensor managed{};
    DLManagedTensorVersioned1 versioned{};
    std::vector<int64_t> shape;
    PyObject* tensor = nullptr;  // strong reference
};

/// Drops what an ExportContext holds (the deleters of both kinds).
void release_export(ExportContext* ctx) {
    if (ctx == nullptr || Py_IsInitialized() == 0) {
        // After interpreter shutdown nothing may touch Python objects: leak.
        return;
    }
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(ctx->tensor);
    delete ctx;
    PyGILState_Release(gil);
}

void export_deleter(DLManagedTensor* self) {
    if (self != nullptr) {
        release_export(static_cast<ExportContext*>(self->manager_ctx));
    }
}

void export_deleter_versioned(DLManagedTensorVersioned1* self) {
    if (self != nullptr) {
        release_export(static_cast<ExportContext*>(self->manager_ctx));
    }
}

/// Runs the deleter of a capsule that is still named `name` (unconsumed);
/// a consumed one was renamed, and its consumer calls the deleter.
template <class Managed>
void delete_if_unconsumed(PyObject* capsule, const char* name) {
    // SAFETY: called by CPython with the GIL held for a capsule made below,
    // whose pointer is a `Managed` while it carries `name`.
    if (PyCapsule_IsValid(capsule, name) == 0) {
        return;
    }
    auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
    if (managed != nullptr && managed->deleter != nullptr) {
        managed->deleter(managed);
    }
}

void capsule_destructor(PyObject* capsule) { delete_if_unconsumed<DLManagedTensor>(capsule, kCapsuleName); }

void versioned_capsule_destructor(PyObject* capsule) {
    delete_if_unconsumed<DLManagedTensorVersioned1>(capsule, kVersionedCapsuleName);
}

/// Whether the consumer's `max_version` (None or a (major, minor) tuple)
/// lets us answer with a versioned capsule: major 1 or later.
bool wants_versioned(const py::object& max_version) {
    if (max_version.is_none()) {
        return false;
    }
    if (!py::isinstance<py::tuple>(max_version) || py::len(max_version) != 2 ||
        !py::isinstance<py::int_>(max_version.cast<py::tuple>()[0]) ||
        !py::isinstance<py::int_>(max_version.cast<py::tuple>()[1])) {
        throw py::type_error("__dlpack__: max_version must be None or a (major, minor) tuple of ints, not " +
                             std::string(py::repr(max_version)));
    }
    return max_version.cast<py::tuple>()[0].cast<long long>() >= 1;
}

/// `Tensor.__dlpack_device__()`.
py::tuple dlpack_device(const Tensor& t) {
    DeviceTag tag = DeviceTag::kCpu;
    MemoryClass mc = MemoryClass::kStandard;
    if (!t.desc.buffers.empty()) {
        tag = t.desc.buffers[0].device_tag;
        mc = t.desc.buffers[0].memory_class;
    }
    return py::make_tuple(dlpack_device_type(tag, mc), t.device_id);
}

/// A dense row-major copy of `t` as a new Tensor (for other layouts, or when
/// the consumer asks for a copy).
py::object dense_copy(const Tensor& t) {
    std::optional<Error> error;
    auto bytes = std::make_shared<std::vector<uint8_t>>();
    std::optional<Result<TensorDescriptor>> dense;
    {
        const py::gil_scoped_release release;
        auto view = TensorView::make(t.desc, std::span<const std::span<const uint8_t>>(t.spans));
        if (!view) {
            error = view.error();
        } else if (auto m = view->materialize(); !m) {
            error = m.error();
        } else {
            *bytes = std::move(*m);
            BufferPlacement placement;
            if (!t.desc.buffers.empty()) {
                placement.device_tag = t.desc.buffers[0].device_tag;
                placement.memory_class = t.desc.buffers[0].memory_class;
            }
            dense.emplace(make_dense(t.desc.element_type, t.desc.shape, placement));
        }
    }
    if (error) {
        raise_error(*error, PythonSite::kTensor, "__dlpack__");
    }
    if (!*dense) {
        raise_error(dense->error(), PythonSite::kTensor, "__dlpack__");
    }
    auto out = std::make_unique<Tensor>();
    out->desc = std::move(dense->value());
    out->spans.emplace_back(*bytes);
    out->writable.push_back(true);
    out->native = std::move(bytes);
    out->device_id = t.device_id;
    return Tensor::finish(std::move(out), false);
}

/// What `export_capsule` makes: the kind, and the flags of a versioned one.
struct CapsuleKind {
    bool versioned = false;
    bool copied = false;
};

py::object export_capsule(const py::object& self, const DLDataType& type, const py::tuple& device, CapsuleKind kind);

/// `Tensor.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None)`.
py::object to_dlpack(const py::object& self, const py::object& stream, const py::object& max_version,
                     const py::object& dl_device, const py::object& copy) {
    const CapsuleKind kind{wants_versioned(max_version), false};
    const auto& t = self.cast<const Tensor&>();
    const TensorDescriptor& d = t.desc;
    if (d.quantization) {
        raise_dlpack_buffer_error("__dlpack__: quantized tensors cannot be represented in DLPack");
    }
    const auto type = dlpack_type(d.element_type);
    if (!type) {
        const std::string_view name = type_name(d.element_type);
        raise_dlpack_buffer_error("__dlpack__: element type " + std::string(name.empty() ? "(private)" : name) +
                                  (d.element_type == ElementType::kBool ? " (bit-packed in Hurray)" : "") +
                                  " has no DLPack representation");
    }
    for (const uint64_t dim : d.shape) {
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {  // kDynamicDim included
            raise_dlpack_buffer_error("__dlpack__: the shape has a dynamic or too large dimension");
        }
    }
    if (!d.buffers.empty() && d.buffers[0].sync_mode != SyncMode::kProducerSynced) {
        raise_dlpack_buffer_error("__dlpack__: buffers with sync mode Event or ConsumerStream are not supported");
    }
    if (!stream.is_none() && !py::isinstance<py::int_>(stream)) {
        throw py::type_error("__dlpack__: stream must be None or an int");
    }
    // stream None, -1 (device synchronisation: nothing to wait for on
    // producer-synced buffers) or a stream handle (ignored: producer-synced).
    const py::tuple device = dlpack_device(t);
    const int device_type = device[0].cast<int>();
    if (device_type != kDLCPU && device_type != kDLCUDAHost) {
        // Every Tensor's memory is host memory (a Python buffer, a file mapping,
        // a CPU DLPack import): labelling it device memory would hand the
        // consumer a host pointer to dereference on the device.
        raise_dlpack_buffer_error("__dlpack__: the tensor is labelled " + std::string(py::repr(t.device())) +
                                  " but its buffers are host memory; only cpu tensors are exported");
    }
    if (!dl_device.is_none()) {
        const auto want = dl_device.cast<py::tuple>();
        if (py::len(want) != 2 || !want[0].equal(device[0]) || !want[1].equal(device[1])) {
            raise_dlpack_buffer_error("__dlpack__: cannot export to another device (dl_device " +
                                      std::string(py::repr(dl_device)) + ", tensor on " +
                                      std::string(py::repr(device)) + ")");
        }
    }
    const bool want_copy = !copy.is_none() && copy.cast<bool>();
    const bool forbid_copy = !copy.is_none() && !copy.cast<bool>();
    const bool row_major = std::holds_alternative<RowMajorLayout>(d.layout);
    if (is_indexed_layout(d.layout)) {
        raise_dlpack_buffer_error("__dlpack__: a " + std::string(python_layout_name(d.layout)) +
                                  " tensor cannot be represented in DLPack (to_dense() makes a dense copy)");
    }
    if (!row_major && forbid_copy) {
        raise_dlpack_buffer_error("__dlpack__(copy=False): a " + std::string(python_layout_name(d.layout)) +
                                  " tensor needs a copy to be dense");
    }
    if (want_copy || !row_major) {
        const py::object dense = dense_copy(t);
        return export_capsule(dense, *type, device, CapsuleKind{kind.versioned, true});
    }
    return export_capsule(self, *type, device, kind);
}

/// The capsule over `self`, a row-major tensor of DLPack type `type` on
/// `device`: legacy, or versioned with the read-only and copied flags.
py::object export_capsule(const py::object& self, const DLDataType& type, const py::tuple& device, CapsuleKind kind) {
    const auto& t = self.cast<const Tensor&>();
    const TensorDescriptor& d = t.desc;
    auto ctx = std::make_unique<ExportContext>();
    ctx->shape.reserve(d.shape.size());
    uint64_t count = 1;
    for (const uint64_t dim : d.shape) {
        ctx->shape.push_back(static_cast<int64_t>(dim));
        if (dim != 0 && count > std::numeric_limits<uint64_t>::max() / dim) {
            raise_dlpack_buffer_error("__dlpack__: element count overflows");
        }
        count *= dim;
    }
    const uint64_t item = type.bits / 8U;
    if (count > std::numeric_limits<uint64_t>::max() / item) {
        raise_dlpack_buffer_error("__dlpack__: byte count overflows");
    }
    const uint64_t nbytes = count * item;
    uint8_t* data = nullptr;
    if (nbytes != 0) {
        if (t.spans.empty() || d.byte_offset > t.spans[0].size() || nbytes > t.spans[0].size() - d.byte_offset) {
            raise_kind(PythonError::kBuffer, "__dlpack__: the data lies outside buffer 0");
        }
        // SAFETY: [byte_offset, byte_offset + nbytes) lies in buffer 0 (checked
        // above); the capsule's context holds the Tensor, which keeps that
        // memory alive. DLPack takes a non-const pointer; read-only memory (a
        // file mapping) must not be written through it: a versioned capsule
        // says so with its read-only flag (DLPack 0.6 has no such flag).
        data = const_cast<uint8_t*>(t.spans[0].data() + d.byte_offset);  // NOLINT(*-const-cast)
    }
    DLTensor& dl = kind.versioned ? ctx->versioned.dl_tensor : ctx->managed.dl_tensor;
    dl.data = data;
    dl.device = DLDevice{static_cast<DLDeviceType>(device[0].cast<int>()), device[1].cast<int>()};
    dl.ndim = static_cast<int>(ctx->shape.size());
    dl.dtype = type;
    dl.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
    dl.strides = nullptr;  // compact row-major
    dl.byte_offset = 0;
    ctx->tensor = self.inc_ref().ptr();
    PyObject* capsule = nullptr;
    if (kind.versioned) {
        DLManagedTensorVersioned1& v = ctx->versioned;
        v.version = kDLPackVersion;
        v.manager_ctx = ctx.get();
        v.deleter = &export_deleter_versioned;
        const bool writable = !t.writable.empty() && t.writable[0];
        v.flags = (writable ? 0 : kDLPackFlagReadOnly) | (kind.copied ? kDLPackFlagIsCopied : 0);
        capsule = PyCapsule_New(&v, kVersionedCapsuleName, &versioned_capsule_destructor);
    } else {
        ctx->managed.manager_ctx = ctx.get();
        ctx->managed.deleter = &export_deleter;
        capsule = PyCapsule_New(&ctx->managed, kCapsuleName, &capsule_destructor);
    }
    if (capsule == nullptr) {
        Py_DECREF(ctx->tensor);
        throw py::error_already_set();
    }
    (void)ctx.release();  // owned by the capsule now (or by its consumer)
    return py::reinterpret_steal<py::object>(capsule);
}

/// Calls a producer's deleter exactly once, with the GIL held (one of the
/// two pointers is set).
struct ImportedCapsule {
    DLManagedTensor* managed = nullptr;
    DLManagedTensorVersioned1* versioned = nullptr;
    ImportedCapsule() = default;
    ImportedCapsule(const ImportedCapsule&) = delete;
    ImportedCapsule& operator=(const ImportedCapsule&) = delete;
    ImportedCapsule(ImportedCapsule&&) = delete;
    ImportedCapsule& operator=(ImportedCapsule&&) = delete;
    ~ImportedCapsule() {
        const bool legacy = managed != nullptr && managed->deleter != nullptr;
        const bool v1 = versioned != nullptr && versioned->deleter != nullptr;
        if ((legacy || v1) && Py_IsInitialized() != 0) {
            const PyGILState_STATE gil = PyGILState_Ensure();
            if (legacy) {
                managed->deleter(managed);
            } else {
                versioned->deleter(versioned);
            }
            PyGILState_Release(gil);
        }
    }
};

/// Asks `obj` for a capsule, offering DLPack 1.x: `__dlpack__(max_version=
/// (1, 0))`, and plain `__dlpack__()` for producers that predate the keyword
/// (NumPy 1.24 and PyTorch 1.13 raise TypeError for it).
py::object request_capsule(const py::object& obj) {
    try {
        return obj.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(kDLPackVersion.major,
                                                                              kDLPackVersion.minor));
    } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_TypeError)) {
            throw;
        }
    }
    return obj.attr("__dlpack__")();
}

/// `hurray.from_dlpack(obj)`: a Tensor sharing the memory of any object with
/// `__dlpack__` (or a "dltensor" / "dltensor_versioned" capsule).
py::object from_dlpack(const py::object& obj) {
    py::object capsule = obj;
    if (PyCapsule_CheckExact(obj.ptr()) == 0) {
        if (!py::hasattr(obj, "__dlpack__")) {
            throw py::type_error("from_dlpack: expected an object with __dlpack__, not " +
                                 std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
        }
        capsule = request_capsule(obj);
    }
    DLManagedTensor* managed = nullptr;
    DLManagedTensorVersioned1* versioned = nullptr;
    if (PyCapsule_IsValid(capsule.ptr(), kVersionedCapsuleName) != 0) {
        versioned = static_cast<DLManagedTensorVersioned1*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedCapsuleName));
        if (versioned == nullptr) {
            throw py::error_already_set();
        }
        if (versioned->version.major != kDLPackVersion.major) {
            // A later major version may change the struct: nothing past
            // `version` can be trusted. The capsule stays unconsumed.
            raise_dlpack_buffer_error("from_dlpack: DLPack version " + std::to_string(versioned->version.major) +
                                      "." + std::to_string(versioned->version.minor) +
                                      " is not supported (major version 1 is)");
        }
    } else if (PyCapsule_IsValid(capsule.ptr(), kCapsuleName) != 0) {
        managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
        if (managed == nullptr) {
            throw py::error_already_set();
        }
    } else {
        raise_kind(PythonError::kInvalidArgument,
                   "from_dlpack: __dlpack__ did not return an unconsumed \"dltensor\" or \"dltensor_versioned\" "
                   "capsule");
    }
    const DLTensor& dl = versioned != nullptr ? versioned->dl_tensor : managed->dl_tensor;
    const bool read_only = versioned != nullptr && (versioned->flags & kDLPackFlagReadOnly) != 0;
    if (dl.device.device_type != kDLCPU && dl.device.device_type != kDLCUDAHost) {
        raise_kind(PythonError::kUnsupported, "from_dlpack: device type " + std::to_string(dl.device.device_type) +
                                                " is not host memory; only CPU tensors are supported");
    }
    const auto type = element_type_of(dl.dtype);
    if (!type) {
        raise_kind(PythonError::kUnsupported, "from_dlpack: DLPack type (code " + std::to_string(dl.dtype.code) +
                                                ", bits " + std::to_string(dl.dtype.bits) + ", lanes " +
                                                std::to_string(dl.dtype.lanes) + ") has no Hurray element type");
    }
    if (dl.ndim < 0 || dl.ndim > 64 || (dl.ndim > 0 && dl.shape == nullptr)) {
        raise_kind(PythonError::kInvalidArgument, "from_dlpack: bad ndim or shape");
    }
    Shape shape;
    // SAFETY: a DLTensor's shape (and strides, when not null) hold ndim entries.
    const std::span<const int64_t> dims(dl.shape, static_cast<size_t>(dl.ndim));
    for (const int64_t dim : dims) {
        if (dim < 0) {
            raise_kind(PythonError::kInvalidArgument, "from_dlpack: negative dimension");
        }
        shape.push_back(static_cast<uint64_t>(dim));
    }
    if (dl.strides != nullptr) {
        // SAFETY: as above.
        const std::span<const int64_t> strides(dl.strides, static_cast<size_t>(dl.ndim));
        int64_t expected = 1;
        for (size_t k = dims.size(); k-- > 0;) {
            if (dims[k] != 1 && strides[k] != expected) {
                raise_kind(PythonError::kUnsupported,
                           "from_dlpack: the tensor is not C-contiguous (copy it to a contiguous one first)");
            }
            if (dims[k] != 0 && expected > std::numeric_limits<int64_t>::max() / dims[k]) {
                raise_kind(PythonError::kBuffer, "from_dlpack: size overflows");
            }
            expected *= dims[k];
        }
    }
    std::optional<Result<TensorDescriptor>> d;
    {
        const py::gil_scoped_release release;
        d.emplace(make_dense(*type, shape));
    }
    if (!*d) {
        raise_error(d->error(), PythonSite::kTensor, "from_dlpack");
    }
    const uint64_t nbytes = d->value().buffers[0].byte_size;
    if (nbytes > static_cast<uint64_t>(std::numeric_limits<ptrdiff_t>::max()) ||
        dl.byte_offset > std::numeric_limits<uint64_t>::max() - nbytes) {
        raise_kind(PythonError::kBuffer, "from_dlpack: size overflows");
    }
    if (nbytes != 0 && dl.data == nullptr) {
        raise_kind(PythonError::kInvalidArgument, "from_dlpack: null data pointer");
    }
    // Ownership passes to the new Tensor: rename first, so that the capsule's
    // own destructor no longer frees it.
    if (PyCapsule_SetName(capsule.ptr(), versioned != nullptr ? kUsedVersionedCapsuleName : kUsedCapsuleName) != 0) {
        throw py::error_already_set();
    }
    auto keep = std::make_shared<ImportedCapsule>();
    keep->managed = managed;
    keep->versioned = versioned;
    auto t = std::make_unique<Tensor>();
    t->desc = std::move(d->value());
    if (nbytes != 0) {
        // SAFETY: the producer guarantees nbytes readable bytes (dense,
        // C-contiguous for this shape and type) at data + byte_offset until its
        // deleter runs, which `keep` calls when the Tensor is gone.
        t->spans.emplace_back(static_cast<const uint8_t*>(dl.data) + dl.byte_offset, static_cast<size_t>(nbytes));
    } else {
        t->spans.emplace_back();
    }
    t->writable.push_back(!read_only);
    t->native = std::move(keep);
    t->device_id = dl.device.device_id;
    return Tensor::finish(std::move(t), false);
}

}  // namespace

void add_dlpack(py::class_<Tensor>& cls, py::module_& m) {
    cls.def("__dlpack__", &to_dlpack, py::arg("stream") = py::none(), py::kw_only(),
            py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
            "A DLPack capsule sharing the tensor's memory; it keeps the Tensor alive. The legacy \"dltensor\" "
            "(DLPack 0.6) when max_version is None, a \"dltensor_versioned\" (DLPack 1.0, read-only flag set for "
            "read-only memory such as a file mapping) when max_version is (1, x) or later. "
            "The built-in BufferError for bool (bit-packed), Tier 2 and quantized tensors, and for tensors labelled "
            "with a device other than the cpu (their memory is host memory).")
        .def("__dlpack_device__", &dlpack_device, "(DLDeviceType, device_id) from the buffers' device and memory class")
        .def(
            "to_torch",
            [](const py::object& self) {
                return py::module_::import("torch.utils.dlpack").attr("from_dlpack")(self);
            },
            "A torch.Tensor sharing the memory, through DLPack (ImportError without torch)");
    m.def("from_dlpack", &from_dlpack, py::arg("x"),
          "A Tensor sharing the memory of an object with __dlpack__ (CPU, C-contiguous); the producer's deleter runs "
          "once, when the Tensor and its views are gone");
}

}  // namespace hurray::python
