// SPDX-License-Identifier: Apache-2.0
// ConvertOptions::dequantize: a TensorSource that presents every tensor that is not plain
// dense data as a dense row-major one.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "convert/guard.hpp"
#include "convert/materialize.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray::convert {
namespace {

/// How a presented tensor is made from the base.
enum class Kind : uint8_t {
    kPassThrough,  ///< The base tensor as it is.
    kDequantize,   ///< Quantized: float values stored as the dequantize type.
    kDensify,      ///< Densified (or assembled) in its own element type.
};

struct Presented {
    size_t base = 0;  ///< Index in the base source.
    Kind kind = Kind::kPassThrough;
    SourceTensor tensor;
};

class DequantizedSource final : public TensorSource {
public:
    DequantizedSource(const TensorSource& base, ElementType type) : base_(base), type_(type) {}

    Status build() {
        for (size_t i = 0; i < base_.tensor_count();) {
            const SourceTensor& t = base_.tensor(i);
            Presented p;
            p.base = i;
            p.tensor.name = t.name;
            size_t step = 1;
            if (detail::is_plain_dense(t.descriptor)) {
                p.tensor.descriptor = t.descriptor;
            } else {
                p.kind = t.descriptor.quantization ? Kind::kDequantize : Kind::kDensify;
                if (detail::is_composite_head(t.descriptor)) {
                    HURRAY_ASSIGN_OR_RETURN(step, detail::composite_extent(base_, i));
                }
                const ElementType type =
                    p.kind == Kind::kDequantize ? type_ : t.descriptor.element_type;
                auto d = make_dense(type, t.descriptor.shape);
                if (!d) {
                    return d.error().with_context({.prefix = "tensor '" + t.name + "'", .tensor = t.name});
                }
                d->shard = t.descriptor.shard;
                p.tensor.descriptor = std::move(d).value();
            }
            presented_.push_back(std::move(p));
            i += step;
        }
        return {};
    }

    [[nodiscard]] Format format() const noexcept override { return base_.format(); }
    [[nodiscard]] size_t tensor_count() const noexcept override { return presented_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return presented_[i].tensor;
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return base_.kv(); }

    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        if (i >= presented_.size()) {
            return Error(ErrorCode::kInvalidArgument,
                         "tensor " + std::to_string(i) + ": out of range");
        }
        const Presented& p = presented_[i];
        if (p.kind == Kind::kPassThrough) {
            return base_.read(p.base, buffer, offset, out);
        }
        HURRAY_ASSIGN_OR_RETURN(const std::shared_ptr<const std::vector<uint8_t>> bytes, dense(i));
        if (buffer != 0 || offset > bytes->size() || out.size() > bytes->size() - offset) {
            return Error(ErrorCode::kInvalidArgument,
                         "tensor '" + p.tensor.name + "' buffer " + std::to_string(buffer) +
                             ": bytes [" + std::to_string(offset) + ", +" +
                             std::to_string(out.size()) + ") are outside its " +
                             std::to_string(bytes->size()) + " bytes");
        }
        if (!out.empty()) {
            std::memcpy(out.data(), bytes->data() + offset, out.size());
        }
        return {};
    }

    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override {
        if (i >= presented_.size() || presented_[i].kind != Kind::kPassThrough) {
            return std::nullopt;  // materialized bytes live in a cache that may be replaced
        }
        return base_.view(presented_[i].base, buffer);
    }

private:
    /// The dense bytes of presented tensor `i`, materialized on first use (the last one
    /// is kept, so that chunked reads of one tensor materialize it once).
    Result<std::shared_ptr<const std::vector<uint8_t>>> dense(size_t i) const {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (cached_index_ == i && cached_) {
                return cached_;
            }
        }
        HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, make_dense_bytes(presented_[i]));
        auto shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
        const std::lock_guard<std::mutex> lock(mutex_);
        cached_index_ = i;
        cached_ = shared;
        return shared;
    }

    Result<std::vector<uint8_t>> make_dense_bytes(const Presented& p) const {
        if (p.kind == Kind::kDensify) {
            return detail::materialize_dense(base_, p.base);
        }
        HURRAY_ASSIGN_OR_RETURN(const std::vector<float> values, detail::to_float32(base_, p.base));
        std::vector<uint8_t> out;
        if (type_ == ElementType::kFloat32) {
            out.resize(values.size() * sizeof(float));
            if (!values.empty()) {
                std::memcpy(out.data(), values.data(), out.size());
            }
            return out;
        }
        out.resize(values.size() * 2);
        for (size_t k = 0; k < values.size(); ++k) {
            const uint16_t bits = type_ == ElementType::kFloat16 ? float_to_float16(values[k])
                                                                 : float_to_bfloat16(values[k]);
            out[2 * k] = static_cast<uint8_t>(bits & 0xFFU);
            out[2 * k + 1] = static_cast<uint8_t>(bits >> 8U);
        }
        return out;
    }

    const TensorSource& base_;
    ElementType type_;
    std::vector<Presented> presented_;
    mutable std::mutex mutex_;
    mutable size_t cached_index_ = SIZE_MAX;
    mutable std::shared_ptr<const std::vector<uint8_t>> cached_;
};

}  // namespace

Result<std::unique_ptr<TensorSource>> dequantized_source(const TensorSource& base,
                                                         ElementType type) {
    return detail::guarded("dequantize", [&]() -> Result<std::unique_ptr<TensorSource>> {
        if (type != ElementType::kFloat32 && type != ElementType::kFloat16 &&
            type != ElementType::kBFloat16) {
            return Error(ErrorCode::kInvalidArgument,
                         "dequantize_type: must be float32, float16 or bfloat16");
        }
        auto source = std::make_unique<DequantizedSource>(base, type);
        HURRAY_RETURN_IF_ERROR(source->build());
        return std::unique_ptr<TensorSource>(std::move(source));
    });
}

}  // namespace hurray::convert
