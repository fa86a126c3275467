// SPDX-License-Identifier: Apache-2.0
// The C ABI's DLPack export: a dense, unquantized CPU tensor handed to a DLPack
// consumer as a DLManagedTensor (DLPack 0.6 and later), without copying. The
// managed tensor holds a share of the bytes (a file's mapping, or a consumed
// HurrayBuffer); its deleter releases that share exactly once.
#include "c/c_internal.hpp"

#include <dlpack/dlpack.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <variant>

#include "hurray/core/describe.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/core/text.hpp"

using hurray::c::fail;

namespace {

// What a managed tensor owns: the DLManagedTensor itself (first member, so
// that one allocation holds everything), the shape and strides it points to,
// and what keeps the bytes alive.
struct DlpackExport {
    DLManagedTensor managed{};
    std::array<int64_t, hurray::kMaxRank> shape{};
    std::array<int64_t, hurray::kMaxRank> strides{};
    // Share of a file's mapping (hurray_file_tensor_to_dlpack).
    hurray::SharedBuffer keep{};
    // A consumed buffer handle (hurray_tensor_to_dlpack), destroyed by the deleter.
    HurrayBuffer* owned = nullptr;
};

}  // namespace

extern "C" {
// The deleter stored in every managed tensor: frees the export (its share of
// the bytes, or the consumed buffer, whose release callback then runs once).
// C language linkage, as DLManagedTensor::deleter's type has; internal, so not
// exported.
static void hurray_dlpack_delete(DLManagedTensor* self) noexcept {
    if (self == nullptr) {
        return;
    }
    // SAFETY: every managed tensor with this deleter was made by make_export
    // below, whose manager_ctx is the DlpackExport holding it; the consumer
    // calls the deleter once (DLPack's contract), so it is deleted once.
    auto* ex = static_cast<DlpackExport*>(self->manager_ctx);
    HurrayBuffer* owned = ex->owned;
    // Dropping `keep` releases one share of the file (an atomic count; no throw).
    delete ex;
    if (owned != nullptr) {
        // Catches whatever its release callback throws; nothing to report to.
        (void)hurray_buffer_destroy(owned);
    }
}
}  // extern "C"

namespace {

// The DLPack type of a built-in element type, or why there is none (DLPack
// 0.6 defines int, uint, float, bfloat and complex codes of whole bytes).
struct DtypeOrReason {
    DLDataType dtype{};
    const char* reason = nullptr;  // set when there is no DLPack type
};

DtypeOrReason dlpack_dtype(hurray::ElementType type) {
    using hurray::ElementType;
    auto of = [](DLDataTypeCode code, uint8_t bits) {
        return DtypeOrReason{DLDataType{static_cast<uint8_t>(code), bits, 1}, nullptr};
    };
    switch (type) {
        case ElementType::kFloat16:
            return of(kDLFloat, 16);
        case ElementType::kBFloat16:
            return of(kDLBfloat, 16);
        case ElementType::kFloat32:
            return of(kDLFloat, 32);
        case ElementType::kFloat64:
            return of(kDLFloat, 64);
        case ElementType::kInt8:
            return of(kDLInt, 8);
        case ElementType::kUInt8:
            return of(kDLUInt, 8);
        case ElementType::kInt16:
            return of(kDLInt, 16);
        case ElementType::kUInt16:
            return of(kDLUInt, 16);
        case ElementType::kInt32:
            return of(kDLInt, 32);
        case ElementType::kUInt32:
            return of(kDLUInt, 32);
        case ElementType::kInt64:
            return of(kDLInt, 64);
        case ElementType::kUInt64:
            return of(kDLUInt, 64);
        case ElementType::kComplex64:
            return of(kDLComplex, 64);
        case ElementType::kComplex128:
            return of(kDLComplex, 128);
        case ElementType::kBool:
            return {{}, "its elements are packed 8 per byte, DLPack's booleans take a byte each"};
        case ElementType::kInt4:
        case ElementType::kUInt4:
        case ElementType::kInt2:
        case ElementType::kUInt2:
        case ElementType::kFloat4E2M1:
        case ElementType::kFloat6E2M3:
        case ElementType::kFloat6E3M2:
            return {{}, "its elements are packed several per byte, DLPack addresses whole bytes"};
        case ElementType::kFloat8E4M3:
        case ElementType::kFloat8E5M2:
        case ElementType::kFloat8E8M0:
            return {{}, "DLPack 0.6 has no float8 type code"};
        case ElementType::kFloat128:
            return {{}, "DLPack consumers have no IEEE binary128 type"};
    }
    return {{}, "it is not a built-in element type"};
}


// Why memory placed on (`device`, `memory_class`) is not exported as kDLCPU,
// or "" when it is: standard, host-pinned and unified CPU memory all read as
// host memory (the reference's Hurray -> DLPack device table).
std::string cpu_placement_problem(hurray::DeviceTag device, hurray::MemoryClass memory_class) {
    if (device != hurray::DeviceTag::kCpu) {
        const std::string_view name = hurray::device_name(device);
        return "is not on the CPU but on device " + hurray::hex(static_cast<uint8_t>(device)) +
               (name.empty() ? std::string() : " (" + std::string(name) + ")") +
               "; only CPU tensors are exported";
    }
    if (memory_class == hurray::MemoryClass::kPeer) {
        return "is peer memory, which DLPack cannot describe";
    }
    return {};
}

// The element type's name for messages: "int4", or "element type 0xF3".
std::string type_label(const hurray::TensorDescriptor& d) {
    const std::string_view name = hurray::type_name(d.element_type);
    if (!name.empty()) {
        return std::string(name);
    }
    return "element type " + hurray::hex(hurray::type_tag(d.element_type));
}

// "[2, 3, 4]".
std::string shape_text(const hurray::Shape& shape) {
    std::string s = "[";
    for (size_t k = 0; k < shape.size(); ++k) {
        s += (k == 0 ? "" : ", ") + std::to_string(shape[k]);
    }
    return s + "]";
}

// Fills `ex`'s DLTensor (all but `data`) from `d`, or returns
// why `d` cannot be exported (HURRAY_ERR_UNSUPPORTED), `what` naming the
// tensor in messages.
HurrayStatus describe(const char* function, const std::string& what, const hurray::TensorDescriptor& d,
                      DlpackExport& ex) {
    auto unsupported = [&](const std::string& why) {
        return fail(HURRAY_ERR_UNSUPPORTED, function, what + ": " + why);
    };
    const hurray::LayoutKind kind = hurray::layout_kind(d.layout);
    const std::string layout(hurray::layout_name(d.layout_tag()));
    if (kind == hurray::LayoutKind::kVirtual) {
        return unsupported("a composite head has no data of its own; export its members");
    }
    if (d.quantization) {
        return unsupported("the tensor is quantized (" + type_label(d) +
                           " storage), and DLPack carries no quantization parameters; dequantize it first");
    }
    if (d.extension_type) {
        return unsupported("the private element type " + hurray::hex(hurray::type_tag(d.element_type)) +
                           " has no DLPack type");
    }
    const DtypeOrReason dtype = dlpack_dtype(d.element_type);
    if (dtype.reason != nullptr) {
        return unsupported("element type " + type_label(d) + " has no DLPack type: " + dtype.reason);
    }
    const bool affine = std::holds_alternative<hurray::RowMajorLayout>(d.layout) ||
                        std::holds_alternative<hurray::ColumnMajorLayout>(d.layout) ||
                        std::holds_alternative<hurray::StridedLayout>(d.layout);
    if (!affine) {
        return unsupported("the " + (layout.empty() ? "layout " + hurray::hex(d.layout_tag()) : layout) +
                           " layout is not one stride per dimension (row-major, column-major and strided "
                           "tensors are exported)");
    }
    if (d.buffers.size() != 1) {
        return unsupported("a dense tensor has one buffer, this one has " + std::to_string(d.buffers.size()));
    }
    if (const std::string problem = cpu_placement_problem(d.buffers[0].device_tag, d.buffers[0].memory_class);
        !problem.empty()) {
        return unsupported("its data buffer " + problem);
    }
    const size_t rank = d.shape.size();
    if (rank > ex.shape.size()) {  // the descriptor checks forbid it
        return unsupported("rank " + std::to_string(rank) + " exceeds 64");
    }
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    for (size_t k = 0; k < rank; ++k) {
        if (d.shape[k] > kMax) {
            return unsupported("shape[" + std::to_string(k) + "] = " + std::to_string(d.shape[k]) +
                               " does not fit DLPack's int64 (a dynamic dimension?)");
        }
        ex.shape[k] = static_cast<int64_t>(d.shape[k]);
    }
    // Strides in elements, as DLPack counts them. Always filled (never NULL),
    // so that consumers of every DLPack version read the same layout.
    if (const auto* s = std::get_if<hurray::StridedLayout>(&d.layout)) {
        if (s->strides.size() != rank) {  // the descriptor checks forbid it
            return fail(HURRAY_ERR_INVALID_LAYOUT, function,
                        what + ": " + std::to_string(s->strides.size()) + " strides for rank " +
                            std::to_string(rank));
        }
        for (size_t k = 0; k < rank; ++k) {
            ex.strides[k] = s->strides[k];
        }
    } else {
        // Compact strides; a zero dimension counts as 1, as frameworks
        // compute the strides of empty tensors.
        const bool row_major = std::holds_alternative<hurray::RowMajorLayout>(d.layout);
        int64_t step = 1;
        for (size_t i = 0; i < rank; ++i) {
            const size_t k = row_major ? rank - 1 - i : i;
            ex.strides[k] = step;
            // Overflow-checked: only an empty tensor (a zero dimension
            // elsewhere) can have dimensions whose product passes int64.
            if (i + 1 < rank &&
                __builtin_mul_overflow(step, ex.shape[k] == 0 ? int64_t{1} : ex.shape[k], &step)) {
                return unsupported("its " + layout + " strides for shape " + shape_text(d.shape) +
                                   " do not fit DLPack's int64");
            }
        }
    }
    DLTensor& t = ex.managed.dl_tensor;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(rank);
    t.dtype = dtype.dtype;
    t.shape = ex.shape.data();
    t.strides = ex.strides.data();
    t.byte_offset = d.byte_offset;
    return HURRAY_OK;
}

// Checks that `bytes` hold what `d` addresses (the layout's extent, negative
// strides included), so that every element the consumer reads lies inside them.
HurrayStatus check_bytes(const hurray::TensorDescriptor& d, std::span<const uint8_t> bytes) {
    const std::array<std::span<const uint8_t>, 1> spans = {bytes};
    auto view = hurray::TensorView::make(d, spans);
    if (!view.ok()) {
        return fail(view.error());
    }
    return HURRAY_OK;
}

// Finishes `ex` with its data address and hands it out.
void publish(std::unique_ptr<DlpackExport> ex, void* data, DLManagedTensor** out) {
    ex->managed.dl_tensor.data = data;
    ex->managed.manager_ctx = ex.get();
    ex->managed.deleter = hurray_dlpack_delete;
    *out = &ex.release()->managed;
}

}  // namespace

extern "C" {

HURRAY_C_API HurrayStatus hurray_file_tensor_to_dlpack(const HurrayFile* file, uint64_t index,
                                                       DLManagedTensor** out) {
    static constexpr const char* kFn = "hurray_file_tensor_to_dlpack";
    return hurray::c::guarded_out(kFn, out, {{file, "file"}}, [&]() -> HurrayStatus {
        return hurray::c::with_tensor(kFn, file, index, [&](const hurray::FileTensor& t) -> HurrayStatus {
            auto ex = std::make_unique<DlpackExport>();
            const std::string what = "tensor " + std::to_string(index) + " (\"" + std::string(t.name()) + "\")";
            if (const HurrayStatus s = describe(kFn, what, t.descriptor(), *ex); s != HURRAY_OK) {
                return s;
            }
            // describe() accepted one buffer; the reader hands out one per entry.
            if (t.buffers().size() != 1) {
                return fail(HURRAY_ERR_INTERNAL, kFn, what + ": the reader returned no data buffer");
            }
            ex->keep = t.buffers()[0];
            if (const HurrayStatus s = check_bytes(t.descriptor(), ex->keep.span()); s != HURRAY_OK) {
                return s;
            }
            // SAFETY: DLTensor::data is `void*`; the bytes stay read-only
            // (documented: consumers never write through it). `keep` holds them
            // alive until the deleter runs, whether or not the file is closed.
            void* data = const_cast<uint8_t*>(ex->keep.data());
            publish(std::move(ex), data, out);
            return HURRAY_OK;
        });
    });
}

HURRAY_C_API HurrayStatus hurray_tensor_to_dlpack(const HurrayDescriptor* descriptor, HurrayBuffer* buffer,
                                                  DLManagedTensor** out) {
    static constexpr const char* kFn = "hurray_tensor_to_dlpack";
    return hurray::c::guarded_out(kFn, out, {{descriptor, "descriptor"}, {buffer, "buffer"}}, [&]() -> HurrayStatus {
        const hurray::TensorDescriptor& d = descriptor->descriptor;
        auto ex = std::make_unique<DlpackExport>();
        if (const HurrayStatus s = describe(kFn, "the tensor", d, *ex); s != HURRAY_OK) {
            return s;
        }
        if (const std::string problem = cpu_placement_problem(buffer->meta.device_tag, buffer->meta.memory_class);
            !problem.empty()) {
            return fail(HURRAY_ERR_UNSUPPORTED, kFn, "the buffer " + problem);
        }
        if (buffer->meta.byte_size > std::numeric_limits<size_t>::max()) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn, "the buffer is larger than the address space");
        }
        // SAFETY: a live buffer handle holds `meta.byte_size` readable bytes
        // at `data` (hurray_buffer_from_ptr's contract, or a file's mapping).
        const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(buffer->data),
                                             static_cast<size_t>(buffer->meta.byte_size));
        if (const HurrayStatus s = check_bytes(d, bytes); s != HURRAY_OK) {
            return s;
        }
        // From here nothing fails: the export takes the buffer over, and its
        // deleter destroys it (running its release callback once).
        ex->owned = buffer;
        publish(std::move(ex), buffer->data, out);
        return HURRAY_OK;
    });
}

}  // extern "C"
