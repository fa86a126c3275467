// SPDX-License-Identifier: Apache-2.0
/// @file
/// The native interchange protocol: `Tensor.__hurray__(stream=None)` and
/// `hurray.from_hurray(obj)` (the reference's ADR-023, renamed by ADR-033,
/// multi-buffer by ADR-030, C-readable context by ADR-034).
///
/// The capsule is named `"hurray_tensor"`. Its pointer is a `HurrayBufferList*`
/// of the C ABI (<hurray.h>, libhurray_c) holding one `HurrayBuffer` per entry of
/// the descriptor's buffer table, in order; its context is a
/// `HurrayTensorContext*` holding the producer's `HURRAY_C_ABI_VERSION`, the
/// encoded descriptor and, as its opaque owner, a strong reference to the
/// exporting Tensor. Every handle is made and read through the C functions, so a
/// C consumer linking the same libhurray_c can read a capsule, and a C producer
/// can make one that `from_hurray` reads.
///
/// Ownership: an unconsumed capsule destroys its list and its context when it
/// is collected (which drops the Tensor reference). A consumer renames the
/// capsule `"used_hurray_tensor"` first and then owns both; `from_hurray`
/// keeps them in the new Tensor and destroys them, each exactly once, when that
/// Tensor (and every view of it) is gone, so the producer's memory lives as long
/// as the consumer's tensor.

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "tensor.hpp"

#ifdef HURRAY_PY_HAVE_C_ABI
#include <hurray.h>
#endif

namespace hurray::python {

namespace {

constexpr const char* kCapsuleName = "hurray_tensor";
constexpr const char* kUsedCapsuleName = "used_hurray_tensor";

/// Raises the built-in BufferError (the `stream` contract shared with
/// `__dlpack__`).
[[noreturn]] void raise_builtin_buffer_error(const std::string& message) {
    PyErr_SetString(PyExc_BufferError, message.c_str());
    throw py::error_already_set();
}

/// Checks `stream` (None, -1 or a stream handle) against the buffers' sync
/// modes, as `__dlpack__` does: TypeError for a non-int; BufferError when a
/// buffer is not producer-synced and the caller neither asked for a device
/// synchronisation (-1) nor can be handed the event (this module's memory is
/// host memory: there is no device work to wait for on -1).
void check_stream(const TensorDescriptor& d, const py::object& stream) {
    if (!stream.is_none() && (!py::isinstance<py::int_>(stream) || py::isinstance<py::bool_>(stream))) {
        throw py::type_error("__hurray__: stream must be None or an int, not " +
                             std::string(py::str(py::type::handle_of(stream).attr("__name__"))));
    }
    const bool device_sync = !stream.is_none() && stream.cast<py::int_>().equal(py::int_(-1));
    for (size_t i = 0; i < d.buffers.size(); ++i) {
        if (d.buffers[i].sync_mode != SyncMode::kProducerSynced && !device_sync) {
            raise_builtin_buffer_error("__hurray__: buffer " + std::to_string(i) +
                                       " is not producer-synced (sync mode " +
                                       std::to_string(static_cast<unsigned>(d.buffers[i].sync_mode)) +
                                       "); pass stream=-1 to synchronise before the handoff");
        }
    }
}

/// The checks `__hurray__` runs before it builds a capsule.
void check_exportable(const Tensor& t, const py::object& stream) {
    const TensorDescriptor& d = t.desc;
    if (d.buffers.empty()) {
        raise_kind(PythonError::kBuffer,
                   "__hurray__: the tensor owns no buffers (a composite head); export its members instead");
    }
    if (d.buffers.size() != t.spans.size()) {
        raise_kind(PythonError::kInvalidDescriptor, "__hurray__: the descriptor declares " +
                                                      std::to_string(d.buffers.size()) + " buffers, the tensor has " +
                                                      std::to_string(t.spans.size()));
    }
    check_stream(d, stream);
}

/// `from_hurray` of exactly a `hurray.Tensor` of this module: what consuming
/// its capsule gives, without the capsule. The new Tensor views the same
/// buffers (any address: the C ABI's alignment rule, which makes the capsule
/// copy a buffer at a less aligned address, does not apply inside the module)
/// and keeps the source alive.
py::object share_tensor(const py::object& obj) {
    const auto& source = obj.cast<const Tensor&>();
    check_exportable(source, py::none());
    auto t = std::make_unique<Tensor>();
    t->desc = source.desc;
    t->spans = source.spans;
    t->writable = source.writable;
    t->owner = obj;  // holds the source, and through it the memory it views
    t->device_id = source.device_id;
    return Tensor::finish(std::move(t), false);
}

/// The start of `from_hurray`: TypeError for an object without `__hurray__`;
/// for an exact `hurray.Tensor`, the shared Tensor (`share_tensor`); nothing
/// otherwise (the capsule path follows).
std::optional<py::object> import_without_capsule(const py::object& obj) {
    if (!py::hasattr(obj, "__hurray__")) {
        throw py::type_error("from_hurray: expected an object with __hurray__ (a hurray.Tensor), not " +
                             std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
    }
    if (Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(py::type::of<Tensor>().ptr())) {
        return share_tensor(obj);
    }
    return std::nullopt;
}

#ifdef HURRAY_PY_HAVE_C_ABI

/// Whether the running interpreter is shutting down.
bool interpreter_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

/// The context's owner release: drops the strong reference to the exported
/// Tensor. It may run from a capsule destructor during interpreter shutdown
/// (with the GIL held), from a consumer's finalisation (GIL held) or from a C
/// consumer on any thread: the reference is dropped with the GIL held, and
/// leaked once the interpreter is gone (its memory goes with the interpreter).
void release_owner(void* owner) noexcept {
    if (owner == nullptr || Py_IsInitialized() == 0) {
        return;
    }
    if (PyGILState_Check() != 0) {
        Py_DECREF(static_cast<PyObject*>(owner));
        return;
    }
    if (interpreter_finalizing()) {
        return;  // taking the GIL from another thread now could block forever
    }
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(owner));
    PyGILState_Release(gil);
}

/// Release callback of a buffer copied into aligned memory (`aligned_copy`).
void free_copy(void* data, void* /*release_context*/) noexcept { std::free(data); }

/// Destroys a list and a context (NULLs are skipped), each once.
void destroy_payload(HurrayBufferList* list, HurrayTensorContext* ctx) noexcept {
    if (list != nullptr) {
        (void)hurray_buffer_list_destroy(&list);
    }
    if (ctx != nullptr) {
        (void)hurray_tensor_context_destroy(&ctx);
    }
}

/// Destructor of a `"hurray_tensor"` capsule: an unconsumed one still owns its
/// list and context; a consumed one (renamed) owns nothing.
void capsule_destructor(PyObject* capsule) noexcept {
    // SAFETY: CPython calls this with the GIL held, for a capsule made by
    // `export_capsule` (the only place this destructor is installed); a
    // consumer renames it before taking the payload, so the name says who owns
    // it. The destructor may run while an exception is being raised (the
    // capsule was a temporary): that exception is set aside and put back, so
    // neither the lookups nor the owner's release can lose or replace it.
    PyObject* type = nullptr;
    PyObject* value = nullptr;
    PyObject* traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyCapsule_IsValid(capsule, kCapsuleName) != 0) {
        auto* list = static_cast<HurrayBufferList*>(PyCapsule_GetPointer(capsule, kCapsuleName));
        auto* ctx = static_cast<HurrayTensorContext*>(PyCapsule_GetContext(capsule));
        PyErr_Clear();
        destroy_payload(list, ctx);
    }
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
}

/// Whether a buffer's memory can be read by the CPU: cpu memory, or memory of
/// any device that is pinned host memory or unified (managed) memory.
bool host_addressable(uint8_t device_tag, uint8_t memory_class) noexcept {
    return device_tag == static_cast<uint8_t>(DeviceTag::kCpu) ||
           memory_class == static_cast<uint8_t>(MemoryClass::kHostPinned) ||
           memory_class == static_cast<uint8_t>(MemoryClass::kUnified);
}

/// A status from the C ABI as a message: "`what` failed (status, last error)".
std::string c_failure(const char* what, HurrayStatus status) {
    const char* last = hurray_last_error_message();
    std::string out = std::string(what) + " failed (status " + std::to_string(status);
    if (last != nullptr && *last != 0) {
        out += ": " + std::string(last);
    }
    return out + ")";
}

/// A 64-byte aligned copy of `bytes` (malloc'ed; freed by `free_copy`).
void* aligned_copy(std::span<const uint8_t> bytes, uint32_t alignment) {
    const size_t size = (bytes.size() + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    // SAFETY: `p` holds `size` >= bytes.size() bytes; `bytes` is readable.
    std::memcpy(p, bytes.data(), bytes.size());
    return p;
}

/// `Tensor.__hurray__(stream=None)`: a fresh capsule per call.
py::object export_capsule(const py::object& self, const py::object& stream) {
    const auto& t = self.cast<const Tensor&>();
    const TensorDescriptor& d = t.desc;
    check_exportable(t, stream);
    std::optional<Result<std::vector<uint8_t>>> encoded;
    {
        const py::gil_scoped_release release;
        encoded.emplace(encode(d));
    }
    if (!*encoded) {
        raise_error(encoded->error(), PythonSite::kTensor, "__hurray__");
    }

    HurrayBufferList* list = nullptr;
    if (const HurrayStatus s = hurray_buffer_list_new(d.buffers.size(), &list); s != HURRAY_OK) {
        raise_kind(PythonError::kBuffer, "__hurray__: " + c_failure("hurray_buffer_list_new", s));
    }
    static uint8_t empty_byte = 0;  // the address of an empty buffer (never read)
    for (size_t i = 0; i < d.buffers.size(); ++i) {
        const BufferHandle& h = d.buffers[i];
        const std::span<const uint8_t> bytes = t.spans[i];
        // SAFETY: the handle only records the address; the bytes live in memory
        // the exported Tensor keeps alive, and the capsule's context holds a
        // strong reference to that Tensor until the consumer is done with
        // them. The C ABI hands out `void*`; read-only memory (a file mapping)
        // must not be written through it, as with DLPack.
        void* data = bytes.empty() ? static_cast<void*>(&empty_byte)
                                   : const_cast<uint8_t*>(bytes.data());  // NOLINT(*-const-cast)
        HurrayReleaseCallback release = nullptr;
        // SAFETY: only the address's value is inspected.
        if (!bytes.empty() && h.alignment != 0 && reinterpret_cast<uintptr_t>(data) % h.alignment != 0) {
            // The C ABI wants the declared alignment honoured: memory from a
            // Python object at a less aligned address travels as an aligned copy.
            try {
                const py::gil_scoped_release nogil;  // the exported Tensor (held by the caller) keeps `bytes`
                data = aligned_copy(bytes, h.alignment);
            } catch (const std::bad_alloc&) {
                destroy_payload(list, nullptr);
                throw;
            }
            release = &free_copy;
        }
        HurrayBuffer* handle = nullptr;
        const char* call = "hurray_buffer_from_ptr";
        HurrayStatus s = hurray_buffer_from_ptr(data, bytes.size(), h.alignment, static_cast<uint8_t>(h.device_tag),
                                                static_cast<uint8_t>(h.sync_mode),
                                                static_cast<uint8_t>(h.memory_class), release, nullptr, &handle);
        if (s == HURRAY_OK) {
            call = "hurray_buffer_list_push";
            s = hurray_buffer_list_push(list, handle);
            if (s != HURRAY_OK) {
                (void)hurray_buffer_destroy(handle);  // not pushed: still ours (frees a copy)
            }
        } else if (release != nullptr) {
            free_copy(data, nullptr);  // rejected: the callback was not taken
        }
        if (s != HURRAY_OK) {
            const std::string message = c_failure(call, s);
            destroy_payload(list, nullptr);
            raise_kind(PythonError::kBuffer, "__hurray__: buffer " + std::to_string(i) + ": " + message);
        }
    }

    const std::vector<uint8_t>& bytes = encoded->value();
    HurrayTensorContext* ctx = nullptr;
    PyObject* owner = self.ptr();
    Py_INCREF(owner);  // released by release_owner, exactly once, when the context is destroyed
    if (const HurrayStatus s = hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes.data(), bytes.size(), owner,
                                                         &release_owner, &ctx);
        s != HURRAY_OK) {
        Py_DECREF(owner);  // the context never took it
        destroy_payload(list, nullptr);
        raise_kind(PythonError::kBuffer, "__hurray__: " + c_failure("hurray_tensor_context_new", s));
    }
    PyObject* capsule = PyCapsule_New(list, kCapsuleName, &capsule_destructor);
    if (capsule == nullptr) {
        destroy_payload(list, ctx);
        throw py::error_already_set();
    }
    if (PyCapsule_SetContext(capsule, ctx) != 0) {
        // The capsule's destructor would find no context: destroy it here.
        (void)hurray_tensor_context_destroy(&ctx);
        Py_DECREF(capsule);  // destroys the list
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(capsule);
}

/// What a Tensor made by `from_hurray` owns: the consumed list and context,
/// destroyed once with the Tensor (which holds the GIL when it goes).
struct ConsumedPayload {
    HurrayBufferList* list = nullptr;
    HurrayTensorContext* ctx = nullptr;
    ConsumedPayload() = default;
    ConsumedPayload(const ConsumedPayload&) = delete;
    ConsumedPayload& operator=(const ConsumedPayload&) = delete;
    ConsumedPayload(ConsumedPayload&&) = delete;
    ConsumedPayload& operator=(ConsumedPayload&&) = delete;
    ~ConsumedPayload() { destroy_payload(list, ctx); }
};

/// `hurray.from_hurray(obj)`.
py::object import_capsule(const py::object& obj) {
    if (auto shared = import_without_capsule(obj)) {
        return std::move(*shared);
    }
    const py::object capsule = obj.attr("__hurray__")();
    if (PyCapsule_IsValid(capsule.ptr(), kCapsuleName) == 0) {
        PyErr_Clear();
        if (PyCapsule_CheckExact(capsule.ptr()) == 0) {
            raise_kind(PythonError::kBuffer, "from_hurray: __hurray__ returned " +
                                               std::string(py::str(py::type::handle_of(capsule).attr("__name__"))) +
                                               ", not a \"hurray_tensor\" capsule");
        }
        const char* name = PyCapsule_GetName(capsule.ptr());
        PyErr_Clear();
        const std::string got = name == nullptr ? std::string("(unnamed)") : std::string(name);
        if (got == kUsedCapsuleName) {
            raise_kind(PythonError::kBuffer,
                       "from_hurray: the capsule was already consumed; call __hurray__() again for a fresh one");
        }
        raise_kind(PythonError::kBuffer, R"(from_hurray: expected a "hurray_tensor" capsule, got ")" + got + "\"");
    }
    auto* list = static_cast<HurrayBufferList*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
    auto* ctx = static_cast<HurrayTensorContext*>(PyCapsule_GetContext(capsule.ptr()));
    if (PyErr_Occurred() != nullptr) {
        throw py::error_already_set();
    }
    if (list == nullptr || ctx == nullptr) {
        raise_kind(PythonError::kBuffer, "from_hurray: the capsule has no buffer list or no context");
    }
    // The version first, before any other accessor reads the handles.
    uint32_t version = 0;
    if (const HurrayStatus s = hurray_tensor_context_abi_version(ctx, &version); s != HURRAY_OK) {
        raise_kind(PythonError::kBuffer, "from_hurray: " + c_failure("hurray_tensor_context_abi_version", s));
    }
    if (version != HURRAY_C_ABI_VERSION) {
        raise_kind(PythonError::kUnsupported, "from_hurray: the capsule was made for C ABI version " +
                                                std::to_string(version) + ", this module reads version " +
                                                std::to_string(HURRAY_C_ABI_VERSION));
    }
    // A capsule made by this module views host memory whatever its labels say.
    const bool own = PyCapsule_GetDestructor(capsule.ptr()) == &capsule_destructor;
    // Take ownership: renamed first, so the capsule's destructor lets go.
    if (PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName) != 0) {
        throw py::error_already_set();
    }
    auto payload = std::make_shared<ConsumedPayload>();
    payload->list = list;
    payload->ctx = ctx;

    const uint8_t* encoded = nullptr;
    uint64_t encoded_len = 0;
    if (const HurrayStatus s = hurray_tensor_context_descriptor(ctx, &encoded, &encoded_len); s != HURRAY_OK) {
        raise_kind(PythonError::kBuffer, "from_hurray: " + c_failure("hurray_tensor_context_descriptor", s));
    }
    uint64_t count = 0;
    if (const HurrayStatus s = hurray_buffer_list_len(list, &count); s != HURRAY_OK) {
        raise_kind(PythonError::kBuffer, "from_hurray: " + c_failure("hurray_buffer_list_len", s));
    }
    std::vector<std::span<const uint8_t>> spans;
    for (uint64_t i = 0; i < count; ++i) {
        HurrayBuffer* b = nullptr;  // borrowed: the list keeps owning it
        void* data = nullptr;
        uint64_t size = 0;
        uint8_t device_tag = 0;
        uint8_t memory_class = 0;
        HurrayStatus s = hurray_buffer_list_get(list, i, &b);
        if (s == HURRAY_OK) {
            s = hurray_buffer_data_ptr(b, &data);
        }
        if (s == HURRAY_OK) {
            s = hurray_buffer_byte_size(b, &size);
        }
        if (s == HURRAY_OK) {
            s = hurray_buffer_device_tag(b, &device_tag);
        }
        if (s == HURRAY_OK) {
            s = hurray_buffer_memory_class(b, &memory_class);
        }
        if (s != HURRAY_OK) {
            raise_kind(PythonError::kBuffer, "from_hurray: buffer " + std::to_string(i) + ": " +
                                               c_failure("reading the buffer handle", s));
        }
        if (!own && !host_addressable(device_tag, memory_class)) {
            // This module reads a Tensor's bytes on the CPU (numpy views,
            // to_dense, repr): device memory from another producer would be
            // dereferenced as host memory.
            raise_kind(PythonError::kUnsupported,
                       "from_hurray: buffer " + std::to_string(i) + " is device memory (device tag " +
                           std::to_string(device_tag) + ", memory class " + std::to_string(memory_class) +
                           "); this module's tensors live in host memory");
        }
        if (size > static_cast<uint64_t>(PTRDIFF_MAX) || (size != 0 && data == nullptr)) {
            raise_kind(PythonError::kBuffer, "from_hurray: buffer " + std::to_string(i) + " has a bad address or size");
        }
        // SAFETY: the producer guarantees `size` bytes at `data` until the
        // handle is destroyed, which `payload` (kept by the new Tensor) does
        // only when that Tensor and its views are gone.
        spans.push_back(size == 0 ? std::span<const uint8_t>()
                                  : std::span<const uint8_t>(static_cast<const uint8_t*>(data), size));
    }
    std::optional<Result<TensorDescriptor>> decoded;
    {
        // SAFETY: the context lends `encoded_len` bytes at `encoded` until it
        // is destroyed (`payload` keeps it).
        const std::span<const uint8_t> bytes =
            encoded == nullptr ? std::span<const uint8_t>() : std::span<const uint8_t>(encoded, encoded_len);
        const py::gil_scoped_release release;
        decoded.emplace(decode(bytes));
    }
    if (!*decoded) {
        raise_error(decoded->error(), PythonSite::kTensor, "from_hurray: the capsule's descriptor");
    }
    auto t = std::make_unique<Tensor>();
    t->desc = std::move(decoded->value());
    if (spans.size() != t->desc.buffers.size()) {
        raise_kind(PythonError::kInvalidDescriptor, "from_hurray: the capsule carries " + std::to_string(spans.size()) +
                                                      " buffers, its descriptor declares " +
                                                      std::to_string(t->desc.buffers.size()));
    }
    // Writable only where the producer is one of this module's Tensors whose
    // own buffer (same address) is writable: a foreign producer's memory may be
    // a read-only mapping, which a numpy view must not write into.
    t->writable.assign(spans.size(), false);
    if (py::isinstance<Tensor>(obj)) {
        const auto& source = obj.cast<const Tensor&>();
        for (size_t i = 0; i < spans.size() && i < source.spans.size(); ++i) {
            t->writable[i] = source.writable.size() > i && source.writable[i] && !spans[i].empty() &&
                             spans[i].data() == source.spans[i].data();
        }
        t->device_id = source.device_id;
    }
    t->spans = std::move(spans);
    t->native = std::move(payload);
    // Host memory is checked against the descriptor's data rules; a buffer a
    // foreign producer labels device memory is not read here.
    const bool host = std::all_of(t->desc.buffers.begin(), t->desc.buffers.end(),
                                  [](const BufferHandle& h) { return h.device_tag == DeviceTag::kCpu; });
    return Tensor::finish(std::move(t), host);
}

#else  // !HURRAY_PY_HAVE_C_ABI

[[noreturn]] void no_c_abi(const char* what) {
    raise_kind(PythonError::kUnsupported,
               std::string(what) + ": this build of the module has no C ABI (libhurray_c, HURRAY_BUILD_C=OFF)");
}

py::object export_capsule(const py::object& self, const py::object& stream) {
    check_exportable(self.cast<const Tensor&>(), stream);
    no_c_abi("__hurray__");
}

py::object import_capsule(const py::object& obj) {
    if (auto shared = import_without_capsule(obj)) {
        return std::move(*shared);
    }
    no_c_abi("from_hurray");
}

#endif

}  // namespace

void add_native_protocol(py::class_<Tensor>& cls, py::module_& m) {
    cls.def("__hurray__", &export_capsule, py::arg("stream") = py::none(),
            "A fresh \"hurray_tensor\" capsule for hurray-to-hurray zero-copy exchange (any dtype, layout, "
            "quantization, device): a C-ABI HurrayBufferList with every buffer in descriptor order, and a "
            "HurrayTensorContext with the encoded descriptor and the C ABI version. The capsule keeps this Tensor "
            "alive. `stream` as for __dlpack__ (None, -1, or a stream handle).");
    m.def("from_hurray", &import_capsule, py::arg("obj"), py::pos_only(),
          "A Tensor over the buffers of any object with __hurray__ (no copy): consumes the capsule (renamed "
          "\"used_hurray_tensor\") and keeps the producer's memory alive as long as the Tensor and its views. "
          "TypeError without __hurray__; hurray.BufferError for a consumed or malformed capsule; "
          "hurray.UnsupportedError for another C ABI version.");
}

}  // namespace hurray::python
