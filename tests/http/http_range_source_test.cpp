// SPDX-License-Identifier: Apache-2.0
// HttpRangeSource against real servers on 127.0.0.1, started and stopped by
// the tests: nginx (a generated configuration in a temporary directory,
// serving another) for FileReader over HTTP versus the same file opened
// locally, and tests/http/fault_server.py for every misbehaviour a server
// can show (ignored ranges, truncated and long bodies, wrong Content-Range,
// 503s, a file replaced mid-read, stalls, redirects). A server that cannot
// start skips its tests, saying why.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hurray/http/http_range_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "http/quick_options.hpp"
#include "http/test_servers.hpp"
#include "io/file_test_support.hpp"
#include "io/reader_fingerprint.hpp"

namespace hurray {
namespace {

using test::Bytes;
using test::fingerprint;
using test::TempDir;
using test::TestTensor;
using test::Child;
using test::free_port;
using test::no_proxies;

using namespace std::chrono_literals;

/// Test files: small and nested ones, and one larger than the tail window.
std::vector<std::pair<std::string, Bytes>> test_files() {
    KvMetadata kv;
    EXPECT_TRUE(kv.set("blob", KvValue::string(std::string(100 * 1024, 'x'))).ok());
    EXPECT_TRUE(kv.set("n", KvValue::int64(7)).ok());
    Bytes big = test::build_file({test::dense("big", ElementType::kFloat32, {256, 256}),
                                  test::dense("s1", ElementType::kInt8, {5})},
                                 &kv)
                    .bytes;
    return {{"small.hrry", test::small_file().bytes},
            {"nested.hrry", test::build_file(test::nested_composites()).bytes},
            {"big.hrry", std::move(big)}};
}

using test::quick;

// ---------------------------------------------------------------------------
// nginx
// ---------------------------------------------------------------------------

class NginxTest : public ::testing::Test {
protected:
    void SetUp() override {
        no_proxies();
        std::filesystem::create_directories(dir_.path() / "www");
        for (const auto& [name, bytes] : test_files()) {
            static_cast<void>(dir_.write("www/" + name, bytes));
        }
        const std::string why = nginx_.start(dir_.path() / "www");
        if (!why.empty()) {
            GTEST_SKIP() << why;
        }
        port_ = nginx_.port();
    }
    void TearDown() override { nginx_.stop(); }

    [[nodiscard]] std::string url(const std::string& name) const { return nginx_.url(name); }

    TempDir dir_;
    test::NginxServer nginx_;
    int port_ = 0;
};

TEST_F(NginxTest, FileReaderOverHttpMatchesTheLocalFile) {
    for (const auto& [name, bytes] : test_files()) {
        for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
            FileReadOptions o;
            o.descriptors = check;
            auto src = HttpRangeSource::open(url(name), quick());
            ASSERT_TRUE(src.ok()) << src.error().to_string();
            EXPECT_EQ((*src)->size(), bytes.size());
            EXPECT_FALSE((*src)->identity().empty());
            const std::string local = fingerprint(FileReader::open(dir_.file("www/" + name), o));
            EXPECT_EQ(fingerprint(FileReader::open(*src, o)), local) << name;
        }
    }
}

TEST_F(NginxTest, RequestCounts) {
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    {
        // A small file with a 64 KiB window at open: the request at open
        // brings all of it.
        HttpOptions http = quick();
        http.tail_bytes = uint64_t{64} * 1024;
        FileReadOptions window;
        window.range_tail_bytes = http.tail_bytes;
        auto src = HttpRangeSource::open(url("small.hrry"), http);
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        auto r = FileReader::open(*src, window);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_TRUE(r->check_all().ok());
        EXPECT_TRUE(r->tensor("a").ok());
        EXPECT_EQ((*src)->request_count(), 1U);
    }
    {
        // By default (exact): the trailer at open, the header and index + KV
        // in one multi-range request, the descriptors (no table) in one more,
        // and the tensor's data.
        auto src = HttpRangeSource::open(url("small.hrry"), quick());
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        auto r = FileReader::open(*src, {});
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ((*src)->request_count(), 3U);
        EXPECT_TRUE(r->check_all().ok());
        EXPECT_TRUE(r->tensor("a").ok());
        EXPECT_EQ((*src)->request_count(), 4U);
    }
    {
        // Larger: the tail at open, then the header and index + KV in one
        // multi-range request; then one tensor costs one request for its
        // descriptor and its data.
        auto src = HttpRangeSource::open(url("big.hrry"), quick());
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        auto r = FileReader::open(*src, lazy);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ((*src)->request_count(), 2U);
        EXPECT_EQ(r->kv().get_int64("n").value(), 7);
        ASSERT_TRUE(r->tensor("big").ok());
        EXPECT_EQ((*src)->request_count(), 3U);  // descriptor and data in one request
    }
}

TEST_F(NginxTest, ReadDataLandsInTheCallersBuffer) {
    // A tensor's data straight into the caller's memory: one request, nothing
    // kept (a second read is a second request), the bytes of the local file.
    auto src = HttpRangeSource::open(url("big.hrry"), quick());
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = FileReader::open(*src, lazy);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    auto local = FileReader::open(dir_.file("www/big.hrry"));
    ASSERT_TRUE(local.ok());
    const size_t i = *r->find("big");
    std::vector<uint8_t> mine(r->entry(i).data_length);
    const uint64_t before = (*src)->request_count();
    ASSERT_TRUE(r->read_data(i, 0, mine).ok());
    EXPECT_EQ((*src)->request_count(), before + 1);
    const auto want = local->tensor(i)->buffers()[0].span();
    EXPECT_TRUE(std::equal(want.begin(), want.end(), mine.begin()));
    ASSERT_TRUE(r->read_data(i, 100, std::span<uint8_t>(mine).first(10)).ok());
    EXPECT_EQ((*src)->request_count(), before + 2);
}

TEST_F(NginxTest, AFileReplacedOnTheServerIsAnError) {
    auto src = HttpRangeSource::open(url("big.hrry"), quick());
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = FileReader::open(*src, lazy);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    // Replaced by rename, with other content and another modification time.
    Bytes other = test_files()[2].second;
    other[other.size() / 2] ^= 1;
    static_cast<void>(dir_.write("www/new.hrry", other));
    std::filesystem::last_write_time(dir_.path() / "www/new.hrry",
                                     std::filesystem::last_write_time(dir_.path() / "www/big.hrry") + 10s);
    std::filesystem::rename(dir_.path() / "www/new.hrry", dir_.path() / "www/big.hrry");
    auto t = r->tensor("big");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message().find("changed on the server"), std::string::npos) << t.error().to_string();
    EXPECT_NE(t.error().message().find(url("big.hrry")), std::string::npos) << t.error().to_string();
}

TEST_F(NginxTest, ConcurrentReadersShareOneSource) {
    // 8 threads, one FileReader over one HttpRangeSource (pooled connections);
    // the file is larger than the window read at open, so they send requests.
    auto src = HttpRangeSource::open(url("big.hrry"), quick());
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = FileReader::open(*src, lazy);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    auto local = FileReader::open(dir_.file("www/big.hrry"));
    ASSERT_TRUE(local.ok());
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (size_t k = 0; k < r->tensor_count(); ++k) {
                const size_t i = (k + static_cast<size_t>(t)) % r->tensor_count();
                auto a = r->tensor(i);
                auto b = local->tensor(i);
                if (!a.ok() || !b.ok() || a->buffers().size() != b->buffers().size()) {
                    ++bad;
                    continue;
                }
                for (size_t j = 0; j < a->buffers().size(); ++j) {
                    const auto x = a->buffers()[j].span();
                    const auto y = b->buffers()[j].span();
                    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) {
                        ++bad;
                    }
                }
            }
        });
    }
    for (std::thread& th : threads) {
        th.join();
    }
    EXPECT_EQ(bad.load(), 0);
}

TEST_F(NginxTest, MissingFileAndBadUrls) {
    auto missing = HttpRangeSource::open(url("missing.hrry"), quick());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("HTTP status 404"), std::string::npos) << missing.error().to_string();
    EXPECT_FALSE(HttpRangeSource::open("ftp://127.0.0.1/x", quick()).ok());
    HttpOptions bad = quick();
    bad.headers.push_back("X-Evil: a\r\nInjected: b");
    EXPECT_FALSE(HttpRangeSource::open(url("small.hrry"), bad).ok());
    // Credentials never appear in messages.
    auto creds = HttpRangeSource::open("http://user:secret@127.0.0.1:" + std::to_string(port_) + "/missing?sig=s3cr3t",
                                       quick());
    ASSERT_FALSE(creds.ok());
    EXPECT_EQ(creds.error().message().find("secret"), std::string::npos) << creds.error().to_string();
    EXPECT_EQ(creds.error().message().find("s3cr3t"), std::string::npos) << creds.error().to_string();
}

TEST(HttpRangeSourceTest, DisplayUrlDropsCredentialsAndQuery) {
    EXPECT_EQ(HttpRangeSource::display_url("https://u:p@host:8/a/b?X-Amz-Signature=1#f"), "https://host:8/a/b");
    EXPECT_EQ(HttpRangeSource::display_url("http://host/a@b"), "http://host/a@b");
}

TEST(HttpRangeSourceTest, NothingListeningIsAnErrorAfterRetries) {
    no_proxies();
    HttpOptions o = quick();
    o.max_retries = 1;
    auto src = HttpRangeSource::open("http://127.0.0.1:" + std::to_string(free_port()) + "/f", o);
    ASSERT_FALSE(src.ok());
    EXPECT_EQ(src.error().code(), ErrorCode::kIoError);
    EXPECT_NE(src.error().message().find("after 2 attempts"), std::string::npos) << src.error().to_string();
}

// ---------------------------------------------------------------------------
// The fault-injecting server
// ---------------------------------------------------------------------------

class FaultServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        no_proxies();
        files_ = test_files();
        for (const auto& [name, bytes] : files_) {
            static_cast<void>(dir_.write(name, bytes));
        }
        std::string why;
        port_ = test::start_fault_server(server_, HURRAY_FAULT_SERVER, dir_.path().string(), why);
        ASSERT_GE(port_, 0) << "/usr/bin/python3 could not be spawned";
        if (port_ == 0) {
            GTEST_SKIP() << why;
        }
    }
    void TearDown() override { server_.stop(); }

    [[nodiscard]] std::string url(const std::string& mode, const std::string& name = "big.hrry") const {
        return "http://127.0.0.1:" + std::to_string(port_) + "/" + mode + "/" + name;
    }
    [[nodiscard]] const Bytes& big() const { return files_[2].second; }

    /// Opens `mode`'s big file with lazy descriptors and reads tensor "big".
    Result<std::vector<uint8_t>> read_big(const std::string& mode, HttpOptions o = quick()) {
        HURRAY_ASSIGN_OR_RETURN(std::shared_ptr<HttpRangeSource> src, HttpRangeSource::open(url(mode), o));
        FileReadOptions lazy;
        lazy.descriptors = DescriptorCheck::kLazy;
        HURRAY_ASSIGN_OR_RETURN(FileReader r, FileReader::open(src, lazy));
        HURRAY_ASSIGN_OR_RETURN(FileTensor t, r.tensor("big"));
        const auto s = t.buffers()[0].span();
        return std::vector<uint8_t>(s.begin(), s.end());
    }
    [[nodiscard]] std::vector<uint8_t> expected_big() const {
        const IndexEntry e = test::build_file({test::dense("big", ElementType::kFloat32, {256, 256})}).entries[0];
        return {big().begin() + static_cast<std::ptrdiff_t>(e.data_offset),
                big().begin() + static_cast<std::ptrdiff_t>(e.data_offset + e.data_length)};
    }

    TempDir dir_;
    Child server_;
    int port_ = 0;
    std::vector<std::pair<std::string, Bytes>> files_;
};

::testing::AssertionResult fails_with(const Result<std::vector<uint8_t>>& r, const std::string& fragment) {
    if (r.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected an error with \"" << fragment << "\"";
    }
    if (r.error().message().find(fragment) == std::string::npos) {
        return ::testing::AssertionFailure() << "\"" << r.error().to_string() << "\" lacks \"" << fragment << "\"";
    }
    return ::testing::AssertionSuccess() << r.error().to_string();
}

TEST_F(FaultServerTest, CorrectServerGivesTheBytes) {
    auto got = read_big("ok");
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ(*got, expected_big());
}

TEST_F(FaultServerTest, IgnoredRangeIsRefused) {
    EXPECT_TRUE(fails_with(read_big("ignore-range"), "ignored the Range request (200 OK"));
}

TEST_F(FaultServerTest, TruncatedBodyIsAnErrorAfterRetries) {
    EXPECT_TRUE(fails_with(read_big("truncate"), "after 3 attempts"));
}

TEST_F(FaultServerTest, WrongOrMissingContentRangeIsRefused) {
    EXPECT_TRUE(fails_with(read_big("wrong-range"), "is not the last"));  // already at open
    EXPECT_TRUE(fails_with(read_big("wrong-range-later"), "does not match bytes"));
    EXPECT_TRUE(fails_with(read_big("no-range"), "without a valid Content-Range"));
}

TEST_F(FaultServerTest, LongBodyAndEncodedBodyAreRefused) {
    EXPECT_TRUE(fails_with(read_big("long-body"), "longer than the Content-Range"));
    EXPECT_TRUE(fails_with(read_big("gzip"), "Content-Encoding: gzip"));
}

TEST_F(FaultServerTest, Two503sThenSuccess) {
    auto got = read_big("flaky");
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ(*got, expected_big());
    HttpOptions once = quick();
    once.max_retries = 1;
    auto src = HttpRangeSource::open(url("flaky", "small.hrry"), once);
    ASSERT_FALSE(src.ok());
    EXPECT_NE(src.error().message().find("HTTP status 503"), std::string::npos) << src.error().to_string();
}

TEST_F(FaultServerTest, ETagChangeMidReadIsAnError) {
    EXPECT_TRUE(fails_with(read_big("etag-change"), "changed on the server since it was opened (412"));
    EXPECT_TRUE(fails_with(read_big("etag-change-no-if-match"), "changed on the server since it was opened (identity"));
}

TEST_F(FaultServerTest, StallPastTheIdleTimeoutIsAnErrorNotAHang) {
    HttpOptions o = quick();
    o.max_retries = 1;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(fails_with(read_big("stall", o), "after 2 attempts"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
}

TEST_F(FaultServerTest, RedirectIsFollowed) {
    auto got = read_big("redirect");
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ(*got, expected_big());
}

TEST_F(FaultServerTest, TheIdleTimeoutIsKeptToTheSecondAndNamed) {
    HttpOptions o = quick();
    o.max_retries = 0;
    o.idle_timeout = 2s;
    const auto start = std::chrono::steady_clock::now();
    const auto got = read_big("stall", o);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(fails_with(got, "no byte received for 2 s (HttpOptions::idle_timeout)"));
    // Checked about once a second: between 2 and 4 s (libcurl's low-speed
    // check it replaces ran ~6 s late once bytes had flowed).
    EXPECT_GE(took, 2s);
    EXPECT_LT(took, 5s);
}

TEST_F(FaultServerTest, ATrickleEndsAtTheDeadline) {
    // 16 bytes a second never trips the idle timeout; the deadline ends it,
    // without a retry that would pass it.
    HttpOptions o = quick();
    o.idle_timeout = 3s;
    o.deadline = 2s;
    o.tail_bytes = 4096;  // the open's request trickles too
    const auto start = std::chrono::steady_clock::now();
    auto src = HttpRangeSource::open(url("trickle"), o);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(src.ok());
    EXPECT_NE(src.error().message().find("the deadline of 2 s passed (HttpOptions::deadline)"), std::string::npos)
        << src.error().message();
    EXPECT_EQ(src.error().message().find("attempts"), std::string::npos) << src.error().message();
    EXPECT_LT(took, 5s);
}

TEST_F(FaultServerTest, TheProgressCallbackSeesTheBytesAndCanCancel) {
    HttpOptions o = quick();
    uint64_t seen = 0;
    o.progress = [&seen](uint64_t bytes) {
        seen = std::max(seen, bytes);
        return true;
    };
    auto got = read_big("ok", o);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_GE(seen, got->size());  // the data, and the trailer and sections before it
    // Cancelled: kCancelled, at once, not retried.
    o.progress = [](uint64_t) { return false; };
    o.max_retries = 5;
    o.retry_backoff = 1s;
    const auto start = std::chrono::steady_clock::now();
    auto cancelled = HttpRangeSource::open(url("ok"), o);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code(), ErrorCode::kCancelled) << cancelled.error().to_string();
    EXPECT_NE(cancelled.error().message().find("cancelled by the progress callback"), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(FaultServerTest, ARedirectLoopAndAnOversizedHeaderFailAtOnceSayingSo) {
    HttpOptions o = quick();
    o.max_retries = 3;
    o.retry_backoff = 1s;  // a retry would show in the time
    const auto start = std::chrono::steady_clock::now();
    auto loop = HttpRangeSource::open(url("redirect-loop"), o);
    ASSERT_FALSE(loop.ok());
    EXPECT_NE(loop.error().message().find("more than 5 redirects (HttpOptions::max_redirects): a redirect loop?"),
              std::string::npos)
        << loop.error().message();
    auto huge = HttpRangeSource::open(url("huge-header"), o);
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().message().find("headers are larger than libcurl accepts"), std::string::npos)
        << huge.error().message();
    EXPECT_EQ(huge.error().message().find("attempts"), std::string::npos) << huge.error().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);  // no retry
}

}  // namespace
}  // namespace hurray
