// SPDX-License-Identifier: Apache-2.0
// Files that change under a reader. Truncated in place by another process
// while mapped: the process must live (the SIGBUS guard turns the vanished
// pages into zeros) and every bulk read of the library must report "file
// changed while mapped" instead of returning results built from zeros.
// Replaced by rename: the reader is unaffected. Grown in place: reported.
// And the guard's chaining: a SIGBUS that is not ours reaches the handler
// the program installed, or kills the process as it would have.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/save.hpp"
#include "hurray/io/stream_convert.hpp"
#include "io_test_util.hpp"

namespace hurray {
namespace {

using hurray::test::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;

/// Writes a file of two float32 tensors of 4 MiB each ("a" first, "b" past
/// 4 MiB), values 1.0 everywhere.
void write_model(const std::string& path, float value = 1.0F) {
    auto d = make_dense(ElementType::kFloat32, {kMiB});
    ASSERT_TRUE(d);
    const std::vector<float> values(kMiB, value);
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4);
    auto w = FileWriter::create_file(path);
    ASSERT_TRUE(w) << w.error().to_string();
    const std::span<const uint8_t> bufs[] = {bytes};
    ASSERT_TRUE(w->add_tensor("a", *d, bufs));
    ASSERT_TRUE(w->add_tensor("b", *d, bufs));
    ASSERT_TRUE(w->finish());
}

/// Truncates `path` to `size` from another process, as a user's other
/// program would.
void truncate_from_child(const std::string& path, uint64_t size) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::_exit(::truncate(path.c_str(), static_cast<off_t>(size)) == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

bool says_changed(const Error& e) {
    return e.message().find("file changed while mapped") != std::string::npos;
}

class FileChanges : public ::testing::Test {
protected:
    /// A mapped reader of a fresh model, then the file cut to `size` bytes
    /// (default: in the middle of "b"'s data; its descriptor stays).
    FileReader open_then_truncate(uint64_t size = 6 * kMiB) {
        write_model(path);
        auto r = FileReader::open(path);
        EXPECT_TRUE(r) << r.error().to_string();
        EXPECT_TRUE(r->mapped());
        truncate_from_child(path, size);
        return *r;
    }
    TempDir dir;
    std::string path = dir.file("model.hrry");
};

TEST_F(FileChanges, ReadingAVanishedPageReadsZerosAndIsReported) {
    const FileReader r = open_then_truncate();
    auto b = r.tensor("b").as<float>();  // its second half lies past the new end
    ASSERT_TRUE(b) << b.error().to_string();
    double sum = 0;
    for (float v : *b) {
        sum += v;  // would be SIGBUS (exit 135) without the guard
    }
    const uint64_t data = r.entry(*r.find("b")).data_offset;
    EXPECT_EQ(sum, static_cast<double>((6 * kMiB - data) / 4)) << "the values before the cut are 1, after it 0";
    auto s = r.check_unchanged();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
    EXPECT_TRUE(says_changed(s.error())) << s.error().to_string();
    EXPECT_NE(s.error().message().find("SIGBUS"), std::string::npos) << s.error().to_string();
    EXPECT_NE(s.error().message().find("it is 6291456 now"), std::string::npos) << s.error().to_string();
}

TEST_F(FileChanges, ADescriptorThatVanishedIsReportedAsTheChange) {
    const FileReader r = open_then_truncate(kMiB);  // "b"'s descriptor is gone too
    auto b = r.tensor("b");
    ASSERT_FALSE(b);
    EXPECT_TRUE(says_changed(b.error())) << b.error().to_string();
    EXPECT_NE(b.error().message().find("tensor 'b'"), std::string::npos) << b.error().to_string();
    // What `hurray verify` runs over the whole file says the same.
    auto all = r.check_all();
    ASSERT_FALSE(all);
    EXPECT_TRUE(says_changed(all.error())) << all.error().to_string();
}

TEST_F(FileChanges, MaterializeAndToFloat32ReportTheChange) {
    {
        const FileReader r = open_then_truncate();
        auto m = r.tensor("b").materialize();
        ASSERT_FALSE(m);
        EXPECT_TRUE(says_changed(m.error())) << m.error().to_string();
        EXPECT_NE(m.error().message().find("tensor 'b'"), std::string::npos) << m.error().to_string();
    }
    {
        const FileReader r = open_then_truncate();
        auto f = r.tensor("b").to_float32();
        ASSERT_FALSE(f);
        EXPECT_TRUE(says_changed(f.error())) << f.error().to_string();
    }
}

TEST_F(FileChanges, FileToStreamReportsTheChange) {
    const FileReader r = open_then_truncate();
    MemorySink sink;
    auto s = file_to_stream(r, sink);
    ASSERT_FALSE(s);
    EXPECT_TRUE(says_changed(s.error())) << s.error().to_string();
}

TEST_F(FileChanges, FileToStreamToADescriptorReportsTheChange) {
    // write(2) from a vanished page fails with EFAULT instead of SIGBUS.
    const FileReader r = open_then_truncate();
    const std::string out = dir.file("out.hrrys");
    const int fd = ::open(out.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    FdSink sink(fd, /*owns=*/true);
    auto s = file_to_stream(r, sink);
    ASSERT_FALSE(s);
    EXPECT_TRUE(says_changed(s.error())) << s.error().to_string();
}

TEST_F(FileChanges, ReplacedByRenameTheReaderIsUnaffected) {
    write_model(path, 1.0F);
    auto r = FileReader::open(path);
    ASSERT_TRUE(r) << r.error().to_string();
    write_model(path, 2.0F);  // FileWriter::create_file: a new file renamed over the old one
    auto b = r->tensor("b").as<float>();
    ASSERT_TRUE(b) << b.error().to_string();
    for (float v : *b) {
        ASSERT_EQ(v, 1.0F);
    }
    EXPECT_TRUE(r->check_unchanged());
    auto now = FileReader::open(path);
    ASSERT_TRUE(now);
    EXPECT_EQ((*now->tensor("b").as<float>())[0], 2.0F);
}

TEST_F(FileChanges, GrownInPlaceIsReported) {
    write_model(path);
    for (const bool mmap : {true, false}) {
        FileReadOptions o;
        o.use_mmap = mmap;
        auto r = FileReader::open(path, o);
        ASSERT_TRUE(r) << r.error().to_string();
        EXPECT_TRUE(r->check_unchanged());
        const uint64_t size = r->file_size();
        ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size + 4096)), 0);
        auto s = r->check_unchanged();
        ASSERT_FALSE(s);
        EXPECT_NE(s.error().message().find("file changed while"), std::string::npos) << s.error().to_string();
        EXPECT_NE(s.error().message().find("it is " + std::to_string(size + 4096) + " now"), std::string::npos)
            << s.error().to_string();
        ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0);
    }
}

TEST_F(FileChanges, WithoutMmapATruncatedFileIsAnErrorNotASignal) {
    write_model(path);
    FileReadOptions o;
    o.use_mmap = false;
    auto r = FileReader::open(path, o);
    ASSERT_TRUE(r);
    truncate_from_child(path, kMiB);
    auto b = r->tensor("b");
    ASSERT_FALSE(b);
    EXPECT_NE(b.error().message().find("shrank"), std::string::npos) << b.error().to_string();
}

/// In a child: maps `path` ourselves (not through the library), cuts it and
/// reads past the end: a SIGBUS that is not the library's.
[[noreturn]] void foreign_fault(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    void* p = ::mmap(nullptr, 8 * kMiB, PROT_READ, MAP_PRIVATE, fd, 0);
    if (fd < 0 || p == MAP_FAILED || ::truncate(path.c_str(), 0) != 0) {
        ::_exit(2);
    }
    volatile const uint8_t* bytes = static_cast<const uint8_t*>(p);
    const uint8_t v = bytes[5 * kMiB];  // SIGBUS
    ::_exit(v == 0 ? 3 : 4);             // not reached
}

/// The child's side of the chaining tests, run in a fresh process (this
/// binary re-executed with a filter): only then is the library's guard not
/// yet installed, so that it finds the program's handler and must chain to
/// it. HURRAY_FOREIGN_FAULT is "handler" or "default"; outside such a child
/// this test has nothing to do.

/// In a child whose address space is limited to what it uses now plus 8 MiB, so
/// that mapping the 32 MiB file fails: a mapped reader opens, the first access to
/// "small"'s data falls back to pread (mapped() turns false), and both that read and
/// a second one (kept, as every pread read is) give the values written. Returns
/// the child's exit code: 0 on success, the failed step otherwise.
int read_with_mapping_failing(const std::string& path) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid != 0) {
        int status = 0;
        if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
            return 100;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 101;
    }
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld", &pages) != 1) {
            pages = 0;
        }
        std::fclose(f);
    }
    if (pages <= 0) {
        ::_exit(10);
    }
    const auto used = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
    const rlimit limit{used + 8 * kMiB, used + 8 * kMiB};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
        ::_exit(11);
    }
    auto r = FileReader::open(path);
    if (!r) {
        ::_exit(12);
    }
    if (!r->mapped()) {
        ::_exit(13);  // open must not map: mapped() still says the data will come from a mapping
    }
    for (int pass = 0; pass < 2; ++pass) {
        auto small = r->tensor("small").as<float>();
        if (!small || small->size() != 16) {
            ::_exit(14);
        }
        for (size_t k = 0; k < small->size(); ++k) {
            if ((*small)[k] != static_cast<float>(k)) {
                ::_exit(15);
            }
        }
        if (r->mapped()) {
            ::_exit(16);  // the mapping failed: the reader says it reads with pread
        }
    }
    ::_exit(0);
}

TEST(FileChangesChild, TheMappingFailingOnFirstUseFallsBackToPread) {
    if (test::kAddressSanitizer) {
        GTEST_SKIP() << "AddressSanitizer's shadow memory rules out an address-space limit";
    }
    TempDir dir;
    const std::string path = dir.file("big.hrry");
    {
        auto big = make_dense(ElementType::kUInt8, {32 * kMiB});
        auto small = make_dense(ElementType::kFloat32, {16});
        ASSERT_TRUE(big && small);
        const std::vector<uint8_t> zeros(32 * kMiB);
        std::vector<float> values(16);
        for (size_t k = 0; k < values.size(); ++k) {
            values[k] = static_cast<float>(k);
        }
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w) << w.error().to_string();
        const std::span<const uint8_t> big_bufs[] = {zeros};
        const std::span<const uint8_t> small_bufs[] = {
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4)};
        ASSERT_TRUE(w->add_tensor("big", *big, big_bufs));
        ASSERT_TRUE(w->add_tensor("small", *small, small_bufs));
        ASSERT_TRUE(w->finish());
    }
    EXPECT_EQ(read_with_mapping_failing(path), 0);
}

TEST(FileChangesChild, ForeignFault) {
    const char* mode = std::getenv("HURRAY_FOREIGN_FAULT");
    const char* path = std::getenv("HURRAY_FOREIGN_FAULT_PATH");
    const char* other = std::getenv("HURRAY_FOREIGN_FAULT_OTHER");
    if (mode == nullptr || path == nullptr || other == nullptr) {
        return;  // not the child: FileChanges.AForeignSigbus* run it
    }
    if (std::string(mode) == "handler") {
        // The program's own handler, installed before the library's guard.
        struct sigaction sa {};
        sa.sa_handler = [](int) { ::_exit(42); };
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, nullptr);
    }
    auto r = FileReader::open(path);  // installs the guard over that handler
    if (!r) {
        ::_exit(2);
    }
    foreign_fault(other);
}

/// Runs FileChangesChild.ForeignFault in a fresh process of this binary;
/// returns its wait status.
int foreign_fault_in_child(const std::string& path, const std::string& other, const char* mode) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork failed";
        return -1;
    }
    if (pid == 0) {
        // Quiet: a sanitizer's report of the expected crash is not a finding.
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) {
            ::dup2(null, 1);
            ::dup2(null, 2);
        }
        ::setenv("HURRAY_FOREIGN_FAULT", mode, 1);
        ::setenv("HURRAY_FOREIGN_FAULT_PATH", path.c_str(), 1);
        ::setenv("HURRAY_FOREIGN_FAULT_OTHER", other.c_str(), 1);
        std::string self = "hurray_io_tests";
        std::string filter = "--gtest_filter=FileChangesChild.ForeignFault";
        char* argv[] = {self.data(), filter.data(), nullptr};
        ::execv("/proc/self/exe", argv);
        ::_exit(121);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return status;
}

TEST_F(FileChanges, AForeignSigbusReachesTheProgramsHandler) {
    write_model(path);
    const std::string other = dir.file("other.hrry");
    write_model(other);
    const int status = foreign_fault_in_child(path, other, "handler");
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 42) << "the program's SIGBUS handler was not called";
}

TEST_F(FileChanges, AForeignSigbusStillKillsWithoutAHandler) {
    write_model(path);
    const std::string other = dir.file("other.hrry");
    write_model(other);
    const int status = foreign_fault_in_child(path, other, "default");
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's own SIGBUS handler reports it and exits non-zero.
    ASSERT_TRUE(WIFSIGNALED(status) || WIFEXITED(status)) << status;
    if (WIFEXITED(status)) {
        for (const int not_a_crash : {0, 2, 3, 4, 42, 121}) {
            EXPECT_NE(WEXITSTATUS(status), not_a_crash) << "the child did not die of the fault";
        }
    }
#else
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGBUS);
#endif
}

}  // namespace
}  // namespace hurray
