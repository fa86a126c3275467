// `hurray get URL [NAME...] -o OUT`: downloads an HRRYFILE (or some of its tensors) from an
// http(s):// or s3:// URL with range requests, in bounded memory, into a temporary file next to OUT
// that is checked (opened as an HRRYFILE: header, index CRC, every descriptor and composite)
// and then renamed over OUT; a failure leaves nothing behind. A local path works too (read
// with pread), which makes `get FILE NAME... -o OUT` a way to cut tensors out of a file.
//
// Without names the file is copied byte for byte, kGetChunk bytes per request (the next
// range fetched while the current one is written). With names,
// a new file is written with the FileWriter: those tensors (a composite head brings all its
// members; a named composite member brings its whole top-level composite, which is said on
// stderr, because a member alone is not a valid tensor of a file), the KV section, the
// source's alignment and index order.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/input.hpp"
#include "hurray/interrupt.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/json_out.hpp"
#include "hurray/progress.hpp"
#include "hurray/remote.hpp"

namespace hurray::cli {
namespace {

/// Bytes per range request of a whole-file download (the one buffer held in memory).
constexpr size_t kGetChunk = size_t{32} << 20;
/// Largest range read at once when copying one tensor's data.
constexpr size_t kTensorPiece = size_t{32} << 20;

struct GetOptions {
    std::string url;
    std::vector<std::string> names;
    std::string out;
    bool quiet = false;
    bool no_fsync = false;
    RemoteOptions remote;
};

bool is_head(const TensorDescriptor& d) { return d.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite); }

/// Counts the bytes written through it and reports them to a Progress.
class ProgressSink final : public ByteSink {
public:
    ProgressSink(ByteSink& inner, Progress* progress) : inner_(inner), progress_(progress) {}
    Status write(std::span<const uint8_t> bytes) override {
        HURRAY_RETURN_IF_ERROR(inner_.write(bytes));
        n_ += bytes.size();
        if (progress_ != nullptr) {
            progress_->update(n_);
        }
        return Status::success();
    }
    Status flush() override { return inner_.flush(); }
    [[nodiscard]] uint64_t written() const noexcept { return n_; }

private:
    ByteSink& inner_;
    Progress* progress_;
    uint64_t n_ = 0;
};

/// Opens what `get` reads: a URL, or a local file read by range.
Result<std::shared_ptr<RangeSource>> open_source(const GetOptions& o) {
    if (is_url(o.url)) {
        return open_url(o.url, o.remote);
    }
    auto src = FileRangeSource::open(o.url);
    if (!src) {
        return src.error();
    }
    return std::shared_ptr<RangeSource>(std::move(*src));
}

/// Every byte of `source` to `sink`, kGetChunk at a time: the next range is fetched (on a
/// second thread) while the current one is written, so the network and the disk overlap.
/// Memory: two ranges.
Status copy_whole(RangeSource& source, ByteSink& sink) {
    const uint64_t size = source.size();
    const auto range_at = [size](uint64_t at) {
        return static_cast<size_t>(std::min<uint64_t>(kGetChunk, size - at));
    };
    std::vector<uint8_t> current;
    std::vector<uint8_t> next;
    if (size > 0) {
        current.resize(range_at(0));
        HURRAY_RETURN_IF_ERROR(source.read(0, current));
    }
    for (uint64_t at = 0; at < size;) {
        const uint64_t next_at = at + current.size();
        std::future<Status> pending;
        if (next_at < size) {
            next.resize(range_at(next_at));
            pending = std::async(std::launch::async,
                                 [&source, &next, next_at] { return source.read(next_at, next); });
        }
        const Status written = sink.write(current);
        const Status fetched = pending.valid() ? pending.get() : Status::success();  // always joined
        HURRAY_RETURN_IF_ERROR(written);
        HURRAY_RETURN_IF_ERROR(fetched);
        if (interrupted_by() != 0) {
            return Error(ErrorCode::kCancelled, "interrupted");  // a local source is not a transfer
        }
        std::swap(current, next);
        at = next_at;
    }
    return sink.flush();
}

/// The index positions to write for `names`: each named tensor; for a composite head, all
/// its members (nested ones too); for a member, its whole top-level composite (noted on
/// `notes`). kNotFound names the first unknown name.
Result<std::set<size_t>> select(const FileReader& file, const std::vector<std::string>& names,
                                std::vector<std::string>& notes) {
    // Heads have no data: only entries with data_length 0 are looked at (one descriptor each).
    std::map<size_t, size_t> parent;                 // member -> its head
    std::map<size_t, std::vector<size_t>> members;   // head -> direct members
    for (size_t i = 0; i < file.tensor_count(); ++i) {
        if (file.entry(i).data_length != 0) {
            continue;
        }
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
        if (!is_head(*d)) {
            continue;
        }
        HURRAY_ASSIGN_OR_RETURN(FileComposite c, file.composite(i));
        for (size_t m : c.members) {
            parent[m] = i;
        }
        members[i] = std::move(c.members);
    }
    std::set<size_t> chosen;
    const auto add_tree = [&](size_t top) {
        std::vector<size_t> todo{top};
        while (!todo.empty()) {
            const size_t k = todo.back();
            todo.pop_back();
            chosen.insert(k);
            if (auto it = members.find(k); it != members.end()) {
                todo.insert(todo.end(), it->second.begin(), it->second.end());
            }
        }
    };
    for (const std::string& name : names) {
        const auto i = file.find(name);
        if (!i) {
            return Error(ErrorCode::kNotFound, "no tensor named '" + printable(name) + "' (hurray ls lists them)");
        }
        size_t top = *i;
        while (parent.count(top) != 0) {
            top = parent[top];
        }
        if (top != *i) {
            notes.push_back("'" + printable(name) + "' is a member of the composite '" +
                            printable(std::string(file.entry(top).name)) +
                            "': writing that whole composite (a member cannot stand alone)");
        }
        add_tree(top);
    }
    return chosen;
}

/// Writes the tensors `chosen` of `file` (in its write order), its KV section, alignment
/// and index order, to `sink`; data read from `source` kTensorPiece at a time.
Status copy_selected(RangeSource& source, const FileReader& file, const std::set<size_t>& chosen, ByteSink& sink) {
    FileWriterOptions wo;
    wo.data_buffer_alignment = file.header().data_buffer_alignment;
    wo.sorted_index = (file.header().flags & file_flags::kSortedIndex) != 0;
    wo.tensor_count_hint = chosen.size();
    HURRAY_ASSIGN_OR_RETURN(FileWriter writer, FileWriter::create(sink, wo));
    std::vector<uint8_t> scratch;
    for (size_t i : file.write_order()) {
        if (chosen.count(i) == 0) {
            continue;
        }
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(file.entry(i).name, *d));
        HURRAY_RETURN_IF_ERROR(copy_tensor_data(source, file, i, kTensorPiece, scratch,
                                                [&writer](std::span<const uint8_t> piece) {
                                                    return writer.write_data(piece);
                                                }));
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
        if (interrupted_by() != 0) {
            return Error(ErrorCode::kCancelled, "interrupted");
        }
    }
    writer.kv() = file.kv();
    return writer.finish();
}

/// Opens the written file as an HRRYFILE, every descriptor and composite checked; a
/// SafeTensors, GGUF or NumPy file (a whole download) with the checks its reader makes
/// at open.
Status check_written(const std::string& path, uint64_t expected_size) {
#ifdef HURRAY_CLI_HAS_CONVERT
    if (is_foreign_format(detect_file_format(path))) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        if (ec || size != expected_size) {
            return Error(ErrorCode::kIoError, "wrote " + std::to_string(expected_size) + " bytes, the file has " +
                                                  (ec ? ec.message() : std::to_string(size)));
        }
        auto opened = convert::open_source(path);
        return opened ? Status::success() : Status(opened.error());
    }
#endif
    FileReadOptions ro;
    ro.descriptors = DescriptorCheck::kFull;
    HURRAY_ASSIGN_OR_RETURN(FileReader file, FileReader::open(path, ro));
    if (file.file_size() != expected_size) {
        return Error(ErrorCode::kIoError, "wrote " + std::to_string(expected_size) + " bytes, the file has " +
                                              std::to_string(file.file_size()));
    }
    return file.check_all();
}

int run_get(const GetOptions& o, const Console& console) {
    const std::string from = display_path(o.url);
    const auto fail = [&](const std::string& message) {
        console.err << "hurray get: " << from << " -> " << o.out << ": " << message << '\n';
        return kExitInvalid;
    };
    if (o.out == "-") {
        console.err << "hurray get: -o - is not supported: 'hurray convert URL -' streams a remote file to "
                       "standard output\n";
        return kExitUsage;
    }
    // Ctrl-C / SIGTERM stop the download at once (a transfer's progress callback, or the
    // next chunk) and remove the temporary file; the exit status is 130 / 143.
    const InterruptGuard interrupts;
    const auto interrupted = [&]() {
        console.err << "hurray get: interrupted; " << o.out << " was not written\n";
        return interrupted_exit_code();
    };
    auto source = open_source(o);
    if (!source) {
        return interrupted_by() != 0 ? interrupted() : fail(source.error().to_string());
    }
    RangeSource& src = **source;
    std::optional<FileReader> file;
    std::set<size_t> chosen;
    if (!o.names.empty()) {
        FileReadOptions ro;
        ro.descriptors = DescriptorCheck::kLazy;  // only the named tensors' descriptors are read
        auto opened = FileReader::open(*source, ro);
        if (!opened) {
            return interrupted_by() != 0 ? interrupted() : fail(opened.error().to_string());
        }
        file.emplace(std::move(*opened));
        std::vector<std::string> notes;
        auto selected = select(*file, o.names, notes);
        if (!selected) {
            return fail(selected.error().message());
        }
        chosen = std::move(*selected);
        for (const auto& n : notes) {
            console.err << "hurray get: note: " << n << '\n';
        }
    }
    auto sink = AtomicFileSink::create(o.out, !o.no_fsync);
    if (!sink) {
        return fail("cannot create: " + sink.error().message());
    }
    uint64_t total = src.size();
    if (file) {
        total = 0;
        for (size_t i : chosen) {
            total += file->entry(i).data_length;
        }
    }
    std::optional<Progress> progress;
    if (!o.quiet) {
        progress.emplace(console, total, std::chrono::seconds(1), "downloading");
    }
    ProgressSink counted(**sink, progress ? &*progress : nullptr);
    const Status copied = file ? copy_selected(src, *file, chosen, counted) : copy_whole(src, counted);
    if (progress) {
        progress->finish();
    }
    if (!copied) {
        // The sink's destructor removes the temporary file.
        return interrupted_by() != 0 ? interrupted() : fail(copied.error().to_string());
    }
    if (auto s = check_written((*sink)->temp_path(), counted.written()); !s) {
        return fail("the file written does not check: " + s.error().to_string());
    }
    if (auto s = (*sink)->commit(); !s) {
        return fail(s.error().to_string());
    }
    if (!o.quiet) {
        console.err << "hurray get: " << o.out << ": " << (file ? std::to_string(chosen.size()) + (chosen.size() == 1 ? " tensor, " : " tensors, ") : "")
                    << bytes_text(counted.written()) << " (" << counted.written() << " bytes) in "
                    << src.request_count() << (src.request_count() == 1 ? " request\n" : " requests\n");
    }
    return kExitOk;
}

}  // namespace

void add_get(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<GetOptions>();
    CLI::App* cmd = app.add_subcommand(
        "get", "Download an HRRYFILE from an http(s):// or s3:// URL with range requests, in bounded memory: the whole "
               "file (byte for byte), or only the NAMEd tensors with the KV metadata (a new file; a composite "
               "head brings its members, a composite member its whole composite). The output is written to a "
               "temporary file next to OUT, checked (opened as an HRRYFILE, every descriptor and composite), "
               "then renamed over OUT (replaced, as 'convert' does); a failure leaves nothing. A local path "
               "is read the same way.");
    cmd->add_option("url", opts->url, "http(s):// or s3:// URL of an HRRYFILE (or a local path)")->required();
    cmd->add_option("names", opts->names, "tensors to keep (default: the whole file)");
    cmd->add_option("-o,--output", opts->out, "the output file (replaced atomically)")->required();
    cmd->add_flag("-q,--quiet", opts->quiet, "no progress bar and no summary on stderr");
    cmd->add_flag("--no-fsync", opts->no_fsync,
                  "replace OUT atomically but without fsync (a power loss soon after may leave the old, an "
                  "empty or a partial file)");
    add_remote_options(cmd, opts->remote);
    cmd->footer("Exit status: 0 downloaded, 1 unreachable URL, invalid file, unknown NAME or output not "
                "written, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_get(*opts, console); });
}

}  // namespace hurray::cli
