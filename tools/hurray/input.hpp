#pragma once
/// @file
/// Opening what a command is given (a path, or `-` for standard input) and telling what it
/// holds: an HRRYFILE container, a bare descriptor, or a stream; and, in builds with
/// hurray::convert, a SafeTensors, GGUF, .npy or .npz file (open_foreign()).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/cli.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/remote.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/format.hpp"
#include "hurray/convert/tensor_source.hpp"
#endif

namespace hurray::cli {

/// What an input holds.
enum class InputKind {
    kFile,        ///< starts with `HRRYFILE`
    kDescriptor,  ///< exactly one encoded descriptor and nothing else
    kStream,      ///< anything else: descriptor + data, tensor after tensor (maybe empty)
};

/// "file", "descriptor" or "stream" (the `kind` of the JSON outputs).
const char* kind_name(InputKind kind) noexcept;

/// Classifies an input from its first bytes (`head`, up to 16) and, when known, its total
/// size: `HRRYFILE` magic -> kFile; a descriptor prefix whose descriptor_length equals
/// `total_size` -> kDescriptor; everything else -> kStream (a stream reader then reports
/// what is wrong with it). Without a total size (a pipe) a descriptor is not told apart
/// from a stream: it reads as a stream.
InputKind classify(std::span<const uint8_t> head, std::optional<uint64_t> total_size) noexcept;

/// An opened input. The bytes read to classify it are given back first by source().
/// @code
/// auto in = hurray::cli::Input::open(path, console);
/// if (!in) { console.err << in.error().to_string(); return kExitInvalid; }
/// if (in->kind() == InputKind::kFile && in->is_regular_file()) { /* FileReader::open(path) */ }
/// @endcode
class Input {
public:
    /// Opens `path` (`-`: the console's standard input, not closed; an http:// or https://
    /// URL: read with range requests as `remote` says, see remote.hpp). Fails with kIoError
    /// (kUnsupported for a URL in a build without hurray::http).
    static Result<std::unique_ptr<Input>> open(const std::string& path, const Console& console,
                                               const RemoteOptions& remote = {});

    /// The path as given (`-` for standard input).
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// A name for messages: the path, `<stdin>`, or the URL without credentials or query.
    [[nodiscard]] std::string display_name() const;
    /// What it holds (see classify()).
    [[nodiscard]] InputKind kind() const noexcept { return kind_; }
    /// True when it is a local regular file (so it can be mapped and its size is known).
    [[nodiscard]] bool is_regular_file() const noexcept { return size_.has_value() && !remote_; }
    /// True when it is a URL (read through range_source()).
    [[nodiscard]] bool is_remote() const noexcept { return remote_ != nullptr; }
    /// The URL's bytes by range (null for local inputs); its first bytes cost no request.
    [[nodiscard]] const std::shared_ptr<RangeSource>& range_source() const noexcept { return remote_; }
    /// The URL's source as opened (its request counters), null for local inputs.
    [[nodiscard]] const std::shared_ptr<RangeSource>& opened_source() const noexcept { return opened_; }
    /// Its size, when it is a regular file or a URL.
    [[nodiscard]] std::optional<uint64_t> size() const noexcept { return size_; }
    /// How its descriptors are decoded: the defaults, less libhurray's own schemes with
    /// `--spec-only` (Console::spec_only).
    [[nodiscard]] DecodeOptions decode_options() const noexcept {
        DecodeOptions o;
        o.libhurray_schemes = !spec_only_;
        return o;
    }
    /// Stream reading options with decode_options().
    [[nodiscard]] StreamReadOptions stream_options() const noexcept {
        StreamReadOptions o;
        o.descriptor = decode_options();
        return o;
    }
    /// Its bytes from the start, read forward.
    [[nodiscard]] ByteSource& source() noexcept { return *source_; }
    /// Reads everything not read yet from source() into memory; fails with kInvalidArgument
    /// when there are more than `max_bytes`.
    Result<std::vector<uint8_t>> read_all(uint64_t max_bytes);

    Input(const Input&) = delete;
    Input& operator=(const Input&) = delete;
    Input(Input&&) = delete;
    Input& operator=(Input&&) = delete;
    ~Input();

private:
    Input() = default;
    static Result<std::unique_ptr<Input>> open_remote(std::unique_ptr<Input> in, const RemoteOptions& remote);
    std::string path_;
    bool spec_only_ = false;
    InputKind kind_ = InputKind::kStream;
    std::optional<uint64_t> size_;
    std::unique_ptr<ByteSource> fd_source_;
    std::unique_ptr<ByteSource> source_;
    std::shared_ptr<RangeSource> opened_;
    std::shared_ptr<RangeSource> remote_;
};

/// Input::open for the command `hurray <command>`: on failure, prints
/// `hurray <command>: <message>` on console.err and returns null (the command then exits
/// with kExitInvalid).
/// @code
/// auto in = hurray::cli::open_input_or_report(path, console, "ls");
/// if (!in) return kExitInvalid;
/// @endcode
std::unique_ptr<Input> open_input_or_report(const std::string& path, const Console& console,
                                            const std::string& command, const RemoteOptions& remote = {});

#ifdef HURRAY_CLI_HAS_CONVERT
/// The format of the file at `path`, told by hurray::convert::detect_format from its first
/// bytes and its size; kUnknown for `-`, for what is not a regular file (a pipe is not
/// read from) and for a file that cannot be read. A SafeTensors
/// header whose length runs past the end of the file is kSafeTensors too (a truncated
/// file: its reader then names the field and offset).
convert::Format detect_file_format(const std::string& path);

/// True for the formats read through hurray::convert rather than the io library:
/// SafeTensors, GGUF, .npy and .npz.
bool is_foreign_format(convert::Format format) noexcept;

/// The format a URL's path names by its extension (`.safetensors`, `.gguf`, `.npy`,
/// `.npz`, `.hrry`...; the query string and fragment ignored), without a request; nullopt
/// when it names none.
std::optional<convert::Format> url_format(const std::string& url);

/// A SafeTensors, GGUF, .npy or .npz file opened through hurray::convert::open_source.
struct ForeignInput {
    convert::Format format = convert::Format::kUnknown;  ///< its format
    uint64_t file_size = 0;                               ///< its size in bytes
    std::unique_ptr<convert::TensorSource> source;        ///< its tensors and metadata
};

/// Opens `path` through hurray::convert::open_source (every check its reader makes at
/// open) when it is a SafeTensors, GGUF, .npy or .npz file whose reader is in this build;
/// nullopt for anything else (an HRRYFILE, a stream, `-`, an unknown format: the caller's
/// Input path reports it). The error is the reader's: its code, the field and the byte
/// offset (callers print the path before it). A URL (`remote` gives its HTTP options)
/// is taken for such a file when its path ends in .safetensors, .npy, .gguf or .npz, and
/// read with range requests; any other URL is left to the caller, which opens it once.
/// @code
/// if (auto foreign = hurray::cli::open_foreign(path)) {
///     if (!*foreign) { console.err << path << ": " << foreign->error().to_string() << '\n'; return 1; }
///     const auto& src = *(*foreign)->source;   // src.tensor_count(), src.kv(), src.read(...)
/// }
/// @endcode
std::optional<Result<ForeignInput>> open_foreign(const std::string& path, const RemoteOptions& remote = {});

/// The file at `url` (any format hurray::convert reads over range requests: SafeTensors,
/// .npy, HRRYFILE) as a TensorSource, its bytes fetched as they are read: what `convert
/// URL OUT` converts while downloading, in bounded memory.
Result<std::unique_ptr<convert::TensorSource>> open_url_source(const std::string& url, const RemoteOptions& remote);

/// `e` without its file when that file is `path` (Error::without_file), so that a
/// command prints the path once: `path + ": " + unprefixed(path, e).to_string()`.
Error unprefixed(const std::string& path, const Error& e);

/// The bytes of every buffer of one tensor of a TensorSource, in memory.
struct ForeignTensorBytes {
    std::vector<std::vector<uint8_t>> owned;     ///< buffers copied by TensorSource::read
    std::vector<std::span<const uint8_t>> spans;  ///< one per buffer (empty when not kept)
    uint64_t bytes_read = 0;                     ///< bytes read through TensorSource::read
};

/// Reads every byte of every buffer of tensor `i` of `source`: through view() where the
/// source has one and `use_views` is set (zero-copy), else through read(), 8 MiB at a time
/// (a truncated or unreadable data section fails here, naming the tensor and the byte
/// offset). `keep`: keep the bytes (spans() then covers every buffer); otherwise each
/// chunk is dropped once read, so memory stays bounded whatever the tensor's size.
/// @code
/// auto bytes = hurray::cli::read_foreign_tensor(src, i, /*use_views=*/true, /*keep=*/true);
/// if (bytes) { auto view = hurray::TensorView::make(src.tensor(i).descriptor, bytes->spans); }
/// @endcode
Result<ForeignTensorBytes> read_foreign_tensor(const convert::TensorSource& source, size_t i, bool use_views,
                                               bool keep);
#endif

}  // namespace hurray::cli
