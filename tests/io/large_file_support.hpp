// SPDX-License-Identifier: Apache-2.0
// A 5 GiB HRRYFILE that costs no disk: the writer's all-zero data goes to a
// sink that seeks over it (a hole) instead of writing it, so only the header,
// descriptors, small tensors, index and trailer take blocks. Used by the
// over-4-GiB tests of the readers (tests/io) and of the CLI (tests/tools).
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#include "io_test_util.hpp"

namespace hurray::test {

/// 64 MiB of zeros, the data of the big tensor, passed to the writer piece by piece.
inline std::span<const uint8_t> zero_block() {
    static const std::vector<uint8_t> zeros(size_t{64} << 20, 0);
    return zeros;
}

/// Writes to a file descriptor; spans inside `zero_block()` become holes (lseek).
class HoleSink final : public ByteSink {
public:
    explicit HoleSink(int fd) noexcept : fd_(fd) {}
    Status write(std::span<const uint8_t> bytes) override {
        const std::span<const uint8_t> z = zero_block();
        if (!bytes.empty() && bytes.data() >= z.data() && bytes.data() + bytes.size() <= z.data() + z.size()) {
            if (::lseek(fd_, static_cast<off_t>(bytes.size()), SEEK_CUR) < 0) {
                return Error(ErrorCode::kIoError, "lseek failed");
            }
            offset_ += bytes.size();
            return Status::success();
        }
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n <= 0) {
                return Error(ErrorCode::kIoError, "write failed");
            }
            done += static_cast<size_t>(n);
        }
        offset_ += bytes.size();
        return Status::success();
    }
    /// Where the file ends (a trailing hole needs the size set explicitly).
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }

private:
    int fd_;
    uint64_t offset_ = 0;
};

/// What the large file holds: "head" (int32 x 1000) before the 4.5 GiB of
/// "big" (uint8, all zero), then "tail" (int32 x 1000) and "last"
/// (float64 x 512), both past 4 GiB.
struct LargeFile {
    static constexpr uint64_t kBigBytes = (uint64_t{9} << 30) / 2;  // 4.5 GiB
    std::vector<int32_t> head;
    std::vector<int32_t> tail;
    std::vector<double> last;
    std::string path;
};

/// True when `dir`'s file system stores holes (a 1 GiB hole takes under 1 MiB).
inline bool supports_sparse_files(const std::string& dir) {
    const std::string probe = dir + "/sparse-probe";
    const int fd = ::open(probe.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) {
        return false;
    }
    const uint8_t one = 1;
    const bool wrote = ::pwrite(fd, &one, 1, off_t{1} << 30) == 1;
    struct stat st {};
    const bool sparse = wrote && ::fstat(fd, &st) == 0 && st.st_blocks * 512 < (1 << 20);
    ::close(fd);
    ::unlink(probe.c_str());
    return sparse;
}

/// Writes the large file to `path` through FileWriter and a HoleSink.
inline std::optional<LargeFile> write_large_file(const std::string& path) {
    LargeFile f;
    f.path = path;
    for (int32_t i = 0; i < 1000; ++i) {
        f.head.push_back(i * 7 - 3000);
        f.tail.push_back(i * 13 + 1);
    }
    for (int i = 0; i < 512; ++i) {
        f.last.push_back(0.25 * i - 17.0);
    }
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) {
        ADD_FAILURE() << "cannot create " << path;
        return std::nullopt;
    }
    HoleSink sink(fd);
    auto bytes_of = [](const auto& v) {
        return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(v[0]));
    };
    auto status = [&]() -> Status {
        HURRAY_ASSIGN_OR_RETURN(FileWriter w, FileWriter::create(sink));
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor hd, make_dense(ElementType::kInt32, {1000}));
        const std::span<const uint8_t> head_bufs[] = {bytes_of(f.head)};
        HURRAY_RETURN_IF_ERROR(w.add_tensor("head", hd, head_bufs));
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor big, make_dense(ElementType::kUInt8, {LargeFile::kBigBytes}));
        HURRAY_RETURN_IF_ERROR(w.begin_tensor("big", big));
        for (uint64_t left = LargeFile::kBigBytes; left > 0;) {
            const auto n = static_cast<size_t>(std::min<uint64_t>(left, zero_block().size()));
            HURRAY_RETURN_IF_ERROR(w.write_data(zero_block().first(n)));
            left -= n;
        }
        HURRAY_RETURN_IF_ERROR(w.end_tensor());
        const std::span<const uint8_t> tail_bufs[] = {bytes_of(f.tail)};
        HURRAY_RETURN_IF_ERROR(w.add_tensor("tail", hd, tail_bufs));
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor ld, make_dense(ElementType::kFloat64, {512}));
        const std::span<const uint8_t> last_bufs[] = {bytes_of(f.last)};
        HURRAY_RETURN_IF_ERROR(w.add_tensor("last", ld, last_bufs));
        HURRAY_RETURN_IF_ERROR(w.kv().set("note", KvValue::string("sparse 5 GiB test file")));
        return w.finish();
    }();
    const bool sized = ::ftruncate(fd, static_cast<off_t>(sink.offset())) == 0;
    ::close(fd);
    if (!status || !sized) {
        ADD_FAILURE() << "writing " << path << ": " << (status ? "ftruncate failed" : status.error().to_string());
        return std::nullopt;
    }
    return f;
}

/// A fixture holding one large file for the whole suite (written once, in a
/// temporary directory, removed after the last test); each test skips when
/// the file system cannot store it sparsely.
class LargeFileSuite : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = std::make_unique<TempDir>();
        if (supports_sparse_files(dir_->path().string())) {
            file_ = write_large_file(dir_->file("large.hrry"));
        }
    }
    static void TearDownTestSuite() {
        file_.reset();
        dir_.reset();
    }
    void SetUp() override {
        if (!file_) {
            GTEST_SKIP() << "the file system of " << dir_->path()
                         << " does not store sparse files (a 5 GiB test file would take 5 GiB of disk)";
        }
    }
    inline static std::unique_ptr<TempDir> dir_;
    inline static std::optional<LargeFile> file_;
};

}  // namespace hurray::test
