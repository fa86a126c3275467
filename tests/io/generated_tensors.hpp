// SPDX-License-Identifier: Apache-2.0
// Tensors with data for the io round-trip tests (files and streams): generated
// descriptors of every element type, layout and scheme with random buffer bytes,
// and the dense members and heads the composite tests are made of.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "descriptor_generator.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/layout.hpp"

namespace hurray_test {

/// One tensor to write: name (empty where the format has none), descriptor, buffer bytes.
struct GenTensor {
    std::string name;
    hurray::TensorDescriptor desc;
    std::vector<std::vector<uint8_t>> buffers;
    bool operator==(const GenTensor&) const = default;
};

/// The private layout and scheme ids generated tensors use: a reader must be told them.
struct KnownIds {
    std::vector<uint64_t> layouts;
    std::vector<uint8_t> schemes;
    [[nodiscard]] hurray::DecodeOptions decode_options() const {
        hurray::DecodeOptions o;
        o.known_extension_layouts = layouts;
        o.known_private_schemes = schemes;
        return o;
    }
};

/// The buffers of `t` as spans, for the writers.
inline std::vector<std::span<const uint8_t>> spans(const GenTensor& t) {
    std::vector<std::span<const uint8_t>> s;
    s.reserve(t.buffers.size());
    for (const auto& b : t.buffers) {
        s.emplace_back(b);
    }
    return s;
}

/// `count` generated non-composite tensors (seeds from `first_seed`) of at most
/// `max_bytes` of data each, with random bytes and no names; their private ids are
/// added to `known`.
inline std::vector<GenTensor> generated_tensors(uint64_t first_seed, size_t count, KnownIds& known,
                                                uint64_t max_bytes) {
    std::vector<GenTensor> out;
    Rng rng(first_seed * 7919 + 3);
    for (uint64_t seed = first_seed; out.size() < count && seed < first_seed + 50 * count; ++seed) {
        GeneratedDescriptor g = generate_descriptor(seed);
        const hurray::TensorDescriptor& d = g.descriptor;
        if (d.layout_tag() == static_cast<uint8_t>(hurray::LayoutTag::kComposite) ||
            d.composite_member.has_value()) {
            continue;  // composites are built by the composite tests
        }
        uint64_t total = 0;
        for (const auto& b : d.buffers) {
            total += b.byte_size;
        }
        if (total > max_bytes) {
            continue;
        }
        GenTensor t;
        t.desc = d;
        for (const auto& b : d.buffers) {
            t.buffers.push_back(rng.bytes(static_cast<size_t>(b.byte_size)));
        }
        known.layouts.insert(known.layouts.end(), g.known_extension_layouts.begin(),
                             g.known_extension_layouts.end());
        known.schemes.insert(known.schemes.end(), g.known_private_schemes.begin(),
                             g.known_private_schemes.end());
        out.push_back(std::move(t));
    }
    return out;
}

/// A dense row-major float32 member of `parent` at `offset`, every byte `fill`.
inline GenTensor dense_member(hurray::Shape shape, hurray::Shape parent, hurray::Shape offset,
                              std::optional<hurray::MemberRole> role = std::nullopt,
                              uint8_t fill = 0x11, std::string name = {}) {
    GenTensor t;
    t.name = std::move(name);
    t.desc = *hurray::make_dense(hurray::ElementType::kFloat32, std::move(shape));
    t.desc.shard = hurray::ShardDescriptor{parent.to_vector(), offset.to_vector()};
    if (role) {
        t.desc.composite_member = hurray::CompositeMember{*role};
    }
    t.buffers.emplace_back(t.desc.buffers[0].byte_size, fill);
    return t;
}

/// A float32 composite head of `n` members.
inline GenTensor composite_head(hurray::Shape shape, hurray::CompositionRule rule, uint32_t n,
                                hurray::CombineOp op = hurray::CombineOp::kNone,
                                std::string name = {}) {
    GenTensor t;
    t.name = std::move(name);
    t.desc = *hurray::make_composite_head(hurray::ElementType::kFloat32, std::move(shape), rule, n, op);
    return t;
}

}  // namespace hurray_test
