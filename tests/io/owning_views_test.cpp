// SPDX-License-Identifier: Apache-2.0
// What a file hands out owns what it shows (issue 30): the typed elements of
// as<T>(), the bytes of bytes(), a view made from a temporary descriptor. The
// dangling snippets of the issue either do not compile (checked here with
// static_assert and requires-expressions) or are safe: run under
// AddressSanitizer by scripts/test.sh stage 3, these read freed or unmapped
// memory if anything still dangles.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/hurray.hpp"
#include "io_test_util.hpp"

namespace hurray {
namespace {

using test::TempDir;

// A span from a temporary TypedBuffer would outlive the storage: no conversion.
template <typename B>
concept SpanFrom = requires { std::declval<B>().span(); };
static_assert(!std::is_convertible_v<TypedBuffer<float>, std::span<const float>>);
static_assert(!std::is_convertible_v<TypedBuffer<float>&&, std::span<const float>>);
static_assert(!std::is_constructible_v<std::span<const float>, TypedBuffer<float>>);
static_assert(std::is_convertible_v<const TypedBuffer<float>&, std::span<const float>>);
static_assert(!SpanFrom<TypedBuffer<float>>);
static_assert(SpanFrom<const TypedBuffer<float>&>);
// It iterates (random access), but is no contiguous range that span would take.
static_assert(std::ranges::random_access_range<TypedBuffer<float>>);
static_assert(!std::ranges::contiguous_range<TypedBuffer<float>>);
// A view with an owner refers to its descriptor: never to a temporary one.
template <typename D>
concept MakeWithOwner = requires(D&& d, std::span<const std::span<const uint8_t>> bufs,
                                 std::shared_ptr<const void> owner) {
    TensorView::make(std::forward<D>(d), bufs, owner);
};
template <typename D>
concept MakeWithoutOwner = requires(D&& d, std::span<const std::span<const uint8_t>> bufs) {
    TensorView::make(std::forward<D>(d), bufs);
};
static_assert(!MakeWithOwner<TensorDescriptor>);
static_assert(MakeWithOwner<const TensorDescriptor&>);
// Without an owner, make copies the descriptor: a temporary is fine.
static_assert(MakeWithoutOwner<TensorDescriptor>);

std::vector<float> values(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>(i) * 0.5F + 1.0F;
    }
    return v;
}

class OwningViews : public ::testing::TestWithParam<bool> {
protected:
    FileReadOptions options() const {
        FileReadOptions o;
        o.use_mmap = GetParam();
        return o;
    }
};

TEST_P(OwningViews, TypedElementsOutliveTheFile) {
    // The first snippet, with the element type the library returns.
    TempDir dir;
    const std::vector<float> w = values(4096);  // 16 KiB: pages of their own in the mapping
    ASSERT_TRUE(save(dir.file("m.hrry"), {{"w", TensorRef(w, {64, 64})}}).ok());
    TypedBuffer<float> kept;
    {
        auto f = load(dir.file("m.hrry"), options());
        ASSERT_TRUE(f.ok()) << f.error().to_string();
        kept = *f->tensor("w").as<float>();
    }  // the file, its reader and the tensor are gone
    ASSERT_EQ(kept.size(), w.size());
    EXPECT_EQ(kept[0], w[0]);
    EXPECT_EQ(kept[4095], w[4095]);
    const std::span<const float> s = kept;  // a span where the owner is kept alive
    EXPECT_TRUE(std::equal(s.begin(), s.end(), w.begin(), w.end()));
    float sum = 0;
    for (const float x : kept) {
        sum += x;
    }
    EXPECT_GT(sum, 0.0F);
    // Copies share the storage.
    const TypedBuffer<float> copy = kept;
    kept = TypedBuffer<float>();
    EXPECT_EQ(copy[100], w[100]);
    EXPECT_NE(copy.owner(), nullptr);
}

TEST_P(OwningViews, BytesOutliveTheReader) {
    TempDir dir;
    const std::vector<float> w = values(1024);
    ASSERT_TRUE(save(dir.file("m.hrry"), {{"w", TensorRef(w, {1024})}}).ok());
    SharedBuffer bytes;
    {
        auto r = FileReader::open(dir.file("m.hrry"), options());
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        bytes = *r->tensor("w").bytes();
    }
    ASSERT_EQ(bytes.size(), w.size() * sizeof(float));
    std::vector<float> back(w.size());
    std::memcpy(back.data(), bytes.data(), bytes.size());
    EXPECT_EQ(back, w);
}

TEST_P(OwningViews, AViewOfAFileTensorOutlivesEverything) {
    TempDir dir;
    const std::vector<float> w = values(256);
    ASSERT_TRUE(save(dir.file("m.hrry"), {{"w", TensorRef(w, {16, 16})}}).ok());
    std::optional<TensorView> view;
    {
        auto r = FileReader::open(dir.file("m.hrry"), options());
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        view = *r->tensor("w").view();
    }
    EXPECT_EQ(view->descriptor().shape, (Shape{16, 16}));
    EXPECT_EQ(*view->read_double(std::vector<uint64_t>{15, 15}), static_cast<double>(w[255]));
}

INSTANTIATE_TEST_SUITE_P(MappedOrNot, OwningViews, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "mmap" : "pread"; });

TEST(OwningViews, AViewMadeFromATemporaryDescriptorKeepsItsOwnCopy) {
    // The second snippet: TensorView::make(*hurray::decode(bytes), bufs).
    auto d = make_dense(ElementType::kFloat32, {2, 3});
    ASSERT_TRUE(d.ok());
    const auto encoded = encode(*d);
    ASSERT_TRUE(encoded.ok());
    const std::vector<float> data = values(6);
    const std::span<const uint8_t> raw(reinterpret_cast<const uint8_t*>(data.data()), data.size() * sizeof(float));
    const std::span<const uint8_t> bufs[] = {raw};
    auto view = TensorView::make(*decode(*encoded), bufs);  // the decoded descriptor dies here
    ASSERT_TRUE(view.ok()) << view.error().to_string();
    EXPECT_EQ(view->descriptor().shape, (Shape{2, 3}));
    EXPECT_EQ(view->descriptor().element_type, ElementType::kFloat32);
    EXPECT_EQ(*view->read_double(std::vector<uint64_t>{1, 2}), static_cast<double>(data[5]));
    // Copies share the copy.
    const TensorView copy = *view;
    view = Error(ErrorCode::kInvalidArgument, "dropped");
    EXPECT_EQ(copy.descriptor().shape, (Shape{2, 3}));
    EXPECT_EQ(*copy.materialize(), std::vector<uint8_t>(raw.begin(), raw.end()));
}

}  // namespace
}  // namespace hurray
