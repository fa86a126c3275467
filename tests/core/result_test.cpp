// SPDX-License-Identifier: Apache-2.0
// Errors as values: Error, Result<T>, Status, the error-code names and the
// propagation macros (include/hurray/core/result.hpp).
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hurray/core/error_table.hpp"
#include "hurray/core/result.hpp"

namespace {

using hurray::Error;
using hurray::ErrorCode;
using hurray::Result;
using hurray::Status;

// Counts live instances so that copies, moves and destruction can be checked.
struct Tracked {
    static int live;
    int value = 0;
    explicit Tracked(int v) : value(v) { ++live; }
    Tracked(const Tracked& o) : value(o.value) { ++live; }
    Tracked(Tracked&& o) noexcept : value(o.value) {
        o.value = -1;
        ++live;
    }
    Tracked& operator=(const Tracked&) = default;
    Tracked& operator=(Tracked&&) = default;
    ~Tracked() { --live; }
};
int Tracked::live = 0;

// A payload whose copy constructor throws on demand (its move cannot throw).
struct ThrowingCopy {
    static int live;
    static bool throw_on_copy;
    int value = 0;
    explicit ThrowingCopy(int v) : value(v) { ++live; }
    ThrowingCopy(const ThrowingCopy& o) : value(o.value) {
        if (throw_on_copy) {
            throw std::runtime_error("copy refused");
        }
        ++live;
    }
    ThrowingCopy(ThrowingCopy&& o) noexcept : value(o.value) { ++live; }
    ThrowingCopy& operator=(const ThrowingCopy&) = default;
    ThrowingCopy& operator=(ThrowingCopy&&) = default;
    ~ThrowingCopy() { --live; }
};
int ThrowingCopy::live = 0;
bool ThrowingCopy::throw_on_copy = false;

static_assert(std::is_nothrow_move_constructible_v<Result<std::string>>);
static_assert(std::is_nothrow_move_assignable_v<Result<std::string>>);
static_assert(std::is_nothrow_move_constructible_v<Status>);

constexpr ErrorCode kLastCode = ErrorCode::kCancelled;

// An error keeps its code, message and offset; kNoOffset means "none".
TEST(Error, HoldsCodeMessageAndOffset) {
    const Error e(ErrorCode::kInvalidMagic, "magic: expected HRRY", 0);
    EXPECT_EQ(e.code(), ErrorCode::kInvalidMagic);
    EXPECT_EQ(e.message(), "magic: expected HRRY");
    EXPECT_EQ(e.offset(), 0U);
    EXPECT_TRUE(e.has_offset());

    const Error none(ErrorCode::kIoError, "read failed");
    EXPECT_EQ(none.offset(), Error::kNoOffset);
    EXPECT_FALSE(none.has_offset());
}

// to_string is "<code name>[ at byte N]: <message>".
TEST(Error, ToStringFormat) {
    EXPECT_EQ(Error(ErrorCode::kInvalidMagic, "magic: expected HRRY", 0).to_string(),
              "invalid_magic at byte 0: magic: expected HRRY");
    EXPECT_EQ(Error(ErrorCode::kTruncated, "shape: needs 8 bytes", 1234).to_string(),
              "truncated at byte 1234: shape: needs 8 bytes");
    EXPECT_EQ(Error(ErrorCode::kInvalidArgument, "x").to_string(), "invalid_argument: x");
    EXPECT_EQ(Error(ErrorCode::kInvalidArgument, "").to_string(), "invalid_argument: ");
}

// rebased shifts a known offset (nested parsers) and leaves "none" alone.
TEST(Error, RebasedShiftsOnlyKnownOffsets) {
    const Error e(ErrorCode::kTruncated, "m", 5);
    const Error r = e.rebased(100);
    EXPECT_EQ(r.offset(), 105U);
    EXPECT_EQ(r.code(), e.code());
    EXPECT_EQ(r.message(), e.message());
    EXPECT_EQ(e.offset(), 5U);  // the original is unchanged
    EXPECT_FALSE(Error(ErrorCode::kTruncated, "m").rebased(100).has_offset());
}

// Every code has a non-empty, distinct, stable name; an out-of-range value has a fallback.
TEST(Error, WithContextPrefixesMovesTheOffsetAndRecordsTheParts) {
    const Error inner(ErrorCode::kTruncated, "shape[2]: 3 bytes left", 10);
    const Error e = inner.with_context({.prefix = "tensor 'w'", .tensor = "w", .field = "shape", .base = 100});
    EXPECT_EQ(e.code(), ErrorCode::kTruncated);
    EXPECT_EQ(e.message(), "tensor 'w': shape[2]: 3 bytes left");
    EXPECT_EQ(e.offset(), 110U);
    EXPECT_EQ(e.tensor(), "w");
    EXPECT_EQ(e.field(), "shape");
    EXPECT_TRUE(e.file().empty());
    // The original is untouched (the const overload copies).
    EXPECT_EQ(inner.message(), "shape[2]: 3 bytes left");
    EXPECT_TRUE(inner.tensor().empty());
}

TEST(Error, OsErrorIsKeptThroughContextCopiesAndMoves) {
    EXPECT_EQ(Error(ErrorCode::kIoError, "x").os_error(), 0) << "not from a system call";
    const Error e = Error(ErrorCode::kIoError, "open 'm.hrry': No such file or directory").with_os_error(2);
    EXPECT_EQ(e.os_error(), 2);
    const Error wrapped = e.with_context({.prefix = "m.hrry", .file = "m.hrry"});
    EXPECT_EQ(wrapped.os_error(), 2);
    Error copy = wrapped;
    EXPECT_EQ(copy.os_error(), 2);
    Error moved = std::move(copy).with_context({.prefix = "load"});
    EXPECT_EQ(moved.os_error(), 2);
    EXPECT_EQ(moved.without_file().os_error(), 2);
    EXPECT_EQ(moved.rebased(4).os_error(), 2);
    Result<int> r = moved;
    EXPECT_EQ(r.error().os_error(), 2);
}

TEST(Error, WithContextKeepsTheInnermostPartsAndFillsAMissingOffset) {
    Error e(ErrorCode::kInvalidLayout, "stride: zero");
    EXPECT_TRUE(e.file().empty() && e.tensor().empty() && e.field().empty());
    e = std::move(e).with_context({.tensor = "member", .offset = 42});
    EXPECT_EQ(e.message(), "stride: zero");  // no prefix, no text
    EXPECT_EQ(e.offset(), 42U);
    e = std::move(e).with_context({.prefix = "m.hrry", .file = "m.hrry", .tensor = "head", .offset = 7});
    EXPECT_EQ(e.tensor(), "member");  // the inner layer knew best
    EXPECT_EQ(e.file(), "m.hrry");
    EXPECT_EQ(e.offset(), 42U);  // an offset it has is kept
    e = std::move(e).with_context({.prefix = "outer", .file = "other.hrry"});
    EXPECT_EQ(e.file(), "m.hrry");
    EXPECT_EQ(e.message(), "outer: m.hrry: stride: zero");
    // A context without an offset leaves an error without one as it is.
    const Error bare = Error(ErrorCode::kIoError, "x").with_context({.prefix = "p"});
    EXPECT_FALSE(bare.has_offset());
}

TEST(Error, WithoutFileDropsTheFilePrefixOnlyWhenItIsFirst) {
    const Error inner(ErrorCode::kInvalidFile, "header: bad magic", 0);
    const Error named = inner.with_context({.prefix = "a/m.safetensors", .file = "a/m.safetensors"});
    EXPECT_EQ(named.message(), "a/m.safetensors: header: bad magic");
    const Error bare = named.without_file();
    EXPECT_EQ(bare.message(), "header: bad magic");
    EXPECT_TRUE(bare.file().empty());
    EXPECT_EQ(bare.offset(), 0U);
    // A prefix that starts with the file loses only the file.
    const Error verify = inner.with_context({.prefix = "m.npz: verify", .file = "m.npz"});
    EXPECT_EQ(verify.without_file().message(), "verify: header: bad magic");
    // Something put before the file since: the text stays whole.
    const Error wrapped = named.with_context({.prefix = "convert"});
    EXPECT_EQ(wrapped.without_file().message(), wrapped.message());
    // A file named elsewhere in the text ("open 'x': ..."): recorded, text kept.
    const Error quoted =
        Error(ErrorCode::kIoError, "open 'x': No such file or directory").with_context({.file = "x"});
    EXPECT_EQ(quoted.file(), "x");
    EXPECT_EQ(quoted.without_file().message(), "open 'x': No such file or directory");
    // An error without context is its own without_file.
    EXPECT_EQ(inner.without_file().message(), inner.message());
}

TEST(Error, ContextSurvivesCopiesMovesAndResults) {
    Error e = Error(ErrorCode::kNotFound, "no tensor").with_context({.file = "f", .tensor = "t", .field = "k"});
    Error copy(e);
    Error assigned(ErrorCode::kIoError, "x");
    assigned = copy;
    EXPECT_EQ(assigned.tensor(), "t");
    EXPECT_EQ(assigned.file(), "f");
    Result<int> r(std::move(copy));
    const Result<int> r2 = r;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(r2.error().field(), "k");
    Status st(std::move(assigned));
    EXPECT_EQ(std::move(st).error().tensor(), "t");
    EXPECT_EQ(e.field(), "k");
}

TEST(ErrorTable, OneRowPerCodeThatEveryBindingReads) {
    for (size_t i = 0; i < hurray::kErrorPresentations.size(); ++i) {
        const auto code = static_cast<ErrorCode>(i);
        const hurray::ErrorPresentation* row = hurray::find_error_presentation(code);
        ASSERT_NE(row, nullptr);
        EXPECT_EQ(row->code, code);
        if (code == ErrorCode::kOk) {
            EXPECT_EQ(row->c_status, 0);
            EXPECT_EQ(row->exit_code, 0);
            continue;
        }
        EXPECT_LT(row->c_status, 0) << hurray::error_code_name(code);  // a HURRAY_ERR_* status
        EXPECT_NE(row->exit_code, 0) << hurray::error_code_name(code);
        for (const hurray::PythonError p : row->python) {
            EXPECT_NE(p, hurray::PythonError::kNone) << hurray::error_code_name(code);
        }
    }
    EXPECT_EQ(hurray::find_error_presentation(ErrorCode::kCancelled)->exit_code, 130);
    EXPECT_EQ(hurray::find_error_presentation(static_cast<ErrorCode>(hurray::kErrorPresentations.size())), nullptr);
}

TEST(Error, EveryCodeHasADistinctName) {
    std::set<std::string_view> names;
    for (uint16_t v = 0; v <= static_cast<uint16_t>(kLastCode); ++v) {
        const std::string_view name = hurray::error_code_name(static_cast<ErrorCode>(v));
        EXPECT_FALSE(name.empty()) << v;
        EXPECT_NE(name, "unknown_error") << v;
        EXPECT_EQ(name.find(' '), std::string_view::npos) << name;
        EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    }
    EXPECT_EQ(names.size(), static_cast<size_t>(kLastCode) + 1);
    EXPECT_EQ(hurray::error_code_name(ErrorCode::kOk), "ok");
    EXPECT_EQ(hurray::error_code_name(ErrorCode::kTruncated), "truncated");
    EXPECT_EQ(hurray::error_code_name(ErrorCode::kRankTooLarge), "rank_too_large");
    EXPECT_EQ(hurray::error_code_name(static_cast<ErrorCode>(static_cast<uint16_t>(kLastCode) + 1)),
              "unknown_error");
    EXPECT_EQ(hurray::error_code_name(static_cast<ErrorCode>(0xFFFF)), "unknown_error");
}

// The numeric values are stable (a planned C ABI will expose them) and must not move.
TEST(Error, CodeValuesAreStable) {
    EXPECT_EQ(static_cast<int>(ErrorCode::kOk), 0);
    EXPECT_EQ(static_cast<int>(ErrorCode::kTruncated), 1);
    EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidMagic), 2);
    EXPECT_EQ(static_cast<int>(ErrorCode::kRankTooLarge), 10);
    EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidComposite), 31);
    EXPECT_EQ(static_cast<int>(ErrorCode::kUnsupported), 38);
    EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidDocument), 39);
    EXPECT_EQ(static_cast<int>(ErrorCode::kTypeMismatch), 44);
}

// A value result: ok, the value through every accessor, value_or ignores the fallback.
TEST(Result, HoldsAValue) {
    Result<std::string> r(std::string("hurray"));
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(static_cast<bool>(r));
    EXPECT_EQ(r.value(), "hurray");
    EXPECT_EQ(*r, "hurray");
    EXPECT_EQ(r->size(), 6U);
    EXPECT_EQ(r.value_or("fallback"), "hurray");
    r.value() += "!";
    EXPECT_EQ(*r, "hurray!");
    const Result<std::string>& c = r;
    EXPECT_EQ(c.value(), "hurray!");
    EXPECT_EQ(*c, "hurray!");
    EXPECT_EQ(c->front(), 'h');
    std::string moved = std::move(r).value();
    EXPECT_EQ(moved, "hurray!");
}

// An error result: not ok, the error, value_or returns the fallback.
TEST(Result, HoldsAnError) {
    Result<int> r(Error(ErrorCode::kNotFound, "tensor \"w\"", 9));
    EXPECT_FALSE(r.ok());
    EXPECT_FALSE(static_cast<bool>(r));
    EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
    EXPECT_EQ(r.error().message(), "tensor \"w\"");
    EXPECT_EQ(r.error().offset(), 9U);
    EXPECT_EQ(r.value_or(42), 42);
    Error e = std::move(r).error();
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
}

// Copies are deep and independent; both alternatives copy.
TEST(Result, CopyConstructionAndAssignment) {
    const Result<std::string> value(std::string("a"));
    const Result<std::string> error(Error(ErrorCode::kIoError, "e"));
    Result<std::string> v2(value);
    Result<std::string> e2(error);
    EXPECT_EQ(*v2, "a");
    EXPECT_EQ(e2.error().code(), ErrorCode::kIoError);
    *v2 = "b";
    EXPECT_EQ(*value, "a");

    // value <- error, error <- value
    v2 = error;
    ASSERT_FALSE(v2.ok());
    EXPECT_EQ(v2.error().message(), "e");
    e2 = value;
    ASSERT_TRUE(e2.ok());
    EXPECT_EQ(*e2, "a");
    // self-assignment is harmless
    Result<std::string>& self = e2;
    e2 = self;
    EXPECT_EQ(*e2, "a");
}

// GCC 12 at -O1 with the sanitizers reports the inactive union member of a
// moved-from Result as "maybe uninitialized" (a false positive: has_value_
// selects the member that is read).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Moves transfer the value or error; move-only payloads work.
TEST(Result, MoveConstructionAndAssignment) {
    Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
    Result<std::unique_ptr<int>> moved(std::move(r));
    ASSERT_TRUE(moved.ok());
    EXPECT_EQ(**moved, 7);

    Result<std::unique_ptr<int>> err(Error(ErrorCode::kInvalidData, "bad"));
    moved = std::move(err);
    ASSERT_FALSE(moved.ok());
    EXPECT_EQ(moved.error().message(), "bad");

    moved = Result<std::unique_ptr<int>>(std::make_unique<int>(8));
    ASSERT_TRUE(moved.ok());
    EXPECT_EQ(**moved, 8);
    std::unique_ptr<int> out = std::move(moved).value();
    EXPECT_EQ(*out, 8);
}
#pragma GCC diagnostic pop

// Every constructed payload is destroyed exactly once across copies, moves and reassignment.
TEST(Result, PayloadLifetimesBalance) {
    Tracked::live = 0;
    {
        Result<Tracked> a(Tracked(1));
        EXPECT_EQ(Tracked::live, 1);
        Result<Tracked> b(a);
        EXPECT_EQ(Tracked::live, 2);
        Result<Tracked> c(std::move(a));
        EXPECT_EQ(Tracked::live, 3);  // the moved-from value still exists
        EXPECT_EQ(c->value, 1);
        b = Result<Tracked>(Error(ErrorCode::kIoError, "x"));
        EXPECT_EQ(Tracked::live, 2);
        b = c;
        EXPECT_EQ(Tracked::live, 3);
        c = Result<Tracked>(Error(ErrorCode::kIoError, "y"));
        EXPECT_EQ(Tracked::live, 2);
    }
    EXPECT_EQ(Tracked::live, 0);
}

// Copy assignment between every pair of states: value <- value, value <- error,
// error <- value, error <- error; payloads are destroyed exactly once.
TEST(Result, CopyAssignmentBetweenStates) {
    Tracked::live = 0;
    {
        const Result<Tracked> one(Tracked(1));
        const Result<Tracked> two(Tracked(2));
        const Result<Tracked> err_a(Error(ErrorCode::kIoError, "a"));
        const Result<Tracked> err_b(Error(ErrorCode::kNotFound, "b", 4));
        EXPECT_EQ(Tracked::live, 2);

        Result<Tracked> r(one);
        r = two;  // value <- value
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->value, 2);
        EXPECT_EQ(Tracked::live, 3);
        r = err_a;  // value <- error
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().message(), "a");
        EXPECT_EQ(Tracked::live, 2);
        r = err_b;  // error <- error
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
        EXPECT_EQ(r.error().offset(), 4U);
        r = one;  // error <- value
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->value, 1);
        EXPECT_EQ(Tracked::live, 3);
        // The sources are untouched.
        EXPECT_EQ(one->value, 1);
        EXPECT_EQ(two->value, 2);
        EXPECT_EQ(err_a.error().message(), "a");
    }
    EXPECT_EQ(Tracked::live, 0);
}

// A copy constructor that throws during copy assignment leaves the target as it
// was (the copy is built before the target is touched), and nothing is
// destroyed twice.
TEST(Result, ThrowingCopyAssignmentLeavesTargetUnchanged) {
    ThrowingCopy::live = 0;
    ThrowingCopy::throw_on_copy = false;
    {
        const Result<ThrowingCopy> source(ThrowingCopy(2));
        Result<ThrowingCopy> value(ThrowingCopy(1));
        Result<ThrowingCopy> error(Error(ErrorCode::kIoError, "kept"));
        EXPECT_EQ(ThrowingCopy::live, 2);

        ThrowingCopy::throw_on_copy = true;
        EXPECT_THROW(value = source, std::runtime_error);
        EXPECT_THROW(error = source, std::runtime_error);
        ThrowingCopy::throw_on_copy = false;

        ASSERT_TRUE(value.ok());
        EXPECT_EQ(value->value, 1);
        ASSERT_FALSE(error.ok());
        EXPECT_EQ(error.error().message(), "kept");
        EXPECT_EQ(ThrowingCopy::live, 2);

        value = source;  // works again once copies succeed
        EXPECT_EQ(value->value, 2);
        EXPECT_EQ(ThrowingCopy::live, 2);
    }
    EXPECT_EQ(ThrowingCopy::live, 0);
}

// value_unchecked: the value without the check, lvalue, const and rvalue.
TEST(Result, ValueUnchecked) {
    Result<std::string> r(std::string("fast"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value_unchecked(), "fast");
    r.value_unchecked() += "er";
    const Result<std::string>& c = r;
    EXPECT_EQ(c.value_unchecked(), "faster");
    EXPECT_EQ(&c.value_unchecked(), &*r);
    std::string moved = std::move(r).value_unchecked();
    EXPECT_EQ(moved, "faster");
}

// value_or on an rvalue moves the value out (or returns the fallback).
TEST(Result, ValueOrOnRvalues) {
    Result<std::unique_ptr<int>> v(std::make_unique<int>(5));
    std::unique_ptr<int> got = std::move(v).value_or(nullptr);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(*got, 5);
    Result<std::unique_ptr<int>> e(Error(ErrorCode::kNotFound, "none"));
    EXPECT_EQ(std::move(e).value_or(std::make_unique<int>(6)).operator*(), 6);
}

// --- Misuse aborts the process with a message, release builds included ---------

class ResultDeathTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

Result<int> not_found() { return Error(ErrorCode::kNotFound, "tensor w", 9); }

constexpr const char* kNotFoundText = "not_found at byte 9: tensor w";

std::string value_misuse(const std::string& accessor) {
    return "hurray: " + accessor + " called on an error Result: " + kNotFoundText;
}

TEST_F(ResultDeathTest, ValueOfAnError) {
    Result<int> r = not_found();
    const Result<int>& c = r;
    EXPECT_DEATH((void)r.value(), value_misuse("value\\(\\)"));
    EXPECT_DEATH((void)c.value(), value_misuse("value\\(\\)"));
    EXPECT_DEATH((void)std::move(r).value(), value_misuse("value\\(\\)"));
}

TEST_F(ResultDeathTest, DereferenceOfAnError) {
    Result<int> r = not_found();
    const Result<int>& c = r;
    EXPECT_DEATH((void)*r, value_misuse("operator\\*"));
    EXPECT_DEATH((void)*c, value_misuse("operator\\*"));
    EXPECT_DEATH((void)*std::move(r), value_misuse("operator\\*"));
}

TEST_F(ResultDeathTest, MemberAccessOfAnError) {
    Result<std::string> r(Error(ErrorCode::kNotFound, "tensor w", 9));
    const Result<std::string>& c = r;
    EXPECT_DEATH((void)r->size(), value_misuse("operator->"));
    EXPECT_DEATH((void)c->size(), value_misuse("operator->"));
}

TEST_F(ResultDeathTest, ErrorOfASuccess) {
    Result<int> r(1);
    const Result<int>& c = r;
    EXPECT_DEATH((void)c.error(), "hurray: error\\(\\) called on a successful Result");
    EXPECT_DEATH((void)std::move(r).error(), "hurray: error\\(\\) called on a successful Result");
    Status s = Status::success();
    const Status& cs = s;
    EXPECT_DEATH((void)cs.error(), "hurray: error\\(\\) called on a successful Status");
    EXPECT_DEATH((void)std::move(s).error(), "hurray: error\\(\\) called on a successful Status");
}

TEST_F(ResultDeathTest, ResultFromAnOkError) {
    EXPECT_DEATH(
        {
            Result<int> r(Error(ErrorCode::kOk, "nothing wrong"));
            (void)r.ok();
        },
        "hurray: Result constructed from an Error with code ok \\(not an error\\): ok: nothing wrong");
}

TEST_F(ResultDeathTest, StatusFromAnOkError) {
    EXPECT_DEATH(
        {
            Status s(Error(ErrorCode::kOk, "nothing wrong", 3));
            (void)s.ok();
        },
        "hurray: Status constructed from an Error with code ok \\(not an error\\): ok at byte 3: nothing wrong");
}

// Status: success by default and via success(); an error otherwise; copyable.
TEST(Status, SuccessAndFailure) {
    const Status ok;
    EXPECT_TRUE(ok.ok());
    EXPECT_TRUE(static_cast<bool>(ok));
    EXPECT_TRUE(Status::success().ok());

    Status bad(Error(ErrorCode::kChecksumMismatch, "crc", 40));
    EXPECT_FALSE(bad.ok());
    EXPECT_FALSE(static_cast<bool>(bad));
    EXPECT_EQ(bad.error().code(), ErrorCode::kChecksumMismatch);
    EXPECT_EQ(bad.error().offset(), 40U);

    Status copy = bad;
    EXPECT_EQ(copy.error().message(), "crc");
    copy = Status::success();
    EXPECT_TRUE(copy.ok());
    EXPECT_FALSE(bad.ok());
    Error e = std::move(bad).error();
    EXPECT_EQ(e.message(), "crc");
}

// Status assignment between every pair of states: the error is there exactly while
// the status is a failure, and moved-from failures stay destructible.
TEST(Status, AssignmentBetweenStates) {
    const auto failed = [](const char* m) { return Status(Error(ErrorCode::kInvalidFile, m, 7)); };
    Status s = failed("one");
    s = failed("two");
    EXPECT_EQ(s.error().message(), "two");
    s = Status::success();
    EXPECT_TRUE(s.ok());
    s = failed("three");
    EXPECT_EQ(s.error().message(), "three");
    EXPECT_EQ(s.error().offset(), 7U);
    Status copy;
    copy = s;
    EXPECT_EQ(copy.error().message(), "three");
    const Status& same = copy;
    copy = same;  // self-assignment keeps the error
    EXPECT_EQ(copy.error().message(), "three");
    Status moved(std::move(copy));
    EXPECT_EQ(moved.error().message(), "three");
    Status target;
    target = std::move(moved);
    EXPECT_EQ(target.error().code(), ErrorCode::kInvalidFile);
    target = Status();
    EXPECT_TRUE(target.ok());
    Status from_success(target);
    EXPECT_TRUE(from_success.ok());
}

Status fail_if(bool fail) {
    if (fail) {
        return Error(ErrorCode::kInvalidArgument, "asked to fail", 3);
    }
    return Status::success();
}

Result<int> half(int v) {
    if (v % 2 != 0) {
        return Error(ErrorCode::kInvalidArgument, "odd");
    }
    return v / 2;
}

Status chain(bool fail, int* steps) {
    HURRAY_RETURN_IF_ERROR(fail_if(fail));
    ++*steps;
    return Status::success();
}

Result<int> quarter(int v) {
    HURRAY_ASSIGN_OR_RETURN(int h, half(v));
    HURRAY_ASSIGN_OR_RETURN(const int q, half(h));
    return q;
}

// HURRAY_RETURN_IF_ERROR and HURRAY_ASSIGN_OR_RETURN propagate the first error unchanged.
TEST(Status, PropagationMacros) {
    int steps = 0;
    EXPECT_TRUE(chain(false, &steps).ok());
    EXPECT_EQ(steps, 1);
    Status s = chain(true, &steps);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(steps, 1);
    EXPECT_EQ(s.error().message(), "asked to fail");
    EXPECT_EQ(s.error().offset(), 3U);

    auto q = quarter(12);
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(*q, 3);
    auto odd = quarter(6);  // 6 -> 3 -> odd
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.error().message(), "odd");
    EXPECT_FALSE(quarter(5).ok());
}

}  // namespace
