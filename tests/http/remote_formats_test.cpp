// SPDX-License-Identifier: Apache-2.0
// SafeTensors, .npy, GGUF and HRRYFILE files served by nginx, read over HTTP through
// hurray::convert::open_source(HttpRangeSource): the same tensors as from the local
// file, in a few requests (tests/convert/range_source_formats_test.cpp runs the same
// over local range sources). Skips when nginx is missing.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#ifdef HURRAY_TEST_HAVE_CONVERT

#include "convert/convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/http/http_range_source.hpp"
#include "http/quick_options.hpp"
#include "http/test_servers.hpp"
#include "io/io_test_util.hpp"

namespace hurray {
namespace {

using convert::test::MemorySource;
using convert::test::MemTensor;

TEST(RemoteFormats, SafeTensorsNpyAndHrryFileReadOverHttpAsLocally) {
    test::no_proxies();
    const test::TempDir dir;
    const std::filesystem::path www = dir.path() / "www";
    std::filesystem::create_directories(www);
    const MemorySource two(convert::test::small_tensors());
    std::vector<MemTensor> first = convert::test::small_tensors();
    first.resize(1);
    const MemorySource one(std::move(first));
    struct Case {
        std::string name;
        convert::Format format;
        const MemorySource* source;
    };
    const std::vector<Case> cases = {{"m.safetensors", convert::Format::kSafeTensors, &two},
                                     {"w.npy", convert::Format::kNpy, &one},
                                     {"m.hrry", convert::Format::kHrryFile, &two}};
    for (const Case& c : cases) {
        convert::ConvertOptions options;
        options.to = c.format;
        ASSERT_TRUE(convert::write(*c.source, www / c.name, options).ok()) << c.name;
    }
    test::NginxServer nginx;
    const std::string why = nginx.start(www);
    if (!why.empty()) {
        GTEST_SKIP() << why;
    }
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        auto http = http::HttpRangeSource::open(nginx.url(c.name), test::quick());
        ASSERT_TRUE(http.ok()) << http.error().to_string();
        const std::shared_ptr<http::HttpRangeSource> source = *http;
        auto remote = convert::open_source(source);
        ASSERT_TRUE(remote.ok()) << remote.error().to_string();
        EXPECT_EQ((*remote)->format(), c.format);
        const uint64_t at_open = source->request_count();
        auto local = convert::open_source(www / c.name);
        ASSERT_TRUE(local.ok()) << local.error().to_string();
        const Status same = convert::compare_sources(**local, **remote);
        EXPECT_TRUE(same.ok()) << same.error().to_string();
        if (c.format == convert::Format::kSafeTensors) {
            // The tail at open, then the head, which holds the header's length and the
            // header; then one request per tensor read by the comparison.
            EXPECT_LE(at_open, 2U);
            EXPECT_LE(source->request_count() - at_open, (*remote)->tensor_count());
        }
    }
    // GGUF over HTTP: its header in growing ranges (one 1 MiB read here), the same tensors.
    ASSERT_TRUE(convert::write(two, www / "m.gguf", [] {
                    convert::ConvertOptions o;
                    o.to = convert::Format::kGguf;
                    return o;
                }()).ok());
    auto gguf = http::HttpRangeSource::open(nginx.url("m.gguf"), test::quick());
    ASSERT_TRUE(gguf.ok()) << gguf.error().to_string();
    const std::shared_ptr<http::HttpRangeSource> g = *gguf;
    auto remote = convert::open_source(g);
    ASSERT_TRUE(remote.ok()) << remote.error().to_string();
    EXPECT_LE(g->request_count(), 3U);  // the source's tail, the 64 KiB head, the rest of the header
    auto local = convert::open_source(www / "m.gguf");
    ASSERT_TRUE(local.ok());
    EXPECT_TRUE(convert::compare_sources(**local, **remote).ok());
    // .npz over HTTP: the zip structure by range reads, the members through libzip.
    ASSERT_TRUE(convert::write(two, www / "m.npz", [] {
                    convert::ConvertOptions o;
                    o.to = convert::Format::kNpz;
                    return o;
                }()).ok());
    auto npz = http::HttpRangeSource::open(nginx.url("m.npz"), test::quick());
    ASSERT_TRUE(npz.ok()) << npz.error().to_string();
    auto remote_npz = convert::open_source(*npz);
    ASSERT_TRUE(remote_npz.ok()) << remote_npz.error().to_string();
    auto local_npz = convert::open_source(www / "m.npz");
    ASSERT_TRUE(local_npz.ok());
    EXPECT_TRUE(convert::compare_sources(**local_npz, **remote_npz).ok());
}

}  // namespace
}  // namespace hurray

#endif  // HURRAY_TEST_HAVE_CONVERT
