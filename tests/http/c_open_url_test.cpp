// SPDX-License-Identifier: Apache-2.0
// hurray_file_open_url: the C ABI's HRRYFILE over HTTP (nginx on 127.0.0.1), the
// same tensors as hurray_file_open of the local file; its argument checks and the
// URL it names in errors, without credentials or query string. Skips when nginx
// is missing.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#ifdef HURRAY_TEST_HAVE_C

#include "http/test_servers.hpp"
#include "hurray.h"
#include "io/io_test_util.hpp"
#include "test_paths.hpp"

namespace hurray {
namespace {

std::vector<uint8_t> tensor_bytes(const HurrayFile* f, uint64_t i) {
    HurrayBuffer* b = nullptr;
    EXPECT_EQ(hurray_file_tensor_buffer(f, i, 0, &b), HURRAY_OK) << hurray_last_error_message();
    void* data = nullptr;
    uint64_t size = 0;
    EXPECT_EQ(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    EXPECT_EQ(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    std::vector<uint8_t> out(size);
    if (size > 0) {
        std::memcpy(out.data(), data, size);
    }
    hurray_buffer_destroy(b);
    return out;
}

TEST(CFileOpenUrl, ReadsTheTensorsOfTheLocalFile) {
    test::no_proxies();
    const test::TempDir dir;
    const std::filesystem::path www = dir.path() / "www";
    std::filesystem::create_directories(www);
    const std::string local = (www / "basic.hrry").string();
    std::filesystem::copy_file(std::string(HURRAY_CONFORMANCE_DIR) + "/files/basic.hrry", local);
    test::NginxServer nginx;
    if (const std::string why = nginx.start(www); !why.empty()) {
        GTEST_SKIP() << why;
    }
    HurrayFile* l = nullptr;
    ASSERT_EQ(hurray_file_open(local.c_str(), 0, &l), HURRAY_OK) << hurray_last_error_message();
    HurrayFile* r = nullptr;
    const char* headers[] = {"X-Test: 1"};
    ASSERT_EQ(hurray_file_open_url(nginx.url("basic.hrry").c_str(), headers, 1, 0, &r), HURRAY_OK)
        << hurray_last_error_message();
    uint64_t nl = 0;
    uint64_t nr = 0;
    ASSERT_EQ(hurray_file_tensor_count(l, &nl), HURRAY_OK);
    ASSERT_EQ(hurray_file_tensor_count(r, &nr), HURRAY_OK);
    ASSERT_EQ(nl, nr);
    ASSERT_GT(nl, 0U);
    for (uint64_t i = 0; i < nl; ++i) {
        EXPECT_EQ(tensor_bytes(r, i), tensor_bytes(l, i)) << i;
    }
    hurray_file_close(r);
    hurray_file_close(l);

    // Errors: arguments, a missing file named without its secrets.
    HurrayFile* f = nullptr;
    EXPECT_EQ(hurray_file_open_url(nullptr, nullptr, 0, 0, &f), HURRAY_ERR_NULL_POINTER);
    EXPECT_EQ(hurray_file_open_url(nginx.url("basic.hrry").c_str(), nullptr, 1, 0, &f), HURRAY_ERR_NULL_POINTER);
    const char* bad[] = {"no colon here"};
    EXPECT_EQ(hurray_file_open_url(nginx.url("basic.hrry").c_str(), bad, 1, 0, &f), HURRAY_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(hurray_file_open_url(nginx.url("basic.hrry").c_str(), nullptr, 0, 0x80000000U, &f),
              HURRAY_ERR_INVALID_ARGUMENT);
    std::string secret = nginx.url("missing.hrry") + "?X-Amz-Signature=s3cret";
    secret.insert(secret.find("://") + 3, "user:pw@");
    EXPECT_EQ(hurray_file_open_url(secret.c_str(), nullptr, 0, 0, &f), HURRAY_ERR_IO);
    EXPECT_EQ(f, nullptr);
    const std::string message = hurray_last_error_message();
    EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
    EXPECT_EQ(message.find("pw@"), std::string::npos) << message;
    EXPECT_NE(message.find(nginx.url("missing.hrry")), std::string::npos) << message;
}

int cancel_at_once(void* /*context*/, uint64_t /*done*/, uint64_t /*total*/) { return 1; }

/// hurray_file_open_url_ex: an s3:// URL at the fault server's "sigv4" mode (it
/// verifies AWS Signature Version 4) with the options struct's credentials and
/// endpoint; a wrong secret, a wrong struct_size, a cancelling progress callback.
TEST(CFileOpenUrl, OptionsSignS3RequestsAndCanCancel) {
    test::no_proxies();
    for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3", "AWS_REGION", "HURRAY_S3_ADDRESSING"}) {
        ::unsetenv(v);
    }
    const test::TempDir dir;
    const std::string local = (dir.path() / "basic.hrry").string();
    std::filesystem::copy_file(std::string(HURRAY_CONFORMANCE_DIR) + "/files/basic.hrry", local);
    test::Child server;
    std::string why;
    const int port = test::start_fault_server(server, HURRAY_FAULT_SERVER, dir.path().string(), why);
    if (port == 0) {
        GTEST_SKIP() << why;
    }
    ASSERT_GT(port, 0);
    const std::string endpoint = "http://127.0.0.1:" + std::to_string(port);
    HurrayUrlOptions opt;
    ASSERT_EQ(hurray_url_options_init(&opt), HURRAY_OK);
    EXPECT_EQ(opt.struct_size, sizeof(HurrayUrlOptions));
    EXPECT_EQ(opt.max_retries, 3U);
    opt.s3_endpoint = endpoint.c_str();
    opt.aws_access_key_id = "AKIDHURRAYTEST";  // tests/http/fault_server.py SIGV4_KEYS
    opt.aws_secret_access_key = "hurray+test/secret/K7MDENG";
    opt.aws_region = "eu-west-3";
    opt.idle_timeout_ms = 2000;
    HurrayFile* r = nullptr;
    ASSERT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &opt, 0, &r), HURRAY_OK)
        << hurray_last_error_message();
    HurrayFile* l = nullptr;
    ASSERT_EQ(hurray_file_open(local.c_str(), 0, &l), HURRAY_OK);
    uint64_t n = 0;
    ASSERT_EQ(hurray_file_tensor_count(l, &n), HURRAY_OK);
    for (uint64_t i = 0; i < n; ++i) {
        EXPECT_EQ(tensor_bytes(r, i), tensor_bytes(l, i)) << i;
    }
    hurray_file_close(r);
    hurray_file_close(l);
    // No region in the options: the environment's (AWS_REGION), keys or no keys there.
    ::setenv("AWS_REGION", "eu-west-3", 1);
    HurrayUrlOptions env_region = opt;
    env_region.aws_region = nullptr;
    ASSERT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &env_region, 0, &r), HURRAY_OK)
        << hurray_last_error_message();
    hurray_file_close(r);
    ::unsetenv("AWS_REGION");

    HurrayFile* f = nullptr;
    HurrayUrlOptions wrong = opt;
    wrong.aws_secret_access_key = "a-wrong-secret";
    EXPECT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &wrong, 0, &f), HURRAY_ERR_IO);
    std::string message = hurray_last_error_message();
    EXPECT_NE(message.find("SignatureDoesNotMatch"), std::string::npos) << message;
    EXPECT_EQ(message.find("a-wrong-secret"), std::string::npos) << message;
    HurrayUrlOptions no_secret = opt;
    no_secret.aws_secret_access_key = nullptr;
    EXPECT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &no_secret, 0, &f), HURRAY_ERR_INVALID_ARGUMENT);
    HurrayUrlOptions old = opt;
    old.struct_size = 8;
    EXPECT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &old, 0, &f), HURRAY_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(hurray_last_error_message()).find("struct_size"), std::string::npos);
    HurrayUrlOptions cancelling = opt;
    cancelling.progress = cancel_at_once;
    EXPECT_EQ(hurray_file_open_url_ex("s3://sigv4/basic.hrry", &cancelling, 0, &f), HURRAY_ERR_CANCELLED);
    // NULL options: the defaults (unsigned: the server refuses).
    EXPECT_EQ(hurray_file_open_url_ex((endpoint + "/sigv4/basic.hrry").c_str(), nullptr, 0, &f), HURRAY_ERR_IO);
    message = hurray_last_error_message();
    EXPECT_NE(message.find("AccessDenied"), std::string::npos) << message;
    EXPECT_EQ(f, nullptr);
}

}  // namespace
}  // namespace hurray

#endif  // HURRAY_TEST_HAVE_C
