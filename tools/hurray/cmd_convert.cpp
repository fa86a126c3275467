// `hurray convert IN OUT`: re-packs tensors through our own reader and writer, streaming in
// bounded memory: file -> file (alignment, index order), file -> stream, stream -> file,
// stream -> stream. File and stream outputs named by a path are replaced atomically.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/interrupt.hpp"
#include "hurray/input.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"
#include "hurray/json_out.hpp"
#include "hurray/listing.hpp"
#include "hurray/progress.hpp"
#include "hurray/remote.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/convert.hpp"
#include "hurray/convert/format.hpp"
#endif

namespace hurray::cli {
namespace {

struct ConvertOptions {
    std::string in;
    std::string out;
    std::optional<uint32_t> alignment;
    bool sorted_index = false;
    bool write_order = false;
    std::string to;
    std::vector<std::string> names;
    std::string names_from;
    std::string kv_from;
    bool dequantize = false;
    std::string dtype;
    bool verify = false;
    bool no_fsync = false;
    RemoteOptions remote;
};

/// Largest piece of tensor data handed to a writer at once.
constexpr size_t kPiece = size_t{4} << 20;
/// Largest range read from a URL at once (the piece held in memory).
constexpr size_t kRemotePiece = size_t{16} << 20;

/// Writes to an std::ostream (standard output in the tool, a string stream in tests).
class OstreamSink final : public ByteSink {
public:
    explicit OstreamSink(std::ostream& out) : out_(out) {}
    Status write(std::span<const uint8_t> bytes) override {
        // SAFETY: char may alias any object; the span is valid for bytes.size() bytes and
        // ostream::write only reads them.
        out_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        return out_ ? Status::success() : Status(Error(ErrorCode::kIoError, "standard output: write failed"));
    }
    Status flush() override {
        out_.flush();
        return out_ ? Status::success() : Status(Error(ErrorCode::kIoError, "standard output: flush failed"));
    }

private:
    std::ostream& out_;
};

/// Counts what goes through it and reports it to a Progress.
class CountingSink final : public ByteSink {
public:
    CountingSink(ByteSink& inner, Progress& progress) : inner_(inner), progress_(progress) {}
    Status write(std::span<const uint8_t> bytes) override {
        if (interrupted_by() != 0) {
            return Error(ErrorCode::kCancelled, "interrupted");  // under an InterruptGuard (run_convert)
        }
        HURRAY_RETURN_IF_ERROR(inner_.write(bytes));
        n_ += bytes.size();
        progress_.update(n_);
        return Status::success();
    }
    Status flush() override { return inner_.flush(); }

private:
    ByteSink& inner_;
    Progress& progress_;
    uint64_t n_ = 0;
};

/// Counts what is read through it and reports it to a Progress.
class CountingSource final : public ByteSource {
public:
    CountingSource(ByteSource& inner, Progress& progress) : inner_(inner), progress_(progress) {}
    Result<size_t> read_some(std::span<uint8_t> out) override {
        auto n = inner_.read_some(out);
        if (n) {
            n_ += *n;
            progress_.update(n_);
        }
        return n;
    }
    Result<uint64_t> skip(uint64_t n) override {
        auto s = inner_.skip(n);
        if (s) {
            n_ += *s;
            progress_.update(n_);
        }
        return s;
    }

private:
    ByteSource& inner_;
    Progress& progress_;
    uint64_t n_ = 0;
};

/// The output: standard output, or a file replaced atomically on commit().
struct Output {
    std::unique_ptr<AtomicFileSink> file;
    std::unique_ptr<OstreamSink> stdout_sink;
    ByteSink* sink = nullptr;

    static Result<Output> open(const std::string& path, const Console& console, bool durable) {
        Output o;
        if (path == "-") {
            o.stdout_sink = std::make_unique<OstreamSink>(console.out);
            o.sink = o.stdout_sink.get();
            return o;
        }
        auto f = AtomicFileSink::create(path, durable);
        if (!f) {
            return f.error().with_context({.prefix = path + ": cannot create", .file = path});
        }
        o.file = std::move(*f);
        o.sink = o.file.get();
        return o;
    }

    Status commit() {
        if (file) {
            return file->commit();
        }
        return sink->flush();
    }
};

Status copy_file_to_file(const FileReader& file, FileWriter& writer) {
    for (size_t i : file.write_order()) {
        auto t = file.tensor(i);
        if (!t) {
            return t.error();
        }
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(t->name(), t->descriptor()));
        for (const auto& b : t->buffers()) {
            std::span<const uint8_t> rest = b.span();
            while (!rest.empty()) {
                const size_t n = std::min(rest.size(), kPiece);
                if (auto s = writer.write_data(rest.first(n)); !s) {
                    HURRAY_RETURN_IF_ERROR(file.check_unchanged());  // EFAULT from a vanished page
                    return s;
                }
                rest = rest.subspan(n);
            }
        }
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
        HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    }
    writer.kv() = file.kv();
    return Status::success();
}

/// copy_file_to_file for a file read from a URL: each tensor's data read from `source` in
/// ranges of kRemotePiece (the reader itself would keep every tensor it hands out).
Status copy_remote_file_to_file(RangeSource& source, const FileReader& file, FileWriter& writer) {
    std::vector<uint8_t> scratch;
    for (size_t i : file.write_order()) {
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(file.entry(i).name, *d));
        HURRAY_RETURN_IF_ERROR(copy_tensor_data(source, file, i, kRemotePiece, scratch,
                                                [&writer](std::span<const uint8_t> piece) {
                                                    return writer.write_data(piece);
                                                }));
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
    }
    writer.kv() = file.kv();
    return Status::success();
}

/// file_to_stream for a file read from a URL, in bounded memory (see copy_remote_file_to_file).
Status copy_remote_file_to_stream(RangeSource& source, const FileReader& file, ByteSink& sink) {
    StreamWriter writer(sink);
    std::vector<uint8_t> scratch;
    for (size_t i : file.write_order()) {
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(*d));
        HURRAY_RETURN_IF_ERROR(copy_tensor_data(source, file, i, kRemotePiece, scratch,
                                                [&writer](std::span<const uint8_t> piece) {
                                                    return writer.write_data(piece);
                                                }));
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
    }
    return writer.finish();
}

Status copy_stream_to_stream(ByteSource& source, ByteSink& sink) {
    StreamReader reader(source);
    StreamWriter writer(sink);
    for (;;) {
        auto t = reader.next();
        if (!t) {
            return t.error();
        }
        if (*t == nullptr) {
            break;
        }
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor((*t)->descriptor));
        for (;;) {
            auto c = reader.read_chunk();
            if (!c) {
                return c.error();
            }
            if (c->bytes.empty()) {
                break;
            }
            HURRAY_RETURN_IF_ERROR(writer.write_data(c->bytes));
        }
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
    }
    return writer.finish();
}

int usage(const Console& console, const std::string& message) {
    console.err << "hurray convert: " << message << "\nRun 'hurray convert --help' for usage.\n";
    return kExitUsage;
}

int fail(const Console& console, const ConvertOptions& o, const std::string& message) {
    console.err << "hurray convert: " << (o.in == "-" ? std::string("<stdin>") : display_path(o.in)) << " -> "
                << (o.out == "-" ? std::string("<stdout>") : o.out) << ": " << message << '\n';
    return kExitInvalid;
}

int fail(const Console& console, const ConvertOptions& o, const Error& e) {
    static_cast<void>(fail(console, o, e.to_string()));
    return exit_code_of(e);
}

#ifdef HURRAY_CLI_HAS_CONVERT
namespace hc = hurray::convert;

/// The output format asked for, nullopt when neither --to nor the extension names one.
std::optional<hc::Format> requested_output(const ConvertOptions& r) {
    if (r.to == "file") {
        return hc::Format::kHrryFile;
    }
    if (r.to == "stream") {
        return hc::Format::kStream;
    }
    if (!r.to.empty()) {
        auto f = hc::parse_format_name(r.to);
        return f ? std::optional<hc::Format>(*f) : std::nullopt;
    }
    if (r.out == "-") {
        return std::nullopt;
    }
    return hc::format_from_extension(r.out);
}

/// Whether this conversion goes through hurray::convert: a SafeTensors / GGUF / .npy /
/// .npz output (--to or extension), such an input (detected from its bytes) written to a
/// file, or --dequantize, --dtype or --verify.
bool uses_converter(const ConvertOptions& r) {
    if (r.dequantize || !r.dtype.empty() || r.verify) {
        return true;
    }
    const auto out = requested_output(r);
    if (out && is_foreign_format(*out)) {
        return true;
    }
    // A foreign input written to standard output stays on the HRRYFILE / stream path, which
    // reports it as not a Hurray file or stream (a stream cannot be written from it). A
    // URL's format is told by its extension (no request before the conversion's own).
    if (is_url(r.in)) {
        const auto in = url_format(r.in);
        return r.out != "-" && in && is_foreign_format(*in);
    }
    return r.out != "-" && is_foreign_format(detect_file_format(r.in));
}

/// The conversion through hurray::convert::convert_file (a progress bar when console.err
/// is a terminal).
int run_format_convert(const ConvertOptions& r, const Console& console) {
    if (r.in == "-" || r.out == "-") {
        console.err << "hurray convert: standard input and output carry HRRYFILE / stream "
                       "conversions only; "
                       "give file paths for "
                    << (r.dequantize || !r.dtype.empty() || r.verify
                            ? "--dequantize, --dtype and --verify"
                            : "SafeTensors, GGUF and NumPy files")
                    << "\n";
        return kExitUsage;
    }
    hc::ConvertOptions options;
    options.to = requested_output(r).value_or(hc::Format::kHrryFile);
    if (options.to == hc::Format::kStream) {
        console.err
            << "hurray convert: a stream output is written from an HRRYFILE or a stream only\n";
        return kExitUsage;
    }
    options.dequantize = r.dequantize || !r.dtype.empty();
    if (!r.dtype.empty()) {
        options.dequantize_type = r.dtype == "float16"    ? ElementType::kFloat16
                                  : r.dtype == "bfloat16" ? ElementType::kBFloat16
                                                          : ElementType::kFloat32;
    }
    options.verify = r.verify;
    std::optional<Progress> progress;
    const InterruptGuard interrupts;  // Ctrl-C / SIGTERM cancel at the next chunk
    options.progress = [&](uint64_t done, uint64_t total) {
        if (!progress) {
            progress.emplace(console, total);
        }
        progress->update(done);
        return interrupted_by() == 0;
    };
    // A URL is converted while it downloads: each chunk of tensor data is one range
    // request, in bounded memory (options.chunk_bytes).
    const auto convert = [&]() -> Result<hc::ConvertReport> {
        if (!is_url(r.in)) {
            return hc::convert_file(r.in, r.out, options);
        }
        HURRAY_ASSIGN_OR_RETURN(std::unique_ptr<hc::TensorSource> src, open_url_source(r.in, r.remote));
        return hc::write(*src, r.out, options);
    };
    auto report = convert();
    if (progress) {
        progress->finish();
    }
    if (!report) {
        if (report.error().code() == ErrorCode::kCancelled) {
            console.err << "hurray convert: interrupted; " << r.out << " was not written\n";
            return interrupted_exit_code();  // 130 (SIGINT) or 143 (SIGTERM)
        }
        return fail(console, r, report.error());
    }
    if (report->verified) {
        console.err << "hurray convert: " << r.out << ": verified " << report->tensors
                    << " tensors (" << report->data_bytes << " bytes of data) against " << r.in
                    << '\n';
    }
    return kExitOk;
}

#else  // built without hurray::convert

bool uses_converter(const ConvertOptions& r) {
    return r.dequantize || !r.dtype.empty() || r.verify ||
           (!r.to.empty() && r.to != "file" && r.to != "stream" && r.to != "hrryfile");
}

int run_format_convert(const ConvertOptions& /*request*/, const Console& console) {
    console.err << "hurray convert: this build has no hurray::convert (SafeTensors, GGUF and NumPy "
                   "conversions, --dequantize, --verify)\n";
    return kExitInvalid;
}
#endif

int run_hrry_convert(const ConvertOptions& o, const Console& console);

int run_convert(const ConvertOptions& o, const Console& console) {
    if (uses_converter(o)) {
        if (o.alignment || o.sorted_index || o.write_order || !o.names.empty() || !o.names_from.empty() ||
            !o.kv_from.empty() || o.no_fsync) {
            return usage(console,
                         "--alignment, --sorted-index, --write-order, --names, --names-from, --kv-from and "
                         "--no-fsync apply to "
                         "HRRYFILE and stream conversions only (not with SafeTensors, GGUF or NumPy files, "
                         "--dequantize, --dtype or --verify)");
        }
        return run_format_convert(o, console);
    }
    if (o.to == "hrryfile") {
        ConvertOptions as_file = o;
        as_file.to = "file";
        return run_convert(as_file, console);
    }
    if (o.in == "-" || o.out == "-") {
        // A pipe may block a read or write for as long as its other end wants: Ctrl-C
        // keeps its default action (the process ends) there.
        return run_hrry_convert(o, console);
    }
    // Files and URLs: Ctrl-C / SIGTERM stop the copy at its next write (a transfer at
    // once), the output's temporary file is removed, and the status is 130 / 143.
    const InterruptGuard interrupts;
    const int rc = run_hrry_convert(o, console);
    if (rc != kExitOk && interrupted_by() != 0) {
        console.err << "hurray convert: interrupted; " << o.out << " was not written\n";
        return interrupted_exit_code();
    }
    return rc;
}

/// HRRYFILE and stream conversions (run_convert without the format converters).
int run_hrry_convert(const ConvertOptions& o, const Console& console) {
    if (o.sorted_index && o.write_order) {
        return usage(console, "--sorted-index and --write-order exclude each other");
    }
    auto in = open_input_or_report(o.in, console, "convert", o.remote);
    if (!in) {
        return kExitInvalid;
    }
    Input& input = *in;
    const bool from_file = input.kind() == InputKind::kFile;
    const bool to_file = !o.to.empty() ? o.to == "file" : (from_file ? o.out != "-" : true);
    if (!to_file && (o.alignment || o.sorted_index || o.write_order)) {
        return usage(console, "--alignment, --sorted-index and --write-order apply to file outputs only");
    }
    if (from_file && (!o.names.empty() || !o.names_from.empty() || !o.kv_from.empty())) {
        return usage(console, "--names, --names-from and --kv-from apply to stream inputs only");
    }
    if (!o.names.empty() && !o.names_from.empty()) {
        return usage(console, "--names and --names-from exclude each other");
    }
    if (!to_file && (!o.names.empty() || !o.names_from.empty() || !o.kv_from.empty())) {
        return usage(console, "--names, --names-from and --kv-from apply to file outputs only");
    }
    Progress progress(console, input.size().value_or(0));

    if (from_file) {
        auto file = open_file_input(input);
        if (!file) {
            return fail(console, o, file.error().message());
        }
        if (auto s = file->check_all(); !s) {  // a bad input writes nothing
            return fail(console, o, s.error().to_string());
        }
        auto out = Output::open(o.out, console, !o.no_fsync);
        if (!out) {
            return fail(console, o, out.error().message());
        }
        CountingSink counting(*out->sink, progress);
        if (to_file) {
            FileWriterOptions wo;
            wo.data_buffer_alignment = o.alignment.value_or(file->header().data_buffer_alignment);
            wo.sorted_index = o.sorted_index ||
                              (!o.write_order && (file->header().flags & file_flags::kSortedIndex) != 0);
            wo.tensor_count_hint = file->tensor_count();
            auto writer = FileWriter::create(counting, wo);
            if (!writer) {
                return fail(console, o, writer.error().to_string());
            }
            const Status copied = input.is_remote()
                                      ? copy_remote_file_to_file(*input.range_source(), *file, *writer)
                                      : copy_file_to_file(*file, *writer);
            if (auto s = copied; !s) {
                return fail(console, o, s.error().to_string());
            }
            if (auto s = writer->finish(); !s) {
                return fail(console, o, s.error().to_string());
            }
        } else if (input.is_remote()) {
            if (auto s = copy_remote_file_to_stream(*input.range_source(), *file, counting); !s) {
                return fail(console, o, s.error().to_string());
            }
            if (!file->kv().empty()) {
                console.err << "hurray convert: note: a stream has no names and no KV metadata: "
                            << file->kv().size() << " KV entries and the tensor names were dropped\n";
            }
        } else if (o.out == "-" && console.stdout_fd >= 0) {
            // Straight to the descriptor: large writes from the mapping, vmsplice on a pipe.
            console.out.flush();
            StreamSendOptions so;
            so.progress = [&progress](uint64_t n) { progress.update(n); };
            if (auto s = file_to_stream(*file, console.stdout_fd, so); !s) {
                return fail(console, o, s.error().to_string());
            }
            if (!file->kv().empty()) {
                console.err << "hurray convert: note: a stream has no names and no KV metadata: "
                            << file->kv().size() << " KV entries and the tensor names were dropped\n";
            }
        } else {
            if (auto s = file_to_stream(*file, counting); !s) {
                return fail(console, o, s.error().to_string());
            }
            if (!file->kv().empty()) {
                console.err << "hurray convert: note: a stream has no names and no KV metadata: "
                            << file->kv().size() << " KV entries and the tensor names were dropped\n";
            }
        }
        if (auto s = out->commit(); !s) {
            return fail(console, o, s.error().to_string());
        }
        progress.finish();
        return kExitOk;
    }

    std::vector<std::string> names = o.names;
    KvMetadata kv;
    for (const std::string* from : {&o.names_from, &o.kv_from}) {
        if (from->empty()) {
            continue;
        }
        auto other = FileReader::open(*from);
        if (!other) {
            return fail(console, o, error_text(*from, other.error()));
        }
        if (from == &o.names_from) {
            for (size_t i : other->write_order()) {
                names.emplace_back(other->entry(i).name);
            }
        } else {
            kv = other->kv();
        }
    }
    auto out = Output::open(o.out, console, !o.no_fsync);
    if (!out) {
        return fail(console, o, out.error().message());
    }
    CountingSource counting(input.source(), progress);
    // Counting hides the input's descriptor: without a progress bar, read the input itself so that
    // stream data can be spliced from a pipe into the output file.
    ByteSource& source = console.err_is_tty ? static_cast<ByteSource&>(counting) : input.source();
    if (to_file) {
        FileWriterOptions wo;
        wo.data_buffer_alignment = o.alignment.value_or(kDefaultDataBufferAlignment);
        wo.sorted_index = o.sorted_index;
        auto writer = FileWriter::create(*out->sink, wo);
        if (!writer) {
            return fail(console, o, writer.error().to_string());
        }
        auto n = stream_to_file(source, *writer, names);
        if (!n) {
            return fail(console, o, n.error().to_string());
        }
        if (names.size() > *n) {
            return fail(console, o, std::to_string(names.size()) + " names given for " + std::to_string(*n) +
                                        " tensors");
        }
        writer->kv() = std::move(kv);
        if (auto s = writer->finish(); !s) {
            return fail(console, o, s.error().to_string());
        }
    } else if (auto s = copy_stream_to_stream(source, *out->sink); !s) {
        return fail(console, o, s.error().to_string());
    }
    if (auto s = out->commit(); !s) {
        return fail(console, o, s.error().to_string());
    }
    progress.finish();
    return kExitOk;
}

}  // namespace

void add_convert(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<ConvertOptions>();
    CLI::App* cmd = app.add_subcommand(
        "convert", "Convert tensor files, streaming in bounded memory. HRRYFILE and streams: re-packed through "
                   "the library's reader and writer: file -> file (alignment, index order), file -> stream, "
                   "stream -> file, stream -> stream; every tensor, KV entry and composite is kept (a stream "
                   "holds no names and no KV). SafeTensors, GGUF, NumPy .npy and .npz: read (the input's kind "
                   "is detected from its bytes) and written (the output's kind from --to or its extension: "
                   ".hrry, .safetensors, .gguf, .npy, .npz) through hurray::convert (docs/convert.md). Output "
                   "files are replaced atomically; a failure leaves none.");
    cmd->add_option("input", opts->in,
                    "HRRYFILE, stream ('-': standard input), http(s):// or s3:// URL of either (read with range "
                    "requests), SafeTensors, GGUF, .npy or .npz file")
        ->required();
    cmd->add_option("output", opts->out, "output path ('-': standard output)")->required();
    cmd->add_option("--alignment", opts->alignment,
                    "data_buffer_alignment of the output file: a power of two in 4096 .. 2097152 "
                    "(default: the input's, or 4096)");
    cmd->add_flag("--sorted-index", opts->sorted_index, "sort the output file's index by name (SORTED_INDEX)");
    cmd->add_flag("--write-order", opts->write_order,
                  "keep the output file's index in write order (default: as the input)");
    cmd->add_option("--to", opts->to,
                    "output kind: file (= hrryfile), stream, safetensors, gguf, npy, npz (default: from the "
                    "output's extension; otherwise a file, except a file input written to '-', which becomes "
                    "a stream)")
        ->check(CLI::IsMember({"file", "hrryfile", "stream", "safetensors", "gguf", "npy", "npz"}));
    cmd->add_flag("--dequantize", opts->dequantize,
                  "write quantized, sparse and composite tensors as dense ones (float32 unless --dtype; "
                  "needed for SafeTensors and NumPy outputs of such tensors)");
    cmd->add_option("--dtype", opts->dtype, "element type of dequantized tensors (implies --dequantize)")
        ->check(CLI::IsMember({"float32", "float16", "bfloat16"}));
    cmd->add_flag("--verify", opts->verify,
                  "re-read the output and compare every tensor's values with the input's before replacing "
                  "the output; the first difference is the error");
    cmd->add_option("--names", opts->names,
                    "names of a stream's tensors in the output file, comma-separated (default: tensor_0, "
                    "tensor_1, ...)")
        ->delimiter(',');
    cmd->add_option("--names-from", opts->names_from,
                    "name a stream's tensors after the tensors of this HRRYFILE, in its write order (the order "
                    "'convert FILE -' streams them)");
    cmd->add_option("--kv-from", opts->kv_from, "copy the KV metadata of this HRRYFILE into the output file");
    cmd->add_flag("--no-fsync", opts->no_fsync,
                  "replace an HRRYFILE or stream output file atomically but without fsync (as fast as writing "
                  "the bytes; a power loss soon after may leave the old, an empty or a partial file)");
    add_remote_options(cmd, opts->remote);
    cmd->footer("Exit status: 0 converted, 1 invalid input or output not written (the message names the "
                "tensor or field), 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_convert(*opts, console); });
}

}  // namespace hurray::cli
