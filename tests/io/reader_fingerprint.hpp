// SPDX-License-Identifier: Apache-2.0
// Test-only: everything a FileReader hands out, as one comparable string
// (open outcome, entries, descriptors, descriptor bytes, tensor bytes,
// composites, check_all, the KV section re-encoded), so that two ways of
// opening the same bytes can be compared in full.
#pragma once

#include <cstdint>
#include <string>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::test {

inline std::string hex_bytes(std::span<const uint8_t> b) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(b.size() * 2);
    for (const uint8_t v : b) {
        s.push_back(kDigits[v >> 4U]);
        s.push_back(kDigits[v & 15U]);
    }
    return s;
}

template <typename R>
std::string outcome(const R& r) {
    return r.ok() ? std::string("ok") : "error " + r.error().to_string();
}

/// Everything `r` (an opened reader or an error) hands out.
inline std::string fingerprint(const Result<FileReader>& opened) {
    if (!opened) {
        return "open: " + opened.error().to_string() + "\n";
    }
    const FileReader& r = *opened;
    std::string s = "open: ok, " + std::to_string(r.tensor_count()) + " tensors, " +
                    std::to_string(r.file_size()) + " bytes\n";
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        const IndexEntry& e = r.entry(i);
        s += "entry " + std::string(e.name) + " " + std::to_string(e.descriptor_offset) + "+" +
             std::to_string(e.descriptor_length) + " " + std::to_string(e.data_offset) + "+" +
             std::to_string(e.data_length) + "\n";
        auto d = r.descriptor(i);
        s += "  descriptor: ";
        if (d) {
            auto enc = encode(**d);
            s += enc ? hex_bytes(*enc) : "encode " + outcome(enc);
        } else {
            s += outcome(d);
        }
        s += "\n";
        auto db = r.descriptor_bytes(i);
        s += "  descriptor bytes: " + (db ? hex_bytes(db->span()) : outcome(db)) + "\n";
        auto t = r.tensor(i);
        s += "  tensor: " + outcome(t) + "\n";
        if (t) {
            for (const SharedBuffer& b : t->buffers()) {
                s += "  buffer " + hex_bytes(b.span()) + "\n";
            }
        }
        if (d && (*d)->layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            auto c = r.composite(i);
            s += "  composite: " + outcome(c);
            if (c) {
                for (const size_t m : c->members) {
                    s += " " + std::to_string(m);
                }
            }
            s += "\n";
        }
    }
    s += "check_all: " + outcome(r.check_all()) + "\n";
    auto kv = encode_kv_section(r.kv());
    s += "kv: " + (kv ? hex_bytes(*kv) : outcome(kv)) + "\n";
    return s;
}

}  // namespace hurray::test
