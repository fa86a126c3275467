#pragma once
/// @file
/// Opening what a command is given (a path, or `-` for standard input) and telling what it
/// holds: an HRRYFILE container, a bare descriptor, or a stream.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/cli.hpp"
#include "hurray/core/result.hpp"
#include "hurray/io/byte_source.hpp"

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
    /// Opens `path` (`-`: the console's standard input, not closed). Fails with kIoError.
    static Result<std::unique_ptr<Input>> open(const std::string& path, const Console& console);

    /// The path as given (`-` for standard input).
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// A name for messages: the path, or `<stdin>`.
    [[nodiscard]] std::string display_name() const;
    /// What it holds (see classify()).
    [[nodiscard]] InputKind kind() const noexcept { return kind_; }
    /// True when it is a regular file (so it can be mapped and its size is known).
    [[nodiscard]] bool is_regular_file() const noexcept { return size_.has_value(); }
    /// Its size, when it is a regular file.
    [[nodiscard]] std::optional<uint64_t> size() const noexcept { return size_; }
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
    std::string path_;
    InputKind kind_ = InputKind::kStream;
    std::optional<uint64_t> size_;
    std::unique_ptr<ByteSource> fd_source_;
    std::unique_ptr<ByteSource> source_;
};

/// Input::open for the command `hurray <command>`: on failure, prints
/// `hurray <command>: <message>` on console.err and returns null (the command then exits
/// with kExitInvalid).
/// @code
/// auto in = hurray::cli::open_input_or_report(path, console, "ls");
/// if (!in) return kExitInvalid;
/// @endcode
std::unique_ptr<Input> open_input_or_report(const std::string& path, const Console& console,
                                            const std::string& command);

}  // namespace hurray::cli
