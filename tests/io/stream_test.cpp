// SPDX-License-Identifier: Apache-2.0
// The streaming format in memory: StreamDecoder / StreamEncoder rules,
// StreamReader / StreamWriter round trips over generated descriptors and
// composites, every way of reading data, rejections with their codes and
// offsets, truncation at every byte. (The fuzz seeds are written by
// tests/fuzz_seeds.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/io/stream_steps.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/io/stream_reader.hpp"
#include "stream_test_support.hpp"

namespace hurray {
namespace {

using streamtest::Item;
using streamtest::Known;
using test::Fails;

StreamReadOptions small_chunks(StreamReadOptions o, size_t chunk) {
    o.chunk_size = chunk;
    return o;
}

/// Input that cannot be Hurray (every stream starts with a descriptor's "HRRY")
/// is named as such with its first bytes, whatever its length; input that
/// starts like Hurray and is cut short is still a truncation.
TEST(Stream, InputThatIsNotHurrayIsNamedAsSuch) {
    const auto first_error = [](const std::string& text) {
        const std::vector<uint8_t> bytes(text.begin(), text.end());
        MemorySource src(bytes);
        StreamReader reader(src);
        return reader.next();
    };
    EXPECT_TRUE(Fails(first_error("hello world, this is text\n"), ErrorCode::kInvalidMagic,
                      {"not a Hurray stream or file (starts with 68 65 6c 6c 6f 20 77 6f (\"hello wo\"))"}));
    EXPECT_TRUE(Fails(first_error(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)), ErrorCode::kInvalidMagic,
                      {"not a Hurray stream or file (starts with 89 50 4e 47"}));
    EXPECT_TRUE(Fails(first_error("abc"), ErrorCode::kInvalidMagic, {"(starts with 61 62 63 (\"abc\"))"}));
    EXPECT_TRUE(Fails(first_error("HRR"), ErrorCode::kTruncated, {"stream ends inside the descriptor prefix"}));
    // "HRRY" then garbage is a bad descriptor, reported as such.
    const auto later = first_error("HRRYxxxxxxxxxxxx");
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.error().message().find("not a Hurray"), std::string::npos) << later.error().message();
}

TEST(Stream, WireFormatIsDescriptorThenBuffersBackToBack) {
    std::vector<Item> items;
    Item a;
    a.desc = *make_dense(ElementType::kInt8, {3});
    a.buffers = {{1, 2, 3}};
    Item b;
    b.desc = *make_dense(ElementType::kUInt16, {2});
    b.buffers = {{9, 8, 7, 6}};
    items = {a, b};
    const std::vector<uint8_t> bytes = streamtest::stream_bytes(items);
    std::vector<uint8_t> expected = *encode(a.desc);
    expected.insert(expected.end(), a.buffers[0].begin(), a.buffers[0].end());
    const std::vector<uint8_t> db = *encode(b.desc);
    expected.insert(expected.end(), db.begin(), db.end());
    expected.insert(expected.end(), b.buffers[0].begin(), b.buffers[0].end());
    EXPECT_EQ(bytes, expected);
}

TEST(Stream, GeneratedDescriptorsRoundTripEveryReadMode) {
    for (uint64_t batch = 0; batch < 4; ++batch) {
        Known known;
        const auto items = streamtest::generated_items(batch * 1000 + 7, 40, known);
        ASSERT_GE(items.size(), 20U);
        for (size_t piece : {size_t{0}, size_t{1000}}) {
            MemorySink sink;
            ASSERT_TRUE(streamtest::write_items(sink, items, piece).ok());
            for (int mode : {0, 1, 2, 3, -1}) {
                for (size_t short_reads : {size_t{SIZE_MAX}, size_t{7}}) {
                    MemorySource src(sink.bytes(), short_reads);
                    auto back = streamtest::read_items(src, small_chunks(known.options(), 333), mode);
                    ASSERT_TRUE(back.ok()) << back.error().to_string();
                    ASSERT_EQ(back->size(), items.size());
                    for (size_t i = 0; i < items.size(); ++i) {
                        EXPECT_EQ((*back)[i], items[i]) << "batch " << batch << " tensor " << i << " mode " << mode;
                    }
                    EXPECT_EQ(src.position(), sink.bytes().size());
                }
            }
        }
    }
}

TEST(Stream, CompositesZeroAndEmptyTensors) {
    for (const auto& items : {streamtest::composite_items(), std::vector<Item>{}, streamtest::empty_items()}) {
        const auto bytes = streamtest::stream_bytes(items);
        MemorySource src(bytes, 5);
        auto back = streamtest::read_items(src, {}, -1);
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        EXPECT_EQ(*back, items);
    }
    EXPECT_TRUE(streamtest::stream_bytes({}).empty());
}

TEST(Stream, CompositesAreReportedCompleteWithDepth) {
    const auto items = streamtest::composite_items();
    const auto bytes = streamtest::stream_bytes(items);
    MemorySource src(bytes);
    StreamReader r(src);
    std::vector<uint32_t> depths;
    while (true) {
        auto t = r.next();
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        if (*t == nullptr) {
            break;
        }
        depths.push_back((*t)->composite_depth);
    }
    EXPECT_EQ(depths, (std::vector<uint32_t>{1, 1, 0, 0, 1, 1, 2, 3, 0, 1, 1, 0}));
    const auto done = r.take_completed();
    ASSERT_EQ(done.size(), 5U);
    EXPECT_EQ(done[0].head, 0U);
    EXPECT_EQ(done[0].members, (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(done.back().head, 9U);
}

TEST(Stream, TensorsCarryTheirDescriptorBytesExactly) {
    // A descriptor of a different size between two of the same size: the
    // copy reuses its capacity, and each one is exactly the stream's bytes.
    std::vector<Item> items;
    for (const auto& shape : std::vector<Shape>{{3}, {2, 3, 4, 5}, {7}}) {
        Item it;
        it.desc = *make_dense(ElementType::kInt8, shape);
        it.buffers.emplace_back(element_count(shape).value_or(0), uint8_t{5});
        items.push_back(std::move(it));
    }
    const std::vector<uint8_t> bytes = streamtest::stream_bytes(items);
    MemorySource src(bytes, 3);  // short reads: the descriptor arrives in pieces
    StreamReader reader(src);
    for (const Item& it : items) {
        auto t = reader.next();
        ASSERT_TRUE(t.ok() && *t != nullptr) << (t.ok() ? "end" : t.error().to_string());
        const StreamTensor& st = **t;
        EXPECT_EQ(st.descriptor_bytes, *encode(it.desc));
        ASSERT_LE(st.descriptor_offset + st.descriptor_bytes.size(), bytes.size());
        EXPECT_TRUE(std::equal(st.descriptor_bytes.begin(), st.descriptor_bytes.end(),
                               bytes.begin() + static_cast<std::ptrdiff_t>(st.descriptor_offset)));
        ASSERT_TRUE(reader.skip_data().ok());
    }
}

TEST(Stream, ManyTensorsBackToBack) {
    std::vector<Item> items;
    for (uint32_t i = 0; i < 3000; ++i) {
        Item it;
        it.desc = *make_dense(ElementType::kUInt8, {i % 17});
        it.buffers.emplace_back(i % 17, static_cast<uint8_t>(i));
        items.push_back(std::move(it));
    }
    const auto bytes = streamtest::stream_bytes(items);
    MemorySource src(bytes, 4096);
    auto back = streamtest::read_items(src, {}, -1);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, items);
}

TEST(Stream, ChunksAreBoundedAndTagged) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {1000});
    for (int i = 0; i < 1000; ++i) {
        it.buffers.resize(1);
        it.buffers[0].push_back(static_cast<uint8_t>(i * 7));
    }
    const auto bytes = streamtest::stream_bytes({it});
    MemorySource src(bytes, 13);
    StreamReader r(src, small_chunks({}, 256));
    ASSERT_NE(*r.next(), nullptr);
    std::vector<uint64_t> offsets;
    std::vector<uint8_t> all;
    while (true) {
        auto c = r.read_chunk();
        ASSERT_TRUE(c.ok());
        if (c->bytes.empty()) {
            break;
        }
        EXPECT_EQ(c->buffer, 0U);
        EXPECT_LE(c->bytes.size(), 256U);
        offsets.push_back(c->offset);
        all.insert(all.end(), c->bytes.begin(), c->bytes.end());
    }
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 256, 512, 768}));
    EXPECT_EQ(all, it.buffers[0]);
    EXPECT_EQ(*r.next(), nullptr);
    EXPECT_EQ(*r.next(), nullptr);  // stays ended
}

TEST(Stream, SkippingReadsNothingIntoMemory) {
    const auto items = streamtest::composite_items();
    const auto bytes = streamtest::stream_bytes(items);
    MemorySource src(bytes);
    StreamReader r(src);
    uint64_t n = 0;
    while (true) {
        auto t = r.next();  // skips every tensor's data
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        if (*t == nullptr) {
            break;
        }
        ++n;
    }
    EXPECT_EQ(n, items.size());
    EXPECT_EQ(r.decoder().offset(), bytes.size());

    // skip_buffer in the middle of a buffer, then read the next tensor.
    MemorySource src2(bytes);
    StreamReader r2(src2, small_chunks({}, 8));
    ASSERT_NE(*r2.next(), nullptr);  // head p
    ASSERT_NE(*r2.next(), nullptr);  // p.0: 32 bytes of 1
    auto c = r2.read_chunk();
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->bytes.size(), 8U);
    ASSERT_TRUE(r2.skip_buffer().ok());
    EXPECT_TRUE(r2.read_chunk()->bytes.empty());
    auto t = r2.next();
    ASSERT_TRUE(t.ok());
    EXPECT_EQ((*t)->index, 2U);
    auto bufs = r2.read_tensor();
    ASSERT_TRUE(bufs.ok());
    EXPECT_EQ(std::vector<uint8_t>(bufs->at(0).data(), bufs->at(0).data() + bufs->at(0).size()), items[2].buffers[0]);
}

TEST(Stream, ReadIntoAndReadTensorMisuse) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {100});
    it.buffers = {std::vector<uint8_t>(100, 5)};
    const auto bytes = streamtest::stream_bytes({it, it});
    MemorySource src(bytes);
    StreamReadOptions o;
    o.max_tensor_bytes = 99;
    StreamReader r(src, o);
    ASSERT_NE(*r.next(), nullptr);
    EXPECT_TRUE(Fails(r.read_tensor(), ErrorCode::kInvalidArgument, {"max_tensor_bytes"}));
    std::vector<uint8_t> small(10);
    EXPECT_TRUE(Fails(r.read_into(small), ErrorCode::kSizeMismatch));
    ASSERT_EQ(*r.read_data(small), 10U);
    EXPECT_TRUE(Fails(r.read_tensor(), ErrorCode::kInvalidArgument, {"part"}));
    std::vector<uint8_t> rest(90);
    ASSERT_TRUE(r.read_into(rest).ok());  // misuse above did not stick
    EXPECT_EQ(rest, std::vector<uint8_t>(90, 5));
    ASSERT_NE(*r.next(), nullptr);
    EXPECT_TRUE(Fails(r.read_data({}), ErrorCode::kInvalidArgument));
    EXPECT_EQ(*r.next(), nullptr);
}

// --- Rejections --------------------------------------------------------------

TEST(StreamRejects, DescriptorLongerThanTheBound) {
    Item it;
    it.desc = *make_dense(ElementType::kFloat32, {4});
    it.buffers = {std::vector<uint8_t>(16)};
    auto bytes = streamtest::stream_bytes({it, it});
    const uint32_t len = *peek_length(bytes);
    StreamReadOptions o;
    o.max_descriptor_length = len - 1;
    MemorySource src(bytes);
    StreamReader r(src, o);
    auto t = r.next();
    EXPECT_TRUE(Fails(t, ErrorCode::kInvalidDescriptorLength, {"tensor #0", "max_descriptor_length"}));
    EXPECT_EQ(t.error().offset(), 6U);
    EXPECT_EQ(src.position(), 10U);  // nothing past the prefix was read
    EXPECT_TRUE(Fails(r.next(), ErrorCode::kInvalidDescriptorLength));  // sticky

    // A huge announced length in the second tensor, default bound.
    const size_t second = len + 16;
    bytes[second + 6] = 0xFF;
    bytes[second + 7] = 0xFF;
    bytes[second + 8] = 0xFF;
    bytes[second + 9] = 0x7F;
    MemorySource src2(bytes);
    StreamReader r2(src2);
    ASSERT_NE(*r2.next(), nullptr);
    auto t2 = r2.next();
    EXPECT_TRUE(Fails(t2, ErrorCode::kInvalidDescriptorLength, {"tensor #1"}));
    EXPECT_EQ(t2.error().offset(), second + 6);
}

TEST(StreamRejects, BadMagicAndDecodeErrorsAtStreamOffsets) {
    Item it;
    it.desc = *make_dense(ElementType::kFloat32, {4});
    it.buffers = {std::vector<uint8_t>(16)};
    auto bytes = streamtest::stream_bytes({it, it});
    const uint32_t len = *peek_length(bytes);
    const size_t second = len + 16;
    bytes[second] = 'X';
    MemorySource src(bytes);
    StreamReader r(src);
    ASSERT_NE(*r.next(), nullptr);
    auto t = r.next();
    EXPECT_TRUE(Fails(t, ErrorCode::kInvalidMagic, {"tensor #1"}));
    EXPECT_EQ(t.error().offset(), second);
}

TEST(StreamRejects, ShortDescriptorLengthIsNotATruncation) {
    // descriptor_length shortened: every byte it announces is there, so the
    // fields running past it are a length error, never kTruncated.
    const TensorDescriptor d = *make_dense(ElementType::kFloat32, {0, 3});
    const std::vector<uint8_t> full = *encode(d);
    const auto len = static_cast<uint32_t>(full.size());
    for (uint32_t shorter = 10; shorter < len; ++shorter) {
        std::vector<uint8_t> bytes(full.begin(), full.begin() + shorter);
        for (int i = 0; i < 4; ++i) {
            bytes[6 + i] = static_cast<uint8_t>(shorter >> (8 * i));
        }
        MemorySource src(bytes);
        auto back = streamtest::read_items(src, {});
        ASSERT_FALSE(back.ok()) << shorter;
        EXPECT_NE(back.error().code(), ErrorCode::kTruncated) << back.error().to_string();
        EXPECT_LE(back.error().offset(), shorter) << back.error().to_string();
    }
}

TEST(StreamRejects, BufferOverTheBoundAndNotProducerSynced) {
    Item it;
    it.desc = *make_dense(ElementType::kFloat32, {4});
    it.buffers = {std::vector<uint8_t>(16)};
    const auto bytes = streamtest::stream_bytes({it});
    StreamReadOptions o;
    o.max_buffer_size = 15;
    MemorySource src(bytes);
    StreamReader r(src, o);
    auto t = r.next();
    EXPECT_TRUE(Fails(t, ErrorCode::kInvalidBufferHandle, {"max_buffer_size"}));
    EXPECT_EQ(t.error().offset(), 0U);

    // A CUDA buffer synchronised by event: accepted on one machine, refused
    // when the stream crosses machines, by the reader and by the writer.
    Item dev = it;
    dev.desc.buffers[0].device_tag = DeviceTag::kCuda;
    dev.desc.buffers[0].sync_mode = SyncMode::kEvent;
    ASSERT_TRUE(check_descriptor(dev.desc).ok());
    const auto dev_bytes = streamtest::stream_bytes({it, dev});
    {
        MemorySource s(dev_bytes);
        auto back = streamtest::read_items(s, {});
        ASSERT_TRUE(back.ok()) << back.error().to_string();
    }
    StreamReadOptions cross;
    cross.require_producer_synced = true;
    MemorySource s(dev_bytes);
    StreamReader rc(s, cross);
    ASSERT_NE(*rc.next(), nullptr);
    auto t2 = rc.next();
    EXPECT_TRUE(Fails(t2, ErrorCode::kInvalidBufferHandle, {"tensor #1", "sync_mode", "producer-synced"}));
    EXPECT_EQ(t2.error().offset(), *encoded_size(it.desc) + 16U);

    MemorySink sink;
    StreamWriteOptions wo;
    wo.require_producer_synced = true;
    StreamWriter w(sink, wo);
    const auto sp = streamtest::spans(dev);
    EXPECT_TRUE(Fails(w.write_tensor(dev.desc, sp), ErrorCode::kInvalidBufferHandle, {"sync_mode"}));
    EXPECT_TRUE(sink.bytes().empty());
    const auto ok = streamtest::spans(it);
    EXPECT_TRUE(w.write_tensor(it.desc, ok).ok());  // still usable
}

TEST(StreamRejects, TornCompositeAndDepthLimit) {
    auto items = streamtest::composite_items();
    items.pop_back();  // the overlay loses its correction
    // The writer refuses to finish; write the bytes without finishing.
    MemorySink sink;
    StreamWriter w(sink);
    for (const Item& it : items) {
        const auto sp = streamtest::spans(it);
        ASSERT_TRUE(w.write_tensor(it.desc, sp).ok());
    }
    EXPECT_TRUE(Fails(w.finish(), ErrorCode::kInvalidComposite));
    MemorySource src(sink.bytes());
    auto back = streamtest::read_items(src, {});
    EXPECT_TRUE(Fails(back, ErrorCode::kInvalidComposite, {"stream ends inside a composite"}));

    const auto full = streamtest::stream_bytes(streamtest::composite_items());
    StreamReadOptions shallow;
    shallow.max_composite_depth = 2;
    MemorySource src2(full);
    auto back2 = streamtest::read_items(src2, shallow);
    EXPECT_TRUE(Fails(back2, ErrorCode::kNestingTooDeep, {"tensor #7", "max_composite_depth"}));
}

TEST(StreamRejects, InvalidCompositeFromTheReadersSide) {
    auto items = streamtest::composite_items();
    items[2].desc.shard->shard_offset = {1, 0};  // p.1 overlaps p.0
    const auto ok_desc = streamtest::composite_items()[2].desc;
    std::vector<uint8_t> bytes;
    for (const Item& it : items) {
        auto e = encode_unchecked(it.desc);
        bytes.insert(bytes.end(), e->begin(), e->end());
        for (const auto& b : it.buffers) {
            bytes.insert(bytes.end(), b.begin(), b.end());
        }
    }
    MemorySource src(bytes);
    auto back = streamtest::read_items(src, {});
    EXPECT_TRUE(Fails(back, ErrorCode::kInvalidComposite, {"tensor #2"}));
    (void)ok_desc;
}

TEST(StreamWriterRejects, SizesAreChecked) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {10});
    it.buffers = {std::vector<uint8_t>(10, 1)};
    MemorySink sink;
    StreamWriter w(sink);
    const std::vector<uint8_t> nine(9);
    const std::span<const uint8_t> short_buf[] = {nine};
    EXPECT_TRUE(Fails(w.write_tensor(it.desc, short_buf), ErrorCode::kSizeMismatch, {"buffer 0"}));
    EXPECT_TRUE(Fails(w.write_tensor(it.desc, {}), ErrorCode::kSizeMismatch, {"0 buffers"}));
    EXPECT_TRUE(sink.bytes().empty());
    ASSERT_TRUE(w.begin_tensor(it.desc).ok());
    const uint64_t after_desc = w.offset();
    EXPECT_TRUE(Fails(w.write_data(std::vector<uint8_t>(11)), ErrorCode::kSizeMismatch, {"11 data bytes"}));
    EXPECT_EQ(w.offset(), after_desc);
    ASSERT_TRUE(w.write_data(nine).ok());
    EXPECT_TRUE(Fails(w.begin_tensor(it.desc), ErrorCode::kInvalidArgument));
    EXPECT_TRUE(Fails(w.finish(), ErrorCode::kSizeMismatch, {"1 of its declared"}));
    EXPECT_TRUE(Fails(w.end_tensor(), ErrorCode::kSizeMismatch, {"missing"}));
    EXPECT_TRUE(Fails(w.write_tensor(it.desc, short_buf), ErrorCode::kSizeMismatch, {"missing"}));  // sticky
}

TEST(StreamWriterRejects, CompositeValidatedBeforeTheFirstByte) {
    const auto items = streamtest::composite_items();
    // members of the partition p: items 1, 2
    std::vector<StreamTensorInput> members;
    std::vector<std::vector<std::span<const uint8_t>>> sp;
    sp.reserve(items.size());
    for (size_t i = 1; i <= 2; ++i) {
        sp.push_back(streamtest::spans(items[i]));
        members.push_back(StreamTensorInput{&items[i].desc, sp.back()});
    }
    MemorySink sink;
    StreamWriter w(sink);
    EXPECT_TRUE(Fails(w.write_composite(items[0].desc, std::span(members).first(1)), ErrorCode::kInvalidComposite,
                      {"more members than the 1 given"}));
    EXPECT_TRUE(Fails(w.write_composite(items[0].desc, std::span(members).first(0)), ErrorCode::kInvalidComposite));
    std::vector<StreamTensorInput> three = members;
    three.push_back(members[0]);
    EXPECT_TRUE(Fails(w.write_composite(items[0].desc, three), ErrorCode::kInvalidComposite, {"more members given"}));
    TensorDescriptor overlapping = items[2].desc;
    overlapping.shard->shard_offset = {1, 0};
    std::vector<StreamTensorInput> bad = members;
    bad[1].descriptor = &overlapping;
    EXPECT_TRUE(Fails(w.write_composite(items[0].desc, bad), ErrorCode::kInvalidComposite));
    std::vector<StreamTensorInput> wrong_size = members;
    const std::vector<uint8_t> few(3);
    const std::span<const uint8_t> few_span[] = {few};
    wrong_size[0].buffers = few_span;
    EXPECT_TRUE(Fails(w.write_composite(items[0].desc, wrong_size), ErrorCode::kSizeMismatch));
    EXPECT_TRUE(Fails(w.write_composite(items[3].desc, members), ErrorCode::kInvalidComposite, {"not a composite"}));
    EXPECT_TRUE(sink.bytes().empty());
    ASSERT_TRUE(w.write_composite(items[0].desc, members).ok());
    ASSERT_TRUE(w.finish().ok());
    MemorySource src(sink.bytes());
    auto back = streamtest::read_items(src, {});
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, std::vector<Item>(items.begin(), items.begin() + 3));

    // The whole nested group g (items 4..8) in one call.
    MemorySink sink2;
    StreamWriter w2(sink2);
    std::vector<StreamTensorInput> g;
    for (size_t i = 5; i <= 8; ++i) {
        sp.push_back(streamtest::spans(items[i]));
        g.push_back(StreamTensorInput{&items[i].desc, sp.back()});
    }
    ASSERT_TRUE(w2.write_composite(items[4].desc, g).ok());
    ASSERT_TRUE(w2.finish().ok());
    MemorySource src2(sink2.bytes());
    auto back2 = streamtest::read_items(src2, {});
    ASSERT_TRUE(back2.ok()) << back2.error().to_string();
    EXPECT_EQ(back2->size(), 5U);
}

TEST(StreamWriter, SinkFailureSticks) {
    class FailingSink final : public ByteSink {
    public:
        Status write(std::span<const uint8_t> /*bytes*/) override {
            return Error(ErrorCode::kIoError, "disk on fire");
        }
    };
    FailingSink sink;
    StreamWriter w(sink);
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {1});
    it.buffers = {{1}};
    const auto sp = streamtest::spans(it);
    EXPECT_TRUE(Fails(w.write_tensor(it.desc, sp), ErrorCode::kIoError, {"disk on fire"}));
    EXPECT_TRUE(Fails(w.finish(), ErrorCode::kIoError));
}

// --- Truncation --------------------------------------------------------------

TEST(StreamTruncation, EveryPrefixGivesCompleteTensorsThenACleanError) {
    std::vector<Item> items = streamtest::composite_items();
    const auto more = streamtest::empty_items();
    items.insert(items.begin() + 3, more.begin(), more.end());
    MemorySink sink;
    ASSERT_TRUE(streamtest::write_items(sink, items).ok());
    const std::vector<uint8_t>& bytes = sink.bytes();
    // Boundaries: offset after each tensor.
    std::vector<uint64_t> ends;
    uint64_t pos = 0;
    for (const Item& it : items) {
        pos += *encoded_size(it.desc);
        for (const auto& b : it.buffers) {
            pos += b.size();
        }
        ends.push_back(pos);
    }
    ASSERT_EQ(pos, bytes.size());
    StreamReadOptions permissive_composites;  // truncation is what is tested
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
        MemorySource src(std::span<const uint8_t>(bytes).first(cut), 3);
        StreamReader r(src, small_chunks(permissive_composites, 7));
        size_t complete = 0;
        Status end = Status::success();
        bool clean = false;
        while (true) {
            auto t = r.next();
            if (!t) {
                end = t.error();
                break;
            }
            if (*t == nullptr) {
                clean = true;
                break;
            }
            while (true) {
                auto c = r.read_chunk();
                if (!c) {
                    end = c.error();
                    break;
                }
                if (c->bytes.empty()) {
                    ++complete;
                    break;
                }
            }
            if (!end.ok()) {
                break;
            }
        }
        const auto at = std::find(ends.begin(), ends.end(), cut);
        const size_t boundary_count = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
        EXPECT_EQ(complete, boundary_count) << "cut " << cut;
        if (cut == 0 || at != ends.end()) {
            // A clean end on a boundary, unless a composite is left open.
            if (!clean) {
                EXPECT_EQ(end.error().code(), ErrorCode::kInvalidComposite) << "cut " << cut << ": " << end.error().to_string();
            }
            EXPECT_TRUE(clean || cut != bytes.size()) << "cut " << cut;
        } else {
            ASSERT_FALSE(clean) << "cut " << cut;
            EXPECT_EQ(end.error().code(), ErrorCode::kTruncated) << "cut " << cut << ": " << end.error().to_string();
            EXPECT_EQ(end.error().offset(), cut);
            EXPECT_NE(end.error().message().find("tensor #" + std::to_string(boundary_count)), std::string::npos)
                << end.error().message();
        }
    }
}

TEST(StreamTruncation, MessagesNameWhatWasBeingRead) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {2, 3});
    it.buffers = {std::vector<uint8_t>(6, 1)};
    const auto bytes = streamtest::stream_bytes({it});
    const uint32_t len = *peek_length(bytes);
    const auto read_cut = [&](size_t cut) {
        MemorySource src(std::span<const uint8_t>(bytes).first(cut));
        return streamtest::read_items(src, {});
    };
    EXPECT_TRUE(Fails(read_cut(4), ErrorCode::kTruncated, {"descriptor prefix (4 of 10 bytes"}));
    EXPECT_TRUE(Fails(read_cut(12), ErrorCode::kTruncated, {"inside the descriptor (12 of " + std::to_string(len)}));
    EXPECT_TRUE(Fails(read_cut(len + 2), ErrorCode::kTruncated, {"inside buffer 0 (2 of 6 bytes)"}));
    EXPECT_EQ(read_cut(len + 2).error().offset(), len + 2U);
}

// --- The decoder on its own ----------------------------------------------------

TEST(StreamDecoder, SaysWhatItNeedsAndCountsOffsets) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {4});
    it.buffers = {{1, 2, 3, 4}};
    const auto bytes = streamtest::stream_bytes({it});
    const uint32_t len = *peek_length(bytes);
    StreamDecoder d;
    EXPECT_EQ(d.need(), StreamNeed::kPrefix);
    EXPECT_EQ(d.need_size(), 10U);
    EXPECT_TRUE(d.at_boundary());
    auto space = d.descriptor_space();
    ASSERT_EQ(space.size(), 10U);
    std::copy_n(bytes.begin(), 10, space.begin());
    EXPECT_EQ(*d.commit(10), StreamEvent::kNone);
    EXPECT_EQ(d.need(), StreamNeed::kDescriptor);
    EXPECT_EQ(d.need_size(), len - 10U);
    EXPECT_FALSE(d.at_boundary());
    EXPECT_TRUE(Fails(d.commit(len), ErrorCode::kInvalidArgument));  // more than needed; not sticky
    space = d.descriptor_space();
    ASSERT_EQ(space.size(), len - 10U);
    std::copy_n(bytes.begin() + 10, len - 10, space.begin());
    EXPECT_EQ(*d.commit(len - 10), StreamEvent::kDescriptor);
    ASSERT_NE(d.tensor(), nullptr);
    EXPECT_EQ(d.tensor()->descriptor, it.desc);
    EXPECT_EQ(d.need(), StreamNeed::kData);
    EXPECT_EQ(d.need_size(), 4U);
    EXPECT_TRUE(d.descriptor_space().empty());
    EXPECT_EQ(*d.commit(3), StreamEvent::kData);
    EXPECT_EQ(d.buffer_offset(), 3U);
    EXPECT_TRUE(Fails(d.end_of_input(), ErrorCode::kTruncated, {"inside buffer 0 (3 of 4"}));
    EXPECT_EQ(d.need(), StreamNeed::kFailed);
    EXPECT_EQ(d.need_size(), 0U);
    EXPECT_TRUE(Fails(d.commit(1), ErrorCode::kTruncated));
}

TEST(StreamDecoder, DescriptorSpaceGrowsWithTheBytes) {
    // A 1000-dimension descriptor is longer than the first 4 KiB step? Use a
    // large statistics-free rank-64 shape instead and check the space never
    // exceeds what is left of the descriptor.
    Shape s(64, 1);
    TensorDescriptor big = *make_dense(ElementType::kUInt8, s);
    const auto bytes = *encode(big);
    StreamDecoder d;
    size_t pos = 0;
    while (d.need() == StreamNeed::kPrefix || d.need() == StreamNeed::kDescriptor) {
        auto space = d.descriptor_space();
        ASSERT_FALSE(space.empty());
        ASSERT_LE(space.size(), d.need_size());
        const size_t n = std::min<size_t>(space.size(), 5);
        std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(pos), n, space.begin());
        ASSERT_TRUE(d.commit(n).ok());
        pos += n;
    }
    EXPECT_EQ(pos, bytes.size());
    EXPECT_EQ(d.tensor()->descriptor, big);
}

TEST(StreamDecoder, ReaderStepsSharedByBlockingAndAsync) {
    Item it;
    it.desc = *make_dense(ElementType::kUInt8, {100});
    it.buffers = {std::vector<uint8_t>(100, 5)};
    const auto bytes = streamtest::stream_bytes({it});
    const uint32_t len = *peek_length(bytes);
    StreamReadOptions o;
    o.chunk_size = 30;
    o.max_tensor_bytes = 50;
    StreamDecoder d(o);
    EXPECT_TRUE(*stream_steps::wants_descriptor(d));
    EXPECT_EQ(stream_steps::chunk_want(d), 0U);
    std::vector<uint8_t> chunk;
    StreamChunk where;
    EXPECT_TRUE(stream_steps::start_chunk(d, chunk, where)->empty());
    EXPECT_EQ(*stream_steps::data_want(d, 8), 0U);
    EXPECT_TRUE(Fails(stream_steps::data_want(d, 0), ErrorCode::kInvalidArgument));
    EXPECT_TRUE(stream_steps::check_read_into(d, 0).ok());
    EXPECT_TRUE(Fails(stream_steps::check_read_into(d, 1), ErrorCode::kSizeMismatch));
    EXPECT_TRUE(
        Fails(stream_steps::whole_tensor_size(d, nullptr, 0), ErrorCode::kInvalidArgument, {"without a current tensor"}));
    while (d.need() != StreamNeed::kData) {
        auto space = d.descriptor_space();
        std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(d.offset()), space.size(), space.begin());
        ASSERT_TRUE(d.commit(space.size()).ok());
    }
    EXPECT_EQ(d.offset(), len);
    EXPECT_TRUE(Fails(stream_steps::wants_descriptor(d), ErrorCode::kInvalidArgument, {"inside a tensor's data"}));
    EXPECT_EQ(stream_steps::chunk_want(d), 30U);
    EXPECT_EQ(stream_steps::chunk_space(d, chunk).size(), 30U);
    EXPECT_EQ(stream_steps::start_chunk(d, chunk, where)->size(), 30U);
    EXPECT_EQ(where.buffer, 0U);
    EXPECT_EQ(where.offset, 0U);
    EXPECT_EQ(chunk.size(), 30U);
    EXPECT_EQ(*stream_steps::data_want(d, 1000), 100U);
    EXPECT_EQ(*stream_steps::data_want(d, 8), 8U);
    EXPECT_TRUE(stream_steps::check_read_into(d, 100).ok());
    EXPECT_TRUE(Fails(stream_steps::check_read_into(d, 99), ErrorCode::kSizeMismatch, {"99 bytes", "100 left"}));
    EXPECT_TRUE(
        Fails(stream_steps::whole_tensor_size(d, d.tensor(), 100), ErrorCode::kInvalidArgument, {"max_tensor_bytes 50"}));
    EXPECT_TRUE(Fails(stream_steps::whole_tensor_size(d, d.tensor(), 101), ErrorCode::kInvalidArgument, {"after part"}));
    ASSERT_TRUE(d.commit(90).ok());
    EXPECT_EQ(stream_steps::chunk_want(d), 10U);
    EXPECT_EQ(stream_steps::chunk_space(d, chunk).size(), 10U);
    EXPECT_EQ(stream_steps::start_chunk(d, chunk, where)->size(), 10U);
    EXPECT_EQ(where.offset, 90U);
    EXPECT_EQ(chunk.size(), 30U);  // never shrinks
    EXPECT_TRUE(Fails(stream_steps::input_ended_early(d), ErrorCode::kTruncated, {"inside buffer 0 (90 of 100"}));
    EXPECT_TRUE(Fails(stream_steps::wants_descriptor(d), ErrorCode::kTruncated));  // sticky
    EXPECT_TRUE(Fails(stream_steps::data_want(d, 8), ErrorCode::kTruncated));
    EXPECT_TRUE(Fails(stream_steps::start_chunk(d, chunk, where), ErrorCode::kTruncated));
    StreamDecoder ended;
    EXPECT_TRUE(ended.end_of_input().ok());
    EXPECT_FALSE(*stream_steps::wants_descriptor(ended));
}

TEST(StreamEncoder, ChecksGivenBuffers) {
    const TensorDescriptor d = *make_dense(ElementType::kFloat32, {4});
    StreamEncoder e;
    const std::vector<uint8_t> right(16);
    const std::vector<uint8_t> wrong(15);
    const std::span<const uint8_t> ok_spans[] = {right};
    const std::span<const uint8_t> short_spans[] = {wrong};
    EXPECT_TRUE(stream_steps::check_given_buffers(e, d, ok_spans).ok());
    EXPECT_TRUE(Fails(stream_steps::check_given_buffers(e, d, {}), ErrorCode::kSizeMismatch,
                      {"stream tensor #0", "0 buffers given"}));
    EXPECT_TRUE(
        Fails(stream_steps::check_given_buffers(e, d, short_spans), ErrorCode::kSizeMismatch, {"buffer 0 has 15 bytes"}));
    (void)e.fail(Error(ErrorCode::kIoError, "gone"));
    EXPECT_TRUE(Fails(stream_steps::check_given_buffers(e, d, ok_spans), ErrorCode::kIoError));
}

TEST(StreamEncoder, AdmitsBytesBufferByBuffer) {
    TensorDescriptor d = *make_csr(ElementType::kFloat32, 3, 3, 2);
    StreamEncoder e;
    auto bytes = e.begin_tensor(d);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(e.offset(), bytes->size());
    uint64_t total = 0;
    for (const auto& h : d.buffers) {
        total += h.byte_size;
    }
    EXPECT_EQ(e.data_remaining(), total);
    EXPECT_EQ(*e.data(d.buffers[0].byte_size), 0U);
    EXPECT_EQ(*e.data(1), 1U);
    EXPECT_TRUE(Fails(e.data(total), ErrorCode::kSizeMismatch));
    EXPECT_TRUE(e.data(total - d.buffers[0].byte_size - 1).ok());
    EXPECT_TRUE(e.end_tensor().ok());
    EXPECT_TRUE(e.finish().ok());
    EXPECT_EQ(e.offset(), bytes->size() + total);
}

}  // namespace
}  // namespace hurray
