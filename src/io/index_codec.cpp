// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/index_codec.hpp"

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "io/byte_view.hpp"
#include "io/huge_pages.hpp"
#include "io/index_entry_parse.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>

namespace hurray {

using detail::byte_view;
using detail::char_view;

namespace {

using detail::kMinIndexEntrySize;

bool name_less(std::string_view a, std::string_view b) noexcept {
    // Raw byte order (unsigned), no normalisation (SPEC-NOTES 16).
    const size_t n = std::min(a.size(), b.size());
    const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
    return c < 0 || (c == 0 && a.size() < b.size());
}

std::string quoted(std::string_view name) {
    constexpr size_t kShown = 64;
    std::string s = "'";
    s.append(name.substr(0, kShown));
    if (name.size() > kShown) {
        s += "...";
    }
    s += "'";
    return s;
}

}  // namespace

Result<std::vector<uint8_t>> encode_index(std::span<const IndexEntry> entries) {
    uint64_t size = 8;
    for (const IndexEntry& e : entries) {
        if (e.name.empty() || e.name.size() > kMaxNameLength) {
            return Error(ErrorCode::kInvalidName,
                         "index entry " + quoted(e.name) + ": name must be 1 .. 65535 bytes");
        }
        auto next = add_u64(size, kIndexEntryFixedSize + e.name.size());
        if (!next) {
            return Error(ErrorCode::kSizeOverflow, "index: size overflows 64 bits");
        }
        size = *next;
    }
    std::vector<uint8_t> out(static_cast<size_t>(size));
    ByteWriter w(out);
    w.u64(entries.size());
    for (const IndexEntry& e : entries) {
        w.u16(static_cast<uint16_t>(e.name.size()));
        w.bytes(byte_view(e.name));
        w.u64(e.descriptor_offset);
        w.u32(e.descriptor_length);
        w.u64(e.data_offset);
        w.u64(e.data_length);
        w.u32(e.flags);
    }
    return out;
}

Result<std::vector<IndexEntry>> decode_index(std::span<const uint8_t> bytes, uint64_t base,
                                             std::vector<uint64_t>* entry_offsets) {
    ByteReader r(bytes, base);
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, r.u64("index_entry_count"));
    // Each entry takes at least kMinIndexEntrySize bytes: bound the count by the
    // section before reserving anything.
    const uint64_t room = r.remaining() / kMinIndexEntrySize;
    if (count > room) {
        return Error(ErrorCode::kInvalidFile,
                     "index_entry_count: " + dec(count) + " entries cannot fit in the " +
                         dec(r.remaining()) + " bytes of the index section after the count",
                     base);
    }
    std::vector<IndexEntry> entries;
    entries.reserve(static_cast<size_t>(count));
    detail::advise_huge_pages(entries.data(), entries.capacity() * sizeof(IndexEntry));  // not written yet
    if (entry_offsets != nullptr) {
        entry_offsets->clear();
        entry_offsets->reserve(static_cast<size_t>(count));
    }
    size_t pos = r.pos();  // the next entry
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t at = base + pos;
        // The common entry in one pass; anything else takes the field-by-field path
        // below from the same position, which reports every error.
        if (IndexEntry e; const size_t used = detail::parse_common_entry(bytes, pos, e)) {
            pos += used;
            entries.push_back(e);
            if (entry_offsets != nullptr) {
                entry_offsets->push_back(at);
            }
            continue;
        }
        ByteReader er(bytes.subspan(pos), at);
        IndexEntry e;
        HURRAY_ASSIGN_OR_RETURN(const uint16_t name_length, er.u16("index entry name_length"));
        if (name_length == 0) {
            return Error(ErrorCode::kInvalidName, "index entry " + dec(i) + ": name_length is 0", at);
        }
        HURRAY_ASSIGN_OR_RETURN(auto name, er.bytes(name_length, "index entry name"));
        e.name = char_view(name);  // a view into `bytes`
        if (!is_valid_utf8(e.name)) {
            return Error(ErrorCode::kInvalidName, "index entry " + dec(i) + ": name is not valid UTF-8",
                         at + 2);
        }
        HURRAY_ASSIGN_OR_RETURN(e.descriptor_offset, er.u64("index entry descriptor_offset"));
        HURRAY_ASSIGN_OR_RETURN(e.descriptor_length, er.u32("index entry descriptor_length"));
        HURRAY_ASSIGN_OR_RETURN(e.data_offset, er.u64("index entry data_offset"));
        HURRAY_ASSIGN_OR_RETURN(e.data_length, er.u64("index entry data_length"));
        const uint64_t flags_at = er.abs_pos();
        HURRAY_ASSIGN_OR_RETURN(e.flags, er.u32("index entry flags"));
        if (e.flags != 0) {
            return Error(ErrorCode::kReservedFlagBits,
                         "index entry " + quoted(e.name) + ": flags is " + hex(e.flags, 8) + ", must be 0",
                         flags_at);
        }
        pos += er.pos();
        entries.push_back(e);
        if (entry_offsets != nullptr) {
            entry_offsets->push_back(at);
        }
    }
    if (bytes.size() != pos) {
        return Error(ErrorCode::kInvalidFile,
                     "index: " + dec(bytes.size() - pos) + " bytes left over after the last of " + dec(count) +
                         " entries",
                     base + pos);
    }
    return entries;
}

Status check_index_names(std::span<const IndexEntry> entries, bool sorted,
                         std::span<const uint64_t> entry_offsets) {
    auto offset_of = [&](size_t i) {
        return i < entry_offsets.size() ? entry_offsets[i] : Error::kNoOffset;
    };
    if (sorted) {
        for (size_t i = 1; i < entries.size(); ++i) {
            const std::string_view prev = entries[i - 1].name;
            const std::string_view cur = entries[i].name;
            if (prev == cur) {
                return Error(ErrorCode::kDuplicateName,
                             "index entries " + dec(i - 1) + " and " + dec(i) + ": duplicate name " +
                                 quoted(cur),
                             offset_of(i));
            }
            if (!name_less(prev, cur)) {
                return Error(ErrorCode::kInvalidFile,
                             "index entry " + dec(i) + ": SORTED_INDEX is set but " + quoted(cur) +
                                 " sorts before the previous name " + quoted(prev),
                             offset_of(i));
            }
        }
        return Status::success();
    }
    std::vector<size_t> order(entries.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return name_less(entries[a].name, entries[b].name) ||
               (entries[a].name == entries[b].name && a < b);
    });
    for (size_t k = 1; k < order.size(); ++k) {
        const size_t a = order[k - 1];
        const size_t b = order[k];
        if (entries[a].name == entries[b].name) {
            return Error(ErrorCode::kDuplicateName,
                         "index entries " + dec(a) + " and " + dec(b) + ": duplicate name " +
                             quoted(entries[b].name),
                         offset_of(b));
        }
    }
    return Status::success();
}

}  // namespace hurray
