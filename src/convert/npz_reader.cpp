// SPDX-License-Identifier: Apache-2.0
// open_npz: a zip archive of .npy members (numpy.savez / savez_compressed) as a
// TensorSource, read with libzip.
#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "convert/guard.hpp"
#include "convert/npy_array.hpp"
#include "hurray/convert/numpy.hpp"

namespace hurray::formats {
namespace {

/// Bytes skipped at a time when a deflated member is read forward.
constexpr size_t kSkipChunk = size_t{64} * 1024;

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

    /// Reads out.size() bytes at `offset` of member `index` (uncompressed bytes).
    Status read(uint64_t index, bool stored, uint64_t offset, std::span<uint8_t> out,
                const std::string& what) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (file_ == nullptr || index_ != index || pos_ > offset) {
            close_member();
            file_ = zip_fopen_index(zip_, index, 0);
            if (file_ == nullptr) {
                return Error(ErrorCode::kInvalidFile,
                             what + ": cannot open the member: " + zip_strerror(zip_));
            }
            index_ = index;
            pos_ = 0;
        }
        if (pos_ < offset && stored && offset <= static_cast<uint64_t>(INT64_MAX) &&
            zip_fseek(file_, static_cast<zip_int64_t>(offset), SEEK_SET) == 0) {
            pos_ = offset;
        }
        while (pos_ < offset) {  // deflated (or not seekable): inflate and drop
            skip_.resize(kSkipChunk);
            const auto n = static_cast<zip_uint64_t>(std::min<uint64_t>(kSkipChunk, offset - pos_));
            HURRAY_RETURN_IF_ERROR(
                read_some(std::span<uint8_t>(skip_.data(), static_cast<size_t>(n)), what));
        }
        return read_some(out, what);
    }

private:
    Status read_some(std::span<uint8_t> out, const std::string& what) {
        size_t done = 0;
        while (done < out.size()) {
            // SAFETY: out.data() + done .. out.size() is writable memory of the span.
            const zip_int64_t n = zip_fread(file_, out.data() + done, out.size() - done);
            if (n < 0) {
                const std::string why = zip_file_strerror(file_);
                close_member();
                std::string message = what;
                message.append(": byte ").append(std::to_string(pos_)).append(": ").append(why);
                return Error(ErrorCode::kInvalidFile, std::move(message), pos_);
            }
            if (n == 0) {
                const uint64_t at = pos_;
                close_member();
                return Error(ErrorCode::kTruncated,
                             what + ": the member ends at byte " + std::to_string(at) + ", " +
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

Result<std::unique_ptr<TensorSource>> open_npz_impl(const std::filesystem::path& path) {
    const std::string file = path.string();
    int code = 0;
    zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (zip == nullptr) {
        zip_error_t err;
        zip_error_init_with_code(&err, code);
        const std::string why = zip_error_strerror(&err);
        zip_error_fini(&err);
        return Error(code == ZIP_ER_OPEN || code == ZIP_ER_READ || code == ZIP_ER_NOENT
                         ? ErrorCode::kIoError
                         : ErrorCode::kInvalidFile,
                     file + ": not a readable zip archive: " + why);
    }
    auto archive = std::make_shared<ZipArchive>(zip, file);
    const zip_int64_t entries = zip_get_num_entries(zip, 0);
    if (entries < 0) {
        return Error(ErrorCode::kInvalidFile,
                     file + ": cannot count the members: " + zip_strerror(zip));
    }
    std::vector<detail::NpyArray> arrays;
    std::set<std::string> names;
    for (zip_int64_t e = 0; e < entries; ++e) {
        const auto index = static_cast<zip_uint64_t>(e);
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(zip, index, 0, &st) != 0 || (st.valid & ZIP_STAT_NAME) == 0 ||
            (st.valid & ZIP_STAT_SIZE) == 0) {
            return Error(ErrorCode::kInvalidFile, file + ": member " + std::to_string(e) +
                                                      ": unreadable entry: " + zip_strerror(zip));
        }
        const std::string name = st.name;
        if (!name.empty() && name.back() == '/') {
            continue;  // a directory entry
        }
        std::string what = file;
        what.append(" member '").append(name).append("'");
        if (!ends_with(name, ".npy")) {
            return Error(ErrorCode::kUnsupported,
                         what + ": not a .npy array (a .npz holds .npy members only)");
        }
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && st.encryption_method != ZIP_EM_NONE) {
            return Error(ErrorCode::kUnsupported, what + ": encrypted members are not read");
        }
        const bool stored =
            (st.valid & ZIP_STAT_COMP_METHOD) != 0 && st.comp_method == ZIP_CM_STORE;
        const uint64_t size = st.size;
        std::vector<uint8_t> prefix(static_cast<size_t>(std::min<uint64_t>(size, 12)));
        HURRAY_RETURN_IF_ERROR(archive->read(index, stored, 0, prefix, what));
        HURRAY_ASSIGN_OR_RETURN(const uint64_t data_offset, detail::npy_data_offset(prefix, what));
        if (data_offset > size) {
            return Error(ErrorCode::kTruncated,
                         what + ": header_len: the header ends at byte " +
                             std::to_string(data_offset) + ", past the end of the member (" +
                             std::to_string(size) + " bytes)",
                         8);
        }
        std::vector<uint8_t> head(static_cast<size_t>(data_offset));
        HURRAY_RETURN_IF_ERROR(archive->read(index, stored, 0, head, what));
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
            message.append(": a second array named '").append(tensor_name).append("'");
            return Error(ErrorCode::kDuplicateName, std::move(message));
        }
        HURRAY_ASSIGN_OR_RETURN(SourceTensor tensor,
                                detail::npy_tensor(std::move(tensor_name), header));
        detail::NpyArray array;
        array.tensor = std::move(tensor);
        array.header = header;
        array.what = what;
        ZipArchive* raw_archive = archive.get();  // kept alive by the source (keep)
        array.raw = [raw_archive, index, stored, data_offset, what](
                        uint64_t offset, std::span<uint8_t> out) -> Status {
            return raw_archive->read(index, stored, data_offset + offset, out, what);
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

}  // namespace hurray::formats
