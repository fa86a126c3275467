// SPDX-License-Identifier: Apache-2.0
// What listing a remote file costs, against nginx on 127.0.0.1 (started and
// stopped here): FileReader over HttpRangeSource fetches the header, index
// and KV in one request and every descriptor in a few multi-range requests,
// so that listing thousands of tensors with their types and shapes costs a
// handful of requests and about the bytes of the index and descriptors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "hurray/http/http_range_source.hpp"
#include "hurray/http/load_url.hpp"
#include "hurray/io/file_reader.hpp"
#include "http/test_servers.hpp"
#include "io/file_test_support.hpp"
#include "io/reader_fingerprint.hpp"

namespace hurray {
namespace {

using test::TempDir;

class RemoteListingTest : public ::testing::Test {
protected:
    static constexpr int kTensors = 5000;

    void SetUp() override {
        test::no_proxies();
        std::vector<test::TestTensor> many;
        for (int i = 0; i < kTensors; ++i) {
            many.push_back(test::dense("layer." + std::to_string(i) + ".weight", ElementType::kInt8, {4}));
        }
        KvMetadata kv;
        ASSERT_TRUE(kv.set("general.name", KvValue::string("many")).ok());
        test::BuildOptions o;
        o.after_data = test::Padding::kReference;  // the smallest layout: ~4 KiB per tensor
        file_ = test::build_file(many, &kv, o);
        std::filesystem::create_directories(dir_.path() / "www");
        static_cast<void>(dir_.write("www/many.hrry", file_.bytes));
        // Request header lines up to 1 MiB: room for thousands of ranges.
        const std::string why = nginx_.start(dir_.path() / "www", "large_client_header_buffers 4 1m;");
        if (!why.empty()) {
            GTEST_SKIP() << why;
        }
    }
    void TearDown() override { nginx_.stop(); }

    [[nodiscard]] uint64_t descriptor_bytes() const {
        uint64_t n = 0;
        for (const IndexEntry& e : file_.entries) {
            n += e.descriptor_length;
        }
        return n;
    }

    TempDir dir_;
    test::NginxServer nginx_;
    test::BuiltFile file_;
};

TEST_F(RemoteListingTest, EveryDescriptorInAHandfulOfRequests) {
    auto src = HttpRangeSource::open(nginx_.url("many.hrry"));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    auto r = FileReader::open(*src);  // kPeek: every descriptor fetched at open
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_TRUE(r->check_all().ok());  // every descriptor decoded: no more requests
    ASSERT_EQ(r->tensor_count(), static_cast<size_t>(kTensors));
    const uint64_t wanted = file_.trailer.index_length + descriptor_bytes();
    std::printf("listing %d tensors: %llu requests, %llu bytes received (index + descriptors: %llu bytes)\n",
                kTensors, static_cast<unsigned long long>((*src)->request_count()),
                static_cast<unsigned long long>((*src)->bytes_received()),
                static_cast<unsigned long long>(wanted));
    // The tail at open, header + index + KV, the descriptors (~100 KB of
    // Range header: two requests under the default 64 KiB budget).
    EXPECT_LE((*src)->request_count(), 4U);
    // On top: nginx's multipart framing (~110 bytes per range: boundary,
    // Content-Type, Content-Range) and the 64 KiB tail read at open.
    EXPECT_LT((*src)->bytes_received(), wanted + uint64_t{kTensors} * 128 + 64 * 1024);
    // Then a tensor costs its data only.
    const uint64_t before = (*src)->request_count();
    ASSERT_TRUE(r->tensor("layer.4321.weight").ok());
    EXPECT_EQ((*src)->request_count(), before + 1);
    // Everything equals the local file.
    EXPECT_EQ(test::fingerprint(FileReader::open(*src)),
              test::fingerprint(FileReader::open(dir_.file("www/many.hrry"))));
}

TEST_F(RemoteListingTest, NamesAndEntriesCostTwoRequests) {
    // kLazy: names, entries and KV cost the window at open, then the header
    // and index + KV in one multi-range request.
    auto src = HttpRangeSource::open(nginx_.url("many.hrry"));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = FileReader::open(*src, lazy);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->tensor_count(), static_cast<size_t>(kTensors));
    EXPECT_TRUE(r->find("layer.4999.weight").has_value());
    EXPECT_EQ(r->kv().get_string("general.name").value_or(""), "many");
    const uint64_t index_and_kv = file_.trailer.index_length + file_.trailer.kv_length;
    EXPECT_EQ((*src)->request_count(), 2U);
    EXPECT_LE((*src)->bytes_received(), 64U * 1024 + kFileHeaderSize + index_and_kv + 4096);
}

TEST_F(RemoteListingTest, LoadUrlGivesTheTensorFile) {
    auto f = load_url(nginx_.url("many.hrry"));
    ASSERT_TRUE(f.ok()) << f.error().to_string();
    EXPECT_EQ(f->size(), static_cast<size_t>(kTensors));
    EXPECT_EQ(f->kv().get_string("general.name").value_or(""), "many");
    auto t = f->tensor("layer.7.weight");
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    EXPECT_EQ(t->descriptor().shape.size(), 1U);
    auto missing = load_url(nginx_.url("missing.hrry"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("404"), std::string::npos) << missing.error().to_string();
}

}  // namespace
}  // namespace hurray
