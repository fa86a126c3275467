// SPDX-License-Identifier: Apache-2.0
// write_npz: every tensor of a source as a stored .npy member of a zip archive (as
// numpy.savez writes), streamed through libzip source callbacks, committed atomically.
#include <zip.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert/file_commit.hpp"
#include "hurray/io/byte_sink.hpp"
#include "convert/guard.hpp"
#include "convert/npy_array.hpp"
#include "hurray/convert/numpy.hpp"

namespace hurray::convert {
namespace {

/// A fixed member time (1980-01-01, the first DOS date) so that outputs are reproducible.
constexpr time_t kMemberTime = 315532800;

/// Shared by the member callbacks: the first error, and progress.
struct WriteState {
    std::optional<Error> error;
    uint64_t done = 0;
    uint64_t total = 0;
    const ProgressCallback* progress = nullptr;
};

/// One member: the .npy bytes of one tensor, produced as libzip asks for them.
struct Member {
    detail::NpyEncoder encoder;
    WriteState* state = nullptr;
    uint64_t pos = 0;
    zip_error_t error{};
};

zip_int64_t member_callback(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    auto* m = static_cast<Member*>(user);
    switch (cmd) {
        case ZIP_SOURCE_OPEN:
            m->pos = 0;
            return 0;
        case ZIP_SOURCE_READ: {
            const uint64_t n = std::min<uint64_t>(len, m->encoder.size() - m->pos);
            if (n == 0) {
                return 0;
            }
            // SAFETY: libzip hands a buffer of `len` writable bytes; n <= len.
            const std::span<uint8_t> out(static_cast<uint8_t*>(data), static_cast<size_t>(n));
            try {
                if (auto s = m->encoder.read(m->pos, out); !s) {
                    if (!m->state->error) {
                        m->state->error = s.error();
                    }
                    zip_error_set(&m->error, ZIP_ER_READ, 0);
                    return -1;
                }
            } catch (...) {  // nothing may unwind through libzip's C frames
                if (!m->state->error) {
                    m->state->error = Error(ErrorCode::kOutOfMemory, "out of memory");
                }
                zip_error_set(&m->error, ZIP_ER_MEMORY, 0);
                return -1;
            }
            const uint64_t header = m->encoder.header().size();
            const uint64_t data_before = m->pos > header ? m->pos - header : 0;
            m->pos += n;
            const uint64_t data_after = m->pos > header ? m->pos - header : 0;
            m->state->done += data_after - data_before;
            if (data_after > data_before && m->state->progress != nullptr && *m->state->progress) {
                try {
                    if (auto s = report_progress(*m->state->progress, m->state->done, m->state->total); !s) {
                        if (!m->state->error) {
                            m->state->error = s.error();  // the cancellation: reported as the error
                        }
                        zip_error_set(&m->error, ZIP_ER_INTERNAL, 0);
                        return -1;
                    }
                } catch (...) {
                    zip_error_set(&m->error, ZIP_ER_INTERNAL, 0);
                    return -1;
                }
            }
            return static_cast<zip_int64_t>(n);
        }
        case ZIP_SOURCE_CLOSE:
            return 0;
        case ZIP_SOURCE_STAT: {
            zip_stat_t* st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &m->error);
            if (st == nullptr) {
                return -1;
            }
            zip_stat_init(st);
            st->size = m->encoder.size();
            st->mtime = kMemberTime;
            st->valid |= ZIP_STAT_SIZE | ZIP_STAT_MTIME;
            return sizeof(zip_stat_t);
        }
        case ZIP_SOURCE_ERROR:
            return zip_error_to_data(&m->error, data, len);
        case ZIP_SOURCE_FREE:
            return 0;
        case ZIP_SOURCE_SUPPORTS:
            return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
                                                  ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                                  ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
        default:
            zip_error_set(&m->error, ZIP_ER_OPNOTSUPP, 0);
            return -1;
    }
}

/// zip_discard on destruction unless closed.
struct ZipHandle {
    zip_t* zip = nullptr;
    ZipHandle() = default;
    ZipHandle(const ZipHandle&) = delete;
    ZipHandle& operator=(const ZipHandle&) = delete;
    ZipHandle(ZipHandle&&) = delete;
    ZipHandle& operator=(ZipHandle&&) = delete;
    ~ZipHandle() {
        if (zip != nullptr) {
            zip_discard(zip);
        }
    }
};

Status write_npz_impl(const TensorSource& source, const std::filesystem::path& path,
                      const ConvertOptions& options) {
    WriteState state;
    state.progress = &options.progress;
    std::vector<std::unique_ptr<Member>> members;
    for (size_t i = 0; i < source.tensor_count(); ++i) {
        HURRAY_ASSIGN_OR_RETURN(detail::NpyEncoder enc, detail::NpyEncoder::make(source, i));
        state.total += enc.data_bytes();
        auto m = std::make_unique<Member>(Member{std::move(enc), &state, 0, {}});
        zip_error_init(&m->error);
        members.push_back(std::move(m));
    }
    HURRAY_ASSIGN_OR_RETURN(const std::filesystem::path temp_dir,
                            detail::temp_dir_beside(path, "npz"));
    const detail::RemoveOnExit cleanup(temp_dir);
    const std::filesystem::path temp = temp_dir / path.filename();
    int code = 0;
    ZipHandle zip;
    zip.zip = zip_open(temp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (zip.zip == nullptr) {
        zip_error_t err;
        zip_error_init_with_code(&err, code);
        const std::string why = zip_error_strerror(&err);
        zip_error_fini(&err);
        return Error(ErrorCode::kIoError, temp.string() + ": " + why);
    }
    for (size_t i = 0; i < members.size(); ++i) {
        const std::string name = source.tensor(i).name + ".npy";
        zip_source_t* src = zip_source_function(zip.zip, member_callback, members[i].get());
        if (src == nullptr) {
            return Error(ErrorCode::kIoError, path.string() + ": " + zip_strerror(zip.zip));
        }
        const zip_int64_t index = zip_file_add(zip.zip, name.c_str(), src, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
            zip_source_free(src);
            return Error(ErrorCode::kInvalidName, "tensor '" + source.tensor(i).name +
                                                      "': cannot add member '" + name +
                                                      "': " + zip_strerror(zip.zip));
        }
        if (zip_set_file_compression(zip.zip, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) !=
            0) {
            return Error(ErrorCode::kIoError, path.string() + ": " + zip_strerror(zip.zip));
        }
    }
    if (zip_close(zip.zip) != 0) {  // reads every member now
        if (state.error) {
            return *state.error;
        }
        return Error(ErrorCode::kIoError,
                     path.string() + ": writing the archive: " + zip_strerror(zip.zip));
    }
    zip.zip = nullptr;
    for (auto& m : members) {
        zip_error_fini(&m->error);
    }
    return replace_file(temp, path, options.durable);
}

}  // namespace

Status write_npz(const TensorSource& source, const std::filesystem::path& path,
                 const ConvertOptions& options) {
    return detail::guarded(path.string(),
                           [&]() -> Status { return write_npz_impl(source, path, options); });
}

}  // namespace hurray::convert
