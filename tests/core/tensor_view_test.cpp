// SPDX-License-Identifier: Apache-2.0
// TensorView: what make() accepts and refuses, index and output-size checks,
// read_bits for wide and private types, and the generic-width copy path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/tensor_view.hpp"
#include "view_test_support.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_view_test;  // NOLINT(google-build-using-namespace)
using ET = ElementType;

ErrorCode make_error(const Tensor& t) {
    auto v = t.view();
    return v.ok() ? ErrorCode::kOk : v.error().code();
}

TEST(TensorView, MakeRefusesWhatCannotBeAddressed) {
    auto head = make_composite_head(ET::kFloat32, {4}, CompositionRule::kGroup, 1);
    ASSERT_TRUE(head.ok());
    Tensor h{*head, {}};
    EXPECT_EQ(make_error(h), ErrorCode::kUnsupported);

    Tensor ext;
    ext.d.shape = {4};
    ext.d.layout = ExtensionLayout{.tag = 0xF0, .layout_id = 7};
    ext.d.buffers = {BufferHandle{.byte_size = 16}};
    ext.bufs = {Bytes(16)};
    EXPECT_EQ(make_error(ext), ErrorCode::kUnsupported);

    Tensor dyn;
    dyn.d.shape = {kDynamicDim, 4};
    dyn.d.buffers = {BufferHandle{.byte_size = 16}};
    dyn.bufs = {Bytes(16)};
    EXPECT_EQ(make_error(dyn), ErrorCode::kInvalidShape);

    Tensor unknown;
    unknown.d.element_type = static_cast<ET>(0x30);
    unknown.d.shape = {4};
    unknown.d.buffers = {BufferHandle{.byte_size = 16}};
    unknown.bufs = {Bytes(16)};
    EXPECT_EQ(make_error(unknown), ErrorCode::kUnknownElementType);
}

TEST(TensorView, MakeChecksTheDescriptorAndTheSpans) {
    auto t = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {3, 4}, .buffers = {}});
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(make_error(*t), ErrorCode::kOk);

    Tensor bad_layout = *t;
    bad_layout.d.layout = StridedLayout{{1}};  // one stride for rank 2
    EXPECT_EQ(make_error(bad_layout), ErrorCode::kInvalidLayout);

    Tensor small_handle = *t;
    small_handle.d.buffers[0].byte_size = 40;  // 12 float32 need 48
    EXPECT_EQ(make_error(small_handle), ErrorCode::kBufferTooSmall);

    Tensor short_span = *t;
    short_span.bufs[0].resize(47);
    EXPECT_EQ(make_error(short_span), ErrorCode::kInvalidArgument);

    Tensor no_spans = *t;
    no_spans.bufs.clear();
    EXPECT_EQ(make_error(no_spans), ErrorCode::kInvalidArgument);

    // A larger span is fine; the view uses the declared size.
    Tensor long_span = *t;
    long_span.bufs[0].resize(100);
    auto v = long_span.view();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->buffer(0).size(), 48U);
    EXPECT_EQ(v->buffer_count(), 1U);
    // Without an owner the view keeps its own copy of the descriptor (the
    // caller's may be a temporary); with one, it refers to the caller's.
    EXPECT_NE(&v->descriptor(), &long_span.d);
    EXPECT_EQ(v->descriptor(), long_span.d);
    std::vector<std::span<const uint8_t>> spans(long_span.bufs.begin(), long_span.bufs.end());
    auto owned = TensorView::make(long_span.d, spans, std::make_shared<int>(0));
    ASSERT_TRUE(owned.ok());
    EXPECT_EQ(&owned->descriptor(), &long_span.d);
}

TEST(TensorView, SixBitByteOffsetMustStartAGroup) {
    for (uint64_t off : {0, 1, 2, 3, 4, 6}) {
        auto t = sized(TensorDescriptor{.element_type = ET::kFloat6E2M3, .shape = {5}, .byte_offset = off, .buffers = {}});
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(make_error(*t), off % 3 == 0 ? ErrorCode::kOk : ErrorCode::kUnsupported) << off;
    }
    // byte_offset 3: element 0 is element 4 of the buffer's packed run.
    auto t = sized(TensorDescriptor{.element_type = ET::kFloat6E3M2, .shape = {5}, .byte_offset = 3, .buffers = {}});
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v->locate(Index{0}), (ElementLocation{true, 0, 0, 4}));
    EXPECT_EQ(*v->locate(Index{4}), (ElementLocation{true, 0, 0, 8}));
}

TEST(TensorView, IndexChecks) {
    auto t = sized(TensorDescriptor{.element_type = ET::kInt8, .shape = {2, 3}, .buffers = {}});
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->locate(Index{1}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(v->locate(Index{1, 2, 0}).error().code(), ErrorCode::kInvalidArgument);
    auto out = v->locate(Index{1, 3});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(out.error().message(), "index[1] = 3 is outside shape[1] = 3");
    EXPECT_EQ(v->read_bits(Index{2, 0}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(v->read_double(Index{2, 0}).error().code(), ErrorCode::kInvalidArgument);
}

TEST(TensorView, MaterializeNeedsTheExactSize) {
    for (ET type : {ET::kFloat32, ET::kInt4, ET::kFloat6E2M3}) {
        auto t = sized(TensorDescriptor{.element_type = type, .shape = {3, 3}, .buffers = {}});
        auto v = t->view();
        ASSERT_TRUE(v.ok());
        const uint64_t n = *storage_bytes(type, 9);
        for (uint64_t size : {n - 1, n + 1, uint64_t{0}}) {
            Bytes out(size);
            auto st = v->materialize(out);
            ASSERT_FALSE(st.ok());
            EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
        }
        Bytes out(n);
        EXPECT_TRUE(v->materialize(out).ok());
        EXPECT_EQ(out, *v->materialize());
    }
}

TEST(TensorView, PackedPaddingBitsAreZero) {
    // 3 int4 from a buffer full of 0xFF: the high nibble of byte 1 is padding.
    auto t = sized(TensorDescriptor{.element_type = ET::kInt4, .shape = {3}, .buffers = {}}, {}, 0xFF);
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v->materialize(), (Bytes{0xFF, 0x0F}));
    auto c = sized(TensorDescriptor{.element_type = ET::kBool, .shape = {2, 3}, .layout = ColumnMajorLayout{}, .buffers = {}}, {},
                   0xFF);
    auto cv = c->view();
    ASSERT_TRUE(cv.ok());
    EXPECT_EQ(*cv->materialize(), (Bytes{0x3F}));
    auto s = sized(TensorDescriptor{.element_type = ET::kFloat6E2M3, .shape = {5}, .buffers = {}}, {}, 0xFF);
    auto sv = s->view();
    ASSERT_TRUE(sv.ok());
    EXPECT_EQ(*sv->materialize(), (Bytes{0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x00}));
}

TEST(TensorView, WideTypesReadTheirLow64Bits) {
    for (ET type : {ET::kComplex128, ET::kFloat128}) {
        auto t = sized(TensorDescriptor{.element_type = type, .shape = {2}, .buffers = {}});
        for (size_t i = 0; i < 32; ++i) {
            t->bufs[0][i] = static_cast<uint8_t>(i);
        }
        auto v = t->view();
        ASSERT_TRUE(v.ok());
        EXPECT_EQ(*v->read_bits(Index{1}), 0x1716151413121110ULL);
        EXPECT_EQ(*v->locate(Index{1}), (ElementLocation{true, 0, 16, 0}));
    }
}

TEST(TensorView, PrivateTypes) {
    // A private 24-bit type, transposed: the copy works on any whole-byte width.
    TensorDescriptor d{.element_type = static_cast<ET>(0xF3), .shape = {3, 5}, .layout = StridedLayout{{1, 3}}, .buffers = {}};
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 24, .packing_factor = 1};
    auto t = sized(d);
    ASSERT_NE(t, nullptr);
    for (size_t i = 0; i < 45; ++i) {
        t->bufs[0][i] = static_cast<uint8_t>(i);
    }
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->read_bits(Index{1, 2}), 0x171615U);  // offset 1 + 2 * 3 = 7: bytes 21..23
    EXPECT_EQ(v->read_double(Index{1, 2}).error().code(), ErrorCode::kUnsupported);
    Bytes want;
    for (uint64_t i = 0; i < 3; ++i) {
        for (uint64_t j = 0; j < 5; ++j) {
            const uint64_t off = (i + j * 3) * 3;
            want.insert(want.end(), {static_cast<uint8_t>(off), static_cast<uint8_t>(off + 1),
                                     static_cast<uint8_t>(off + 2)});
        }
    }
    EXPECT_EQ(*v->materialize(), want);
    // A private 2-bit type, packed like uint2.
    TensorDescriptor p{.element_type = static_cast<ET>(0xF4), .shape = {5}, .buffers = {}};
    p.extension_type = ExtensionTypeDescriptor{.bit_width = 2, .packing_factor = 4};
    auto pt = sized(p, {}, 0xE4);  // elements 0, 1, 2, 3, 0, 1, ...
    auto pv = pt->view();
    ASSERT_TRUE(pv.ok()) << pv.error().to_string();
    EXPECT_EQ(*pv->read_bits(Index{3}), 3U);
    EXPECT_EQ(*pv->materialize(), (Bytes{0xE4, 0x00}));
}

TEST(TensorView, DeclaredSizesBeyondTheSpansAreRefused) {
    TensorDescriptor d{.element_type = ET::kUInt8, .shape = {uint64_t{1} << 59}, .buffers = {}};
    d.buffers = {BufferHandle{.byte_size = uint64_t{1} << 59}};
    // No bytes exist; make must refuse before touching any.
    const std::vector<std::span<const uint8_t>> spans = {
        std::span<const uint8_t>(static_cast<const uint8_t*>(nullptr), 0)};
    auto v = TensorView::make(d, spans);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().code(), ErrorCode::kInvalidArgument);  // the span is smaller than declared
}

}  // namespace
