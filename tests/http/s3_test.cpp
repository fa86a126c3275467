// SPDX-License-Identifier: Apache-2.0
// S3 and S3-compatible stores: s3:// URLs (hurray/http/s3.hpp), AWS Signature
// Version 4 (HttpOptions::aws), and servers that answer ranges as s3rver does
// (a suffix range with bytes 0-N, a multi-range request with the whole file
// as one range). Against the fault server's "sigv4" mode, which verifies
// signatures as AWS documents them (checked at its start against AWS's
// published example), and its "s3-quirks" mode; then against s3rver itself
// (npm; scripts/bootstrap.sh installs it into build/test-servers), started on
// 127.0.0.1 by the test. A missing server skips, saying which.

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/http/http_range_source.hpp"
#include "hurray/http/s3.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "http/quick_options.hpp"
#include "http/test_servers.hpp"
#include "io/io_test_util.hpp"
#include "io/reader_fingerprint.hpp"

#ifdef HURRAY_TEST_HAVE_CONVERT
#include "convert/convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/tensor_source.hpp"
#endif

namespace hurray {
namespace {

using http::AwsCredentials;
using http::S3Addressing;
using http::S3Location;
using http::s3_http_url;

constexpr const char* kKey = "AKIDHURRAYTEST";  // tests/http/fault_server.py SIGV4_KEYS
constexpr const char* kSecret = "hurray+test/secret/K7MDENG";
constexpr const char* kTempKey = "ASIAHURRAYTEST";
constexpr const char* kTempSecret = "hurray+temporary/secret";
constexpr const char* kToken = "hurray-session-token-1";
constexpr const char* kRegion = "eu-west-3";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string numbered(const char* prefix, size_t i) {
    std::string s(prefix);
    s.append(std::to_string(i));  // appended: GCC 12 -O3 warns falsely on "a" + std::to_string(...)
    return s;
}

/// An HRRYFILE of `count` float32 tensors of `elements` each (tensor k holds
/// k + i / 7 at i), with or without a descriptor table.
void write_file(const std::filesystem::path& path, size_t count, uint64_t elements, bool table) {
    FileWriterOptions o;
    o.descriptor_table = table;
    auto w = FileWriter::create_file(path, o, Durability::kAtomicOnly);
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    for (size_t k = 0; k < count; ++k) {
        auto d = make_dense(ElementType::kFloat32, {elements});
        ASSERT_TRUE(d.ok());
        std::vector<float> v(static_cast<size_t>(elements));
        for (size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<float>(k) + static_cast<float>(i % 1000) / 7.0F;
        }
        const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float));
        std::span<const uint8_t> bufs[] = {bytes};
        ASSERT_TRUE(w->add_tensor(numbered("t.", k), *d, bufs).ok());
    }
    ASSERT_TRUE(w->finish().ok());
}

/// Sets (or, with nullptr, unsets) environment variables for one scope.
class ScopedEnv {
public:
    ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const auto& [name, value] : vars) {
            const char* old = std::getenv(name);
            saved_.emplace_back(name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
            if (value == nullptr) {
                ::unsetenv(name);
            } else {
                ::setenv(name, value, 1);
            }
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv() {
        for (const auto& [name, value] : saved_) {
            if (value) {
                ::setenv(name.c_str(), value->c_str(), 1);
            } else {
                ::unsetenv(name.c_str());
            }
        }
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

/// Every AWS variable the library reads, unset.
ScopedEnv clean_aws_env() {
    return ScopedEnv({{"AWS_ACCESS_KEY_ID", nullptr},
                      {"AWS_SECRET_ACCESS_KEY", nullptr},
                      {"AWS_SESSION_TOKEN", nullptr},
                      {"AWS_REGION", nullptr},
                      {"AWS_DEFAULT_REGION", nullptr},
                      {"AWS_ENDPOINT_URL", nullptr},
                      {"AWS_ENDPOINT_URL_S3", nullptr},
                      {"HURRAY_S3_ADDRESSING", nullptr}});
}

TEST(S3Url, AwsIsVirtualHostAndCustomEndpointsArePathStyle) {
    S3Location at;
    EXPECT_EQ(*s3_http_url("s3://models/llama/q4.hrry", at), "https://models.s3.us-east-1.amazonaws.com/llama/q4.hrry");
    at.region = "eu-west-3";
    EXPECT_EQ(*s3_http_url("S3://models/a.hrry", at), "https://models.s3.eu-west-3.amazonaws.com/a.hrry");
    at.addressing = S3Addressing::kPath;
    EXPECT_EQ(*s3_http_url("s3://models/a.hrry", at), "https://s3.eu-west-3.amazonaws.com/models/a.hrry");
    at = S3Location{};
    at.endpoint = "http://127.0.0.1:9000/";
    EXPECT_EQ(*s3_http_url("s3://models/a/b.hrry", at), "http://127.0.0.1:9000/models/a/b.hrry");
    at.endpoint = "https://store.example.com/s3";
    EXPECT_EQ(*s3_http_url("s3://models/a.hrry", at), "https://store.example.com/s3/models/a.hrry");
    at.addressing = S3Addressing::kVirtualHost;
    EXPECT_EQ(*s3_http_url("s3://models/a.hrry", at), "https://models.store.example.com/s3/a.hrry");
}

TEST(S3Url, KeysArePercentEncodedAsS3SignsThem) {
    S3Location at;
    at.endpoint = "http://h:1";
    EXPECT_EQ(*s3_http_url("s3://bkt/dir/a b+c=d~e_f.g-h%.hrry", at), "http://h:1/bkt/dir/a%20b%2Bc%3Dd~e_f.g-h%25.hrry");
    EXPECT_EQ(*s3_http_url("s3://bkt/\xc3\xa9t\xc3\xa9", at), "http://h:1/bkt/%C3%A9t%C3%A9");
}

TEST(S3Url, BadUrlsAreRefusedByName) {
    S3Location at;
    const std::pair<const char*, const char*> cases[] = {
        {"https://b/k", "not an s3:// URL"},
        {"s3://bucket", "no object key"},
        {"s3://bucket/", "no object key"},
        {"s3://ab/k", "bucket name"},
        {"s3://Bucket/k", "bucket name"},
        {"s3://bucket-/k", "bucket name"},
        {"s3:///k", "bucket name"},
        {"s3://bucket/k?x=1", "no query string"},
        {"s3://bucket/k#f", "no query string"},
        {"s3://my.bucket.name/k", ""},  // path-style on AWS: accepted
    };
    for (const auto& [url, why] : cases) {
        auto r = s3_http_url(url, at);
        if (std::string(why).empty()) {
            ASSERT_TRUE(r.ok()) << url;
            EXPECT_EQ(*r, "https://s3.us-east-1.amazonaws.com/my.bucket.name/k");
            continue;
        }
        ASSERT_FALSE(r.ok()) << url;
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
        EXPECT_TRUE(contains(r.error().message(), why)) << url << ": " << r.error().message();
    }
    at.addressing = S3Addressing::kVirtualHost;
    EXPECT_FALSE(s3_http_url("s3://my.bucket/k", at).ok());  // a dotted host breaks the certificate
    at.endpoint = "ftp://h";
    EXPECT_FALSE(s3_http_url("s3://bucket/k", at).ok());
    at.endpoint = "http://";
    EXPECT_FALSE(s3_http_url("s3://bucket/k", at).ok());
    at = S3Location{};
    at.region = "eu/west";
    EXPECT_FALSE(s3_http_url("s3://bucket/k", at).ok());
}

TEST(S3Environment, CredentialsAndLocationComeFromTheStandardVariables) {
    const ScopedEnv clean = clean_aws_env();
    EXPECT_FALSE(AwsCredentials::from_environment().has_value());
    {
        const ScopedEnv only_key({{"AWS_ACCESS_KEY_ID", "AK"}});
        EXPECT_FALSE(AwsCredentials::from_environment().has_value());  // no secret: unsigned
    }
    const ScopedEnv set({{"AWS_ACCESS_KEY_ID", "AK"},
                         {"AWS_SECRET_ACCESS_KEY", "SK"},
                         {"AWS_SESSION_TOKEN", "TK"},
                         {"AWS_DEFAULT_REGION", "ap-south-1"},
                         {"AWS_ENDPOINT_URL", "http://a:1"}});
    auto c = AwsCredentials::from_environment();
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->access_key_id, "AK");
    EXPECT_EQ(c->secret_access_key, "SK");
    EXPECT_EQ(c->session_token, "TK");
    EXPECT_EQ(c->region, "ap-south-1");
    EXPECT_EQ(c->service, "s3");
    auto at = S3Location::from_environment();
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->endpoint, "http://a:1");
    EXPECT_EQ(at->region, "ap-south-1");
    EXPECT_EQ(at->addressing, S3Addressing::kAuto);
    {
        const ScopedEnv more({{"AWS_REGION", "eu-north-1"}, {"AWS_ENDPOINT_URL_S3", "http://b:2"},
                              {"HURRAY_S3_ADDRESSING", "virtual"}});
        at = S3Location::from_environment();
        ASSERT_TRUE(at.ok());
        EXPECT_EQ(at->endpoint, "http://b:2");
        EXPECT_EQ(at->region, "eu-north-1");
        EXPECT_EQ(at->addressing, S3Addressing::kVirtualHost);
        EXPECT_EQ(AwsCredentials::from_environment()->region, "eu-north-1");
    }
    const ScopedEnv bad({{"HURRAY_S3_ADDRESSING", "sideways"}});
    auto refused = S3Location::from_environment();
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(contains(refused.error().message(), "HURRAY_S3_ADDRESSING"));
    // An s3:// URL opened with that environment fails the same way, before any request.
    auto src = HttpRangeSource::open("s3://bucket/k");
    ASSERT_FALSE(src.ok());
    EXPECT_EQ(src.error().code(), ErrorCode::kInvalidArgument);
}

TEST(S3Credentials, UnusableCredentialsAreRefusedWithoutShowingThem) {
    const ScopedEnv clean = clean_aws_env();
    const auto refused = [](AwsCredentials c) {
        HttpOptions o = test::quick();
        o.aws = std::move(c);
        return HttpRangeSource::open("http://127.0.0.1:9/x.hrry", o);  // refused before any request
    };
    AwsCredentials none;
    auto r = refused(none);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    AwsCredentials broken{"AKID", "very-secret\nvalue", "", "us-east-1", "s3"};
    r = refused(broken);
    ASSERT_FALSE(r.ok());
    EXPECT_FALSE(contains(r.error().message(), "very-secret")) << r.error().message();
    AwsCredentials region{"AKID", "very-secret", "", "us:east", "s3"};
    r = refused(region);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message(), "region")) << r.error().message();
    EXPECT_FALSE(contains(r.error().message(), "very-secret"));
}

/// The fault server over a directory holding "m.hrry" (40 tensors, no
/// descriptor table: listing reads each descriptor) and "big.hrry" (one
/// tensor of 12 MiB: read in parallel parts).
class S3FaultServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        test::no_proxies();
        write_file(dir_.path() / "m.hrry", 40, 300, false);
        write_file(dir_.path() / "big.hrry", 1, uint64_t{3} << 20U, true);
        std::string why;
        port_ = test::start_fault_server(server_, HURRAY_FAULT_SERVER, dir_.path().string(), why);
        if (port_ == 0) {
            GTEST_SKIP() << why;
        }
        ASSERT_GT(port_, 0) << "could not spawn /usr/bin/python3";
    }

    [[nodiscard]] std::string url(const std::string& mode, const std::string& name) const {
        std::string u = "http://127.0.0.1:";
        u.append(std::to_string(port_)).append("/").append(mode).append("/").append(name);
        return u;
    }
    [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    /// Options reaching the "sigv4" mode as the bucket of an s3:// URL.
    [[nodiscard]] HttpOptions signed_options(const char* key, const char* secret, const char* token = "") const {
        HttpOptions o = test::quick();
        o.aws = AwsCredentials{key, secret, token, kRegion, "s3"};
        S3Location at;
        at.endpoint = endpoint();
        o.s3 = at;
        return o;
    }
    [[nodiscard]] std::filesystem::path local(const std::string& name) const { return dir_.path() / name; }

    test::TempDir dir_;
    test::Child server_;
    int port_ = 0;
};

TEST_F(S3FaultServerTest, AMisansweredSuffixRangeAndMultiRangeFallBackToExplicitRanges) {
    auto src = HttpRangeSource::open(url("s3-quirks", "m.hrry"), test::quick());
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->request_count(), 2U);  // the suffix range, then the same bytes asked explicitly
    EXPECT_EQ((*src)->size(), std::filesystem::file_size(local("m.hrry")));
    // Listing reads the 40 descriptors with read_ranges: the whole-file answer
    // to the multi-range request is refused at its first byte and the ranges
    // are asked one by one.
    EXPECT_EQ(test::fingerprint(FileReader::open(*src)), test::fingerprint(FileReader::open(local("m.hrry"))));
    EXPECT_LT((*src)->bytes_received(), std::filesystem::file_size(local("m.hrry")));
    auto big = HttpRangeSource::open(url("s3-quirks", "big.hrry"), test::quick());
    ASSERT_TRUE(big.ok()) << big.error().to_string();
    EXPECT_EQ(test::fingerprint(FileReader::open(*big)), test::fingerprint(FileReader::open(local("big.hrry"))));
}

TEST_F(S3FaultServerTest, SignedRequestsReadThePrivateFile) {
    const ScopedEnv clean = clean_aws_env();
    auto src = HttpRangeSource::open("s3://sigv4/m.hrry", signed_options(kKey, kSecret));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->name(), "s3://sigv4/m.hrry");
    EXPECT_EQ(test::fingerprint(FileReader::open(*src)), test::fingerprint(FileReader::open(local("m.hrry"))));
    // Parallel parts are signed each.
    auto big = HttpRangeSource::open("s3://sigv4/big.hrry", signed_options(kKey, kSecret));
    ASSERT_TRUE(big.ok()) << big.error().to_string();
    EXPECT_EQ(test::fingerprint(FileReader::open(*big)), test::fingerprint(FileReader::open(local("big.hrry"))));
    // Temporary credentials: the session token is sent and signed.
    auto temp = HttpRangeSource::open("s3://sigv4/m.hrry", signed_options(kTempKey, kTempSecret, kToken));
    ASSERT_TRUE(temp.ok()) << temp.error().to_string();
    // A signed http:// URL is the same request.
    HttpOptions o = test::quick();
    o.aws = AwsCredentials{kKey, kSecret, "", kRegion, "s3"};
    EXPECT_TRUE(HttpRangeSource::open(url("sigv4", "m.hrry"), o).ok());
}

TEST_F(S3FaultServerTest, CredentialsComeFromTheEnvironmentForS3Urls) {
    const std::string ep = endpoint();
    const ScopedEnv env({{"AWS_ACCESS_KEY_ID", kKey},
                         {"AWS_SECRET_ACCESS_KEY", kSecret},
                         {"AWS_SESSION_TOKEN", nullptr},
                         {"AWS_REGION", kRegion},
                         {"AWS_ENDPOINT_URL", ep.c_str()},
                         {"AWS_ENDPOINT_URL_S3", nullptr},
                         {"HURRAY_S3_ADDRESSING", nullptr}});
    auto src = HttpRangeSource::open("s3://sigv4/m.hrry", test::quick());
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    // An http:// URL is not signed with them: the server refuses it.
    auto plain = HttpRangeSource::open(url("sigv4", "m.hrry"), test::quick());
    ASSERT_FALSE(plain.ok());
    EXPECT_TRUE(contains(plain.error().message(), "403")) << plain.error().message();
}

TEST_F(S3FaultServerTest, RefusedSignaturesFailWithTheServersCodeAndNoSecret) {
    const ScopedEnv clean = clean_aws_env();
    struct Case {
        HttpOptions options;
        const char* code;
    };
    HttpOptions unsigned_options = test::quick();
    S3Location at;
    at.endpoint = endpoint();
    unsigned_options.s3 = at;
    HttpOptions wrong_region = signed_options(kKey, kSecret);
    wrong_region.aws->region = "us-east-1";
    const Case cases[] = {
        {signed_options(kKey, "not-the-secret"), "SignatureDoesNotMatch"},
        {signed_options("AKIDUNKNOWN", kSecret), "InvalidAccessKeyId"},
        {signed_options(kTempKey, kTempSecret), "InvalidToken"},  // the token is missing
        {unsigned_options, "AccessDenied"},
        {wrong_region, "AuthorizationHeaderMalformed"},
    };
    for (const Case& c : cases) {
        auto src = HttpRangeSource::open("s3://sigv4/m.hrry", c.options);
        ASSERT_FALSE(src.ok()) << c.code;
        const std::string m = src.error().message();
        EXPECT_EQ(src.error().code(), ErrorCode::kIoError);
        EXPECT_TRUE(contains(m, "HTTP status 403")) << m;
        EXPECT_TRUE(contains(m, c.code)) << m;
        EXPECT_TRUE(contains(m, "s3://sigv4/m.hrry")) << m;
        for (const char* secret : {kSecret, kTempSecret, "not-the-secret"}) {
            EXPECT_FALSE(contains(m, secret)) << m;
        }
    }
}

// ---------------------------------------------------------------------------
// s3rver 3.7.1 (npm), the S3 emulator, on 127.0.0.1. It checks that a signing
// key exists (S3RVER) but not the V4 signature itself (which the fault
// server's "sigv4" mode does); it answers a suffix range with bytes 0-N and
// a multi-range request with the whole file.

/// node and s3rver's script, or why not.
std::string find_s3rver(std::string& node, std::string& script) {
    for (const char* p : {"/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"}) {
        if (::access(p, X_OK) == 0) {
            node = p;
            break;
        }
    }
    if (node.empty()) {
        return "Node.js is missing (scripts/bootstrap.sh installs it)";
    }
    const char* env = std::getenv("HURRAY_S3RVER_JS");
    script = env != nullptr ? env : HURRAY_S3RVER_JS;
    if (::access(script.c_str(), R_OK) != 0) {
        return "s3rver is missing at " + script + " (scripts/bootstrap.sh installs it with npm)";
    }
    return {};
}

/// PUT `bytes` at `url` (no signature: s3rver takes anonymous writes).
bool put(const std::string& url, const std::vector<uint8_t>& bytes) {
    CURL* easy = curl_easy_init();
    if (easy == nullptr) {
        return false;
    }
    // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg)
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, bytes.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    const CURLcode rc = curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    // NOLINTEND(cppcoreguidelines-pro-type-vararg)
    curl_easy_cleanup(easy);
    return rc == CURLE_OK && status == 200;
}

std::vector<uint8_t> slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class S3rverTest : public ::testing::Test {
protected:
    void SetUp() override {
        test::no_proxies();
        std::string node;
        std::string script;
        if (const std::string why = find_s3rver(node, script); !why.empty()) {
            GTEST_SKIP() << why;
        }
        std::filesystem::create_directories(dir_.path() / "store");
        port_ = test::free_port();
        ASSERT_TRUE(server_.start({node, script, "-d", (dir_.path() / "store").string(), "-a", "127.0.0.1", "-p",
                                   std::to_string(port_), "-s", "--configure-bucket", "models"}));
        for (int i = 0; i < 200 && !test::accepts(port_); ++i) {
            ASSERT_TRUE(server_.running()) << "s3rver exited";
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(test::accepts(port_)) << "s3rver does not accept connections";
    }

    /// Writes `name` locally with `write`, then uploads it to the bucket.
    template <typename Write>
    void upload(const std::string& name, Write write) {
        write(local(name));
        ASSERT_TRUE(put(endpoint() + "/models/" + name, slurp(local(name)))) << name;
    }

    [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    [[nodiscard]] std::filesystem::path local(const std::string& name) const { return dir_.path() / name; }
    /// s3rver's signing key, its endpoint, path-style.
    [[nodiscard]] HttpOptions options(const char* key = "S3RVER") const {
        HttpOptions o = test::quick();
        o.aws = AwsCredentials{key, "S3RVER", "", "us-east-1", "s3"};
        S3Location at;
        at.endpoint = endpoint();
        o.s3 = at;
        return o;
    }

    test::TempDir dir_;
    test::Child server_;
    int port_ = 0;
};

TEST_F(S3rverTest, FilesOfEverySizeReadAsTheirLocalCopies) {
    const ScopedEnv clean = clean_aws_env();
    upload("small.hrry", [](const std::filesystem::path& p) { write_file(p, 1, 256, true); });  // ~1 KiB of data
    upload("no-table.hrry", [](const std::filesystem::path& p) { write_file(p, 60, 100, false); });
    // 40 MiB by default (parallel parts); HURRAY_S3_TEST_MIB=1024 for the 1 GiB run of
    // docs/remote.md (two float32 tensors of half the size each).
    const char* mib_env = std::getenv("HURRAY_S3_TEST_MIB");
    const uint64_t mib = mib_env != nullptr ? std::max<uint64_t>(1, std::strtoull(mib_env, nullptr, 10)) : 40;
    upload("big.hrry", [mib](const std::filesystem::path& p) { write_file(p, 2, (mib << 20U) / 8, true); });
    for (const char* name : {"small.hrry", "no-table.hrry", "big.hrry"}) {
        SCOPED_TRACE(name);
        auto src = HttpRangeSource::open(std::string("s3://models/") + name, options());
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_EQ((*src)->size(), std::filesystem::file_size(local(name)));
        EXPECT_EQ(test::fingerprint(FileReader::open(*src)), test::fingerprint(FileReader::open(local(name))));
    }
    // The same over a plain http:// URL, unsigned.
    auto plain = HttpRangeSource::open(endpoint() + "/models/no-table.hrry", test::quick());
    ASSERT_TRUE(plain.ok()) << plain.error().to_string();
    EXPECT_EQ(test::fingerprint(FileReader::open(*plain)), test::fingerprint(FileReader::open(local("no-table.hrry"))));
}

TEST_F(S3rverTest, AnUnknownKeyOrObjectIsTheServersError) {
    const ScopedEnv clean = clean_aws_env();
    upload("small.hrry", [](const std::filesystem::path& p) { write_file(p, 1, 256, true); });
    auto wrong = HttpRangeSource::open("s3://models/small.hrry", options("NOTAKEY"));
    ASSERT_FALSE(wrong.ok());
    EXPECT_TRUE(contains(wrong.error().message(), "403")) << wrong.error().message();
    EXPECT_TRUE(contains(wrong.error().message(), "InvalidAccessKeyId")) << wrong.error().message();
    auto missing = HttpRangeSource::open("s3://models/none.hrry", options());
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(contains(missing.error().message(), "HTTP status 404")) << missing.error().message();
    EXPECT_TRUE(contains(missing.error().message(), "NoSuchKey")) << missing.error().message();
}

#ifdef HURRAY_TEST_HAVE_CONVERT
TEST_F(S3rverTest, SafeTensorsReadsAsItsLocalCopy) {
    const ScopedEnv clean = clean_aws_env();
    const convert::test::MemorySource source(convert::test::small_tensors());
    upload("m.safetensors", [&source](const std::filesystem::path& p) {
        convert::ConvertOptions o;
        o.to = convert::Format::kSafeTensors;
        ASSERT_TRUE(convert::write(source, p, o).ok());
    });
    auto http = HttpRangeSource::open("s3://models/m.safetensors", options());
    ASSERT_TRUE(http.ok()) << http.error().to_string();
    auto remote = convert::open_source(std::shared_ptr<RangeSource>(*http));
    ASSERT_TRUE(remote.ok()) << remote.error().to_string();
    auto local_src = convert::open_source(local("m.safetensors"));
    ASSERT_TRUE(local_src.ok());
    const Status same = convert::compare_sources(**local_src, **remote);
    EXPECT_TRUE(same.ok()) << same.error().to_string();
}
#endif

}  // namespace
}  // namespace hurray
