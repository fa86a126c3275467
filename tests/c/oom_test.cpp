// SPDX-License-Identifier: Apache-2.0
// ctest c_api.out_of_memory: every allocation a C ABI call makes is made to
// fail in turn (a replaced operator new that throws std::bad_alloc after a
// countdown), and each call must return HURRAY_ERR_OUT_OF_MEMORY or succeed:
// no abort, no exception out of the boundary, and the same handles keep
// working afterwards (no lock left held, no state left half-changed).
//   hurray_c_oom_test CONFORMANCE_DIR KV_FILE
// Prints "N passed, M failed". Not built with sanitizers (they replace
// operator new themselves).
#include <hurray.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

namespace {

// Allocations left before the next one fails; negative: never fail.
long g_countdown = -1;
// Whether every allocation after the failing one fails too (memory stays
// exhausted), or only that one (a transient failure).
bool g_persistent = true;

// Whether an allocation was refused since the flag was last cleared.
bool g_refused = false;

bool allocation_allowed() {
    if (g_countdown == 0) {
        g_refused = true;
        if (!g_persistent) {
            g_countdown = -1;  // fail once, then allow
        }
        return false;
    }
    if (g_countdown > 0) {
        --g_countdown;
    }
    return true;
}

int g_passed = 0;
int g_failed = 0;

void check(bool ok, const std::string& what) {
    if (ok) {
        ++g_passed;
    } else {
        ++g_failed;
        std::fprintf(stderr, "FAILED: %s (last error: \"%s\")\n", what.c_str(), hurray_last_error_message());
    }
}

// Runs `call` with the k-th allocation failing, for k = 0, 1, ... until a
// run makes no failing allocation. Each status must be OK or OUT_OF_MEMORY,
// and `verify` (run with allocations allowed) must hold after each.
void exhaust(const char* name, const std::function<HurrayStatus()>& call, const std::function<bool()>& verify) {
    int failures = 0;
    for (long k = 0; k < 100000; ++k) {
        g_countdown = k;
        g_refused = false;
        const HurrayStatus status = call();
        const bool exhausted = !g_refused;  // the call made fewer than k + 1 allocations
        g_countdown = -1;
        if (status != HURRAY_OK && status != HURRAY_ERR_OUT_OF_MEMORY) {
            check(false, std::string(name) + ": allocation " + std::to_string(k) + " failing gave status " +
                             std::to_string(status));
            return;
        }
        if (status == HURRAY_ERR_OUT_OF_MEMORY) {
            ++failures;
            if (std::strstr(hurray_last_error_message(), "out_of_memory") == nullptr &&
                std::strstr(hurray_last_error_message(), "out of memory") == nullptr) {
                check(false, std::string(name) + ": no out-of-memory message");
                return;
            }
        }
        if (!verify()) {
            check(false, std::string(name) + ": state broken after allocation " + std::to_string(k) + " failed");
            return;
        }
        if (exhausted && status == HURRAY_OK) {
            check(true, name);
            std::printf("%s: %d failing allocations survived\n", name, failures);
            return;
        }
    }
    check(false, std::string(name) + ": did not finish");
}


/// The first call of a kind on a freshly opened file, with allocation
/// failures suspended while the file opens: `first(file)` runs under the
/// countdown, then `again(file, status)` runs with failures off and says
/// whether the same file still works. A file that will not open, or one
/// left broken, gives HURRAY_ERR_INTERNAL (which `exhaust` reports).
HurrayStatus first_call_on_fresh_file(const std::string& path, uint32_t flags,
                                      const std::function<HurrayStatus(HurrayFile*)>& first,
                                      const std::function<bool(HurrayFile*, HurrayStatus)>& again) {
    const long saved = g_countdown;
    g_countdown = -1;
    HurrayFile* f = nullptr;
    if (hurray_file_open(path.c_str(), flags, &f) != HURRAY_OK) {
        return HURRAY_ERR_INTERNAL;
    }
    g_countdown = saved;
    const HurrayStatus s = first(f);
    g_countdown = -1;
    const bool works = again(f, s);
    hurray_file_close(f);
    return works ? s : HURRAY_ERR_INTERNAL;
}
}  // namespace

// SAFETY: a replacement of the global allocation functions ([new.delete]);
// malloc/free underneath, std::bad_alloc when the countdown says so.
void* operator new(std::size_t size) {
    if (!allocation_allowed()) {
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(size == 0 ? 1 : size)) {
        return p;
    }
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*size*/) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t /*size*/) noexcept { std::free(p); }

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: hurray_c_oom_test CONFORMANCE_DIR KV_FILE\n");
        return 2;
    }
    const std::string basic = std::string(argv[1]) + "/files/basic.hrry";
    const std::string kv_file = argv[2];

    for (const bool persistent : {true, false}) {
        g_persistent = persistent;
        std::printf("-- %s allocation failure\n", persistent ? "persistent" : "one-shot");
        for (const uint32_t flags : {0u, static_cast<uint32_t>(HURRAY_FILE_NO_MMAP)}) {
            const std::string mode = flags == 0 ? " (mmap)" : " (pread)";
            // Opening.
            exhaust(("hurray_file_open" + mode).c_str(),
                    [&] {
                        HurrayFile* f = nullptr;
                        const HurrayStatus s = hurray_file_open(kv_file.c_str(), flags, &f);
                        hurray_file_close(f);
                        return s;
                    },
                    [] { return true; });

            // A fresh file each time: the first read of its data (in pread
            // mode, a region read and cached under a lock) fails, and the same
            // file must then work.
            exhaust(("first hurray_file_tensor_buffer" + mode).c_str(),
                    [&] {
                        HurrayBuffer* b = nullptr;
                        return first_call_on_fresh_file(
                            kv_file, flags, [&](HurrayFile* f) { return hurray_file_tensor_buffer(f, 1, 0, &b); },
                            [&](HurrayFile* f, HurrayStatus) {
                                HurrayBuffer* again = nullptr;
                                const bool works = hurray_file_tensor_buffer(f, 1, 0, &again) == HURRAY_OK;
                                hurray_buffer_destroy(again);
                                if (b != nullptr) {
                                    hurray_buffer_destroy(b);  // held across the retry, as a caller would
                                }
                                return works;
                            });
                    },
                    [] { return true; });

            // A fresh file each time: the first name asked for builds the
            // NUL-terminated copies of every name; when that fails, the next
            // call must build them and give the right name.
            exhaust(("first hurray_file_tensor_name" + mode).c_str(),
                    [&] {
                        const char* name = nullptr;
                        size_t len = 0;
                        return first_call_on_fresh_file(
                            kv_file, flags,
                            [&](HurrayFile* f) { return hurray_file_tensor_name(f, 0, &name, &len); },
                            [&](HurrayFile* f, HurrayStatus s) {
                                const char* again = nullptr;
                                size_t again_len = 0;
                                return hurray_file_tensor_name(f, 0, &again, &again_len) == HURRAY_OK &&
                                       again_len > 0 && again[again_len] == '\0' &&
                                       (s != HURRAY_OK || (len == again_len && std::memcmp(name, again, len) == 0));
                            });
                    },
                    [] { return true; });

            // Calls on one open file, which must keep working.
            HurrayFile* file = nullptr;
            check(hurray_file_open(kv_file.c_str(), flags, &file) == HURRAY_OK, "open" + mode);
            uint64_t count = 0;
            check(hurray_file_tensor_count(file, &count) == HURRAY_OK && count > 0, "tensor_count" + mode);
            const auto file_works = [&] {
                uint64_t n = 0;
                HurrayBuffer* b = nullptr;
                bool ok = hurray_file_tensor_count(file, &n) == HURRAY_OK && n == count;
                for (uint64_t i = 0; ok && i < count; ++i) {
                    uint32_t buffers = 0;
                    HurrayDescriptor* d = nullptr;
                    ok = hurray_file_tensor_descriptor(file, i, &d) == HURRAY_OK &&
                         hurray_descriptor_buffer_count(d, &buffers) == HURRAY_OK;
                    hurray_descriptor_destroy(d);
                    if (ok && buffers > 0) {
                        ok = hurray_file_tensor_buffer(file, i, 0, &b) == HURRAY_OK;
                        if (b != nullptr) {
                            hurray_buffer_destroy(b);
                            b = nullptr;
                        }
                    }
                }
                return ok;
            };
            for (uint64_t i = 0; i < count; ++i) {
                const std::string at = " #" + std::to_string(i) + mode;
                exhaust(("hurray_file_tensor_descriptor" + at).c_str(),
                        [&] {
                            HurrayDescriptor* d = nullptr;
                            const HurrayStatus s = hurray_file_tensor_descriptor(file, i, &d);
                            if (d != nullptr) {
                                hurray_descriptor_destroy(d);
                            }
                            return s;
                        },
                        file_works);
                exhaust(("hurray_file_tensor_buffers" + at).c_str(),
                        [&] {
                            HurrayBufferList* list = nullptr;
                            const HurrayStatus s = hurray_file_tensor_buffers(file, i, &list);
                            hurray_buffer_list_destroy(&list);
                            return s;
                        },
                        file_works);
                exhaust(("hurray_file_tensor_to_float32" + at).c_str(),
                        [&] {
                            uint64_t n = 0;
                            std::vector<float> out;
                            const HurrayStatus query = hurray_file_tensor_to_float32(file, i, nullptr, 0, &n);
                            if (query != HURRAY_ERR_BUFFER_TOO_SMALL) {
                                return query;  // out of memory already, or an empty tensor (OK)
                            }
                            const long saved = g_countdown;
                            g_countdown = -1;
                            out.resize(n);
                            g_countdown = saved;
                            return hurray_file_tensor_to_float32(file, i, out.data(), n, &n);
                        },
                        file_works);
            }
            exhaust(("hurray_file_kv_get_string" + mode).c_str(),
                    [&] {
                        uint64_t keys = 0;
                        HurrayStatus s = hurray_file_kv_count(file, &keys);
                        for (uint64_t k = 0; s == HURRAY_OK && k < keys; ++k) {
                            const char* key = nullptr;
                            size_t key_len = 0;
                            uint8_t type = 0;
                            s = hurray_file_kv_key(file, k, &key, &key_len);
                            if (s == HURRAY_OK) {
                                s = hurray_file_kv_type(file, key, key_len, &type);
                            }
                            if (s == HURRAY_OK && type == HURRAY_KV_STRING) {
                                const char* value = nullptr;
                                size_t value_len = 0;
                                s = hurray_file_kv_get_string(file, key, key_len, &value, &value_len);
                            }
                        }
                        return s;
                    },
                    file_works);
            hurray_file_close(file);
        }

        // Descriptors, buffer lists, contexts.
        exhaust("hurray_descriptor_decode + accessors",
                [&] {
                    HurrayFile* file = nullptr;
                    HurrayStatus s = hurray_file_open(basic.c_str(), 0, &file);
                    uint8_t bytes[512];
                    size_t len = 0;
                    if (s == HURRAY_OK) {
                        s = hurray_file_tensor_descriptor_bytes(file, 0, bytes, sizeof bytes, &len);
                    }
                    hurray_file_close(file);
                    HurrayDescriptor* d = nullptr;
                    if (s == HURRAY_OK) {
                        s = hurray_descriptor_decode(bytes, len, &d);
                    }
                    uint64_t dims[8];
                    uintptr_t rank = 8;
                    if (s == HURRAY_OK) {
                        s = hurray_descriptor_shape(d, dims, &rank);
                    }
                    if (d != nullptr) {
                        hurray_descriptor_destroy(d);
                    }
                    HurrayTensorContext* ctx = nullptr;
                    if (s == HURRAY_OK) {
                        s = hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, len, nullptr, nullptr, &ctx);
                    }
                    hurray_tensor_context_destroy(&ctx);
                    HurrayBufferList* list = nullptr;
                    if (s == HURRAY_OK) {
                        s = hurray_buffer_list_new(4, &list);
                    }
                    hurray_buffer_list_destroy(&list);
                    return s;
                },
                [] { return true; });
    }

    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
