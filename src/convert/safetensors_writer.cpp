// SPDX-License-Identifier: Apache-2.0
// The SafeTensors writer: header (tensors in the source's order, data spans back to back),
// padded with spaces to 8 bytes, then each tensor's bytes copied chunk by chunk through an
// AtomicFileSink.
#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "convert/safetensors_internal.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/convert/safetensors.hpp"
#include "hurray/io/byte_sink.hpp"

namespace hurray::convert {

namespace {

/// One tensor as it will be written.
struct Planned {
    size_t index = 0;        // in the source
    std::string_view dtype;  // SafeTensors dtype name
    uint64_t element_count = 0;
    uint64_t source_bytes = 0;  // bytes of buffer 0 in the source
    uint64_t file_bytes = 0;    // bytes in the SafeTensors file (bool: one per element)
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// Checks that tensor `i` is one SafeTensors can hold as it is, and plans it.
Result<Planned> plan_tensor(const TensorSource& source, size_t i, const ConvertOptions& options) {
    const SourceTensor& t = source.tensor(i);
    const TensorDescriptor& d = t.descriptor;
    const auto refuse = [&](const std::string& why) -> Error {
        std::string msg = "tensor " + quoted(t.name) + ": " + why + "; SafeTensors holds dense " +
                          "row-major tensors only";
        if (!options.dequantize) {
            msg += " (convert with --dequantize)";
        }
        return {ErrorCode::kUnsupported, msg};
    };
    if (d.quantization) {
        return refuse("it is quantized");
    }
    if (d.extension_type) {
        return refuse("it has a private element type");
    }
    if (!std::holds_alternative<RowMajorLayout>(d.layout)) {
        return refuse(std::holds_alternative<CompositeLayout>(d.layout)
                          ? "it is a composite"
                          : "its layout is not row-major");
    }
    if (d.byte_offset != 0 || d.buffers.size() != 1) {
        return refuse("its data does not start at byte 0 of a single buffer");
    }
    if (t.name == detail::kSafeTensorsMetadataKey) {
        return Error(ErrorCode::kInvalidName,
                     "tensor '__metadata__': the name is reserved by SafeTensors for metadata");
    }
    Planned p;
    p.index = i;
    p.dtype = safetensors_dtype_name(d.element_type);
    if (p.dtype.empty()) {
        const std::string_view n = type_name(d.element_type);
        return Error(ErrorCode::kUnsupported,
                     "tensor " + quoted(t.name) + ": element type " +
                         (n.empty() ? std::string("(private)") : std::string(n)) +
                         " has no SafeTensors dtype");
    }
    auto count = element_count(d.shape);
    if (!count) {
        return count.error().with_context({.prefix = "tensor " + quoted(t.name) + ": shape", .tensor = t.name, .field = "shape"});
    }
    p.element_count = *count;
    auto stored = storage_bytes(d.element_type, *count);
    if (!stored) {
        return stored.error().with_context({.prefix = "tensor " + quoted(t.name), .tensor = t.name});
    }
    p.source_bytes = d.buffers[0].byte_size;
    if (p.source_bytes != *stored) {
        return Error(ErrorCode::kSizeMismatch, "tensor " + quoted(t.name) + ": buffer 0 has " +
                                                   std::to_string(p.source_bytes) +
                                                   " bytes, its shape and type need " +
                                                   std::to_string(*stored));
    }
    const uint32_t bits = bit_width(d.element_type);
    if (d.element_type == ElementType::kBool) {
        p.file_bytes = *count;  // one byte per element in SafeTensors
    } else if (*count % 8 * bits % 8 != 0) {
        return Error(ErrorCode::kUnsupported,
                     "tensor " + quoted(t.name) + ": " + std::to_string(*count) + " elements of " +
                         std::string(p.dtype) +
                         " do not fill whole bytes, which SafeTensors requires");
    } else {
        p.file_bytes = *stored;
    }
    return p;
}

/// `__metadata__` as JSON text (keys and values strings), "" when the KV is empty.
Result<std::string> metadata_json(const KvMetadata& kv) {
    if (kv.empty()) {
        return std::string();
    }
    std::string s = "{";
    bool first = true;
    for (const KvEntry& e : kv.entries()) {
        auto text = detail::kv_text_form(e.value);
        if (!text) {
            return text.error().with_context({.prefix = "KV " + quoted(e.key), .field = e.key});
        }
        if (!first) {
            s += ',';
        }
        first = false;
        try {
            s +=
                nlohmann::json(e.key).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
            s += ':';
            s +=
                nlohmann::json(*text).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
        } catch (const nlohmann::json::exception&) {
            return Error(ErrorCode::kInvalidName,
                         "KV " + quoted(e.key) + ": the key or its text is not valid UTF-8");
        }
    }
    s += '}';
    return s;
}

/// The header: `__metadata__` first, then the tensors in order, spans back to back;
/// padded with spaces so that its length is a multiple of 8 (the data then starts
/// 8-byte aligned). Sets `data_bytes` to the total data size.
Result<std::string> header_json(const TensorSource& source, const std::vector<Planned>& plan,
                                uint64_t& data_bytes) {
    auto meta = metadata_json(source.kv());
    if (!meta) {
        return meta.error();
    }
    std::string s = "{";
    if (!meta->empty()) {
        s += "\"__metadata__\":";
        s += *meta;
    }
    uint64_t offset = 0;
    for (const Planned& p : plan) {
        const SourceTensor& t = source.tensor(p.index);
        if (s.size() > 1) {
            s += ',';
        }
        try {
            s += nlohmann::json(t.name).dump(-1, ' ', false,
                                             nlohmann::json::error_handler_t::strict);
        } catch (const nlohmann::json::exception&) {
            return Error(ErrorCode::kInvalidName,
                         "tensor " + quoted(t.name) + ": name is not valid UTF-8");
        }
        s += R"(:{"dtype":")";
        s += p.dtype;
        s += R"(","shape":[)";
        for (size_t k = 0; k < t.descriptor.shape.size(); ++k) {
            if (k > 0) {
                s += ',';
            }
            s += std::to_string(t.descriptor.shape[k]);
        }
        const auto end = hurray::add_u64(offset, p.file_bytes);
        if (!end) {
            return Error(ErrorCode::kSizeOverflow, "SafeTensors data size overflows 64 bits");
        }
        s += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(*end) + "]}";
        offset = *end;
    }
    s += '}';
    s.append((8 - s.size() % 8) % 8, ' ');
    data_bytes = offset;
    return s;
}

/// Copies tensor `p` from the source to the sink through `chunk`.
Status copy_tensor(const TensorSource& source, const Planned& p, ByteSink& sink,
                   std::vector<uint8_t>& chunk, std::vector<uint8_t>& unpacked,
                   const ConvertOptions& options, uint64_t& done, uint64_t total) {
    const std::string& name = source.tensor(p.index).name;
    const bool is_bool = source.tensor(p.index).descriptor.element_type == ElementType::kBool;
    // A bool chunk unpacks to 8 times its size: read an eighth as much at a time.
    const uint64_t step = is_bool ? std::max<uint64_t>(chunk.size() / 8, 1) : chunk.size();
    for (uint64_t at = 0; at < p.source_bytes;) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(step, p.source_bytes - at));
        const std::span<uint8_t> piece(chunk.data(), n);
        if (auto s = source.read(p.index, 0, at, piece); !s) {
            return s;
        }
        std::span<const uint8_t> out = piece;
        if (is_bool) {
            // Bits 8 per byte, LSB first -> one byte (0 or 1) per element.
            const uint64_t first = at * 8;
            const auto count =
                static_cast<size_t>(std::min<uint64_t>(p.element_count - first, n * uint64_t{8}));
            unpacked.resize(count);
            for (size_t k = 0; k < count; ++k) {
                unpacked[k] = static_cast<uint8_t>((piece[k / 8] >> (k % 8)) & 1U);
            }
            out = unpacked;
        }
        if (auto s = sink.write(out); !s) {
            return s.error().with_context({.prefix = "tensor " + quoted(name), .tensor = name});
        }
        at += n;
        done += out.size();
        HURRAY_RETURN_IF_ERROR(report_progress(options.progress, done, total));
    }
    return Status::success();
}

Status write_file(const TensorSource& source, const std::filesystem::path& path,
                  const ConvertOptions& options) {
    std::vector<Planned> plan;
    plan.reserve(source.tensor_count());
    uint64_t largest = 0;
    for (size_t i = 0; i < source.tensor_count(); ++i) {
        auto p = plan_tensor(source, i, options);
        if (!p) {
            return p.error();
        }
        largest = std::max(largest, p->source_bytes);
        plan.push_back(*p);
    }
    uint64_t data_bytes = 0;
    auto header = header_json(source, plan, data_bytes);
    if (!header) {
        return header.error();
    }
    auto sink = AtomicFileSink::create(path, options.durable);
    if (!sink) {
        return sink.error();
    }
    std::array<uint8_t, 8> length{};
    for (size_t k = 0; k < 8; ++k) {
        length[k] = static_cast<uint8_t>(header->size() >> (8 * k));
    }
    if (auto s = (*sink)->write(length); !s) {
        return s;
    }
    // SAFETY: a byte view of the header string, alive for the call.
    if (auto s = (*sink)->write(std::span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(header->data()), header->size()));
        !s) {
        return s;
    }
    // The chunk: options.chunk_bytes (0 taken as 1), never more than the largest tensor.
    const uint64_t chunk_bytes = std::max<uint64_t>(options.chunk_bytes, 1);
    std::vector<uint8_t> chunk(
        static_cast<size_t>(std::min(chunk_bytes, std::max<uint64_t>(largest, 1))));
    std::vector<uint8_t> unpacked;
    uint64_t done = 0;
    for (const Planned& p : plan) {
        if (auto s = copy_tensor(source, p, **sink, chunk, unpacked, options, done, data_bytes);
            !s) {
            return s;
        }
    }
    return (*sink)->commit();
}

}  // namespace

Status write_safetensors(const TensorSource& source, const std::filesystem::path& path,
                         const ConvertOptions& options) {
    try {
        // Non-dense tensors presented dense (dequantized_source), as write() does.
        std::unique_ptr<TensorSource> dense;
        const TensorSource* presented = &source;
        if (options.dequantize) {
            auto d = dequantized_source(source, options.dequantize_type);
            if (!d) {
                return d.error().with_context({.prefix = path.string(), .file = path.string()});
            }
            dense = std::move(*d);
            presented = dense.get();
        }
        auto s = write_file(*presented, path, options);
        if (!s) {
            const Error& e = s.error();
            return e.with_context({.prefix = path.string(), .file = path.string()});
        }
        return s;
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory,
                     path.string() + ": out of memory writing SafeTensors");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kIoError, path.string() + ": " + e.what());
    }
}

}  // namespace hurray::convert
