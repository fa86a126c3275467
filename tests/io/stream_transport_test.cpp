// SPDX-License-Identifier: Apache-2.0
// The streaming format over real transports: a pipe between two processes
// (fork), a TCP loopback connection, a Unix-domain socket and a FILE*, with
// generated descriptors of every element type, layout and scheme, composites
// of every rule, empty tensors, zero tensors and many tensors back to back.
// And one large tensor (HURRAY_BIG_STREAM_GIB, generated on the fly) through
// a pipe into another process whose peak RSS must stay small.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io_test_util.hpp"
#include "channels.hpp"
#include "file_test_support.hpp"
#include "stream_test_support.hpp"

extern char** environ;  // NOLINT: POSIX

namespace hurray {
namespace {

using streamtest::Item;
using streamtest::Known;

using test::Channel;
using test::channel_name;
using test::open_channel;

/// Runs `write` in a forked child on the write end of a fresh channel and
/// `read` here on its read end; the child's exit status must be 0.
void across_processes(Channel c, const std::function<int(int)>& write, const std::function<void(int)>& read) {
    test::TempDir dir;
    const auto [rfd, wfd] = open_channel(c, dir.file("s"));
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(rfd);
        const int rc = write(wfd);
        ::close(wfd);
        ::_exit(rc);
    }
    ::close(wfd);
    read(rfd);
    ::close(rfd);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer child status " << status;
}

/// Writes `items` in the child (whole tensors, or pieces) and checks them here.
void round_trip(Channel c, const std::vector<Item>& items, const Known& known, size_t piece, int mode) {
    across_processes(
        c,
        [&](int fd) {
            FdSink sink(fd);
            const Status s = streamtest::write_items(sink, items, piece);
            if (!s) {
                std::fprintf(stderr, "writer: %s\n", s.error().to_string().c_str());
                return 1;
            }
            return 0;
        },
        [&](int fd) {
            FdSource src(fd);
            StreamReadOptions o = known.options();
            o.chunk_size = 4096;
            auto back = streamtest::read_items(src, o, mode);
            ASSERT_TRUE(back.ok()) << channel_name(c) << ": " << back.error().to_string();
            ASSERT_EQ(back->size(), items.size()) << channel_name(c);
            for (size_t i = 0; i < items.size(); ++i) {
                EXPECT_EQ((*back)[i], items[i]) << channel_name(c) << " tensor " << i;
            }
        });
}

TEST(StreamTransport, EveryChannelEveryKindOfTensor) {
    for (Channel c : {Channel::kPipe, Channel::kTcp, Channel::kUnix}) {
        for (uint64_t batch = 0; batch < 3; ++batch) {
            Known known;
            auto items = streamtest::generated_items(batch * 3001 + 11, 40, known, 256U << 10U);
            const auto comps = streamtest::composite_items();
            items.insert(items.begin() + static_cast<std::ptrdiff_t>(items.size() / 2), comps.begin(), comps.end());
            const auto empties = streamtest::empty_items();
            items.insert(items.end(), empties.begin(), empties.end());
            round_trip(c, items, known, batch == 1 ? 4099 : 0, batch == 2 ? -1 : 0);
        }
        round_trip(c, {}, {}, 0, 0);  // zero tensors: an empty stream
        round_trip(c, streamtest::many_small_items(2000), {}, 0, -1);
    }
}

TEST(StreamTransport, StdioFile) {
    Known known;
    auto items = streamtest::generated_items(424242, 20, known);
    const auto comps = streamtest::composite_items();
    items.insert(items.end(), comps.begin(), comps.end());
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    StdioSink sink(f);
    ASSERT_TRUE(streamtest::write_items(sink, items, 100).ok());
    std::rewind(f);
    StdioSource src(f);
    auto back = streamtest::read_items(src, known.options(), -1);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, items);
    std::fclose(f);
}

TEST(StreamTransport, SkippingARegularFileSeeks) {
    Item big;
    big.desc = *make_dense(ElementType::kUInt8, {1U << 20U});
    big.buffers = {std::vector<uint8_t>(1U << 20U, 9)};
    Item small;
    small.desc = *make_dense(ElementType::kUInt8, {3});
    small.buffers = {{1, 2, 3}};
    test::TempDir dir;
    const std::string path = dir.file("s.bin");
    const int wfd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ASSERT_GE(wfd, 0);
    {
        FdSink sink(wfd, true);
        ASSERT_TRUE(streamtest::write_items(sink, {big, small}).ok());
    }
    FdSource src(::open(path.c_str(), O_RDONLY), true);
    StreamReader r(src);
    ASSERT_NE(*r.next(), nullptr);
    auto t = r.next();  // skips 1 MiB by seeking
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    ASSERT_NE(*t, nullptr);
    auto b = r.read_tensor();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->at(0).size(), 3U);
    EXPECT_EQ(*r.next(), nullptr);
}

// --- One large tensor through a pipe into another process ---------------------

/// Word `i` of the large tensor.
uint64_t big_word(uint64_t i) {
    uint64_t z = i + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

/// Running hash over little-endian 64-bit words (bytes.size() % 8 == 0).
uint64_t hash_words(uint64_t h, std::span<const uint8_t> bytes) {
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        uint64_t w = 0;
        std::memcpy(&w, bytes.data() + i, 8);
        h = (h ^ w) * 0x100000001B3ULL;
        h ^= h >> 29U;
    }
    return h;
}

constexpr bool kSanitized = test::kAddressSanitizer;

#ifdef NDEBUG
constexpr double kDefaultBigGiB = 3.0;
#else
constexpr double kDefaultBigGiB = 0.25;  // Debug / sanitizer builds: keep the suite fast
#endif

/// Peak resident set of this process image in KiB (VmHWM), or -1.
long long peak_rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (f == nullptr) {
        return -1;
    }
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1) {
            break;
        }
    }
    std::fclose(f);
    return kib;
}

// The reading side, run as a fresh process image: reads the stream from
// standard input and reports "<status> <hash> <bytes> <peak KiB> <ru_maxrss
// KiB>" on descriptor 3. The peak is VmHWM, the high-water mark of this
// image's memory: Linux carries getrusage's ru_maxrss over execve from the
// image replaced (here a copy of the test process, large after the other
// tests), so ru_maxrss measures the parent as much as the reader. It is
// reported too, for information. Returns the exit status of the child.
int big_child_reader() {
    FdSource in(STDIN_FILENO);
    StreamReader r(in);
    uint64_t h = 0xCBF29CE484222325ULL;
    uint64_t total = 0;
    std::string status = "ok";
    while (true) {
        auto t = r.next();
        if (!t) {
            status = t.error().to_string();
            break;
        }
        if (*t == nullptr) {
            break;
        }
        while (true) {
            auto c = r.read_chunk();
            if (!c) {
                status = c.error().to_string();
                break;
            }
            if (c->bytes.empty()) {
                break;
            }
            h = hash_words(h, c->bytes);
            total += c->bytes.size();
        }
    }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const std::string report = status + " " + std::to_string(h) + " " + std::to_string(total) + " " +
                               std::to_string(peak_rss_kib()) + " " + std::to_string(ru.ru_maxrss) + "\n";
    return ::write(3, report.data(), report.size()) == static_cast<ssize_t>(report.size()) ? 0 : 1;
}

// The child of StreamTransport.SeveralGiBThroughAPipe is this binary again,
// started with HURRAY_STREAM_BIG_CHILD set: this environment's SetUp, which
// GoogleTest runs before the first test, runs the reader and exits. So the
// reader is no test of its own (nothing to skip in a normal run).
class BigChildEnvironment : public ::testing::Environment {
public:
    void SetUp() override {
        if (std::getenv("HURRAY_STREAM_BIG_CHILD") != nullptr) {
            std::fflush(stdout);
            std::_Exit(big_child_reader());
        }
    }
};
[[maybe_unused]] ::testing::Environment* const kBigChildEnvironment =
    ::testing::AddGlobalTestEnvironment(new BigChildEnvironment);  // gtest owns it

TEST(StreamTransport, SeveralGiBThroughAPipe) {
    double gib = kDefaultBigGiB;
    if (const char* env = std::getenv("HURRAY_BIG_STREAM_GIB"); env != nullptr && *env != 0) {
        gib = std::strtod(env, nullptr);
    }
    constexpr uint64_t kPiece = uint64_t{1} << 20U;
    const uint64_t size = static_cast<uint64_t>(gib * static_cast<double>(uint64_t{1} << 30U)) / kPiece * kPiece;
    ASSERT_GT(size, 0U);

    int data[2];
    int report[2];
    ASSERT_EQ(::pipe(data), 0);
    ASSERT_EQ(::pipe(report), 0);
    (void)::fcntl(data[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; best effort

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, data[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, report[1], 3);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, data[1]);
    posix_spawn_file_actions_addclose(&fa, report[0]);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
        env_strings.emplace_back(*e);
    }
    env_strings.emplace_back("HURRAY_STREAM_BIG_CHILD=1");
    std::vector<char*> envp;
    for (auto& s : env_strings) {
        envp.push_back(s.data());
    }
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe";
    char* argv[] = {exe.data(), nullptr};  // HURRAY_STREAM_BIG_CHILD selects big_child_reader()
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(data[0]);
    ::close(report[1]);

    uint64_t h = 0xCBF29CE484222325ULL;
    {
        FdSink sink(data[1], true);
        StreamWriter w(sink);
        const TensorDescriptor d = *make_dense(ElementType::kUInt8, {size});
        ASSERT_TRUE(w.begin_tensor(d).ok());
        std::vector<uint8_t> piece(kPiece);
        for (uint64_t pos = 0; pos < size; pos += kPiece) {
            for (uint64_t i = 0; i < kPiece / 8; ++i) {
                const uint64_t word = big_word((pos / 8) + i);
                std::memcpy(piece.data() + i * 8, &word, 8);
            }
            h = hash_words(h, piece);
            const Status s = w.write_data(piece);
            ASSERT_TRUE(s.ok()) << s.error().to_string();
        }
        ASSERT_TRUE(w.end_tensor().ok());
        ASSERT_TRUE(w.finish().ok());
    }  // closes the pipe: the child sees the clean end

    std::string got;
    char buf[256];
    while (true) {
        const ssize_t n = ::read(report[0], buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        got.append(buf, static_cast<size_t>(n));
    }
    ::close(report[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader status " << status << ": " << got;

    char word[64] = {0};
    unsigned long long child_hash = 0;
    unsigned long long child_bytes = 0;
    long long maxrss_kib = 0;
    long long ru_maxrss_kib = 0;
    ASSERT_EQ(std::sscanf(got.c_str(), "%63s %llu %llu %lld %lld", word, &child_hash, &child_bytes, &maxrss_kib,
                          &ru_maxrss_kib),
              5)
        << got;
    ASSERT_GT(maxrss_kib, 0) << got;
    EXPECT_STREQ(word, "ok") << got;
    EXPECT_EQ(child_bytes, size);
    EXPECT_EQ(child_hash, h);
    const long long limit_kib = kSanitized ? 256LL * 1024 : 64LL * 1024;
    EXPECT_LT(maxrss_kib, limit_kib) << "reader peak RSS " << maxrss_kib << " KiB";
    std::printf("streamed %.2f GiB; reader peak RSS %lld KiB (ru_maxrss %lld KiB)\n",
                static_cast<double>(size) / (1U << 30U), maxrss_kib, ru_maxrss_kib);
}

}  // namespace
}  // namespace hurray
