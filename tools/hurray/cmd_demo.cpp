// `hurray demo [DIR]`: writes a small model-like file, lists and verifies it, streams it
// through a real pipe (a writer thread running file_to_stream into one end, this thread
// running stream_to_file from the other) into a second file, and checks that both hold
// the same tensors (descriptors and bytes) and KV metadata.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"
#include "hurray/json_out.hpp"

namespace hurray::cli {
namespace {

struct DemoOptions {
    std::string dir;
};

/// Streams `source_path` through a pipe into `copy_path` (names and KV taken from the source).
Status pipe_copy(const std::string& source_path, const std::string& copy_path, uint64_t* stream_bytes) {
    HURRAY_ASSIGN_OR_RETURN(FileReader source, FileReader::open(source_path));
    int fds[2];
    if (::pipe(fds) != 0) {
        return Error(ErrorCode::kIoError, std::string("pipe: ") + std::strerror(errno));
    }
    Status written = Status::success();
    std::thread producer([&source, &written, fd = fds[1]] {
        FdSink sink(fd, /*owns=*/true);  // closing it ends the stream for the reader
        written = file_to_stream(source, sink);
    });
    std::vector<std::string> names;
    for (size_t i : source.write_order()) {
        names.emplace_back(source.entry(i).name);
    }
    Status read = Status::success();
    {
        FdSource from_pipe(fds[0], /*owns=*/true);
        auto writer = FileWriter::create_file(copy_path);
        if (!writer) {
            read = writer.error();
        } else {
            auto n = stream_to_file(from_pipe, *writer, names);
            if (!n) {
                read = n.error();
            } else {
                writer->kv() = source.kv();
                read = writer->finish();
            }
        }
        // Drain what the producer may still write, so that it never blocks or hits EPIPE.
        std::vector<uint8_t> sink(1 << 16);
        for (;;) {
            auto got = from_pipe.read_some(sink);
            if (!got || *got == 0) {
                break;
            }
        }
    }
    producer.join();
    HURRAY_RETURN_IF_ERROR(written);
    HURRAY_RETURN_IF_ERROR(read);
    HURRAY_ASSIGN_OR_RETURN(FileReader copy, FileReader::open(copy_path));
    *stream_bytes = 0;
    for (size_t i = 0; i < copy.tensor_count(); ++i) {
        *stream_bytes += copy.entry(i).descriptor_length + data_bytes(**copy.descriptor(i));
    }
    return Status::success();
}

/// Checks that both files hold the same tensors (by name: descriptor and buffer bytes)
/// and the same KV metadata.
Status same_content(const std::string& a_path, const std::string& b_path, size_t* compared) {
    HURRAY_ASSIGN_OR_RETURN(FileReader a, FileReader::open(a_path));
    HURRAY_ASSIGN_OR_RETURN(FileReader b, FileReader::open(b_path));
    if (a.tensor_count() != b.tensor_count()) {
        return Error(ErrorCode::kInvalidData, "tensor counts differ: " + std::to_string(a.tensor_count()) + " vs " +
                                                  std::to_string(b.tensor_count()));
    }
    if (!(a.kv() == b.kv())) {
        return Error(ErrorCode::kInvalidData, "KV metadata differs");
    }
    *compared = 0;
    for (size_t i = 0; i < a.tensor_count(); ++i) {
        const std::string name(a.entry(i).name);
        HURRAY_ASSIGN_OR_RETURN(FileTensor ta, a.tensor(i));
        HURRAY_ASSIGN_OR_RETURN(FileTensor tb, b.tensor(name));
        if (!(ta.descriptor() == tb.descriptor())) {
            return Error(ErrorCode::kInvalidData, "tensor '" + name + "': descriptors differ");
        }
        for (size_t k = 0; k < ta.buffers().size(); ++k) {
            const auto x = ta.buffers()[k].span();
            const auto y = tb.buffers()[k].span();
            if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) {
                return Error(ErrorCode::kInvalidData,
                             "tensor '" + name + "': buffer " + std::to_string(k) + " differs");
            }
        }
        ++*compared;
    }
    return Status::success();
}

int run_demo(const DemoOptions& o, const Console& console) {
    std::string dir = o.dir;
    std::error_code ec;
    if (dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path(ec) / "hurray-demo-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            console.err << "hurray demo: " << tmpl << ": cannot create a temporary directory: "
                        << std::strerror(errno) << '\n';
            return kExitInvalid;
        }
        dir = tmpl;
    } else if (!std::filesystem::create_directories(dir, ec) && ec) {
        console.err << "hurray demo: " << dir << ": cannot create the directory: " << ec.message() << '\n';
        return kExitInvalid;
    }
    const std::string model = (std::filesystem::path(dir) / "model.hrry").string();
    const std::string copy = (std::filesystem::path(dir) / "model-from-stream.hrry").string();
    std::ostream& out = console.out;
    out << "hurray demo: files go to " << dir << "\n\n";

    out << "1. Writing a small model-like file: " << model << '\n';
    if (auto s = write_demo_model(model); !s) {
        console.err << "hurray demo: " << model << ": " << s.error().to_string() << '\n';
        return kExitInvalid;
    }
    out << "\n2. $ hurray ls " << model << '\n';
    if (run({"hurray", "ls", model}, console) != kExitOk) {
        return kExitInvalid;
    }
    out << "\n3. $ hurray info " << model << '\n';
    if (run({"hurray", "info", model}, console) != kExitOk) {
        return kExitInvalid;
    }
    out << "\n4. $ hurray verify " << model << '\n';
    if (run({"hurray", "verify", model}, console) != kExitOk) {
        return kExitInvalid;
    }
    out << "\n5. Streaming it through a pipe (writer thread: file_to_stream; this thread: "
           "stream_to_file) into " << copy << '\n';
    uint64_t stream_bytes = 0;
    if (auto s = pipe_copy(model, copy, &stream_bytes); !s) {
        console.err << "hurray demo: streaming " << model << " into " << copy << ": " << s.error().to_string()
                    << '\n';
        return kExitInvalid;
    }
    out << "   " << stream_bytes << " bytes went through the pipe\n";
    out << "\n6. Comparing the two files\n";
    size_t compared = 0;
    if (auto s = same_content(model, copy, &compared); !s) {
        console.err << "hurray demo: " << model << " vs " << copy << ": " << s.error().to_string() << '\n';
        return kExitInvalid;
    }
    std::error_code size_ec;
    const auto model_size = std::filesystem::file_size(model, size_ec);
    out << "   " << compared << " tensors identical (descriptors and bytes), KV metadata identical\n\n"
        << "Summary: " << model << " (" << bytes_text(size_ec ? 0 : model_size) << ", " << kDemoTensorCount
        << " tensors: float16, bfloat16, int4 per-block, NF4, CSR, a partition composite) was written, "
           "listed, verified, streamed through a pipe and read back unchanged.\n"
        << "Try: hurray ls --json " << model << "\n";
    return kExitOk;
}

}  // namespace

void add_demo(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<DemoOptions>();
    CLI::App* cmd = app.add_subcommand(
        "demo", "Write a small model-like file (float16/bfloat16 weights, int4 and NF4 quantized matrices, a "
                "CSR matrix, a partition composite, typed KV metadata), list it (ls, info), verify it, stream it "
                "through a pipe into a second file and check that both hold the same tensors.");
    cmd->add_option("dir", opts->dir, "directory for the files (created if needed; default: a new temporary "
                                      "directory)");
    cmd->footer("Exit status: 0 ok, 1 a step failed, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_demo(*opts, console); });
}

}  // namespace hurray::cli
