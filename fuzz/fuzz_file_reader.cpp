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
//  - every error carries a code and a message;
//  - decode_descriptor (listing without keeping a descriptor, into one
//    TensorDescriptor reused across the file) agrees with descriptor(i), before
//    and after that one is kept, errors included;
//  - with a descriptor table in use (descriptor_table_bytes), the table is the
//    KV entry kDescriptorTableKey, well formed for the index, and hidden from
//    kv(); a tensor whose copy in it differs from the descriptor in place never
//    yields data (tensor, read_data), and check_all then fails.
// An input rejected only for its index CRC is opened again with the CRC
// fixed, so that mutations of the index reach the checks behind it.
// Built with -fno-exceptions -fno-rtti: a violated property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/kv_metadata.hpp"

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

/// Whether two decodes gave the same descriptor (the same encoding when `==` says
/// no: a NaN compares unequal to itself).
bool same_descriptor(const hurray::TensorDescriptor& a, const hurray::TensorDescriptor& b) {
    if (a == b) {
        return true;
    }
    auto ea = hurray::encode(a);
    auto eb = hurray::encode(b);
    return ea.ok() && eb.ok() && *ea == *eb;
}

/// decode_descriptor(i) into `reused` gives what `d` (descriptor(i)) gave.
void require_listing_agrees(const hurray::TensorDescriptor& reused, const hurray::Status& listed,
                            const hurray::Result<const hurray::TensorDescriptor*>& d) {
    require_error_well_formed(listed);
    require(listed.ok() == d.ok());
    if (d.ok()) {
        require(same_descriptor(reused, **d));
    } else {
        require(listed.error().to_string() == d.error().to_string());
    }
}

/// With a descriptor table in use: each entry's copy in it, checked to be the KV
/// entry kDescriptorTableKey of the section the trailer locates, well formed for
/// the index and of the size the reader reports. Empty without a table in use.
std::vector<std::vector<uint8_t>> table_copies(const hurray::FileReader& r, std::span<const uint8_t> input,
                                               const hurray::KvDecodeOptions& kv_options) {
    std::vector<std::vector<uint8_t>> copies;  // copied: the decoded KV section is local
    const std::optional<uint64_t> size = r.descriptor_table_bytes();
    require(!r.kv().contains(hurray::kDescriptorTableKey));
    if (!size.has_value()) {
        return copies;
    }
    const hurray::FileTrailer& t = r.trailer();
    require(t.kv_offset <= input.size() && t.kv_length <= input.size() - t.kv_offset);
    auto kv = hurray::decode_kv_section(input.subspan(t.kv_offset, t.kv_length), t.kv_offset, kv_options);
    require(kv.ok());
    auto value = kv->get_bytes(hurray::kDescriptorTableKey);
    require(value.ok() && value->size() == *size);
    std::vector<hurray::IndexEntry> entries;
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        entries.push_back(r.entry(i));
    }
    auto at = hurray::locate_descriptor_table(*value, entries);
    require(at.has_value() && at->size() == entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        const auto copy = value->subspan((*at)[i], entries[i].descriptor_length);
        copies.emplace_back(copy.begin(), copy.end());
    }
    return copies;
}

void exercise(const hurray::FileReader& r, std::span<const uint8_t> input, const hurray::FileReadOptions& options) {
    const size_t n = r.tensor_count();
    const std::vector<std::vector<uint8_t>> copies = table_copies(r, input, options.kv);
    bool any_disagrees = false;
    hurray::TensorDescriptor reused;  // one for the whole listing, as a lister reuses it
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

        // Whether the descriptor in place is the table's copy (always without a table).
        bool agrees = true;
        if (!copies.empty()) {
            const auto in_place = input.subspan(e.descriptor_offset, e.descriptor_length);
            agrees = std::equal(copies[i].begin(), copies[i].end(), in_place.begin(), in_place.end());
            any_disagrees = any_disagrees || !agrees;
        }

        const hurray::Status listed = r.decode_descriptor(i, reused);  // nothing kept yet
        auto d = r.descriptor(i);
        require_error_well_formed(d);
        require_listing_agrees(reused, listed, d);
        const hurray::Status relisted = r.decode_descriptor(i, reused);  // kept now: a copy
        require_listing_agrees(reused, relisted, d);
        auto again = r.descriptor(i);
        require(d.ok() == again.ok());
        if (d.ok()) {
            require(*d == *again);
        } else {
            require(d.error().to_string() == again.error().to_string());
        }

        auto t = r.tensor(i);
        require_error_well_formed(t);
        require(t.ok() == (d.ok() && agrees));  // a disagreeing copy never yields the tensor
        std::vector<uint8_t> some(static_cast<size_t>(std::min<uint64_t>(e.data_length, 64)));
        auto read = r.read_data(i, 0, some);
        require_error_well_formed(read);
        require(agrees || !read.ok());  // nor its data
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
    auto checked = r.check_all();
    require_error_well_formed(checked);
    require(!any_disagrees || !checked.ok());
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
        exercise(*s, input, strict);
    }
    // With the name table and the CRC on a second thread (parallel_open, from one
    // tensor on): the same result, the same entries.
    hurray::FileReadOptions beside;
    beside.parallel_open_min = 1;
    auto b = hurray::FileReader::open_memory(input, {}, beside);
    require(b.ok() == s.ok());
    if (b.ok()) {
        require(b->tensor_count() == s->tensor_count());
        for (size_t i = 0; i < b->tensor_count(); ++i) {
            require(b->entry(i) == s->entry(i) && b->find(b->entry(i).name) == i);
        }
    } else {
        require(b.error().to_string() == s.error().to_string());
    }

    hurray::FileReadOptions permissive;
    permissive.strict = false;
    permissive.descriptor.strict = false;
    auto p = hurray::FileReader::open_memory(input, {}, permissive);
    require_error_well_formed(p);
    require(!s.ok() || p.ok());
    if (p.ok()) {
        exercise(*p, input, permissive);
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
