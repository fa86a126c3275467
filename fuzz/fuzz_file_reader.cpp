// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: hurray::FileReader::open_memory on untrusted bytes.
//
// Each input is opened strictly and permissively. Whatever opens is then
// enumerated completely: every index entry and lookup by name, every
// descriptor (raw and decoded), every tensor and its view, the composite of
// every head, check_all, access hints and the KV getters. Properties:
//  - a file the strict reader accepts, the permissive reader accepts too;
//  - lookup by name finds each entry at its own position;
//  - write_order is a permutation sorted by descriptor_offset;
//  - a tensor's buffers have the declared sizes and lie inside the input;
//  - a decoded descriptor is returned again, at the same address, and a
//    failed one fails again with the same error;
//  - every error carries a code and a message.
// An input rejected only for its index CRC is opened again with the CRC
// fixed, so that mutations of the index reach the checks behind it.
// Built with -fno-exceptions -fno-rtti: a violated property traps.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/layout.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/file_reader.hpp"

namespace {

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

template <typename R>
void require_error_well_formed(const R& r) {
    if (!r.ok()) {
        require(r.error().code() != hurray::ErrorCode::kOk && !r.error().message().empty());
    }
}

void exercise(const hurray::FileReader& r, std::span<const uint8_t> input) {
    const size_t n = r.tensor_count();
    require(r.file_size() == input.size());
    require(r.write_order().size() == n);
    std::vector<bool> seen(n, false);
    for (size_t k = 0; k < n; ++k) {
        const size_t i = r.write_order()[k];
        require(i < n && !seen[i]);
        seen[i] = true;
        if (k > 0) {
            require(r.entry(r.write_order()[k - 1]).descriptor_offset < r.entry(i).descriptor_offset);
        }
    }
    const auto* lo = input.data();
    const auto* hi = input.data() + input.size();
    for (size_t i = 0; i < n; ++i) {
        const hurray::IndexEntry& e = r.entry(i);
        const auto found = r.find(e.name);
        require(found.has_value() && *found == i);

        auto raw = r.descriptor_bytes(i);
        require(raw.ok() && raw->size() == e.descriptor_length);

        auto d = r.descriptor(i);
        require_error_well_formed(d);
        auto again = r.descriptor(i);
        require(d.ok() == again.ok());
        if (d.ok()) {
            require(*d == *again);
        } else {
            require(d.error().to_string() == again.error().to_string());
        }

        auto t = r.tensor(i);
        require_error_well_formed(t);
        require(t.ok() == d.ok());
        if (t.ok()) {
            require(&t->entry() == &e && &t->descriptor() == *d);
            require(t->buffers().size() == (*d)->buffers.size());
            for (size_t b = 0; b < t->buffers().size(); ++b) {
                const hurray::SharedBuffer& buf = t->buffers()[b];
                require(buf.size() == (*d)->buffers[b].byte_size);
                require(buf.empty() || (buf.data() >= lo && buf.data() + buf.size() <= hi));
            }
            auto view = t->view();
            require_error_well_formed(view);
        }
        if (d.ok() && (*d)->layout_tag() == static_cast<uint8_t>(hurray::LayoutTag::kComposite)) {
            auto c = r.composite(i);
            require_error_well_formed(c);
            if (c.ok()) {
                require(c->head == i);
                for (const size_t m : c->members) {
                    require(m < n && m != i);
                }
            }
        } else if (d.ok()) {
            require(!r.composite(i).ok());
        }
        require(r.advise(i, hurray::AccessPattern::kWillNeed).ok());
    }
    require_error_well_formed(r.check_all());
    require(r.advise(hurray::AccessPattern::kRandom).ok());
    for (const hurray::KvEntry& e : r.kv().entries()) {
        const hurray::KvValue* v = r.kv().find(e.key);
        require(v != nullptr && *v == e.value);
        require_error_well_formed(r.kv().get_string(e.key));
        require_error_well_formed(r.kv().get_int64(e.key));
        require_error_well_formed(r.kv().get_uint64(e.key));
        require_error_well_formed(r.kv().get_float64(e.key));
        require_error_well_formed(r.kv().get_bool(e.key));
        require_error_well_formed(r.kv().get_bytes(e.key));
        require_error_well_formed(r.kv().get_array(e.key));
    }
}

/// Opens `input` strictly and permissively and exercises what opens; returns
/// whether the strict open failed on the index CRC.
bool run(std::span<const uint8_t> input) {
    hurray::FileReadOptions strict;
    auto s = hurray::FileReader::open_memory(input, {}, strict);
    require_error_well_formed(s);
    if (s.ok()) {
        exercise(*s, input);
    }

    hurray::FileReadOptions permissive;
    permissive.strict = false;
    permissive.descriptor.strict = false;
    auto p = hurray::FileReader::open_memory(input, {}, permissive);
    require_error_well_formed(p);
    require(!s.ok() || p.ok());
    if (p.ok()) {
        exercise(*p, input);
    }
    return !s.ok() && s.error().code() == hurray::ErrorCode::kChecksumMismatch;
}

uint64_t le64(std::span<const uint8_t> b) {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) {
        v |= static_cast<uint64_t>(b[i]) << (8 * i);
    }
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> input(data, size);
    if (!run(input) || size < 104) {
        return 0;
    }
    // The trailer located the index inside the file (checked before the CRC).
    std::vector<uint8_t> fixed(input.begin(), input.end());
    const size_t trailer = size - 40;
    const uint64_t index_offset = le64(input.subspan(trailer, 8));
    const uint64_t index_length = le64(input.subspan(trailer + 8, 8));
    if (index_offset > trailer || index_length > trailer - index_offset) {
        return 0;
    }
    const uint32_t crc = hurray::crc32c(input.subspan(index_offset, index_length));
    for (size_t i = 0; i < 4; ++i) {
        fixed[trailer + 28 + i] = static_cast<uint8_t>(crc >> (8 * i));
    }
    run(fixed);
    return 0;
}
