// SPDX-License-Identifier: Apache-2.0
// FileReadOptions::descriptors (DescriptorCheck): kPeek, kFull and kLazy read
// valid files alike and report the same errors for bad descriptors, at open
// (kFull; kPeek for a bad magic or length) or on first use; name lookup over
// large unsorted indexes; duplicate names reported as check_index_names does.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/index_codec.hpp"

namespace hurray {
namespace {

using test::build_file;
using test::BuildOptions;
using test::Bytes;
using test::dense;
using test::must;
using test::TempDir;
using test::TestTensor;

constexpr DescriptorCheck kModes[] = {DescriptorCheck::kPeek, DescriptorCheck::kFull,
                                      DescriptorCheck::kLazy};

/// `prefix` then the decimal `n` then `suffix` (appended: GCC 12 warns falsely
/// on `"literal" + std::string` at -O3).
std::string named(const char* prefix, int n, const char* suffix = "") {
    std::string s(prefix);
    s.append(std::to_string(n)).append(suffix);
    return s;
}

FileReadOptions with(DescriptorCheck mode, bool use_mmap = true) {
    FileReadOptions o;
    o.descriptors = mode;
    o.use_mmap = use_mmap;
    return o;
}

std::vector<TestTensor> three() {
    return {dense("a", ElementType::kFloat32, {2, 3}), dense("b", ElementType::kInt8, {5}),
            dense("c", ElementType::kUInt16, {4, 2})};
}

/// `three()` with tensor `b`'s descriptor bytes edited by `edit`.
Bytes with_bad_b(void (*edit)(Bytes&)) {
    auto tensors = three();
    Bytes raw = must(encode(tensors[1].desc));
    edit(raw);
    tensors[1].raw_descriptor = raw;
    return build_file(tensors).bytes;
}

TEST(FileReaderCheck, EveryModeReadsTheSameTensors) {
    const Bytes bytes = build_file(test::nested_composites()).bytes;
    TempDir dir;
    const std::string path = dir.write("n.hrry", bytes);
    const FileReader ref = must(FileReader::open_memory(bytes));
    for (const DescriptorCheck mode : kModes) {
        for (const bool mm : {true, false}) {
            const FileReader r = must(FileReader::open(path, with(mode, mm)));
            ASSERT_EQ(r.tensor_count(), ref.tensor_count());
            EXPECT_TRUE(r.check_all().ok());
            for (size_t i = 0; i < r.tensor_count(); ++i) {
                EXPECT_EQ(r.entry(i), ref.entry(i));
                EXPECT_EQ(*must(r.descriptor(i)), *must(ref.descriptor(i)));
                auto t = r.tensor(i);
                auto u = ref.tensor(i);
                ASSERT_TRUE(t.ok()) << t.error().to_string();
                ASSERT_EQ(t->buffers().size(), u->buffers().size());
                for (size_t b = 0; b < t->buffers().size(); ++b) {
                    EXPECT_TRUE(
                        std::equal(t->buffers()[b].span().begin(), t->buffers()[b].span().end(),
                                   u->buffers()[b].span().begin(), u->buffers()[b].span().end()));
                }
            }
            EXPECT_EQ(std::vector<size_t>(r.write_order().begin(), r.write_order().end()),
                      std::vector<size_t>(ref.write_order().begin(), ref.write_order().end()));
        }
    }
}

TEST(FileReaderCheck, BadDescriptorBodyFailsOpenOnlyWhenFull) {
    // Reserved flag bit 7 set: the magic and length are fine, the decode fails.
    const Bytes bytes = with_bad_b([](Bytes& d) { d[10] |= 0x80; });
    auto peek = FileReader::open_memory(bytes, {}, with(DescriptorCheck::kPeek));
    ASSERT_TRUE(peek.ok()) << peek.error().to_string();
    auto expected = peek->descriptor(1);
    ASSERT_FALSE(expected.ok());
    EXPECT_EQ(expected.error().code(), ErrorCode::kReservedFlagBits);

    auto full = FileReader::open_memory(bytes, {}, with(DescriptorCheck::kFull));
    ASSERT_FALSE(full.ok());
    EXPECT_EQ(full.error().code(), expected.error().code());
    EXPECT_EQ(full.error().message(), expected.error().message());
    EXPECT_EQ(full.error().offset(), expected.error().offset());

    auto lazy = FileReader::open_memory(bytes, {}, with(DescriptorCheck::kLazy));
    ASSERT_TRUE(lazy.ok()) << lazy.error().to_string();
    EXPECT_TRUE(lazy->tensor(0).ok());
    auto t = lazy->tensor(1);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().message(), expected.error().message());
    EXPECT_EQ(t.error().offset(), expected.error().offset());
    EXPECT_FALSE(lazy->tensor("b").ok());
    EXPECT_TRUE(lazy->tensor(2).ok());
}

TEST(FileReaderCheck, BadMagicIsReportedOnFirstUseWhenLazy) {
    const Bytes bytes = with_bad_b([](Bytes& d) { d[0] = 'X'; });
    for (const DescriptorCheck mode : {DescriptorCheck::kPeek, DescriptorCheck::kFull}) {
        auto r = FileReader::open_memory(bytes, {}, with(mode));
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidMagic);
    }
    const Error at_open = FileReader::open_memory(bytes).error();
    auto lazy = FileReader::open_memory(bytes, {}, with(DescriptorCheck::kLazy));
    ASSERT_TRUE(lazy.ok()) << lazy.error().to_string();
    EXPECT_EQ(lazy->entry(1).name, "b");       // names and offsets without a descriptor
    for (int round = 0; round < 2; ++round) {  // the error is kept
        auto d = lazy->descriptor(1);
        ASSERT_FALSE(d.ok());
        EXPECT_EQ(d.error().code(), at_open.code());
        EXPECT_EQ(d.error().message(), at_open.message());
        EXPECT_EQ(d.error().offset(), at_open.offset());
    }
    EXPECT_FALSE(lazy->tensor(1).ok());
    EXPECT_FALSE(lazy->check_all().ok());
    EXPECT_TRUE(lazy->tensor(0).ok());
}

TEST(FileReaderCheck, LengthDisagreementIsReportedOnFirstUseWhenLazy) {
    // The descriptor's own length one less than the index says.
    const Bytes bytes = with_bad_b([](Bytes& d) { --d[kDescriptorLengthOffset]; });
    const Error at_open = FileReader::open_memory(bytes).error();
    EXPECT_EQ(at_open.code(), ErrorCode::kInvalidFile);
    auto lazy = must(FileReader::open_memory(bytes, {}, with(DescriptorCheck::kLazy)));
    auto d = lazy.descriptor(1);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().message(), at_open.message());
    EXPECT_EQ(d.error().offset(), at_open.offset());
}

TEST(FileReaderCheck, LargeUnsortedIndexLooksUpEveryName) {
    std::vector<TestTensor> tensors;
    for (int i = 0; i < 3000; ++i) {
        tensors.push_back(
            dense(named("layer.", (i * 7919) % 3000, ".w"), ElementType::kUInt8, {1}));
    }
    const Bytes bytes = build_file(tensors, nullptr, BuildOptions{.alignment = 4096}).bytes;
    for (const DescriptorCheck mode : kModes) {
        const FileReader r = must(FileReader::open_memory(bytes, {}, with(mode)));
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            const auto at = r.find(r.entry(i).name);
            ASSERT_TRUE(at.has_value());
            EXPECT_EQ(*at, i);
        }
        EXPECT_FALSE(r.find("layer.3000.w").has_value());
        EXPECT_FALSE(r.find("").has_value());
        EXPECT_FALSE(r.find("layer.1.").has_value());
        EXPECT_EQ(r.tensor("nope").error().code(), ErrorCode::kNotFound);
    }
}

TEST(FileReaderCheck, DuplicateNamesReportedAsTheIndexCheckDoes) {
    std::vector<TestTensor> tensors;
    for (int i = 0; i < 40; ++i) {
        tensors.push_back(dense(named("t", i), ElementType::kUInt8, {1}));
    }
    BuildOptions opt;
    // Two duplicated names; the check names the pair that sorts first.
    opt.edit_index = [](std::vector<IndexEntry>& es) {
        es[30].name = es[5].name;   // "t5"
        es[20].name = es[12].name;  // "t12" sorts before "t5"
        es[35].name = es[12].name;
    };
    const auto f = build_file(tensors, nullptr, opt);
    const Error want = check_index_names(f.entries, false).error();
    for (const DescriptorCheck mode : kModes) {
        auto r = FileReader::open_memory(f.bytes, {}, with(mode));
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), ErrorCode::kDuplicateName);
        EXPECT_NE(r.error().message().find(want.message()), std::string::npos)
            << r.error().message();
        EXPECT_NE(r.error().message().find("'t12'"), std::string::npos) << r.error().message();
    }
}

TEST(FileReaderCheck, IndexOutOfWriteOrderStillChecksOverlaps) {
    // Entries listed in reverse write order: the write order is recovered,
    // and an overlap between two of them is still reported.
    std::vector<TestTensor> tensors;
    for (int i = 0; i < 100; ++i) {
        tensors.push_back(dense(named("t", i), ElementType::kUInt8, {3}));
    }
    BuildOptions opt;
    opt.edit_index = [](std::vector<IndexEntry>& es) { std::reverse(es.begin(), es.end()); };
    const auto f = build_file(tensors, nullptr, opt);
    const FileReader r = must(FileReader::open_memory(f.bytes));
    for (size_t k = 0; k < r.tensor_count(); ++k) {
        EXPECT_EQ(r.write_order()[k], r.tensor_count() - 1 - k);
    }
    BuildOptions bad = opt;
    bad.edit_index = [](std::vector<IndexEntry>& es) {
        std::reverse(es.begin(), es.end());
        es[10].data_offset = es[11].data_offset;  // two tensors share a data region
    };
    auto o = FileReader::open_memory(build_file(tensors, nullptr, bad).bytes);
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.error().code(), ErrorCode::kOverlap) << o.error().to_string();
}

}  // namespace
}  // namespace hurray
