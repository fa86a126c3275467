// SPDX-License-Identifier: Apache-2.0
// The descriptor table's encoding and its check against an index
// (hurray/io/descriptor_table.hpp).
#include "hurray/io/descriptor_table.hpp"

#include <algorithm>
#include <unordered_map>

#include "hurray/core/byte_io.hpp"

namespace hurray {

namespace {

/// FNV-1a 64 of a descriptor's bytes (the writer's own descriptors: no adversary).
struct BytesHash {
    size_t operator()(std::span<const uint8_t> bytes) const noexcept {
        uint64_t h = 0xCBF29CE484222325ULL;
        for (const uint8_t b : bytes) {
            h = (h ^ b) * 0x100000001B3ULL;
        }
        return static_cast<size_t>(h);
    }
};

/// Byte equality of two descriptors.
struct BytesEqual {
    bool operator()(std::span<const uint8_t> a, std::span<const uint8_t> b) const noexcept {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
};

/// Appends the common header (magic, `version`, flags 0, `entry_count`) to `out`.
void append_header(std::vector<uint8_t>& out, uint16_t version, uint64_t entry_count) {
    const size_t at = out.size();
    out.resize(at + kDescriptorTableHeaderSize, 0);
    std::copy(kDescriptorTableMagic.begin(), kDescriptorTableMagic.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
    store_le<uint16_t>(out.data() + at + 4, version);
    store_le<uint64_t>(out.data() + at + 8, entry_count);
}

}  // namespace

Result<std::vector<uint8_t>> encode_descriptor_table(std::span<const std::span<const uint8_t>> descriptors,
                                                     uint16_t version) {
    const size_t n = descriptors.size();
    std::vector<uint8_t> out;
    if (version == kDescriptorTableVersion1) {
        size_t total = kDescriptorTableHeaderSize;
        for (const auto& d : descriptors) {
            total += d.size();
        }
        out.reserve(total);
        append_header(out, version, n);
        for (const auto& d : descriptors) {
            out.insert(out.end(), d.begin(), d.end());
        }
        return out;
    }
    if (version != kDescriptorTableVersion2) {
        return Error(ErrorCode::kInvalidArgument,
                     "descriptor table: version " + std::to_string(version) + " is not one this library writes (1, 2)");
    }
    if (n >= UINT32_MAX) {
        return Error(ErrorCode::kInvalidArgument, "descriptor table: version 2 holds fewer than 2^32 - 1 entries, not " +
                                                      std::to_string(n));
    }
    // Classes in the order of their first entry.
    std::unordered_map<std::span<const uint8_t>, uint32_t, BytesHash, BytesEqual> class_of;
    std::vector<uint32_t> classes(n);
    std::vector<std::span<const uint8_t>> distinct;
    size_t distinct_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto [it, fresh] = class_of.try_emplace(descriptors[i], static_cast<uint32_t>(distinct.size()));
        if (fresh) {
            distinct.push_back(descriptors[i]);
            distinct_bytes += descriptors[i].size();
        }
        classes[i] = it->second;
    }
    out.reserve(kDescriptorTableV2HeaderSize + 4 * n + distinct_bytes);
    append_header(out, version, n);
    out.resize(kDescriptorTableV2HeaderSize + 4 * n);
    store_le<uint64_t>(out.data() + kDescriptorTableHeaderSize, distinct.size());
    for (size_t i = 0; i < n; ++i) {
        store_le<uint32_t>(out.data() + kDescriptorTableV2HeaderSize + 4 * i, classes[i]);
    }
    for (const auto& d : distinct) {
        out.insert(out.end(), d.begin(), d.end());
    }
    return out;
}

bool is_descriptor_table_header(std::span<const uint8_t> value, uint64_t entry_count) noexcept {
    if (value.size() < kDescriptorTableHeaderSize ||
        !std::equal(kDescriptorTableMagic.begin(), kDescriptorTableMagic.end(), value.begin())) {
        return false;
    }
    const auto version = load_le<uint16_t>(value.data() + 4);
    return (version == kDescriptorTableVersion1 || version == kDescriptorTableVersion2) && load_le<uint16_t>(value.data() + 6) == 0 &&
           load_le<uint64_t>(value.data() + 8) == entry_count;
}

std::optional<std::vector<uint64_t>> locate_descriptor_table(std::span<const uint8_t> value,
                                                             std::span<const IndexEntry> entries) {
    const size_t n = entries.size();
    if (!is_descriptor_table_header(value, n)) {
        return std::nullopt;
    }
    std::vector<uint64_t> at(n);
    if (load_le<uint16_t>(value.data() + 4) == kDescriptorTableVersion1) {
        uint64_t pos = kDescriptorTableHeaderSize;
        for (size_t i = 0; i < n; ++i) {
            at[i] = pos;
            // pos <= value.size() (checked each step), descriptor_length < 2^32: no overflow.
            pos += entries[i].descriptor_length;
            if (pos > value.size()) {
                return std::nullopt;
            }
        }
        return pos == value.size() ? std::optional(std::move(at)) : std::nullopt;
    }
    // Version 2: the header, the classes, then each class's copy.
    if (value.size() < kDescriptorTableV2HeaderSize || n > (value.size() - kDescriptorTableV2HeaderSize) / 4) {
        return std::nullopt;
    }
    const auto class_count = load_le<uint64_t>(value.data() + kDescriptorTableHeaderSize);
    if (class_count > n) {
        return std::nullopt;
    }
    std::vector<uint64_t> class_at(static_cast<size_t>(class_count));
    std::vector<uint32_t> class_length(static_cast<size_t>(class_count));
    uint64_t seen = 0;  // classes met so far
    uint64_t pos = kDescriptorTableV2HeaderSize + 4 * uint64_t{n};
    for (size_t i = 0; i < n; ++i) {
        const auto c = load_le<uint32_t>(value.data() + kDescriptorTableV2HeaderSize + 4 * i);
        if (c == seen) {  // its first entry: the class's copy comes next
            if (seen == class_count || entries[i].descriptor_length > value.size() - pos) {
                return std::nullopt;
            }
            class_at[c] = pos;
            class_length[c] = entries[i].descriptor_length;
            pos += entries[i].descriptor_length;
            ++seen;
        } else if (c > seen || entries[i].descriptor_length != class_length[c]) {
            return std::nullopt;
        }
        at[i] = class_at[c];
    }
    return seen == class_count && pos == value.size() ? std::optional(std::move(at)) : std::nullopt;
}

}  // namespace hurray
