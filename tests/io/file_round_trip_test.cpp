// SPDX-License-Identifier: Apache-2.0
// Writer -> readers round trips over generated descriptors (every element
// type, layout and quantization scheme the descriptor generator covers),
// every KV type, every composition rule, sorted and unsorted indexes, the
// three alignments, empty tensors and zero-tensor files. Each file is read
// back by FileReader (mapped from a real file and from memory) and by
// SequentialFileReader (in small chunks), and compared with what was written.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "generated_tensors.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/sequential_file_reader.hpp"

namespace {

using namespace hurray;  // NOLINT(google-build-using-namespace): test brevity

/// One tensor to write: name, descriptor, buffer bytes.
using Item = hurray_test::GenTensor;
using Known = hurray_test::KnownIds;
using hurray_test::spans;

std::string name_of(uint64_t i) {
    std::string s("tensor.");
    s.append(std::to_string(i));
    return s;
}

std::vector<uint8_t> write_items(const std::vector<Item>& items, const KvMetadata& kv, FileWriterOptions opts) {
    MemorySink sink;
    auto w = FileWriter::create(sink, opts);
    EXPECT_TRUE(w.ok()) << w.error().to_string();
    if (!w.ok()) {
        return {};
    }
    for (const Item& it : items) {
        const auto s = spans(it);
        auto st = w->add_tensor(it.name, it.desc, s);
        EXPECT_TRUE(st.ok()) << it.name << ": " << st.error().to_string();
    }
    w->kv() = kv;
    auto st = w->finish();
    EXPECT_TRUE(st.ok()) << st.error().to_string();
    return std::move(sink).take();
}

/// Everything FileReader gives back equals what was written.
void check_random_access(const FileReader& file, const std::vector<Item>& items, const KvMetadata& kv,
                         bool sorted) {
    ASSERT_EQ(file.tensor_count(), items.size());
    EXPECT_EQ(file.kv(), kv);
    EXPECT_EQ((file.header().flags & file_flags::kSortedIndex) != 0, sorted);
    EXPECT_NE(file.header().flags & file_flags::kHasIndexCrc32c, 0U);
    EXPECT_NE(file.header().flags & file_flags::kHasKvMetadata, 0U);  // always written
    // Write order is item order.
    const auto order = file.write_order();
    ASSERT_EQ(order.size(), items.size());
    for (size_t k = 0; k < items.size(); ++k) {
        const size_t i = order[k];
        const Item& it = items[k];
        EXPECT_EQ(file.entry(i).name, it.name);
        auto found = file.find(it.name);
        ASSERT_TRUE(found.has_value()) << it.name;
        EXPECT_EQ(*found, i);
        auto t = file.tensor(i);
        ASSERT_TRUE(t.ok()) << it.name << ": " << t.error().to_string();
        EXPECT_EQ(t->descriptor(), it.desc) << it.name;
        ASSERT_EQ(t->buffers().size(), it.buffers.size());
        for (size_t b = 0; b < it.buffers.size(); ++b) {
            ASSERT_EQ(t->buffers()[b].size(), it.buffers[b].size()) << it.name << " buffer " << b;
            EXPECT_TRUE(std::equal(it.buffers[b].begin(), it.buffers[b].end(), t->buffers()[b].data()))
                << it.name << " buffer " << b;
            if (!it.buffers[b].empty()) {
                const auto addr = reinterpret_cast<uintptr_t>(t->buffers()[b].data());  // NOLINT
                const auto base = reinterpret_cast<uintptr_t>(t->buffers()[0].data());  // NOLINT
                EXPECT_EQ((addr - base) % file.header().data_buffer_alignment, 0U);
            }
        }
    }
    if (sorted) {
        for (size_t i = 1; i < file.tensor_count(); ++i) {
            EXPECT_LT(file.entry(i - 1).name, file.entry(i).name);
        }
    }
    auto all = file.check_all();
    EXPECT_TRUE(all.ok()) << all.error().to_string();
}

/// SequentialFileReader gives the same descriptors and bytes, chunk by chunk.
void check_sequential(std::span<const uint8_t> bytes, const std::vector<Item>& items, const KvMetadata& kv,
                      const Known& known, size_t max_chunk) {
    MemorySource src(bytes, max_chunk);
    SequentialReadOptions opts;
    opts.descriptor = known.decode_options();
    auto r = SequentialFileReader::open(src, opts);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    std::vector<uint8_t> chunk(97);
    for (const Item& it : items) {
        auto t = r->next();
        ASSERT_TRUE(t.ok()) << it.name << ": " << t.error().to_string();
        ASSERT_NE(*t, nullptr) << "ended before " << it.name;
        EXPECT_EQ((*t)->descriptor, it.desc) << it.name;
        std::vector<uint8_t> all;
        while (true) {
            auto n = r->read_data(chunk);
            ASSERT_TRUE(n.ok()) << n.error().to_string();
            if (*n == 0) {
                break;
            }
            all.insert(all.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        std::vector<uint8_t> expected;
        for (const auto& b : it.buffers) {
            expected.insert(expected.end(), b.begin(), b.end());
        }
        EXPECT_EQ(all, expected) << it.name;
    }
    auto end = r->next();
    ASSERT_TRUE(end.ok()) << end.error().to_string();
    EXPECT_EQ(*end, nullptr);
    EXPECT_EQ(r->kv(), kv);
    EXPECT_EQ(r->index().size(), items.size());
}

KvMetadata every_kv_type() {
    KvMetadata kv;
    EXPECT_TRUE(kv.add("general.architecture", KvValue::string("llama")));
    EXPECT_TRUE(kv.add("general.file_type", KvValue::int64(-1)));
    EXPECT_TRUE(kv.add("llama.vocab_size", KvValue::uint64(32000)));
    EXPECT_TRUE(kv.add("llama.rope.freq_base", KvValue::float64(10000.5)));
    EXPECT_TRUE(kv.add("llama.use_parallel_residual", KvValue::boolean(false)));
    EXPECT_TRUE(kv.add("tokenizer.blob", KvValue::bytes({0, 1, 2, 255})));
    EXPECT_TRUE(kv.add("tokenizer.tokens", KvValue::string_array({"<s>", "</s>", "\xE2\x96\x81the"})));
    EXPECT_TRUE(kv.add("tokenizer.ids", KvValue::int64_array({1, 2, -3})));
    EXPECT_TRUE(kv.add("dims", KvValue::uint64_array({4096, 11008})));
    EXPECT_TRUE(kv.add("scores", KvValue::float64_array({0.5, -1.25})));
    EXPECT_TRUE(kv.add("flags", KvValue::bool_array({true, false})));
    EXPECT_TRUE(kv.add("blobs", KvValue::bytes_array({{1}, {}})));
    EXPECT_TRUE(kv.add("nothing", KvValue::string_array({})));
    return kv;
}

/// Generated descriptors small enough to write, with random buffer bytes, named.
std::vector<Item> generated_items(uint64_t first_seed, size_t count, Known& known) {
    std::vector<Item> items = hurray_test::generated_tensors(first_seed, count, known, 256U << 10U);
    for (size_t i = 0; i < items.size(); ++i) {
        items[i].name = name_of(first_seed + i);
    }
    return items;
}

void round_trip(const std::vector<Item>& items, const KvMetadata& kv, const Known& known, FileWriterOptions opts) {
    const std::vector<uint8_t> bytes = write_items(items, kv, opts);
    ASSERT_FALSE(bytes.empty());
    FileReadOptions ro;
    ro.descriptor = known.decode_options();
    auto mem = FileReader::open_memory(bytes, {}, ro);
    ASSERT_TRUE(mem.ok()) << mem.error().to_string();
    check_random_access(*mem, items, kv, opts.sorted_index);
    check_sequential(bytes, items, kv, known, 4096);

    // The same bytes from a real file, mapped.
    char path[] = "/tmp/hurray_rt_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    auto mapped = FileReader::open(path, ro);
    ASSERT_TRUE(mapped.ok()) << mapped.error().to_string();
    EXPECT_TRUE(mapped->mapped());
    check_random_access(*mapped, items, kv, opts.sorted_index);
    unlink(path);
}

TEST(FileRoundTrip, GeneratedDescriptorsUnsorted) {
    for (uint64_t batch = 0; batch < 8; ++batch) {
        Known known;
        const auto items = generated_items(batch * 1000, 40, known);
        ASSERT_GE(items.size(), 20U);
        round_trip(items, every_kv_type(), known, FileWriterOptions{});
    }
}

TEST(FileRoundTrip, GeneratedDescriptorsSorted) {
    for (uint64_t batch = 0; batch < 4; ++batch) {
        Known known;
        const auto items = generated_items(50000 + batch * 1000, 40, known);
        FileWriterOptions o;
        o.sorted_index = true;
        o.tensor_count_hint = items.size();
        round_trip(items, {}, known, o);
    }
}

TEST(FileRoundTrip, Alignments) {
    for (uint32_t align : {4096U, 65536U, 2U << 20U}) {
        Known known;
        const auto items = generated_items(90000 + align, 6, known);
        FileWriterOptions o;
        o.data_buffer_alignment = align;
        round_trip(items, every_kv_type(), known, o);
    }
}

TEST(FileRoundTrip, EmptyTensorsAndZeroTensorFiles) {
    round_trip({}, {}, {}, FileWriterOptions{});
    round_trip({}, every_kv_type(), {}, FileWriterOptions{});
    std::vector<Item> items;
    for (const Shape& s : {Shape{0}, Shape{3, 0}, Shape{0, 0, 7}}) {
        Item it;
        it.name = name_of(items.size());
        it.desc = *make_dense(ElementType::kFloat32, s);
        it.buffers.emplace_back();
        items.push_back(std::move(it));
    }
    round_trip(items, {}, {}, FileWriterOptions{});
    FileWriterOptions sorted;
    sorted.sorted_index = true;
    round_trip(items, every_kv_type(), {}, sorted);
}

/// A dense row-major float32 member at `offset` of `parent`.
Item member(const std::string& name, Shape shape, Shape parent, Shape offset,
            std::optional<MemberRole> role = std::nullopt) {
    return hurray_test::dense_member(std::move(shape), std::move(parent), std::move(offset), role, 0x11, name);
}

Item head(const std::string& name, Shape shape, CompositionRule rule, uint32_t n,
          CombineOp op = CombineOp::kNone) {
    return hurray_test::composite_head(std::move(shape), rule, n, op, name);
}

TEST(FileRoundTrip, EveryCompositionRuleAndNesting) {
    std::vector<Item> items;
    // partition of a [4, 4] into two [2, 4] halves
    items.push_back(head("p", {4, 4}, CompositionRule::kPartition, 2));
    items.push_back(member("p.0", {2, 4}, {4, 4}, {0, 0}));
    items.push_back(member("p.1", {2, 4}, {4, 4}, {2, 0}));
    // a plain tensor between composites
    items.push_back(member("plain", {3}, {3}, {0}));
    items.back().desc.shard.reset();
    // group of two unrelated tensors, the second itself a nested partition
    items.push_back(head("g", {1}, CompositionRule::kGroup, 2));
    Item g0;
    g0.name = "g.0";
    g0.desc = *make_dense(ElementType::kInt8, {5});
    g0.buffers.emplace_back(5, uint8_t{3});
    items.push_back(std::move(g0));
    items.push_back(head("g.1", {2, 2}, CompositionRule::kPartition, 1));
    items.push_back(member("g.1.0", {2, 2}, {2, 2}, {0, 0}));
    for (bool sorted : {false, true}) {
        FileWriterOptions o;
        o.sorted_index = sorted;
        const std::vector<uint8_t> bytes = write_items(items, {}, o);
        auto file = FileReader::open_memory(bytes);
        ASSERT_TRUE(file.ok()) << file.error().to_string();
        auto p = file->composite(*file->find("p"));
        ASSERT_TRUE(p.ok()) << p.error().to_string();
        ASSERT_EQ(p->members.size(), 2U);
        EXPECT_EQ(file->entry(p->members[0]).name, "p.0");
        EXPECT_EQ(file->entry(p->members[1]).name, "p.1");
        auto g = file->composite(*file->find("g"));
        ASSERT_TRUE(g.ok()) << g.error().to_string();
        ASSERT_EQ(g->members.size(), 2U);
        EXPECT_EQ(file->entry(g->members[1]).name, "g.1");
        // No alignment padding after a head: its member's descriptor follows
        // at the next 8-byte boundary.
        const IndexEntry& h = file->entry(*file->find("p"));
        const IndexEntry& m0 = file->entry(*file->find("p.0"));
        EXPECT_EQ(m0.descriptor_offset, (h.descriptor_offset + h.descriptor_length + 7) / 8 * 8);
        EXPECT_EQ(h.data_length, 0U);
        check_random_access(*file, items, {}, sorted);
        check_sequential(bytes, items, {}, {}, 1000);
    }
    // overlay: a base and a correction
    std::vector<Item> overlay;
    overlay.push_back(head("o", {4}, CompositionRule::kOverlay, 2, CombineOp::kAdd));
    overlay.push_back(member("o.base", {4}, {4}, {0}, MemberRole::kBase));
    overlay.push_back(member("o.fix", {1}, {4}, {2}, MemberRole::kCorrection));
    const std::vector<uint8_t> bytes = write_items(overlay, {}, FileWriterOptions{});
    auto file = FileReader::open_memory(bytes);
    ASSERT_TRUE(file.ok()) << file.error().to_string();
    auto o = file->composite(0);
    ASSERT_TRUE(o.ok()) << o.error().to_string();
    EXPECT_EQ(o->members.size(), 2U);
}

}  // namespace
