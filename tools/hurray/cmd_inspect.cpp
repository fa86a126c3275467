// `hurray inspect PATH|-`: an annotated dump of a descriptor, a stream or an HRRYFILE.
//
// Text output: one block per section (descriptor, header, index, KV section, trailer,
// each tensor's descriptor and data summary), sorted by offset; each row gives the
// absolute offset, the raw bytes (16 per line; fields longer than 64 bytes show their
// first 64 and say how many more there are), and `field = value`. Data regions are
// summarised (offset, length, buffer index), never dumped. On invalid input the rows
// decoded so far are printed, then the error goes to standard error with its absolute
// byte offset, and the exit status is 1.
//
// `--json`: for a bare descriptor, the conformance vocabulary (manifest.json):
//   {"kind":"descriptor","version_major","version_minor","element_type_tag",
//    "element_type","shape","byte_offset","layout_tag","buffer_byte_sizes",
//    "has_quantization","has_shard"}
// (or {"kind":"descriptor","error":{...}} when it does not decode); for a file or a stream
// (or with `--rows`), the annotated rows (shape documented in inspect_walk.hpp).
#include <fstream>
#include <ostream>

#include "hurray/commands.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/input.hpp"
#include "hurray/annotate_walker.hpp"
#include "hurray/inspect_walk.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/json_out.hpp"

namespace hurray::cli {
namespace {

/// The largest bare descriptor or piped file read into memory.
constexpr uint64_t kMaxInMemory = uint64_t{1} << 30;

struct InspectOptions {
    std::string path;
    bool json = false;
    bool rows = false;
};

// The conformance manifest's vocabulary (json_out's descriptor_json) after "kind"; an
// element type without a spec name is null here (the manifest's form), not `tag 0xNN`.
nlohmann::ordered_json descriptor_summary_json(const TensorDescriptor& d) {
    nlohmann::ordered_json j;
    j["kind"] = "descriptor";
    j.update(descriptor_json(d));
    if (type_name(d.element_type).empty()) {
        j["element_type"] = nullptr;
    }
    return j;
}

void report(const Console& console, const std::string& name, const Error& e) {
    console.err << "hurray inspect: " << name << ": ";
    if (e.has_offset()) {
        console.err << "at byte " << e.offset() << ": ";
    }
    console.err << e.message() << " (" << error_code_name(e.code()) << ")\n";
}

int inspect(const InspectOptions& opt, const Console& console) {
    auto opened = open_input_or_report(opt.path, console, "inspect");
    if (!opened) {
        return kExitInvalid;
    }
    Input& in = *opened;
    Annotation a;
    std::vector<uint8_t> whole;
    std::optional<TensorDescriptor> decoded;
    switch (in.kind()) {
        case InputKind::kDescriptor: {
            auto bytes = in.read_all(kMaxInMemory);
            if (!bytes) {
                report(console, in.display_name(), bytes.error());
                return kExitInvalid;
            }
            a = annotate_descriptor_input(*bytes);
            if (!a.error) {
                auto d = decode(*bytes);
                if (d) {
                    decoded = std::move(*d);
                }
            }
            break;
        }
        case InputKind::kStream: a = inspect_stream(in.source()); break;
        case InputKind::kFile: {
            RandomAccess ra;
            if (in.is_regular_file() && opt.path != "-") {
                auto file = std::make_shared<std::ifstream>(opt.path, std::ios::binary);
                ra.size = *in.size();
                ra.read = [file, path = opt.path](uint64_t off, uint64_t len) -> Result<std::vector<uint8_t>> {
                    std::string buf(static_cast<size_t>(len), '\0');
                    file->clear();
                    file->seekg(static_cast<std::streamoff>(off));
                    file->read(buf.data(), static_cast<std::streamsize>(len));
                    if (!*file) {
                        return Error(ErrorCode::kIoError, path + ": read failed at offset " + std::to_string(off));
                    }
                    return std::vector<uint8_t>(buf.begin(), buf.end());
                };
                ra.validate = [path = opt.path]() -> Status { return detail::status_of(FileReader::open(path)); };
            } else {
                auto bytes = in.read_all(kMaxInMemory);
                if (!bytes) {
                    report(console, in.display_name(), bytes.error());
                    return kExitInvalid;
                }
                whole = std::move(*bytes);
                ra.size = whole.size();
                ra.read = [&whole](uint64_t off, uint64_t len) -> Result<std::vector<uint8_t>> {
                    return std::vector<uint8_t>(whole.begin() + static_cast<std::ptrdiff_t>(off),
                                                whole.begin() + static_cast<std::ptrdiff_t>(off + len));
                };
                ra.validate = [&whole]() -> Status { return detail::status_of(FileReader::open_memory(whole)); };
            }
            a = inspect_file(ra);
            break;
        }
    }
    if (opt.json) {
        if (in.kind() == InputKind::kDescriptor && !opt.rows) {
            nlohmann::ordered_json j;
            if (decoded) {
                j = descriptor_summary_json(*decoded);
            } else {
                j["kind"] = "descriptor";
                j["error"] = a.error ? error_json(*a.error) : nlohmann::ordered_json(nullptr);
            }
            console.out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
        } else {
            console.out << annotation_json(a, in.size()).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                        << '\n';
        }
    } else {
        console.out << "kind: " << kind_name(in.kind());
        if (in.size()) {
            console.out << " (" << *in.size() << " bytes)";
        }
        console.out << "\n\n";
        print_annotation(a, console.out);
    }
    if (a.error) {
        report(console, in.display_name(), *a.error);
        return kExitInvalid;
    }
    return kExitOk;
}

}  // namespace

void add_inspect(CLI::App& app, const Console& console, int* status) {
    auto opt = std::make_shared<InspectOptions>();
    CLI::App* cmd = app.add_subcommand(
        "inspect",
        "Annotated dump of a descriptor, a stream or an HRRYFILE: every field with its offset, raw bytes and "
        "decoded value");
    cmd->add_option("path", opt->path, "descriptor, stream or HRRYFILE ('-': standard input)")->required();
    cmd->add_flag("--json", opt->json,
                  "JSON output: for a bare descriptor its summary (conformance manifest vocabulary), otherwise the "
                  "annotated rows");
    cmd->add_flag("--rows", opt->rows, "with --json on a bare descriptor: the annotated rows instead of the summary");
    cmd->footer("Exit status: 0 valid, 1 invalid or unreadable input (the error names the byte offset), 2 usage.");
    cmd->callback([opt, &console, status] { *status = inspect(*opt, console); });
}

}  // namespace hurray::cli
