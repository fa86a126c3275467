// SPDX-License-Identifier: Apache-2.0
// Helpers every io test may use: a per-test temporary directory, whole-file
// reads and writes, little-endian field reads and deterministic data.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hurray::test {

/// Whether this build runs under AddressSanitizer (GCC's macro or Clang's feature).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

using Bytes = std::vector<uint8_t>;

/// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "hurray-io-XXXXXX").string();
        char* made = ::mkdtemp(tmpl.data());
        if (made == nullptr) {
            ADD_FAILURE() << "mkdtemp failed";
        }
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

    /// Names of the entries in the directory, sorted.
    [[nodiscard]] std::vector<std::string> list() const {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(path_)) {
            names.push_back(e.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    /// Writes `bytes` to `name` in the directory; returns its path.
    [[nodiscard]] std::string write(const std::string& name, const Bytes& bytes) const {
        const std::string p = file(name);
        std::ofstream os(p, std::ios::binary | std::ios::trunc);
        os.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        EXPECT_TRUE(os.good()) << p;
        return p;
    }

private:
    std::filesystem::path path_;
};

/// The whole content of a file (empty if it cannot be opened).
inline Bytes read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        return {};
    }
    const std::streamoff size = in.tellg();
    Bytes out(static_cast<size_t>(size > 0 ? size : 0));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    out.resize(static_cast<size_t>(in.gcount()));
    return out;
}

/// Writes `bytes` to `path`, replacing it.
inline void write_all_file(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// Little-endian read of `width` bytes at `at`.
inline uint64_t le(const Bytes& b, size_t at, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) {
        v |= static_cast<uint64_t>(b.at(at + i)) << (8 * i);
    }
    return v;
}

/// Whether `b[from, to)` is all zeros.
inline bool all_zero(const Bytes& b, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
        if (b.at(i) != 0) {
            return false;
        }
    }
    return true;
}

/// `n` deterministic pseudo-random bytes.
inline Bytes pattern(size_t n, uint32_t seed) {
    Bytes b(n);
    uint32_t x = seed * 2654435761U + 1U;
    for (auto& v : b) {
        x ^= x << 13U;
        x ^= x >> 17U;
        x ^= x << 5U;
        v = static_cast<uint8_t>(x);
    }
    return b;
}

}  // namespace hurray::test
