// SPDX-License-Identifier: Apache-2.0
// The registry of live handles behind HURRAY_C_HANDLE_CHECKS (Debug builds):
// a destroy function given a handle twice, or any function given a destroyed
// one, returns HURRAY_ERR_INTERNAL with a message instead of touching freed
// memory. Handles are compared by address only, never dereferenced here.
#include "c/c_internal.hpp"

#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

namespace hurray::c {

const char* handle_kind_name(HandleKind kind) noexcept {
    switch (kind) {
        case HandleKind::kFile:
            return "HurrayFile";
        case HandleKind::kDescriptor:
            return "HurrayDescriptor";
        case HandleKind::kBuffer:
            return "HurrayBuffer";
        case HandleKind::kBufferList:
            return "HurrayBufferList";
        case HandleKind::kTensorContext:
            return "HurrayTensorContext";
        case HandleKind::kFileWriter:
            return "HurrayFileWriter";
        case HandleKind::kReader:
            return "HurrayReader";
        case HandleKind::kWriter:
            return "HurrayWriter";
        case HandleKind::kSource:
            return "HurraySource";
    }
    return "handle";
}

#ifdef HURRAY_C_HANDLE_CHECKS

namespace {

struct Registry {
    std::mutex mutex;
    std::unordered_map<const void*, HandleKind> live;
};

Registry& registry() noexcept {
    // Built in static storage on first use (no allocation, so this cannot
    // fail) and never destroyed: handles may be released from static
    // destructors of the program after this translation unit's statics are
    // gone. An empty unordered_map allocates nothing.
    alignas(Registry) static unsigned char storage[sizeof(Registry)];
    // SAFETY: placement-new into storage of the right size and alignment,
    // once (thread-safe static initialization); the object is never
    // destroyed, so it outlives every use.
    static Registry* const r = ::new (static_cast<void*>(storage)) Registry();
    return *r;
}

// "FUNCTION: ARGUMENT 0x... is not a live HurrayX (destroyed already, or not
// from this library)", or says which kind it is when it is live as another.
HurrayStatus not_live(const char* function, const char* argument, const void* handle, HandleKind want,
                      const HandleKind* actual) noexcept {
    char address[32];
    std::snprintf(address, sizeof address, "%p", handle);
    try {
        std::string what = std::string(argument) + " " + address + " is not a live " + handle_kind_name(want);
        if (actual != nullptr) {
            what += std::string(" (it is a live ") + handle_kind_name(*actual) + ")";
        } else {
            what += " (destroyed already, or not created by this library)";
        }
        return fail(HURRAY_ERR_INTERNAL, function, what);
    } catch (...) {
        return fail(HURRAY_ERR_INTERNAL, function, "a handle argument is not live");
    }
}

// `handle`'s registered kind compared with `kind`; erases it when `erase` and
// it matches.
HurrayStatus lookup(const char* function, const char* argument, const void* handle, HandleKind kind,
                    bool erase) noexcept {
    Registry& r = registry();
    HandleKind found{};
    bool present = false;
    {
        const std::lock_guard<std::mutex> lock(r.mutex);
        const auto it = r.live.find(handle);
        if (it != r.live.end()) {
            present = true;
            found = it->second;
            if (found == kind && erase) {
                r.live.erase(it);
            }
        }
    }
    if (present && found == kind) {
        return HURRAY_OK;
    }
    return not_live(function, argument, handle, kind, present ? &found : nullptr);
}

}  // namespace

void track_handle(const void* handle, HandleKind kind) {
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    r.live.insert_or_assign(handle, kind);
}

HurrayStatus untrack_handle(const char* function, const char* argument, const void* handle,
                            HandleKind kind) noexcept {
    return lookup(function, argument, handle, kind, /*erase=*/true);
}

HurrayStatus check_handle(const char* function, const char* argument, const void* handle,
                          HandleKind kind) noexcept {
    return lookup(function, argument, handle, kind, /*erase=*/false);
}

#else  // !HURRAY_C_HANDLE_CHECKS

void track_handle(const void* /*handle*/, HandleKind /*kind*/) {}

HurrayStatus untrack_handle(const char* /*function*/, const char* /*argument*/, const void* /*handle*/,
                            HandleKind /*kind*/) noexcept {
    return HURRAY_OK;
}

HurrayStatus check_handle(const char* /*function*/, const char* /*argument*/, const void* /*handle*/,
                          HandleKind /*kind*/) noexcept {
    return HURRAY_OK;
}

#endif  // HURRAY_C_HANDLE_CHECKS

}  // namespace hurray::c
