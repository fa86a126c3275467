// `hurray inspect` over a whole HRRYFILE or stream, and the text / JSON printers.
#include "hurray/inspect_walk.hpp"

#include <algorithm>
#include <ostream>
#include <string>

#include "hurray/core/describe.hpp"
#include "hurray/annotate_walker.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/index_codec.hpp"

namespace hurray::cli {
namespace {

/// The most bytes read for one index, KV section or descriptor.
constexpr uint64_t kMaxSectionBytes = uint64_t{256} << 20;
/// Raw bytes per printed line.
constexpr size_t kBytesPerLine = 16;

std::string plural(uint64_t n, const char* unit) {
    return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
}

// Reads [offset, offset + len) after checking it lies inside the input.
Result<std::vector<uint8_t>> read_range(const RandomAccess& in, uint64_t offset, uint64_t len, const std::string& what,
                                        uint64_t field_at) {
    if (offset > in.size || len > in.size - offset) {
        return Error(ErrorCode::kInvalidFile,
                     what + ": bytes " + std::to_string(offset) + " + " + std::to_string(len) +
                         " extend past the end of the file (" + std::to_string(in.size) + " bytes)",
                     field_at);
    }
    if (len > kMaxSectionBytes) {
        return Error(ErrorCode::kInvalidFile,
                     what + ": " + std::to_string(len) + " bytes is more than inspect reads (256 MiB)", field_at);
    }
    return in.read(offset, len);
}

void data_rows(Section& s, const TensorDescriptor& d, uint64_t start, uint64_t alignment) {
    uint64_t pos = start;
    for (size_t k = 0; k < d.buffers.size(); ++k) {
        if (k > 0 && alignment > 1) {
            auto aligned = align_up(pos, alignment);
            if (!aligned) {
                return;
            }
            pos = *aligned;
        }
        Row r;
        r.offset = pos;
        r.length = d.buffers[k].byte_size;
        r.field = "buffer[" + std::to_string(k) + "]";
        r.value = plural(r.length, "byte");
        r.number = r.length;
        r.data = true;
        s.rows.push_back(std::move(r));
        if (UINT64_MAX - pos < r.length) {
            return;
        }
        pos += d.buffers[k].byte_size;
    }
    s.offset = start;
    s.length = pos - start;
}

void sort_sections(Annotation& a) {
    std::stable_sort(a.sections.begin(), a.sections.end(),
                     [](const Section& x, const Section& y) { return x.offset < y.offset; });
}

// The file walk proper; `a` collects sections, the first error is returned.
Status walk_file(const RandomAccess& in, Annotation& a) {
    Section header{"header", 0, std::min<uint64_t>(kFileHeaderSize, in.size), {}};
    HURRAY_ASSIGN_OR_RETURN(auto head, in.read(0, header.length));
    Status st = annotate_file_header(head, header.rows);
    a.sections.push_back(std::move(header));
    HURRAY_RETURN_IF_ERROR(st);
    HURRAY_ASSIGN_OR_RETURN(FileHeader fh, decode_file_header(head));
    if (in.size < kFileHeaderSize + kFileTrailerSize) {
        return Error(ErrorCode::kTruncated,
                     "file: " + std::to_string(in.size) + " bytes cannot hold the 64-byte header and the 40-byte trailer",
                     in.size);
    }
    const uint64_t trailer_at = in.size - kFileTrailerSize;
    HURRAY_ASSIGN_OR_RETURN(auto tail, in.read(trailer_at, kFileTrailerSize));
    Section trailer{"trailer", trailer_at, kFileTrailerSize, {}};
    st = annotate_file_trailer(tail, trailer_at, trailer.rows);
    a.sections.push_back(std::move(trailer));
    HURRAY_RETURN_IF_ERROR(st);
    HURRAY_ASSIGN_OR_RETURN(FileTrailer ft, decode_file_trailer(tail, trailer_at));

    HURRAY_ASSIGN_OR_RETURN(auto index_bytes,
                            read_range(in, ft.index_offset, ft.index_length, "index", trailer_at));
    Section index{"index", ft.index_offset, ft.index_length, {}};
    st = annotate_file_index(index_bytes, ft.index_offset, index.rows);
    a.sections.push_back(std::move(index));
    HURRAY_RETURN_IF_ERROR(st);
    HURRAY_ASSIGN_OR_RETURN(auto entries, decode_index(index_bytes, ft.index_offset));

    if (ft.kv_offset != 0 && ft.kv_length != 0) {
        HURRAY_ASSIGN_OR_RETURN(auto kv_bytes, read_range(in, ft.kv_offset, ft.kv_length, "KV section", trailer_at + 16));
        Section kv{"kv", ft.kv_offset, ft.kv_length, {}};
        st = annotate_file_kv(kv_bytes, ft.kv_offset, kv.rows);
        a.sections.push_back(std::move(kv));
        HURRAY_RETURN_IF_ERROR(st);
        HURRAY_RETURN_IF_ERROR(detail::status_of(decode_kv_section(kv_bytes, ft.kv_offset)));
    }

    std::vector<const IndexEntry*> order;
    order.reserve(entries.size());
    for (const auto& e : entries) {
        order.push_back(&e);
    }
    std::stable_sort(order.begin(), order.end(), [](const IndexEntry* x, const IndexEntry* y) {
        return x->descriptor_offset < y->descriptor_offset;
    });
    for (const IndexEntry* e : order) {
        const std::vector<uint8_t> name(e->name.begin(), e->name.end());
        const std::string label = "tensor " + detail::quoted(name);
        HURRAY_ASSIGN_OR_RETURN(auto bytes, read_range(in, e->descriptor_offset, e->descriptor_length,
                                                       label + " descriptor", ft.index_offset));
        Section s{label + " descriptor", e->descriptor_offset, e->descriptor_length, {}};
        auto walked = annotate_descriptor(bytes, e->descriptor_offset, s.rows);
        a.sections.push_back(std::move(s));
        auto d = decode(bytes);
        if (!d) {
            return d.error().rebased(e->descriptor_offset);
        }
        HURRAY_RETURN_IF_ERROR(detail::status_of(walked));
        if (!d->buffers.empty()) {
            Section data{label + " data", e->data_offset, e->data_length, {}};
            data_rows(data, *d, e->data_offset, fh.data_buffer_alignment);
            a.sections.push_back(std::move(data));
        }
    }
    if (in.validate) {
        HURRAY_RETURN_IF_ERROR(in.validate());
    }
    return Status::success();
}

void put_hex_lines(std::ostream& out, const Row& r) {
    const std::string pad(8, ' ');
    const size_t kept = r.bytes.size();
    size_t line = 0;
    auto offset_text = [](uint64_t off) {
        std::string s = std::to_string(off);
        return std::string(s.size() < 8 ? 8 - s.size() : 0, ' ') + s;
    };
    for (size_t i = 0; i == 0 || i < kept; i += kBytesPerLine, ++line) {
        const size_t n = std::min(kBytesPerLine, kept - std::min(kept, i));
        const auto line_bytes = std::span<const uint8_t>(r.bytes).subspan(std::min(i, kept), n);
        const std::string digits = hurray::hex_bytes(line_bytes, " ");
        std::string text = offset_text(r.offset + i) + "  " + digits;
        if (line == 0) {
            text.resize(10 + kBytesPerLine * 3 - 1, ' ');
            text += "  " + r.field + " = " + r.value;
        }
        out << text << '\n';
    }
    if (r.length > kept) {
        out << pad << "  ... " << plural(r.length - kept, "more byte") << " (" << r.length << " in all)\n";
    }
}

}  // namespace

Annotation inspect_file(const RandomAccess& in) {
    Annotation a;
    a.kind = "file";
    Status st = walk_file(in, a);
    if (!st) {
        a.error = st.error();
    }
    sort_sections(a);
    return a;
}

Annotation inspect_stream(ByteSource& source) {
    Annotation a;
    a.kind = "stream";
    uint64_t pos = 0;
    for (uint64_t k = 0;; ++k) {
        const std::string label = "tensor_" + std::to_string(k);
        std::vector<uint8_t> prefix(kDescriptorPeekSize);
        auto got = source.read_full(prefix);
        if (!got) {
            a.error = got.error();
            return a;
        }
        if (*got == 0) {
            return a;  // a clean end on a tensor boundary
        }
        prefix.resize(*got);
        Section s{label + " descriptor", pos, prefix.size(), {}};
        auto length = peek_length(prefix);
        if (!length || length.value() > kMaxSectionBytes) {
            (void)annotate_descriptor(prefix, pos, s.rows);
            a.sections.push_back(std::move(s));
            a.error = length ? Error(ErrorCode::kInvalidDescriptorLength,
                                     "descriptor_length: " + std::to_string(*length) +
                                         " is more than inspect reads (256 MiB)",
                                     pos + 6)
                             : length.error().rebased(pos);
            return a;
        }
        // Grown as bytes arrive: a large descriptor_length costs memory only once its
        // bytes are there.
        std::vector<uint8_t> bytes = prefix;
        while (bytes.size() < *length) {
            const size_t have = bytes.size();
            const size_t want = std::min<size_t>(*length - have, size_t{1} << 16);
            bytes.resize(have + want);
            auto got_more = source.read_full(std::span<uint8_t>(bytes).subspan(have, want));
            if (!got_more) {
                a.error = got_more.error();
                return a;
            }
            bytes.resize(have + *got_more);
            if (*got_more < want) {
                break;
            }
        }
        s.length = bytes.size();
        auto walked = annotate_descriptor(bytes, pos, s.rows);
        a.sections.push_back(std::move(s));
        auto d = decode(bytes);
        if (!d) {
            a.error = d.error().rebased(pos);
            return a;
        }
        if (!walked) {
            a.error = walked.error();
            return a;
        }
        pos += bytes.size();
        if (d->buffers.empty()) {
            continue;
        }
        Section data{label + " data", pos, 0, {}};
        data_rows(data, *d, pos, 1);
        a.sections.push_back(data);
        for (size_t b = 0; b < d->buffers.size(); ++b) {
            const uint64_t want = d->buffers[b].byte_size;
            auto skipped = source.skip(want);
            if (!skipped) {
                a.error = skipped.error();
                return a;
            }
            if (*skipped < want) {
                a.error = Error(ErrorCode::kTruncated,
                                label + " buffer[" + std::to_string(b) + "]: " + plural(want, "byte") +
                                    " declared at offset " + std::to_string(pos) + ", the stream ends after " +
                                    std::to_string(*skipped),
                                pos + *skipped);
                return a;
            }
            pos += want;
        }
    }
}

void print_annotation(const Annotation& a, std::ostream& out) {
    for (size_t i = 0; i < a.sections.size(); ++i) {
        const Section& s = a.sections[i];
        if (i > 0) {
            out << '\n';
        }
        out << s.title << ": offset " << s.offset << ", " << plural(s.length, "byte") << '\n';
        out << "  offset  bytes" << std::string(kBytesPerLine * 3 - 6, ' ') << "  field = value\n";
        for (const Row& r : s.rows) {
            if (r.data) {
                std::string off = std::to_string(r.offset);
                out << std::string(off.size() < 8 ? 8 - off.size() : 0, ' ') << off << "  ";
                std::string note = "(data, not shown)";
                note.resize(kBytesPerLine * 3 - 1, ' ');
                out << note << "  " << r.field << " = " << r.value << '\n';
                continue;
            }
            put_hex_lines(out, r);
        }
    }
}

nlohmann::ordered_json error_json(const Error& e) {
    nlohmann::ordered_json j;
    j["code"] = std::string(error_code_name(e.code()));
    j["message"] = e.message();
    j["offset"] = e.has_offset() ? nlohmann::ordered_json(e.offset()) : nlohmann::ordered_json(nullptr);
    return j;
}

nlohmann::ordered_json annotation_json(const Annotation& a, std::optional<uint64_t> size) {
    nlohmann::ordered_json j;
    j["kind"] = a.kind;
    j["size"] = size ? nlohmann::ordered_json(*size) : nlohmann::ordered_json(nullptr);
    j["sections"] = nlohmann::ordered_json::array();
    for (const Section& s : a.sections) {
        nlohmann::ordered_json js;
        js["title"] = s.title;
        js["offset"] = s.offset;
        js["length"] = s.length;
        js["rows"] = nlohmann::ordered_json::array();
        for (const Row& r : s.rows) {
            nlohmann::ordered_json jr;
            jr["offset"] = r.offset;
            jr["length"] = r.length;
            if (r.data) {
                jr["data"] = true;
            } else {
                jr["hex"] = hurray::hex_bytes(r.bytes, " ");
            }
            jr["field"] = r.field;
            jr["value"] = r.value;
            if (r.number && !r.data) {
                jr["number"] = *r.number;
            }
            js["rows"].push_back(std::move(jr));
        }
        j["sections"].push_back(std::move(js));
    }
    j["error"] = a.error ? error_json(*a.error) : nlohmann::ordered_json(nullptr);
    return j;
}

}  // namespace hurray::cli
