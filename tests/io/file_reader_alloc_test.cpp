// SPDX-License-Identifier: Apache-2.0
// What FileReader allocates: nothing for a name lookup (sorted or hashed
// index), for a decoded descriptor, or for a tensor of up to three buffers
// (dense and quantized tensors), counted by a replacement of the global
// operator new in this test binary (armed only inside the measured calls).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "counting_allocator.hpp"
#include "file_test_support.hpp"
#include "hurray/io/file_reader.hpp"

using hurray_test::allocations_in;

namespace hurray {
namespace {

using test::build_file;
using test::BuildOptions;
using test::dense;
using test::must;
using test::TempDir;
using test::TestTensor;

std::vector<TestTensor> mixed() {
    std::vector<TestTensor> t = {dense("model.embed.weight", ElementType::kFloat16, {16, 8}),
                                 dense("model.norm.weight", ElementType::kFloat32, {8})};
    t.push_back(
        {"model.q.weight", must(make_per_block_quantized(ElementType::kInt4, {8, 64}, 1, 32))});
    t.push_back(
        {"model.k.weight", must(make_per_block_quantized(ElementType::kUInt8, {4, 64}, 1, 16,
                                                         ElementType::kFloat32, false))});
    return t;
}

TEST(FileReaderAllocations, LookupDescriptorAndTensorAllocateNothing) {
    for (const bool sorted : {false, true}) {
        BuildOptions opt;
        opt.sort_index = sorted;
        const auto f = build_file(mixed(), nullptr, opt);
        TempDir dir;
        const std::string path = dir.write("m.hrry", f.bytes);
        for (const DescriptorCheck mode :
             {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
            FileReadOptions o;
            o.descriptors = mode;
            for (const bool mapped : {true, false}) {
                const FileReader r = mapped ? must(FileReader::open(path, o))
                                            : must(FileReader::open_memory(f.bytes, {}, o));
                for (size_t i = 0; i < r.tensor_count(); ++i) {
                    ASSERT_TRUE(r.descriptor(i).ok());  // first use: decoded (allocates the model)
                }
                for (size_t i = 0; i < r.tensor_count(); ++i) {
                    const std::string name(r.entry(i).name);
                    bool ok = false;
                    size_t buffers = 0;
                    EXPECT_EQ(allocations_in([&] {
                                  const auto at = r.find(name);
                                  ok = at.has_value() && *at == i &&
                                       !r.find("absent.name").has_value();
                              }),
                              0U)
                        << name;
                    EXPECT_TRUE(ok);
                    EXPECT_EQ(allocations_in(
                                  [&] { ok = r.descriptor(i).ok() && r.descriptor(name).ok(); }),
                              0U);
                    EXPECT_TRUE(ok);
                    EXPECT_EQ(allocations_in([&] {
                                  auto t = r.tensor(i);
                                  auto u = r.tensor(std::string_view(name));
                                  ok = t.ok() && u.ok();
                                  buffers = ok ? t->buffers().size() : 0;
                              }),
                              0U)
                        << name << (mapped ? " mapped" : " memory");
                    EXPECT_TRUE(ok);
                    EXPECT_GE(buffers, 1U);
                }
            }
        }
    }
}

}  // namespace
}  // namespace hurray
