// SPDX-License-Identifier: Apache-2.0
// open_npz: a zip archive of .npy members (numpy.savez / savez_compressed) as a
// TensorSource: the zip structure checked first (zip_directory.cpp, errors with byte
// offsets), the members then read and inflated with libzip, from a path or (a remote
// file) from a RangeSource through a libzip source of our own.
#include <zip.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "convert/guard.hpp"
#include "convert/npy_array.hpp"
#include "convert/zip_directory.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/read_only_file.hpp"

namespace hurray::convert {
namespace {

/// Bytes skipped at a time when a deflated member is read forward; a stored member is
/// also read (not seeked) over gaps up to this size, so that a member read from its start
/// to its end has its CRC-32 checked.
constexpr size_t kSkipChunk = size_t{64} * 1024;

/// What a read needs to know of its member (from the checked central directory).
struct MemberInfo {
    uint64_t index = 0;           // libzip's index
    bool stored = false;          // not compressed
    uint64_t size = 0;            // uncompressed bytes
    uint32_t crc32 = 0;           // as recorded
    uint64_t crc_at = 0;          // byte of the CRC-32 field in the central directory
    uint64_t data_offset = 0;     // first compressed byte in the file
    uint64_t compressed_size = 0; // compressed bytes
};


/// "<what>: ", or nothing when `what` is empty (the tensor reads: NpySource names the
/// array itself).
std::string lead(const std::string& what) { return what.empty() ? std::string() : what + ": "; }

/// An open archive, read by one thread at a time, keeping the member last read open (so
/// that sequential reads of a deflated member inflate it once).
class ZipArchive {
public:
    explicit ZipArchive(zip_t* zip, std::string path) : zip_(zip), path_(std::move(path)) {}
    ZipArchive(const ZipArchive&) = delete;
    ZipArchive& operator=(const ZipArchive&) = delete;
    ZipArchive(ZipArchive&&) = delete;
    ZipArchive& operator=(ZipArchive&&) = delete;
    ~ZipArchive() {
        close_member();
        zip_discard(zip_);
    }

    [[nodiscard]] zip_t* zip() const noexcept { return zip_; }

    /// Reads out.size() bytes at `offset` of member `m` (uncompressed bytes). A read that
    /// ends at the member's end, sequential from its start, has the CRC-32 checked.
    Status read(const MemberInfo& m, uint64_t offset, std::span<uint8_t> out,
                const std::string& what) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (file_ == nullptr || index_ != m.index || pos_ > offset) {
            close_member();
            file_ = zip_fopen_index(zip_, m.index, 0);
            if (file_ == nullptr) {
                return Error(ErrorCode::kInvalidFile,
                             lead(what) + "cannot open the member (data at byte " +
                                 std::to_string(m.data_offset) + "): " + zip_strerror(zip_) +
                                 " at byte " + std::to_string(m.data_offset),
                             m.data_offset);
            }
            index_ = m.index;
            pos_ = 0;
        }
        if (m.stored && offset - pos_ > kSkipChunk && offset <= static_cast<uint64_t>(INT64_MAX) &&
            zip_fseek(file_, static_cast<zip_int64_t>(offset), SEEK_SET) == 0) {
            pos_ = offset;
        }
        while (pos_ < offset) {  // deflated (or a short gap): inflate and drop
            skip_.resize(kSkipChunk);
            const auto n = static_cast<zip_uint64_t>(std::min<uint64_t>(kSkipChunk, offset - pos_));
            HURRAY_RETURN_IF_ERROR(
                read_some(m, std::span<uint8_t>(skip_.data(), static_cast<size_t>(n)), what));
        }
        HURRAY_RETURN_IF_ERROR(read_some(m, out, what));
        if (pos_ == m.size && file_ != nullptr) {
            // At the end: one more read lets libzip compare the CRC-32 (and the size).
            std::array<uint8_t, 1> probe{};
            const zip_int64_t n = zip_fread(file_, probe.data(), probe.size());
            if (n != 0) {
                return failure(m, n, what);
            }
        }
        return {};
    }

private:
    /// The error of a read that returned `n` (< 0: libzip's error; > 0: more bytes than
    /// declared); closes the member.
    Error failure(const MemberInfo& m, zip_int64_t n, const std::string& what) {
        const zip_error_t* err = zip_file_get_error(file_);
        const int code = n < 0 && err != nullptr ? zip_error_code_zip(err) : ZIP_ER_INCONS;
        const std::string why = n < 0 ? zip_file_strerror(file_) : "more bytes than declared";
        const uint64_t at = pos_;
        close_member();
        if (code == ZIP_ER_CRC) {
            return {ErrorCode::kChecksumMismatch,
                    lead(what) + "CRC-32: its " + std::to_string(m.size) +
                        " bytes do not match the CRC-32 " + "0x" + hex_digits(m.crc32, 8) +
                        " of its central directory entry at byte " + std::to_string(m.crc_at),
                    m.crc_at};
        }
        std::string message = lead(what);
        message.append(m.stored ? "reading" : "inflating")
            .append(" (compressed data: ")
            .append(std::to_string(m.compressed_size))
            .append(" bytes from byte ")
            .append(std::to_string(m.data_offset))
            .append(" of the file): ")
            .append(why)
            .append(" at byte ")
            .append(std::to_string(at))
            .append(" of the member");
        return {ErrorCode::kInvalidFile, std::move(message), at};
    }

    Status read_some(const MemberInfo& m, std::span<uint8_t> out, const std::string& what) {
        size_t done = 0;
        while (done < out.size()) {
            // SAFETY: out.data() + done .. out.size() is writable memory of the span.
            const zip_int64_t n = zip_fread(file_, out.data() + done, out.size() - done);
            if (n < 0) {
                return failure(m, n, what);
            }
            if (n == 0) {
                const uint64_t at = pos_;
                close_member();
                return Error(ErrorCode::kTruncated,
                             lead(what) + "the member ends at byte " + std::to_string(at) + ", " +
                                 std::to_string(out.size() - done) + " bytes short",
                             at);
            }
            done += static_cast<size_t>(n);
            pos_ += static_cast<uint64_t>(n);
        }
        return {};
    }

    void close_member() noexcept {
        if (file_ != nullptr) {
            zip_fclose(file_);
            file_ = nullptr;
        }
    }

    zip_t* zip_;
    std::string path_;
    std::mutex mutex_;
    zip_file_t* file_ = nullptr;
    uint64_t index_ = 0;
    uint64_t pos_ = 0;
    std::vector<uint8_t> skip_;
};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// " (its structure passed the checks: ...)" for libzip's refusals.
std::string checked_text(const detail::ZipDirectory& dir) {
    return " (its structure passed the checks: " + std::to_string(dir.entries.size()) +
           " entries, central directory at byte " + std::to_string(dir.central_offset) + ")";
}

/// libzip's refusal of an archive whose structure passed read_zip_directory.
Error refused(const std::string& file, const detail::ZipDirectory& dir, int code) {
    zip_error_t err;
    zip_error_init_with_code(&err, code);
    const std::string why = zip_error_strerror(&err);
    zip_error_fini(&err);
    const bool io = code == ZIP_ER_OPEN || code == ZIP_ER_READ || code == ZIP_ER_NOENT;
    return {io ? ErrorCode::kIoError : ErrorCode::kInvalidFile,
            file + ": libzip refuses the archive: " + why + checked_text(dir) + " at byte " +
                std::to_string(dir.central_offset),
            dir.central_offset};
}

Result<std::unique_ptr<TensorSource>> npz_members(zip_t* zip, const detail::ZipDirectory& dir,
                                                  const std::string& file);

Result<std::unique_ptr<TensorSource>> open_npz_impl(const std::filesystem::path& path) {
    const std::string file = path.string();
    // Our own bounds-checked pass over the zip structure first: libzip's errors carry
    // no offset ("Not a zip archive"), these name the field and its byte.
    HURRAY_ASSIGN_OR_RETURN(const ReadOnlyFile posix, ReadOnlyFile::open(path, /*use_mmap=*/false));
    const detail::ZipReadAt read_at = [&posix](uint64_t offset, std::span<uint8_t> out) {
        return posix.read_into(offset, out, "zip structure");
    };
    HURRAY_ASSIGN_OR_RETURN(const detail::ZipDirectory dir,
                            detail::read_zip_directory(posix.size(), read_at, file));
    int code = 0;
    zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (zip == nullptr) {
        return refused(file, dir, code);
    }
    return npz_members(zip, dir, file);
}

/// A RangeSource as libzip's source (zip_source_function_create): a seekable,
/// read-only stream over its bytes, read ahead kReadAhead bytes at a time (libzip reads
/// a few KiB at a time; over HTTP each would be a request).
class RangeZipSource {
public:
    static constexpr uint64_t kReadAhead = uint64_t{1} << 20;

    explicit RangeZipSource(std::shared_ptr<RangeSource> source) : source_(std::move(source)) {
        zip_error_init(&error_);
    }
    RangeZipSource(const RangeZipSource&) = delete;
    RangeZipSource& operator=(const RangeZipSource&) = delete;
    RangeZipSource(RangeZipSource&&) = delete;
    RangeZipSource& operator=(RangeZipSource&&) = delete;
    ~RangeZipSource() { zip_error_fini(&error_); }

    /// libzip's callback; `user` is the RangeZipSource, deleted at ZIP_SOURCE_FREE.
    static zip_int64_t callback(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
        auto* self = static_cast<RangeZipSource*>(user);
        const uint64_t size = self->source_->size();
        switch (cmd) {
            case ZIP_SOURCE_OPEN:
                self->pos_ = 0;
                return 0;
            case ZIP_SOURCE_READ:
                return self->read(static_cast<uint8_t*>(data), len);
            case ZIP_SOURCE_CLOSE:
                return 0;
            case ZIP_SOURCE_STAT: {
                auto* st = static_cast<zip_stat_t*>(data);
                zip_stat_init(st);
                st->size = size;
                st->valid |= ZIP_STAT_SIZE;
                return sizeof(zip_stat_t);
            }
            case ZIP_SOURCE_ERROR:
                return zip_error_to_data(&self->error_, data, len);
            case ZIP_SOURCE_FREE:
                delete self;  // NOLINT(cppcoreguidelines-owning-memory): libzip's source owns it
                return 0;
            case ZIP_SOURCE_SEEK: {
                const zip_int64_t to = zip_source_seek_compute_offset(self->pos_, size, data, len, &self->error_);
                if (to < 0) {
                    return -1;
                }
                self->pos_ = static_cast<uint64_t>(to);
                return 0;
            }
            case ZIP_SOURCE_TELL:
                return static_cast<zip_int64_t>(self->pos_);
            case ZIP_SOURCE_SUPPORTS:
                return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                                      ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
                                                      ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS, -1);
            default:
                zip_error_set(&self->error_, ZIP_ER_OPNOTSUPP, 0);
                return -1;
        }
    }

private:
    /// Up to `len` bytes at pos_ into `out`, from the read-ahead buffer (refilled from
    /// pos_ when it does not hold pos_).
    zip_int64_t read(uint8_t* out, zip_uint64_t len) {
        const uint64_t size = source_->size();
        if (pos_ >= size || len == 0) {
            return 0;
        }
        if (pos_ < ahead_at_ || pos_ >= ahead_at_ + ahead_.size()) {
            ahead_at_ = pos_;
            ahead_.resize(static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(kReadAhead, len), size - pos_)));
            if (auto s = source_->read(ahead_at_, ahead_); !s) {
                ahead_.clear();
                zip_error_set(&error_, ZIP_ER_READ, EIO);
                return -1;
            }
        }
        const uint64_t from = pos_ - ahead_at_;
        const auto n = static_cast<size_t>(std::min<uint64_t>(len, ahead_.size() - from));
        // SAFETY: libzip passes `len` writable bytes at `out`; n <= len, and
        // [from, from + n) lies inside ahead_.
        std::memcpy(out, ahead_.data() + from, n);
        pos_ += n;
        return static_cast<zip_int64_t>(n);
    }

    std::shared_ptr<RangeSource> source_;
    zip_error_t error_{};
    uint64_t pos_ = 0;
    uint64_t ahead_at_ = 0;
    std::vector<uint8_t> ahead_;
};

Result<std::unique_ptr<TensorSource>> open_npz_range_impl(std::shared_ptr<RangeSource> source) {
    const std::string file = source->name();
    const detail::ZipReadAt read_at = [&source](uint64_t offset, std::span<uint8_t> out) {
        return source->read(offset, out);
    };
    HURRAY_ASSIGN_OR_RETURN(const detail::ZipDirectory dir,
                            detail::read_zip_directory(source->size(), read_at, file));
    zip_error_t error;
    zip_error_init(&error);
    auto* user = new RangeZipSource(std::move(source));  // NOLINT(cppcoreguidelines-owning-memory): freed by libzip
    zip_source_t* zs = zip_source_function_create(&RangeZipSource::callback, user, &error);
    if (zs == nullptr) {
        delete user;  // NOLINT(cppcoreguidelines-owning-memory): never handed to libzip
        zip_error_fini(&error);
        return Error(ErrorCode::kOutOfMemory, file + ": libzip could not create a source");
    }
    zip_t* zip = zip_open_from_source(zs, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (zip == nullptr) {
        const int code = zip_error_code_zip(&error);
        zip_error_fini(&error);
        zip_source_free(zs);  // frees `user` (ZIP_SOURCE_FREE)
        return refused(file, dir, code);
    }
    zip_error_fini(&error);
    return npz_members(zip, dir, file);
}

/// The members of the archive `zip` (owned from here on) whose structure `dir` describes.
Result<std::unique_ptr<TensorSource>> npz_members(zip_t* zip, const detail::ZipDirectory& dir,
                                                  const std::string& file) {
    const std::string checked = checked_text(dir);
    auto archive = std::make_shared<ZipArchive>(zip, file);
    const zip_int64_t entries = zip_get_num_entries(zip, 0);
    if (entries < 0 || static_cast<uint64_t>(entries) != dir.entries.size()) {
        return Error(ErrorCode::kInvalidFile,
                     file + ": libzip counts " + std::to_string(entries) + " members" + checked +
                         " at byte " + std::to_string(dir.central_offset),
                     dir.central_offset);
    }
    std::vector<detail::NpyArray> arrays;
    std::set<std::string> names;
    for (zip_int64_t e = 0; e < entries; ++e) {
        const auto index = static_cast<zip_uint64_t>(e);
        const detail::ZipEntry& entry = dir.entries[static_cast<size_t>(e)];
        const std::string where = file + ": central directory entry " + std::to_string(e);
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(zip, index, 0, &st) != 0 || (st.valid & ZIP_STAT_NAME) == 0 ||
            (st.valid & ZIP_STAT_SIZE) == 0 || st.size != entry.size) {
            return Error(ErrorCode::kInvalidFile,
                         where + ": libzip reads it otherwise (" + zip_strerror(zip) +
                             ") at byte " + std::to_string(entry.central_offset),
                         entry.central_offset);
        }
        const std::string name = st.name;
        if (!name.empty() && name.back() == '/') {
            continue;  // a directory entry
        }
        std::string what = file;
        what.append(" member '").append(name).append("'");
        if (!ends_with(name, ".npy")) {
            return Error(ErrorCode::kUnsupported,
                         what + ": not a .npy array (a .npz holds .npy members only), "
                                "central directory entry " +
                             std::to_string(e) + " at byte " +
                             std::to_string(entry.central_offset),
                         entry.central_offset);
        }
        MemberInfo member;
        member.index = index;
        member.stored = entry.method == detail::ZipMethod::kStored;
        member.size = entry.size;
        member.crc32 = entry.crc32;
        member.crc_at = entry.central_offset + 16;
        member.data_offset = entry.data_offset;
        member.compressed_size = entry.compressed_size;
        const uint64_t size = entry.size;
        std::vector<uint8_t> prefix(static_cast<size_t>(std::min<uint64_t>(size, 12)));
        HURRAY_RETURN_IF_ERROR(archive->read(member, 0, prefix, what));
        HURRAY_ASSIGN_OR_RETURN(const uint64_t data_offset, detail::npy_data_offset(prefix, what));
        if (data_offset > size) {
            return Error(ErrorCode::kTruncated,
                         what + ": header_len: the header ends at byte " +
                             std::to_string(data_offset) + ", past the end of the member (" +
                             std::to_string(size) + " bytes)",
                         8);
        }
        std::vector<uint8_t> head(static_cast<size_t>(data_offset));
        HURRAY_RETURN_IF_ERROR(archive->read(member, 0, head, what));
        HURRAY_ASSIGN_OR_RETURN(const detail::NpyHeader header,
                                detail::parse_npy_header(head, what));
        if (header.data_bytes > size - data_offset) {
            return Error(ErrorCode::kTruncated,
                         what + ": data: the shape declares " + std::to_string(header.data_bytes) +
                             " bytes from byte " + std::to_string(data_offset) +
                             " of the member, it holds " + std::to_string(size - data_offset),
                         data_offset);
        }
        std::string tensor_name = name.substr(0, name.size() - 4);
        if (!names.insert(tensor_name).second) {
            std::string message = what;
            message.append(": a second array named '")
                .append(tensor_name)
                .append("', central directory entry ")
                .append(std::to_string(e))
                .append(" at byte ")
                .append(std::to_string(entry.central_offset));
            return Error(ErrorCode::kDuplicateName, std::move(message), entry.central_offset);
        }
        HURRAY_ASSIGN_OR_RETURN(SourceTensor tensor,
                                detail::npy_tensor(std::move(tensor_name), header));
        detail::NpyArray array;
        array.tensor = std::move(tensor);
        array.header = header;
        array.what = what;
        ZipArchive* raw_archive = archive.get();  // kept alive by the source (keep)
        array.raw = [raw_archive, member, data_offset](uint64_t offset,
                                                       std::span<uint8_t> out) -> Status {
            return raw_archive->read(member, data_offset + offset, out, std::string());
        };
        arrays.push_back(std::move(array));
    }
    return std::unique_ptr<TensorSource>(
        std::make_unique<detail::NpySource>(Format::kNpz, std::move(arrays), std::move(archive)));
}

}  // namespace

Result<std::unique_ptr<TensorSource>> open_npz(const std::filesystem::path& path,
                                               const SourceOptions& /*options*/) {
    return detail::guarded(path.string(), [&]() { return open_npz_impl(path); });
}

Result<std::unique_ptr<TensorSource>> open_npz(std::shared_ptr<RangeSource> source,
                                               const SourceOptions& /*options*/) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_npz: no source");
    }
    const std::string name = source->name();
    return detail::guarded(name, [&]() { return open_npz_range_impl(std::move(source)); });
}

}  // namespace hurray::convert
