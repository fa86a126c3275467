// SPDX-License-Identifier: Apache-2.0
// Container <-> stream conversion: file_to_stream writes the tensors in
// write order straight from the file; stream_to_file names them and moves
// the data in chunks; both directions round-trip descriptors, bytes and
// composites.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"
#include "stream_test_support.hpp"

namespace hurray {
namespace {

using streamtest::Item;
using streamtest::Known;
using test::Fails;

using streamtest::mixed_items;

FileReadOptions file_options(const Known& known) { return known.file_options(); }

TEST(StreamConvert, StreamToFileToStream) {
    Known known;
    const auto items = mixed_items(known);
    const auto stream = streamtest::stream_bytes(items);

    // Stream -> file, the first three tensors named, the rest tensor_<i>.
    const std::vector<std::string> names = {"first", "second", "third"};
    MemorySink file_sink;
    auto writer = FileWriter::create(file_sink);
    ASSERT_TRUE(writer.ok());
    MemorySource src(stream, 999);
    StreamReadOptions ro = known.options();
    ro.chunk_size = 1000;
    auto n = stream_to_file(src, *writer, names, ro);
    ASSERT_TRUE(n.ok()) << n.error().to_string();
    EXPECT_EQ(*n, items.size());
    ASSERT_TRUE(writer->finish().ok());

    auto file = FileReader::open_memory(file_sink.bytes(), {}, file_options(known));
    ASSERT_TRUE(file.ok()) << file.error().to_string();
    ASSERT_EQ(file->tensor_count(), items.size());
    ASSERT_TRUE(file->check_all().ok());
    for (size_t k = 0; k < items.size(); ++k) {
        const size_t i = file->write_order()[k];
        const std::string expected = k < names.size() ? names[k] : "tensor_" + std::to_string(k);
        EXPECT_EQ(file->entry(i).name, expected);
        auto t = file->tensor(i);
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        EXPECT_EQ(t->descriptor(), items[k].desc);
        ASSERT_EQ(t->buffers().size(), items[k].buffers.size());
        for (size_t b = 0; b < t->buffers().size(); ++b) {
            EXPECT_EQ(std::vector<uint8_t>(t->buffers()[b].data(), t->buffers()[b].data() + t->buffers()[b].size()),
                      items[k].buffers[b]);
        }
    }

    // File -> stream gives the original stream back, byte for byte.
    MemorySink again;
    const Status s = file_to_stream(*file, again);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(again.bytes(), stream);
}

TEST(StreamConvert, ZeroTensorsBothWays) {
    MemorySink file_sink;
    auto writer = FileWriter::create(file_sink);
    MemorySource src(std::span<const uint8_t>{});
    auto n = stream_to_file(src, *writer);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0U);
    ASSERT_TRUE(writer->finish().ok());
    auto file = FileReader::open_memory(file_sink.bytes());
    ASSERT_TRUE(file.ok());
    MemorySink out;
    ASSERT_TRUE(file_to_stream(*file, out).ok());
    EXPECT_TRUE(out.bytes().empty());
}

TEST(StreamConvert, ErrorsPassThrough) {
    const auto stream = streamtest::stream_bytes(streamtest::composite_items());
    // A truncated stream: the error names the tensor; the tensors before it
    // are in the (unfinished) writer.
    MemorySink file_sink;
    auto writer = FileWriter::create(file_sink);
    MemorySource src(std::span<const uint8_t>(stream).first(stream.size() - 1));
    EXPECT_TRUE(Fails(stream_to_file(src, *writer), ErrorCode::kTruncated, {"tensor #11"}));
    EXPECT_EQ(writer->tensor_count(), 11U);  // the 11 complete ones

    // Duplicate names are the file writer's error.
    MemorySink sink2;
    auto writer2 = FileWriter::create(sink2);
    MemorySource src2(stream);
    const std::vector<std::string> dup = {"x", "x"};
    EXPECT_TRUE(Fails(stream_to_file(src2, *writer2, dup), ErrorCode::kDuplicateName));

    // A file with a buffer that is not producer-synced cannot go to a stream
    // that requires it; nothing is written.
    Item dev;
    dev.desc = *make_dense(ElementType::kFloat32, {2});
    dev.desc.buffers[0].device_tag = DeviceTag::kCuda;
    dev.desc.buffers[0].sync_mode = SyncMode::kEvent;
    dev.buffers = {std::vector<uint8_t>(8)};
    MemorySink fs;
    auto w = FileWriter::create(fs);
    const auto sp = streamtest::spans(dev);
    ASSERT_TRUE(w->add_tensor("dev", dev.desc, sp).ok());
    ASSERT_TRUE(w->finish().ok());
    auto file = FileReader::open_memory(fs.bytes());
    ASSERT_TRUE(file.ok());
    MemorySink out;
    StreamWriteOptions cross;
    cross.require_producer_synced = true;
    EXPECT_TRUE(Fails(file_to_stream(*file, out, cross), ErrorCode::kInvalidBufferHandle));
    EXPECT_TRUE(out.bytes().empty());
    EXPECT_TRUE(file_to_stream(*file, out).ok());
}

}  // namespace
}  // namespace hurray
