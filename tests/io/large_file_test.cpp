// SPDX-License-Identifier: Apache-2.0
// Files over 4 GiB: a sparse 5 GiB HRRYFILE (large_file_support.hpp: the
// 4.5 GiB of zeros are a hole, so it costs no disk) written by FileWriter and
// read by FileReader (mapped and with pread) and SequentialFileReader, with
// tensors whose descriptors and data lie past 4 GiB; and FileWriter writing
// 5 GiB to a sink that discards, so every 64-bit offset path runs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/sequential_file_reader.hpp"
#include "io_test_util.hpp"
#include "large_file_support.hpp"

namespace hurray {
namespace {

using hurray::test::LargeFile;

constexpr uint64_t k4GiB = uint64_t{1} << 32;

using LargeFileTest = hurray::test::LargeFileSuite;

void expect_contents(const FileReader& r, const LargeFile& f) {
    ASSERT_EQ(r.tensor_count(), 4U);
    const size_t tail = r.find("tail").value();
    const size_t last = r.find("last").value();
    EXPECT_GT(r.entry(tail).descriptor_offset, k4GiB);
    EXPECT_GT(r.entry(tail).data_offset, k4GiB);
    EXPECT_GT(r.entry(last).data_offset, k4GiB);
    EXPECT_GT(r.file_size(), LargeFile::kBigBytes);

    auto head = r.tensor("head").as<int32_t>();
    ASSERT_TRUE(head) << head.error().to_string();
    EXPECT_EQ(std::vector<int32_t>(head->begin(), head->end()), f.head);
    auto t = r.tensor("tail").as<int32_t>();
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(std::vector<int32_t>(t->begin(), t->end()), f.tail);
    auto l = r.tensor("last").as<double>();
    ASSERT_TRUE(l) << l.error().to_string();
    EXPECT_EQ(std::vector<double>(l->begin(), l->end()), f.last);
    auto d = r.descriptor("big");
    ASSERT_TRUE(d) << d.error().to_string();
    EXPECT_EQ((*d)->buffers[0].byte_size, LargeFile::kBigBytes);
    EXPECT_TRUE(r.check_all());
    ASSERT_NE(r.kv().find("note"), nullptr);
}

TEST_F(LargeFileTest, FileReaderMappedReadsTensorsPast4GiB) {
    auto r = FileReader::open(file_->path);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_TRUE(r->mapped());
    expect_contents(*r, *file_);
    // The big tensor's span covers all 4.5 GiB (not read: it is a hole).
    auto big = r->tensor("big").bytes();
    ASSERT_TRUE(big) << big.error().to_string();
    EXPECT_EQ(big->size(), LargeFile::kBigBytes);
}

TEST_F(LargeFileTest, FileReaderWithPreadReadsTensorsPast4GiB) {
    FileReadOptions o;
    o.use_mmap = false;
    auto r = FileReader::open(file_->path, o);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_FALSE(r->mapped());
    expect_contents(*r, *file_);  // never touches "big": pread would allocate it
}

TEST_F(LargeFileTest, SequentialReaderSkipsThe4GiBAndReadsWhatFollows) {
    const int fd = ::open(file_->path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    FdSource src(fd, /*owns=*/true);
    auto r = SequentialFileReader::open(src);
    ASSERT_TRUE(r) << r.error().to_string();
    std::vector<std::string> names;
    while (true) {
        auto t = r->next();
        ASSERT_TRUE(t) << t.error().to_string();
        if (*t == nullptr) {
            break;
        }
        const uint64_t size = (*t)->descriptor.buffers[0].byte_size;
        names.push_back(std::to_string((*t)->position));
        if (size == LargeFile::kBigBytes) {
            ASSERT_TRUE(r->skip_data());  // a regular file: lseek, not 4.5 GiB of reads
            continue;
        }
        std::vector<uint8_t> data(static_cast<size_t>(size));
        size_t got = 0;
        while (got < data.size()) {
            auto n = r->read_data(std::span<uint8_t>(data).subspan(got));
            ASSERT_TRUE(n) << n.error().to_string();
            ASSERT_GT(*n, 0U);
            got += *n;
        }
        if ((*t)->position == 2) {
            EXPECT_GT((*t)->descriptor_offset, k4GiB);
            EXPECT_GT((*t)->buffer_offsets[0], k4GiB);
            EXPECT_EQ(0, std::memcmp(data.data(), file_->tail.data(), data.size()));
        }
        if ((*t)->position == 3) {
            EXPECT_EQ(0, std::memcmp(data.data(), file_->last.data(), data.size()));
        }
    }
    EXPECT_EQ(names.size(), 4U);
    ASSERT_EQ(r->index().size(), 4U);
    EXPECT_GT(r->index()[3].data_offset, k4GiB);
}

/// Discards what it is given, counting the bytes.
class DiscardingSink final : public ByteSink {
public:
    Status write(std::span<const uint8_t> bytes) override {
        count += bytes.size();
        return Status::success();
    }
    uint64_t count = 0;
};

TEST(LargeFileWriter, FiveGiBThroughADiscardingSinkKeeps64BitOffsets) {
    DiscardingSink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w) << w.error().to_string();
    const uint64_t big = uint64_t{5} << 30;
    auto d = make_dense(ElementType::kUInt8, {big});
    ASSERT_TRUE(d);
    ASSERT_TRUE(w->begin_tensor("big", *d));
    for (uint64_t left = big; left > 0;) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(left, hurray::test::zero_block().size()));
        ASSERT_TRUE(w->write_data(hurray::test::zero_block().first(n)));
        left -= n;
    }
    ASSERT_TRUE(w->end_tensor());
    auto small = make_dense(ElementType::kInt32, {3});
    const std::vector<uint8_t> bytes(12, 9);
    const std::span<const uint8_t> bufs[] = {bytes};
    ASSERT_TRUE(w->add_tensor("after", *small, bufs));
    ASSERT_TRUE(w->finish());
    ASSERT_EQ(w->entries().size(), 2U);
    EXPECT_EQ(w->entries()[0].data_length, big);
    EXPECT_GT(w->entries()[1].descriptor_offset, big);
    EXPECT_GT(w->entries()[1].data_offset, big);
    EXPECT_EQ(w->offset(), sink.count);
    EXPECT_GT(sink.count, big);
}

}  // namespace
}  // namespace hurray
