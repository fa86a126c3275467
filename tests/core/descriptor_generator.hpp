// SPDX-License-Identifier: Apache-2.0
// A deterministic generator of valid tensor descriptors, for property tests.
//
// generate_descriptor(seed) builds one descriptor from a seed (std::mt19937_64),
// covering every element type (Tier 1, Tier 2, private 0xF0-0xFE with an
// extension type section), every layout (dense, sparse, block-paged,
// composite heads, Hilbert, extension layouts), every quantization scheme
// (and private ones), shard, statistics and composite member sections, buffer
// placement on every device, dynamic and empty dimensions and ranks up to 64.
// Buffer sizes come from hurray::size_buffers where the descriptor is
// encodable in default strict mode, then data and index buffers are sometimes
// grown. The result is meant to pass hurray::check_descriptor(d, options()).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray_test {

/// One generated descriptor and what a strict reader must be told to accept it.
struct GeneratedDescriptor {
    hurray::TensorDescriptor descriptor;
    /// Extension layout ids the descriptor uses (plus decoys).
    std::vector<uint64_t> known_extension_layouts;
    /// Private quantization scheme tags the descriptor uses (plus decoys).
    std::vector<uint8_t> known_private_schemes;
    /// Whether default strict options (no known ids) accept it: false when it
    /// uses an extension layout or a private quantization scheme.
    bool default_strict_ok = true;
    /// Whether hurray::size_buffers filled the buffer table.
    bool sized_by_builder = false;
    /// Non-empty when the library disagreed with itself while the descriptor
    /// was built (required_buffer_sizes vs size_buffers, say).
    std::string generator_error;

    /// Options that accept the descriptor. The spans point into this object:
    /// keep it alive (and unmoved) while the options are used.
    [[nodiscard]] hurray::DecodeOptions options(bool strict = true) const {
        hurray::DecodeOptions o;
        o.strict = strict;
        o.known_extension_layouts = known_extension_layouts;
        o.known_private_schemes = known_private_schemes;
        return o;
    }
};

/// Small helpers over std::mt19937_64 with results that do not depend on the
/// standard library's distributions (so every toolchain sees the same cases).
class Rng {
public:
    explicit Rng(uint64_t seed) : g_(seed) {}
    uint64_t u64() { return g_(); }
    uint32_t u32() { return static_cast<uint32_t>(g_() >> 32); }
    uint8_t u8() { return static_cast<uint8_t>(g_() >> 56); }
    /// Uniform in [0, n) (n > 0; the modulo bias is irrelevant here).
    uint64_t below(uint64_t n) { return n == 0 ? 0 : g_() % n; }
    /// Uniform in [lo, hi].
    uint64_t range(uint64_t lo, uint64_t hi) {
        return hi - lo == UINT64_MAX ? g_() : lo + below(hi - lo + 1);
    }
    int64_t srange(int64_t lo, int64_t hi) {
        return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
    }
    /// True with probability num/den.
    bool chance(uint64_t num, uint64_t den) { return below(den) < num; }
    template <typename T>
    const T& pick(const std::vector<T>& v) {
        return v[static_cast<size_t>(below(v.size()))];
    }
    std::vector<uint8_t> bytes(size_t n) {
        std::vector<uint8_t> b(n);
        for (auto& x : b) {
            x = u8();
        }
        return b;
    }
    std::mt19937_64& engine() { return g_; }

private:
    std::mt19937_64 g_;
};

/// The layout families the generator draws from (for coverage statistics).
enum class GenLayout : uint8_t {
    kRowMajor,
    kColumnMajor,
    kStrided,
    kTiled,
    kMorton,
    kCoo,
    kCsr,
    kCsc,
    kCsf,
    kBlockPaged,
    kComposite,
    kHilbert,
    kExtension,
    kCount,
};

/// Builds one valid descriptor from `seed`. Deterministic.
GeneratedDescriptor generate_descriptor(uint64_t seed);

/// The number of cases to run: `base` times the HURRAY_PROPERTY_SCALE
/// environment variable (a positive number, default 1).
uint64_t property_scale(uint64_t base);

}  // namespace hurray_test
