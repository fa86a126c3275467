// `hurray verify FILE|STREAM`: every structural check (strict FileReader open, each
// descriptor, each composite; or a strict stream reader to the end), then the data-level
// checks of validate_data on each tensor's buffers. A SafeTensors, GGUF, .npy or .npz file:
// its reader's checks at open, check_descriptor on each tensor, every byte read through
// TensorSource::read, then validate_data. Exit 0 valid, 1 invalid (each problem listed on
// stderr).
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/validate.hpp"
#include "hurray/input.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/json_out.hpp"
#include "hurray/listing.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/gguf.hpp"
#endif

namespace hurray::cli {
namespace {

struct VerifyOptions {
    std::string path;
    bool quiet = false;
    RemoteOptions remote;
};

/// Largest stream tensor whose data is read into memory for the data checks (1 GiB).
constexpr uint64_t kMaxCheckedStreamTensor = uint64_t{1} << 30;

bool is_head(const TensorDescriptor& d) {
    return d.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite);
}

std::string tensor_label(std::string_view name, uint64_t index) {
    return "tensor '" + printable(name) + "' (#" + std::to_string(index) + ")";
}

struct Report {
    std::vector<std::string> problems;
    std::vector<std::string> notes;
    uint64_t tensors = 0;
    uint64_t composites = 0;
    uint64_t data_checked = 0;
    uint64_t data_read = 0;  ///< bytes read through TensorSource::read (SafeTensors, GGUF, NumPy)
};

void verify_file(Input& input, Report& r) {
    auto file = open_file_input(input);
    if (!file) {
        r.problems.push_back(file.error().message());
        return;
    }
    const std::string name = input.display_name();
    r.tensors = file->tensor_count();
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        const IndexEntry& e = file->entry(i);
        const std::string where = name + ": " + tensor_label(e.name, i);
        auto d = file->descriptor(i);
        if (!d) {
            r.problems.push_back(where + ", descriptor at byte " + std::to_string(e.descriptor_offset) + ": " +
                                 d.error().to_string());
            continue;
        }
        if (is_head(**d)) {
            ++r.composites;
            auto c = file->composite(i);
            if (!c) {
                r.problems.push_back(where + ", composite head at byte " + std::to_string(e.descriptor_offset) +
                                     ": " + c.error().to_string());
            }
            continue;
        }
        std::vector<std::span<const uint8_t>> spans;
        std::optional<FileTensor> t;
        std::vector<std::vector<uint8_t>> remote_bytes;  // a URL's: read here, dropped after the checks
        if (input.is_remote()) {
            auto bytes = read_tensor_buffers(*input.range_source(), *file, i);
            if (!bytes) {
                r.problems.push_back(where + ": " + bytes.error().to_string());
                continue;
            }
            remote_bytes = std::move(*bytes);
            for (const auto& b : remote_bytes) {
                spans.emplace_back(b);
            }
        } else {
            auto opened = file->tensor(i);
            if (!opened) {
                r.problems.push_back(where + ": " + opened.error().to_string());
                continue;
            }
            t.emplace(std::move(*opened));
            spans.reserve(t->buffers().size());
            for (const auto& b : t->buffers()) {
                spans.push_back(b.span());
            }
        }
        if (auto s = validate_data(**d, spans); !s) {
            r.problems.push_back(where + ", data at byte " + std::to_string(e.data_offset) + ": " +
                                 s.error().to_string());
        } else {
            ++r.data_checked;
        }
    }
    if (auto s = file->check_unchanged(); !s) {
        r.problems.push_back(error_text(name, s.error()));
    }
    if (r.problems.empty()) {
        if (auto s = file->check_all(); !s) {
            r.problems.push_back(error_text(name, s.error()));
        }
    }
}

void verify_stream(Input& input, Report& r) {
    StreamReadOptions options = input.stream_options();
    options.max_tensor_bytes = kMaxCheckedStreamTensor;
    StreamReader reader(input.source(), options);
    const std::string name = input.display_name() + " (stream)";
    for (;;) {
        auto t = reader.next();
        if (!t) {
            r.problems.push_back(error_text(name, t.error()));
            return;
        }
        if (*t == nullptr) {
            break;
        }
        ++r.tensors;
        const TensorDescriptor& d = (*t)->descriptor;
        const uint64_t index = (*t)->index;
        const uint64_t data_offset = reader.decoder().offset();
        if (is_head(d)) {
            ++r.composites;
            continue;
        }
        if (data_bytes(d) > kMaxCheckedStreamTensor) {
            r.notes.push_back(name + ": " + tensor_label("tensor_" + std::to_string(index), index) +
                              ": data checks skipped (more than 1 GiB)");
            continue;  // next() skips its data
        }
        auto bufs = reader.read_tensor();
        if (!bufs) {
            r.problems.push_back(error_text(name, bufs.error()));
            return;
        }
        std::vector<std::span<const uint8_t>> spans;
        spans.reserve(bufs->size());
        for (const auto& b : *bufs) {
            spans.push_back(b.span());
        }
        if (auto s = validate_data(d, spans); !s) {
            r.problems.push_back(name + ": " + tensor_label("tensor_" + std::to_string(index), index) +
                                 ", data at byte " + std::to_string(data_offset) + ": " + s.error().to_string());
        } else {
            ++r.data_checked;
        }
    }
}

#ifdef HURRAY_CLI_HAS_CONVERT
/// A SafeTensors, GGUF, .npy or .npz file: what its reader checked at open, then per
/// tensor check_descriptor (GGML blocks are a scheme this tool knows), every byte read
/// through TensorSource::read, and validate_data on those bytes.
void verify_foreign(const std::string& path, const Result<ForeignInput>& in, bool spec_only, Report& r) {
    if (!in) {
        r.problems.push_back(path + ": " + unprefixed(path, in.error()).to_string());
        return;
    }
    const convert::TensorSource& src = *in->source;
    DecodeOptions strict;  // GGML blocks are libhurray's own scheme: understood unless --spec-only
    strict.libhurray_schemes = !spec_only;
    r.tensors = src.tensor_count();
    for (size_t i = 0; i < src.tensor_count(); ++i) {
        const convert::SourceTensor& t = src.tensor(i);
        const std::string where = path + ": " + tensor_label(t.name, i);
        if (auto s = check_descriptor(t.descriptor, strict); !s) {
            r.problems.push_back(where + ", descriptor: " + s.error().to_string());
            continue;
        }
        if (is_head(t.descriptor)) {
            ++r.composites;
            continue;
        }
        const bool keep = data_bytes(t.descriptor) <= kMaxCheckedStreamTensor;
        auto bytes = read_foreign_tensor(src, i, /*use_views=*/false, keep);
        if (!bytes) {
            r.problems.push_back(where + ": " + unprefixed(path, bytes.error()).to_string());
            continue;
        }
        r.data_read += bytes->bytes_read;
        if (!keep) {
            r.notes.push_back(where + ": data read, data checks skipped (more than 1 GiB)");
            continue;
        }
        if (convert::ggml_blocks_type(t.descriptor)) {
            continue;  // opaque GGML blocks: read in full; their sizes are checked at open
        }
        if (auto s = validate_data(t.descriptor, bytes->spans); !s) {
            r.problems.push_back(where + ", data: " + s.error().to_string());
        } else {
            ++r.data_checked;
        }
    }
}
#endif

void print_verdict(const VerifyOptions& o, const Report& r, const std::string& name, const std::string& kind,
                   const Console& console) {
    for (const auto& n : r.notes) {
        console.err << "hurray verify: note: " << n << '\n';
    }
    for (const auto& p : r.problems) {
        console.err << "hurray verify: " << p << '\n';
    }
    if (o.quiet) {
        return;
    }
    if (!r.problems.empty()) {
        console.out << name << ": INVALID (" << r.problems.size()
                    << (r.problems.size() == 1 ? " problem" : " problems") << ")\n";
        return;
    }
    console.out << name << ": OK (" << kind << ", " << r.tensors << " tensors, " << r.composites
                << " composites, ";
    if (kind != "file" && kind != "stream") {  // read through hurray::convert
        console.out << r.data_read << " bytes of data read, ";
    }
    console.out << "data checked on " << r.data_checked << " tensors)\n";
}

int run_verify(const VerifyOptions& o, const Console& console) {
    Report r;
#ifdef HURRAY_CLI_HAS_CONVERT
    if (auto foreign = open_foreign(o.path, o.remote)) {
        const std::string shown = display_path(o.path);  // a URL without credentials or query
        verify_foreign(shown, *foreign, console.spec_only, r);
        print_verdict(o, r, shown, *foreign ? std::string(convert::format_name((*foreign)->format)) : "", console);
        return r.problems.empty() ? kExitOk : kExitInvalid;
    }
#endif
    auto in = open_input_or_report(o.path, console, "verify", o.remote);
    if (!in) {
        return kExitInvalid;
    }
    Input& input = *in;
    const bool is_file = input.kind() == InputKind::kFile;
    if (is_file) {
        verify_file(input, r);
    } else {
        verify_stream(input, r);
    }
    print_verdict(o, r, input.display_name(), is_file ? "file" : "stream", console);
    return r.problems.empty() ? kExitOk : kExitInvalid;
}

}  // namespace

void add_verify(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<VerifyOptions>();
    CLI::App* cmd = app.add_subcommand(
        "verify", "Check an HRRYFILE or a stream against every rule of the format: structure (header, index, "
                  "CRC, KV, descriptors, composites) and data (sparse invariants, block tables, quantization "
                  "parameters, padding bits). A SafeTensors, GGUF, .npy or .npz file: every check of its "
                  "reader (hurray::convert), each tensor's descriptor, every data byte read, the data checks. "
                  "Problems are listed on stderr.");
    cmd->add_option("input", opts->path,
                    "HRRYFILE, stream ('-': standard input), http(s):// or s3:// URL of either, SafeTensors, GGUF, .npy or "
                    ".npz file")
        ->required();
    cmd->add_flag("-q,--quiet", opts->quiet, "print nothing on stdout (problems still go to stderr)");
    add_remote_options(cmd, opts->remote);
    cmd->footer("Exit status: 0 valid, 1 invalid or unreadable input, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_verify(*opts, console); });
}

}  // namespace hurray::cli
