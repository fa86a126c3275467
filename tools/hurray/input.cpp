#include "hurray/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <ostream>
#include <span>
#include <string>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/io/cached_head_source.hpp"
#include "hurray/core/descriptor_codec.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/safetensors.hpp"
#endif

namespace hurray::cli {
namespace {

constexpr std::array<uint8_t, 8> kFileMagic = {'H', 'R', 'R', 'Y', 'F', 'I', 'L', 'E'};
constexpr size_t kHeadBytes = 16;

// Whether `head` can start Hurray input: empty (an empty stream), or its first
// bytes those of "HRRY", which both a container ("HRRYFILE") and a stream or
// bare descriptor (a descriptor's magic) start with.
bool may_be_hurray(std::span<const uint8_t> head) noexcept {
    static constexpr std::array<uint8_t, 4> kMagic = {'H', 'R', 'R', 'Y'};
    const size_t n = std::min(head.size(), kMagic.size());
    return std::equal(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(n), kMagic.begin());
}


/// Gives back the bytes read to classify an input, then reads on from the real source.
class PrefixedSource final : public ByteSource {
public:
    PrefixedSource(std::vector<uint8_t> head, ByteSource& rest) : head_(std::move(head)), rest_(rest) {}

    Result<size_t> read_some(std::span<uint8_t> out) override {
        if (pos_ < head_.size()) {
            const size_t n = std::min(out.size(), head_.size() - pos_);
            std::copy_n(head_.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
            pos_ += n;
            return n;
        }
        return rest_.read_some(out);
    }

    Result<uint64_t> skip(uint64_t n) override {
        const uint64_t from_head = std::min<uint64_t>(n, head_.size() - pos_);
        pos_ += static_cast<size_t>(from_head);
        if (from_head == n) {
            return n;
        }
        auto skipped = rest_.skip(n - from_head);
        if (!skipped) {
            return skipped.error();
        }
        return from_head + *skipped;
    }

    /// The real source's descriptor once the classified bytes are given back.
    [[nodiscard]] int splice_fd() const noexcept override { return pos_ < head_.size() ? -1 : rest_.splice_fd(); }

private:
    std::vector<uint8_t> head_;
    size_t pos_ = 0;
    ByteSource& rest_;
};

/// Reads remote streams and descriptors forward in ranges of this many bytes.
constexpr size_t kRemoteStreamChunk = size_t{8} << 20;
/// The first bytes of a URL kept (the container header: FileReader reads it again).
constexpr uint64_t kRemoteHead = 64;

}  // namespace

Result<std::unique_ptr<Input>> Input::open_remote(std::unique_ptr<Input> in, const RemoteOptions& remote) {
    auto src = open_url(in->path_, remote);
    if (!src) {
        return src.error();
    }
    in->opened_ = *src;
    const uint64_t size = (*src)->size();
    in->size_ = size;
    std::vector<uint8_t> head(static_cast<size_t>(std::min(size, kRemoteHead)));
    if (auto s = (*src)->read(0, head); !s) {
        return s.error();
    }
    const std::span<const uint8_t> first = std::span<const uint8_t>(head).first(std::min(head.size(), kHeadBytes));
    if (!may_be_hurray(first)) {
        return Error(ErrorCode::kInvalidMagic,
                     in->display_name() + ": not a Hurray file or stream (starts with " + leading_bytes(first) + ")",
                     0);
    }
    in->kind_ = classify(first, size);
    // The bytes just read cost no second request (hurray::io's CachedHeadSource).
    in->remote_ = std::make_shared<CachedHeadSource>(*src, std::move(head));
    in->source_ = std::make_unique<RangeByteSource>(in->remote_, 0, kRemoteStreamChunk);
    return in;
}

const char* kind_name(InputKind kind) noexcept {
    switch (kind) {
        case InputKind::kFile: return "file";
        case InputKind::kDescriptor: return "descriptor";
        case InputKind::kStream: return "stream";
    }
    return "stream";
}

InputKind classify(std::span<const uint8_t> head, std::optional<uint64_t> total_size) noexcept {
    if (head.size() >= kFileMagic.size() && std::equal(kFileMagic.begin(), kFileMagic.end(), head.begin())) {
        return InputKind::kFile;
    }
    if (total_size.has_value()) {
        auto length = peek_length(head);
        if (length && static_cast<uint64_t>(*length) == *total_size) {
            return InputKind::kDescriptor;
        }
    }
    return InputKind::kStream;
}

Result<std::unique_ptr<Input>> Input::open(const std::string& path, const Console& console,
                                           const RemoteOptions& remote) {
    std::unique_ptr<Input> in(new Input());
    in->path_ = path;
    in->spec_only_ = console.spec_only;
    if (is_url(path)) {
        return open_remote(std::move(in), remote);
    }
    int fd = console.stdin_fd;
    bool owns = false;
    if (path != "-") {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return Error(ErrorCode::kIoError, path + ": cannot open: " + std::strerror(errno));
        }
        owns = true;
    }
    in->fd_source_ = std::make_unique<FdSource>(fd, owns);
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        in->size_ = static_cast<uint64_t>(st.st_size);
    }
    std::vector<uint8_t> head(kHeadBytes);
    auto got = in->fd_source_->read_full(head);
    if (!got) {
        return got.error().with_context({.prefix = in->display_name(), .file = in->display_name()});
    }
    head.resize(*got);
    if (!may_be_hurray(head)) {
        return Error(ErrorCode::kInvalidMagic,
                     in->display_name() + ": not a Hurray file or stream (starts with " + leading_bytes(head) + ")", 0);
    }
    in->kind_ = classify(head, in->size_);
    in->source_ = std::make_unique<PrefixedSource>(std::move(head), *in->fd_source_);
    return in;
}

Input::~Input() = default;

std::string Input::display_name() const { return path_ == "-" ? std::string("<stdin>") : display_path(path_); }

Result<std::vector<uint8_t>> Input::read_all(uint64_t max_bytes) {
    std::vector<uint8_t> bytes;
    if (size_ && *size_ <= max_bytes) {
        bytes.reserve(static_cast<size_t>(*size_));
    }
    std::vector<uint8_t> chunk(1 << 20);
    for (;;) {
        auto n = source_->read_some(chunk);
        if (!n) {
            return n.error().with_context({.prefix = display_name(), .file = display_name()});
        }
        if (*n == 0) {
            return bytes;
        }
        if (bytes.size() + *n > max_bytes) {
            return Error(ErrorCode::kInvalidArgument,
                         display_name() + ": more than " + std::to_string(max_bytes) + " bytes");
        }
        bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*n));
    }
}

std::unique_ptr<Input> open_input_or_report(const std::string& path, const Console& console,
                                            const std::string& command, const RemoteOptions& remote) {
    auto in = Input::open(path, console, remote);
    if (!in) {
        console.err << "hurray " << command << ": " << in.error().message() << '\n';
        return nullptr;
    }
    return std::move(*in);
}

#ifdef HURRAY_CLI_HAS_CONVERT
convert::Format detect_file_format(const std::string& path) {
    std::error_code regular_ec;
    if (path == "-" || !std::filesystem::is_regular_file(path, regular_ec)) {
        return convert::Format::kUnknown;  // a pipe is not read here: its bytes would be lost
    }
    std::ifstream is(path, std::ios::binary);
    if (!is) {
        return convert::Format::kUnknown;
    }
    std::array<uint8_t, convert::kDetectHeadBytes> head{};
    // SAFETY: char may alias the bytes of the array; at most head.size() are written.
    is.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    const auto n = static_cast<size_t>(is.gcount());
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    const std::span<const uint8_t> bytes(head.data(), n);
    const convert::Format f = convert::detect_format(bytes, ec ? std::nullopt : std::optional<uint64_t>(size));
    if (f == convert::Format::kUnknown && !may_be_hurray(bytes) && n >= 9 && head[8] == '{') {
        // A SafeTensors header whose length runs past the end of the file (detect_format
        // wants it inside): a truncated SafeTensors file, which its reader reports (field,
        // byte offset) better than "not a Hurray file" would.
        const auto header_len = load_le<uint64_t>(head.data());  // n >= 9 bytes read
        if (header_len >= 2 && header_len < (uint64_t{1} << 32)) {
            return convert::Format::kSafeTensors;
        }
    }
    return f;
}

bool is_foreign_format(convert::Format f) noexcept {
    return f == convert::Format::kSafeTensors || f == convert::Format::kGguf || f == convert::Format::kNpy ||
           f == convert::Format::kNpz;
}

std::optional<convert::Format> url_format(const std::string& url) {
    return convert::format_from_extension(url.substr(0, url.find_first_of("?#")));
}

namespace {

/// A ForeignInput of `size` bytes from what open_source gave (its error, if any).
std::optional<Result<ForeignInput>> foreign_input(Result<std::unique_ptr<convert::TensorSource>> src,
                                                  uint64_t size) {
    if (!src) {
        // Every detected foreign format has a reader: its error is the file's.
        return std::optional<Result<ForeignInput>>(std::in_place, src.error());
    }
    ForeignInput in;
    in.format = (*src)->format();
    in.file_size = size;
    in.source = std::move(*src);
    return Result<ForeignInput>(std::move(in));
}

}  // namespace

Result<std::unique_ptr<convert::TensorSource>> open_url_source(const std::string& url, const RemoteOptions& remote) {
    HURRAY_ASSIGN_OR_RETURN(std::shared_ptr<RangeSource> opened, open_url(url, remote));
    return convert::open_source(std::move(opened));
}

std::optional<Result<ForeignInput>> open_foreign(const std::string& path, const RemoteOptions& remote) {
    if (is_url(path)) {
        // Told by the extension of the URL's path (no request for a URL left to the
        // caller), then read through range requests.
        const std::optional<convert::Format> f = url_format(path);
        if (!f || !is_foreign_format(*f)) {
            return std::nullopt;
        }
        auto opened = open_url(path, remote);
        if (!opened) {
            return std::optional<Result<ForeignInput>>(std::in_place, opened.error());
        }
        const uint64_t size = (*opened)->size();
        return foreign_input(convert::open_source(std::move(*opened)), size);
    }
    const convert::Format f = detect_file_format(path);
    if (!is_foreign_format(f)) {
        return std::nullopt;
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    // SafeTensors directly: detect_file_format also calls a truncated one SafeTensors.
    return foreign_input(f == convert::Format::kSafeTensors ? convert::open_safetensors(path)
                                                            : convert::open_source(path),
                         ec ? 0 : static_cast<uint64_t>(size));
}

Error unprefixed(const std::string& path, const Error& e) {
    return e.file() == path ? e.without_file() : e;
}

Result<ForeignTensorBytes> read_foreign_tensor(const convert::TensorSource& source, size_t i, bool use_views,
                                               bool keep) {
    constexpr uint64_t kChunk = uint64_t{8} << 20;
    const TensorDescriptor& d = source.tensor(i).descriptor;
    ForeignTensorBytes out;
    out.owned.resize(d.buffers.size());
    std::vector<uint8_t> scratch;
    for (size_t b = 0; b < d.buffers.size(); ++b) {
        if (use_views) {
            if (auto view = source.view(i, b)) {
                out.spans.push_back(*view);
                continue;
            }
        }
        const uint64_t size = d.buffers[b].byte_size;
        std::vector<uint8_t>& dst = keep ? out.owned[b] : scratch;
        for (uint64_t at = 0; at < size;) {
            const uint64_t n = std::min(kChunk, size - at);
            // The buffer grows as it is read: a size the data does not back fails before
            // the memory it declares is taken.
            const size_t base = keep ? static_cast<size_t>(at) : 0;
            dst.resize(base + static_cast<size_t>(n));
            HURRAY_RETURN_IF_ERROR(source.read(i, b, at, std::span<uint8_t>(dst).subspan(base)));
            at += n;
            out.bytes_read += n;
        }
        if (keep) {
            out.spans.emplace_back(out.owned[b]);
        }
    }
    if (!keep) {
        out.spans.clear();
    }
    return out;
}
#endif

}  // namespace hurray::cli
