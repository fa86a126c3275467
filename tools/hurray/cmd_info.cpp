// `hurray info FILE [--json]`: header, flags, alignment, sections, KV metadata (typed),
// tensor and composite counts, sizes. Given a stream, its counts and sizes.
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/input.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/json_out.hpp"
#include "hurray/listing.hpp"

namespace hurray::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct InfoOptions {
    std::string path;
    bool json = false;
};

std::vector<std::string> flag_names(uint32_t flags) {
    std::vector<std::string> names;
    if ((flags & file_flags::kHasKvMetadata) != 0) {
        names.emplace_back("HAS_KV_METADATA");
    }
    if ((flags & file_flags::kSortedIndex) != 0) {
        names.emplace_back("SORTED_INDEX");
    }
    if ((flags & file_flags::kHasIndexCrc32c) != 0) {
        names.emplace_back("HAS_INDEX_CRC32C");
    }
    return names;
}

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

struct Totals {
    uint64_t tensors = 0;
    uint64_t composite_heads = 0;
    uint64_t quantized = 0;
    uint64_t data_bytes = 0;
    uint64_t descriptor_bytes = 0;
};

Totals totals_of(const std::vector<ListedTensor>& tensors) {
    Totals t;
    for (const auto& l : tensors) {
        ++t.tensors;
        if (l.descriptor.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            ++t.composite_heads;
        }
        if (l.descriptor.quantization) {
            ++t.quantized;
        }
        const uint64_t b = data_bytes(l.descriptor);
        t.data_bytes = __builtin_add_overflow(t.data_bytes, b, &t.data_bytes) ? UINT64_MAX : t.data_bytes;
        t.descriptor_bytes += l.where.descriptor_length;
    }
    return t;
}

void add_totals(ojson& j, const Totals& t) {
    j["tensor_count"] = t.tensors;
    j["composite_count"] = t.composite_heads;
    j["quantized_count"] = t.quantized;
    j["data_bytes"] = t.data_bytes;
    j["descriptor_bytes"] = t.descriptor_bytes;
}

int info_file(const InfoOptions& o, Input& input, const Console& console) {
    auto listed = open_and_list_file(input);
    if (!listed) {
        console.err << "hurray info: " << listed.error().message() << '\n';
        return kExitInvalid;
    }
    const FileReader& file = listed->file;
    const FileHeader& h = file.header();
    const FileTrailer& tr = file.trailer();
    const Totals t = totals_of(listed->tensors);
    if (o.json) {
        ojson j;
        j["kind"] = "file";
        j["container_version"] = {h.version_major, h.version_minor};
        j["flags"] = h.flags;
        j["flag_names"] = flag_names(h.flags);
        j["data_buffer_alignment"] = h.data_buffer_alignment;
        j["first_descriptor_offset"] = h.first_descriptor_offset;
        j["tensor_count_hint"] = h.tensor_count_hint == kUnknownTensorCount ? ojson(nullptr) : ojson(h.tensor_count_hint);
        j["file_size"] = file.file_size();
        j["index"] = {{"offset", tr.index_offset}, {"length", tr.index_length}, {"crc32c", tr.index_crc32c}};
        j["kv_section"] = {{"offset", tr.kv_offset}, {"length", tr.kv_length}};
        add_totals(j, t);
        j["kv"] = kv_json(file.kv());
        console.out << j.dump(2, ' ', false, ojson::error_handler_t::replace) << '\n';
        return kExitOk;
    }
    std::ostream& out = console.out;
    out << input.display_name() << ": HRRYFILE container version " << int{h.version_major} << '.'
        << int{h.version_minor} << ", " << bytes_text(file.file_size()) << " (" << file.file_size() << " bytes)\n";
    std::string names;
    for (const auto& n : flag_names(h.flags)) {
        names += (names.empty() ? "" : ", ") + n;
    }
    out << "  flags:                   " << hex32(h.flags) << (names.empty() ? "" : " (" + names + ")") << '\n';
    out << "  data buffer alignment:   " << h.data_buffer_alignment << '\n';
    out << "  first descriptor offset: " << h.first_descriptor_offset << '\n';
    out << "  tensor count hint:       "
        << (h.tensor_count_hint == kUnknownTensorCount ? std::string("unknown") : std::to_string(h.tensor_count_hint))
        << '\n';
    out << "  index:                   offset " << tr.index_offset << ", " << tr.index_length << " bytes, crc32c "
        << hex32(tr.index_crc32c) << '\n';
    out << "  kv section:              offset " << tr.kv_offset << ", " << tr.kv_length << " bytes\n";
    out << "  tensors:                 " << t.tensors << " (" << t.composite_heads << " composite heads, "
        << t.quantized << " quantized)\n";
    out << "  data:                    " << bytes_text(t.data_bytes) << " (" << t.data_bytes << " bytes)\n";
    out << "  descriptors:             " << t.descriptor_bytes << " bytes\n";
    out << "  kv metadata:             " << file.kv().size() << (file.kv().size() == 1 ? " entry" : " entries")
        << '\n';
    for (const auto& e : file.kv().entries()) {
        out << "    " << printable(e.key) << " (" << kv_type_name(e.value.tag()) << ") = " << kv_value_text(e.value)
            << '\n';
    }
    return kExitOk;
}

int info_stream(const InfoOptions& o, Input& input, const Console& console) {
    auto listing = list_stream(input.source());
    if (!listing) {
        console.err << "hurray info: " << error_text(input.display_name() + " (stream)", listing.error()) << '\n';
        return kExitInvalid;
    }
    const Totals t = totals_of(listing->tensors);
    if (o.json) {
        ojson j;
        j["kind"] = "stream";
        j["stream_bytes"] = listing->total_bytes;
        add_totals(j, t);
        console.out << j.dump(2) << '\n';
        return kExitOk;
    }
    console.out << input.display_name() << ": stream, " << bytes_text(listing->total_bytes) << " ("
                << listing->total_bytes << " bytes)\n"
                << "  tensors:     " << t.tensors << " (" << t.composite_heads << " composite heads, " << t.quantized
                << " quantized)\n"
                << "  data:        " << bytes_text(t.data_bytes) << " (" << t.data_bytes << " bytes)\n"
                << "  descriptors: " << t.descriptor_bytes << " bytes\n";
    return kExitOk;
}

int run_info(const InfoOptions& o, const Console& console) {
    auto in = open_input_or_report(o.path, console, "info");
    if (!in) {
        return kExitInvalid;
    }
    return in->kind() == InputKind::kFile ? info_file(o, *in, console) : info_stream(o, *in, console);
}

}  // namespace

void add_info(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<InfoOptions>();
    CLI::App* cmd = app.add_subcommand(
        "info", "Show an HRRYFILE's header (version, flags, alignment), sections, typed KV metadata, tensor "
                "counts and sizes (for a stream: its counts and sizes).");
    cmd->add_option("input", opts->path, "HRRYFILE or stream ('-': standard input)")->required();
    cmd->add_flag("--json", opts->json, "print one JSON object (KV entries as in 'hurray ls --json')");
    cmd->footer("Exit status: 0 ok, 1 invalid or unreadable input, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_info(*opts, console); });
}

}  // namespace hurray::cli
