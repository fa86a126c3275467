// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: hurray::decode on untrusted bytes.
//
// Each input is decoded in strict mode (with and without known private layout
// ids and scheme tags, so that extension layouts and private schemes get past
// the "unknown id" check) and in permissive mode. Whatever decodes must:
//  - re-encode (encode_unchecked) and decode again, with the same options, to
//    an equal model;
//  - when decoded strictly, re-encode to exactly the consumed prefix
//    (descriptor_length bytes), agree with encode, encode_to and encoded_size,
//    and also decode permissively to the same model;
//  - survive required_buffer_sizes, size_buffers, check_descriptor, describe.
// A failed decode must carry an error code and a message. Built with
// -fno-exceptions -fno-rtti: a violated property traps.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

// Private layout ids and scheme tags a "knowing" strict reader accepts.
constexpr uint64_t kKnownLayouts[] = {0, 1, 2, 0xFFFFFFFFFFFFFFFFULL, 0x0101010101010101ULL};
constexpr uint8_t kKnownSchemes[] = {0xF0, 0xF1, 0xF7, 0xFE};

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

/// Exercises the buffer-size helpers on a decoded model; they must not crash.
void exercise_sizes(const hurray::TensorDescriptor& d, bool strict) {
    auto req = hurray::required_buffer_sizes(d);
    if (!req.ok()) {
        require(req.error().code() != hurray::ErrorCode::kOk && !req.error().message().empty());
        return;
    }
    if (strict) {
        // decode checked the sizes: every buffer meets what the descriptor requires.
        for (size_t i = 0; i < req->size() && i < d.buffers.size(); ++i) {
            const auto& r = (*req)[i];
            if (r.min_size) {
                require(r.exact ? d.buffers[i].byte_size == *r.min_size : d.buffers[i].byte_size >= *r.min_size);
            }
        }
    }
    if (req->size() > 255) {
        return;
    }
    std::vector<uint64_t> data_dependent;
    for (const auto& r : *req) {
        if (r.data_dependent || !r.min_size) {
            data_dependent.push_back(r.min_size.value_or(0));
        }
    }
    auto sized = hurray::size_buffers(d, {}, data_dependent);
    if (sized.ok()) {
        require(sized->buffers.size() == req->size());
        require(hurray::check_descriptor(*sized).ok());
    }
}

void round_trip(std::span<const uint8_t> input, const hurray::TensorDescriptor& d,
                const hurray::DecodeOptions& opt) {
    auto len = hurray::peek_length(input);
    require(len.ok() && *len <= input.size());
    require(hurray::check_descriptor(d, opt).ok());

    auto re = hurray::encode_unchecked(d);
    require(re.ok());
    auto size = hurray::encoded_size(d);
    require(size.ok() && *size == re->size());

    if (opt.strict) {
        // A strictly accepted descriptor is canonical: re-encoding gives back
        // exactly the bytes it was decoded from.
        require(re->size() == *len);
        require(std::memcmp(re->data(), input.data(), re->size()) == 0);
        auto enc = hurray::encode(d);
        if (enc.ok()) {
            require(*enc == *re);
            std::vector<uint8_t> out(re->size());
            auto n = hurray::encode_to(d, out);
            require(n.ok() && *n == out.size() && out == *re);
            if (!out.empty()) {
                auto small = hurray::encode_to(d, std::span(out).first(out.size() - 1));
                require(!small.ok() && small.error().code() == hurray::ErrorCode::kInvalidArgument);
            }
        }
        hurray::DecodeOptions permissive = opt;
        permissive.strict = false;
        auto p = hurray::decode(input, permissive);
        require(p.ok() && *p == d);
    }

    auto again = hurray::decode(*re, opt);
    require(again.ok() && *again == d);

    exercise_sizes(d, opt.strict);
    require(!hurray::summarize(d).empty());
    require(!hurray::describe(d).empty());
}

void decode_with(std::span<const uint8_t> input, const hurray::DecodeOptions& opt) {
    auto d = hurray::decode(input, opt);
    if (d.ok()) {
        round_trip(input, *d, opt);
        return;
    }
    const hurray::Error& e = d.error();
    require(e.code() != hurray::ErrorCode::kOk);
    require(!e.message().empty());
    require(!e.has_offset() || e.offset() <= input.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> input(data, size);

    auto len = hurray::peek_length(input);
    if (len.ok()) {
        require(*len >= hurray::kFixedHeaderSize);
    } else {
        require(!len.error().message().empty());
    }

    hurray::DecodeOptions strict;
    decode_with(input, strict);

    hurray::DecodeOptions strict_known;
    strict_known.known_extension_layouts = kKnownLayouts;
    strict_known.known_private_schemes = kKnownSchemes;
    decode_with(input, strict_known);

    hurray::DecodeOptions permissive = strict_known;
    permissive.strict = false;
    decode_with(input, permissive);

    hurray::DecodeOptions shallow = permissive;  // a reader with a lower tiling limit
    shallow.max_tiled_depth = 2;
    decode_with(input, shallow);
    return 0;
}
