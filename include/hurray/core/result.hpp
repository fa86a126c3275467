// SPDX-License-Identifier: Apache-2.0
/// @file
/// Errors as values: `hurray::Error`, `hurray::Result<T>` and `hurray::Status`.
///
/// Every fallible operation in libhurray returns a `Result<T>` (or a `Status`
/// for operations that produce no value). Nothing in `hurray::core` throws or
/// aborts on bad input; a rejected input yields an `Error` whose message names
/// the offending field and, where one exists, the byte offset of that field.
/// Misusing a result (taking the value of an error, the error of a success, or
/// building one from an `ErrorCode::kOk` error) is a programming error and
/// aborts the process with a message on stderr, in release builds too.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace hurray {

/// Every reason libhurray can reject an input or a request.
///
/// The numeric values are stable and will not be renumbered (a planned C ABI
/// will expose them; there is no C ABI yet).
enum class ErrorCode : uint16_t {
    /// Not an error: the success code of the planned C ABI. A `Result` or
    /// `Status` built from an `Error` with this code aborts.
    kOk = 0,
    kTruncated = 1,                      ///< The input ends before a field that must be read.
    kInvalidMagic = 2,                   ///< The magic bytes are not "HRRY".
    kUnsupportedVersion = 3,             ///< `version_major` is not one this library reads.
    kInvalidDescriptorLength = 4,        ///< `descriptor_length` is too short or disagrees with the fields.
    kReservedFlagBits = 5,               ///< A reserved bit of a flags field is set.
    kReservedBytesNonZero = 6,           ///< A reserved byte is not zero.
    kInvalidElementType = 7,             ///< Type tag 0x00/0xFF, or a type not allowed in this position.
    kUnknownElementType = 8,             ///< Type tag reserved or unassigned (strict mode).
    kInvalidExtensionType = 9,           ///< Extension type section violates its rules or its flag.
    kRankTooLarge = 10,                  ///< `rank` exceeds 64.
    kInvalidShape = 11,                  ///< A dimension is not allowed here (e.g. dynamic).
    kSizeOverflow = 12,                  ///< A size computation overflows 64 bits.
    kInvalidLayoutTag = 13,              ///< Layout tag 0x00 or 0xFF.
    kUnknownLayoutTag = 14,              ///< Layout tag reserved or unassigned.
    kUnsupportedExtensionLayout = 15,    ///< Private layout whose id the reader does not know.
    kInvalidLayout = 16,                 ///< A layout-specific field violates its rule.
    kRankNotAllowed = 17,                ///< The rank is not allowed for this layout.
    kNestingTooDeep = 18,                ///< Recursive tiling or composite nesting too deep.
    kInvalidBufferCount = 19,            ///< `buffer_count` disagrees with layout and quantization.
    kInvalidBufferHandle = 20,           ///< A buffer handle field is invalid.
    kDeviceMismatch = 21,                ///< Buffers of one tensor on different devices/classes.
    kBufferTooSmall = 22,                ///< A declared buffer cannot hold what the shape requires.
    kByteOffsetOutOfRange = 23,          ///< `byte_offset` is not allowed or exceeds buffer 0.
    kInvalidQuantization = 24,           ///< A quantization field violates its rule.
    kUnknownQuantizationScheme = 25,     ///< Scheme tag reserved, unassigned or private (strict).
    kUnsupportedQuantizationVersion = 26,///< `scheme_version` newer than supported.
    kInvalidQuantizationStorageType = 27,///< The storage type is not allowed by the scheme.
    kInvalidQuantizationBuffer = 28,     ///< A parameter buffer index or size is wrong.
    kInvalidShard = 29,                  ///< Shard section violates its bounds.
    kInvalidStatistics = 30,             ///< Statistics section violates its rules.
    kInvalidComposite = 31,              ///< Composite head or member section violates its rules.
    kInvalidArgument = 32,               ///< A caller passed an argument that cannot be honoured.
    kIoError = 33,                       ///< An operating-system I/O call failed.
    kInvalidFile = 34,                   ///< A container file is structurally invalid.
    kChecksumMismatch = 35,              ///< A stored checksum does not match.
    kNotFound = 36,                      ///< A named item does not exist.
    kInvalidData = 37,                   ///< Data bytes violate an invariant (sparse indices...).
    kUnsupported = 38,                   ///< Valid, but not supported by this build.
    kInvalidDocument = 39,               ///< A JSON or CBOR document is malformed or does not match its schema.
    kDuplicateName = 40,                 ///< A tensor name or KV key appears twice.
    kSizeMismatch = 41,                  ///< Bytes given or stored disagree with the declared size.
    kInvalidName = 42,                   ///< A tensor name or KV key is empty, too long or not UTF-8.
    kOverlap = 43,                       ///< Two regions of a container overlap.
    kTypeMismatch = 44,                  ///< A value has another type than the one asked for.
    kOutOfMemory = 45,                   ///< Memory for a result could not be allocated.
    kCancelled = 46,                     ///< The caller cancelled the operation (a progress callback).
};

/// A stable, human-readable name for an error code, e.g. `"truncated"`.
HURRAY_CORE_EXPORT std::string_view error_code_name(ErrorCode code) noexcept;

/// Where an error happened, given to `Error::with_context`. Every member is
/// optional; the views need to live only for the call.
///
/// @code
/// return std::move(e).with_context({.prefix = "tensor 'w'", .tensor = "w"});
/// return std::move(e).with_context({.prefix = path.native(), .file = path.native()});
/// @endcode
struct ErrorContext {
    /// Text put before the message, then `": "` (nothing when empty).
    std::string_view prefix{};
    /// The file or URL the error is in (kept when the error already names one).
    std::string_view file{};
    /// The name of the tensor the error is in (kept when the error already names one).
    std::string_view tensor{};
    /// The field, section or KV key the error is in (kept when already set).
    std::string_view field{};
    /// Added to the error's byte offset: where a nested parser's input starts.
    uint64_t base = 0;
    /// The byte offset to record when the error has none (UINT64_MAX: none).
    uint64_t offset = UINT64_MAX;
};

/// An error: a code, a message naming the field, the byte offset when known,
/// and, as data, the file, tensor and field it is in.
///
/// The message says everything in words; `file()`, `tensor()` and `field()` say
/// the same parts as data, for callers that act on them (a binding's exception
/// attributes, a tool that prints the path once). Context is added with one
/// idiom, `with_context`, which keeps the code, moves the offset and puts the
/// context's words before the message.
///
/// @code
/// hurray::Error e(hurray::ErrorCode::kInvalidMagic, "magic: expected HRRY", 0);
/// std::string text = e.to_string();  // "invalid_magic at byte 0: magic: expected HRRY"
/// e = std::move(e).with_context({.prefix = "m.hrry", .file = "m.hrry"});
/// // e.message() == "m.hrry: magic: expected HRRY", e.file() == "m.hrry"
/// @endcode
class HURRAY_CORE_EXPORT Error {
public:
    /// Marker for "no byte offset applies".
    static constexpr uint64_t kNoOffset = UINT64_MAX;

    /// Builds an error with a code, a message and an optional byte offset.
    Error(ErrorCode code, std::string message, uint64_t offset = kNoOffset)
        : code_(code), offset_(offset), message_(std::move(message)) {}

    /// Copies the error and its context.
    Error(const Error& other);
    /// Copies the error and its context.
    Error& operator=(const Error& other);
    /// Moves the error and its context.
    Error(Error&& other) noexcept = default;
    /// Moves the error and its context.
    Error& operator=(Error&& other) noexcept = default;
    /// Destroys the error.
    ~Error() = default;

    /// The error code.
    [[nodiscard]] ErrorCode code() const noexcept { return code_; }
    /// The byte offset of the offending field, or `kNoOffset`.
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    /// Whether a byte offset is attached.
    [[nodiscard]] bool has_offset() const noexcept { return offset_ != kNoOffset; }
    /// The message, naming the field and what is wrong with it.
    [[nodiscard]] const std::string& message() const noexcept { return message_; }
    /// `"<code name>[ at byte N]: <message>"`.
    [[nodiscard]] std::string to_string() const;

    /// The file or URL the error is in, empty when no layer named one. The
    /// message names it too.
    [[nodiscard]] std::string_view file() const noexcept;
    /// The name of the tensor the error is in, empty when unknown.
    [[nodiscard]] std::string_view tensor() const noexcept;
    /// The field, section or KV key the error is in, empty when unknown.
    [[nodiscard]] std::string_view field() const noexcept;
    /// The operating system's error number (`errno`) behind a failed system
    /// call (`kIoError` from `open`, `pread`, `write`...; `ENOENT` for a path
    /// that names nothing), 0 when the error did not come from one. The
    /// message says it in words too.
    [[nodiscard]] int os_error() const noexcept { return os_error_; }
    /// This error with `os_error()` set to `err`.
    [[nodiscard]] Error with_os_error(int err) && {
        os_error_ = err;
        return std::move(*this);
    }

    /// This error with `context` added: its prefix before the message, its
    /// base added to the offset, and its file, tensor and field recorded where
    /// the error has none yet (the innermost layer knows best).
    [[nodiscard]] Error with_context(const ErrorContext& context) const&;
    /// This error with `context` added (see the const overload), reusing its storage.
    [[nodiscard]] Error with_context(const ErrorContext& context) &&;

    /// This error without its file: when the message still starts with the file
    /// and `": "` put there by `with_context` (a prefix that began with the
    /// file), it loses them; `file()` becomes empty. For callers that print the
    /// path themselves.
    [[nodiscard]] Error without_file() const;

    /// Returns a copy whose offset is shifted by `base` (for nested parsers).
    [[nodiscard]] Error rebased(uint64_t base) const {
        Error e = *this;
        if (e.offset_ != kNoOffset) {
            e.offset_ += base;
        }
        return e;
    }

private:
    struct Where;  // file, tensor, field; allocated only when one is known
    struct WhereDeleter {
        void operator()(Where* w) const noexcept;
    };

    ErrorCode code_;
    int os_error_ = 0;
    uint64_t offset_;
    std::string message_;
    std::unique_ptr<Where, WhereDeleter> where_;
};

/// What `Result` and `Status` do when misused: print one line to stderr, then
/// call `std::abort()`, in release builds too. Public because the inline
/// templates below call it; a program has no reason to call it directly.
struct HURRAY_CORE_EXPORT ResultMisuse {
    /// A checked accessor (`accessor`, e.g. `"value()"`) used on an error
    /// `Result`; the line carries the error's `to_string()`.
    [[noreturn]] static void value_of_error(const char* accessor, const Error& error) noexcept;

    /// `error()` called on a successful `Result` or `Status` (`kind`).
    [[noreturn]] static void error_of_success(const char* kind) noexcept;

    /// A `Result` or `Status` (`kind`) constructed from an `Error` whose code is
    /// `ErrorCode::kOk`; the line carries the error's message.
    [[noreturn]] static void from_ok_error(const char* kind, const Error& error) noexcept;
};

/// Either a value of type `T` or an `Error`.
///
/// A minimal counterpart of `std::expected` (unavailable with the toolchains we
/// support). Misuse fails loudly, in release builds too: the checked accessors
/// (`value()`, `operator*`, `operator->`) called on an error, `error()` called on
/// a value, and a `Result` built from an `Error` with code `ErrorCode::kOk` each
/// print one line to stderr naming the misuse (and the error's `to_string()`,
/// where there is one) and abort the process. A check is one predictable branch;
/// the reporting is out of line. Hot paths that have already tested `ok()` may use
/// `value_unchecked()`, whose precondition is not checked.
///
/// `T` must be nothrow move constructible, so that assignment never leaves a
/// `Result` without a live value or error. Copy assignment builds the copy before
/// touching `*this`: a throwing copy constructor leaves the target unchanged.
///
/// @code
/// hurray::Result<int> parse(std::string_view s);
/// auto r = parse("42");
/// if (!r) { std::puts(r.error().to_string().c_str()); return; }
/// int v = *r;
/// @endcode
template <typename T>
class [[nodiscard]] Result {
    static_assert(!std::is_reference_v<T>, "Result<T&> is not supported");
    static_assert(!std::is_same_v<std::remove_cv_t<T>, Error>, "Result<Error> is ambiguous");
    static_assert(std::is_nothrow_move_constructible_v<T>,
                  "Result<T> needs a T whose move constructor is noexcept");

public:
    /// A successful result holding `value`.
    Result(T value) noexcept : has_value_(true) {  // NOLINT
        ::new (&storage_.value) T(std::move(value));
    }
    /// A failed result holding `error`. Aborts when `error.code()` is
    /// `ErrorCode::kOk`: an error that is no error is a bug at the call site.
    Result(Error error) noexcept : has_value_(false) {  // NOLINT
        if (error.code() == ErrorCode::kOk) [[unlikely]] {
            ResultMisuse::from_ok_error("Result", error);
        }
        ::new (&storage_.error) Error(std::move(error));
    }

    /// Copy constructor.
    Result(const Result& other) : has_value_(other.has_value_) {
        if (has_value_) {
            ::new (&storage_.value) T(other.storage_.value);
        } else {
            ::new (&storage_.error) Error(other.storage_.error);
        }
    }
    /// Move constructor.
    Result(Result&& other) noexcept : has_value_(other.has_value_) {
        if (has_value_) {
            ::new (&storage_.value) T(std::move(other.storage_.value));
        } else {
            ::new (&storage_.error) Error(std::move(other.storage_.error));
        }
    }
    /// Copy assignment. The copy is made first; if it throws, `*this` is unchanged.
    Result& operator=(const Result& other) {
        if (this != &other) {
            Result copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    /// Move assignment.
    Result& operator=(Result&& other) noexcept {
        if (this != &other) {
            destroy();
            // Cannot throw (T and Error are nothrow move constructible), so the
            // storage is never left without a live member.
            has_value_ = other.has_value_;
            if (has_value_) {
                ::new (&storage_.value) T(std::move(other.storage_.value));
            } else {
                ::new (&storage_.error) Error(std::move(other.storage_.error));
            }
        }
        return *this;
    }
    ~Result() { destroy(); }

    /// Whether this result holds a value.
    [[nodiscard]] bool ok() const noexcept { return has_value_; }
    /// Same as `ok()`.
    explicit operator bool() const noexcept { return has_value_; }

    /// The value. Aborts with a message when this result is an error.
    [[nodiscard]] T& value() & noexcept {
        check_value("value()");
        return storage_.value;
    }
    /// The value. Aborts with a message when this result is an error.
    [[nodiscard]] const T& value() const& noexcept {
        check_value("value()");
        return storage_.value;
    }
    /// The value, moved out. Aborts with a message when this result is an error.
    [[nodiscard]] T&& value() && noexcept {
        check_value("value()");
        return std::move(storage_.value);
    }
    /// The value. Aborts with a message when this result is an error.
    [[nodiscard]] T& operator*() & noexcept {
        check_value("operator*");
        return storage_.value;
    }
    /// The value. Aborts with a message when this result is an error.
    [[nodiscard]] const T& operator*() const& noexcept {
        check_value("operator*");
        return storage_.value;
    }
    /// The value, moved out. Aborts with a message when this result is an error.
    [[nodiscard]] T&& operator*() && noexcept {
        check_value("operator*");
        return std::move(storage_.value);
    }
    /// Member access to the value. Aborts with a message when this result is an error.
    [[nodiscard]] T* operator->() noexcept {
        check_value("operator->");
        return &storage_.value;
    }
    /// Member access to the value. Aborts with a message when this result is an error.
    [[nodiscard]] const T* operator->() const noexcept {
        check_value("operator->");
        return &storage_.value;
    }

    /// The value. Precondition `ok()`, not checked (undefined behaviour otherwise):
    /// for hot paths that have just tested `ok()`.
    [[nodiscard]] T& value_unchecked() & noexcept { return storage_.value; }
    /// The value. Precondition `ok()`, not checked (undefined behaviour otherwise).
    [[nodiscard]] const T& value_unchecked() const& noexcept { return storage_.value; }
    /// The value, moved out. Precondition `ok()`, not checked (undefined behaviour
    /// otherwise).
    [[nodiscard]] T&& value_unchecked() && noexcept { return std::move(storage_.value); }

    /// The error. Aborts with a message when this result holds a value.
    [[nodiscard]] const Error& error() const& noexcept {
        check_error();
        return storage_.error;
    }
    /// The error, moved out. Aborts with a message when this result holds a value.
    [[nodiscard]] Error&& error() && noexcept {
        check_error();
        return std::move(storage_.error);
    }

    /// The value, or `fallback` when this result is an error.
    [[nodiscard]] T value_or(T fallback) const& { return has_value_ ? storage_.value : fallback; }
    /// The value moved out, or `fallback` when this result is an error.
    [[nodiscard]] T value_or(T fallback) && noexcept {
        return has_value_ ? std::move(storage_.value) : std::move(fallback);
    }

private:
    void check_value(const char* accessor) const noexcept {
        if (!has_value_) [[unlikely]] {
            ResultMisuse::value_of_error(accessor, storage_.error);
        }
    }
    void check_error() const noexcept {
        if (has_value_) [[unlikely]] {
            ResultMisuse::error_of_success("Result");
        }
    }
    void destroy() noexcept {
        if (has_value_) {
            storage_.value.~T();
        } else {
            storage_.error.~Error();
        }
    }
    union Storage {
        Storage() {}   // NOLINT(modernize-use-equals-default): union with non-trivial members
        ~Storage() {}  // NOLINT(modernize-use-equals-default)
        T value;
        Error error;
    } storage_;
    bool has_value_;
};

/// The result of an operation that produces no value: success or an `Error`.
///
/// Misuse fails loudly like `Result<T>`: `error()` on a success, and a `Status`
/// built from an `Error` with code `ErrorCode::kOk`, print one line to stderr and
/// abort the process.
///
/// @code
/// hurray::Status check(int v) {
///     if (v < 0) return hurray::Error(hurray::ErrorCode::kInvalidArgument, "v: negative");
///     return hurray::Status::success();
/// }
/// @endcode
template <>
class [[nodiscard]] Result<void> {
public:
    /// A successful status. Nothing but a flag is set: a success costs no
    /// `Error` to build or destroy (the error is held only on failure).
    Result() noexcept {}  // NOLINT(modernize-use-equals-default): the union member stays unconstructed
    /// A failed status holding `error`. Aborts when `error.code()` is
    /// `ErrorCode::kOk`: an error that is no error is a bug at the call site.
    Result(Error error) noexcept : failed_(true) {  // NOLINT
        if (error.code() == ErrorCode::kOk) [[unlikely]] {
            ResultMisuse::from_ok_error("Status", error);
        }
        ::new (&storage_.error) Error(std::move(error));
    }
    /// Copy constructor.
    Result(const Result& other) : failed_(other.failed_) {
        if (failed_) {
            ::new (&storage_.error) Error(other.storage_.error);
        }
    }
    /// Move constructor.
    Result(Result&& other) noexcept : failed_(other.failed_) {
        if (failed_) {
            ::new (&storage_.error) Error(std::move(other.storage_.error));
        }
    }
    /// Copy assignment. The copy is made first; if it throws, `*this` is unchanged.
    Result& operator=(const Result& other) {
        if (this != &other) {
            Result copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    /// Move assignment.
    Result& operator=(Result&& other) noexcept {
        if (this != &other) {
            destroy();
            failed_ = other.failed_;
            if (failed_) {
                ::new (&storage_.error) Error(std::move(other.storage_.error));
            }
        }
        return *this;
    }
    ~Result() { destroy(); }

    /// A successful status (reads better at call sites than `{}`).
    [[nodiscard]] static Result success() noexcept { return {}; }

    /// Whether the operation succeeded.
    [[nodiscard]] bool ok() const noexcept { return !failed_; }
    /// Same as `ok()`.
    explicit operator bool() const noexcept { return !failed_; }
    /// The error. Aborts with a message when the operation succeeded.
    [[nodiscard]] const Error& error() const& noexcept {
        check_error();
        return storage_.error;
    }
    /// The error, moved out. Aborts with a message when the operation succeeded.
    [[nodiscard]] Error&& error() && noexcept {
        check_error();
        return std::move(storage_.error);
    }

private:
    void check_error() const noexcept {
        if (!failed_) [[unlikely]] {
            ResultMisuse::error_of_success("Status");
        }
    }
    void destroy() noexcept {
        if (failed_) {
            storage_.error.~Error();
            failed_ = false;
        }
    }
    // The error lives in the union only while the status is a failure.
    union Storage {
        Storage() {}   // NOLINT(modernize-use-equals-default): union with a non-trivial member
        ~Storage() {}  // NOLINT(modernize-use-equals-default)
        Error error;
    } storage_;
    bool failed_ = false;
};

/// Success or an `Error`.
using Status = Result<void>;

}  // namespace hurray

/// Evaluates `expr` (a `Status` or `Result<T>`); returns its error from the
/// enclosing function when it failed.
#define HURRAY_RETURN_IF_ERROR(expr)                          \
    do {                                                      \
        auto&& hurray_status_ = (expr);                       \
        if (!hurray_status_.ok()) {                           \
            return std::move(hurray_status_).error();         \
        }                                                     \
    } while (false)

#define HURRAY_CONCAT_INNER_(a, b) a##b
#define HURRAY_CONCAT_(a, b) HURRAY_CONCAT_INNER_(a, b)

/// `HURRAY_ASSIGN_OR_RETURN(auto x, f());` declares `x` from the value of
/// `f()`, or returns its error from the enclosing function. (`ok()` is tested
/// right before, so the value is taken with `value_unchecked()`.)
#define HURRAY_ASSIGN_OR_RETURN(lhs, expr)                                    \
    auto HURRAY_CONCAT_(hurray_result_, __LINE__) = (expr);                   \
    if (!HURRAY_CONCAT_(hurray_result_, __LINE__).ok()) {                     \
        return std::move(HURRAY_CONCAT_(hurray_result_, __LINE__)).error();   \
    }                                                                         \
    lhs = std::move(HURRAY_CONCAT_(hurray_result_, __LINE__)).value_unchecked()  /* NOLINT(bugprone-macro-parentheses): lhs is a declaration */
