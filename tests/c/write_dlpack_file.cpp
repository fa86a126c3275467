// SPDX-License-Identifier: Apache-2.0
// Test helper of the C ABI tests (not a test): writes, with the C++ writer, the
// HRRYFILE that tests/c/c_dlpack_test.c exports to DLPack. Tensors DLPack can
// describe (strided with a negative and a zero stride, column-major, bfloat16,
// complex64, uint64, empty, members of a composite) hold, at logical row-major
// position n, the value n (broadcast: n % 4). Others it cannot (bool, int4,
// float8, float128, quantized, CSR, Morton, a composite head, a CUDA buffer).
// tests/c/c_dlpack_test.c lists them in the same order.
//   hurray_c_test_dlpack_writer OUT.hrry
#include <hurray/hurray.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace {

// Little-endian bytes of `values` (the test machines are little-endian, as the format).
template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
    std::vector<uint8_t> out(values.size() * sizeof(T));
    if (!out.empty()) {
        std::memcpy(out.data(), values.data(), out.size());
    }
    return out;
}

// Zero bytes for the data of `d`'s buffers.
std::vector<std::vector<uint8_t>> zero_buffers(const hurray::TensorDescriptor& d) {
    std::vector<std::vector<uint8_t>> out;
    for (const hurray::BufferHandle& b : d.buffers) {
        out.emplace_back(b.byte_size, 0);
    }
    return out;
}

struct Writer {
    hurray::FileWriter& w;
    bool ok = true;

    void add(const char* name, const hurray::Result<hurray::TensorDescriptor>& d,
             const std::vector<std::vector<uint8_t>>& data) {
        if (!ok) {
            return;
        }
        if (!d.ok()) {
            std::fprintf(stderr, "%s: %s\n", name, d.error().to_string().c_str());
            ok = false;
            return;
        }
        std::vector<std::span<const uint8_t>> spans(data.begin(), data.end());
        const hurray::Status s = w.add_tensor(name, *d, spans);
        if (!s.ok()) {
            std::fprintf(stderr, "%s: %s\n", name, s.error().to_string().c_str());
            ok = false;
        }
    }
};

hurray::Result<hurray::TensorDescriptor> with_layout(hurray::ElementType type, hurray::Shape shape,
                                                      hurray::LayoutDescriptor layout, uint64_t byte_offset = 0) {
    hurray::TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.layout = std::move(layout);
    d.byte_offset = byte_offset;
    return hurray::size_buffers(std::move(d));
}

}  // namespace

int main(int argc, char** argv) {
    using hurray::ElementType;
    if (argc != 2) {
        std::fprintf(stderr, "usage: hurray_c_test_dlpack_writer OUT.hrry\n");
        return 2;
    }
    auto created = hurray::FileWriter::create_file(argv[1]);
    if (!created.ok()) {
        std::fprintf(stderr, "create: %s\n", created.error().to_string().c_str());
        return 1;
    }
    Writer out{*created};

    // int16 [3, 4], strides [-4, 1], rows stored last to first: element
    // [0, 0] is the 9th of 12 stored, byte_offset 16.
    {
        std::vector<int16_t> v(12);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) {
                v[static_cast<size_t>((2 - r) * 4 + c)] = static_cast<int16_t>(r * 4 + c);
            }
        }
        out.add("strided_reversed", with_layout(ElementType::kInt16, {3, 4}, hurray::StridedLayout{{-4, 1}}, 16),
                {bytes_of(v)});
    }
    // float32 [2, 3], column-major.
    out.add("column_major", with_layout(ElementType::kFloat32, {2, 3}, hurray::ColumnMajorLayout{}),
            {bytes_of(std::vector<float>{0, 3, 1, 4, 2, 5})});
    // uint8 [3, 4], strides [0, 1]: one stored row, broadcast.
    out.add("broadcast", with_layout(ElementType::kUInt8, {3, 4}, hurray::StridedLayout{{0, 1}}),
            {bytes_of(std::vector<uint8_t>{0, 1, 2, 3})});
    // bfloat16 [4]: 0, 1, 2, 3 (the high halves of the float32 values).
    out.add("bf16", hurray::make_dense(ElementType::kBFloat16, {4}),
            {bytes_of(std::vector<uint16_t>{0x0000, 0x3F80, 0x4000, 0x4040})});
    // complex64 [2]: 0 + 0i, 1 - 1i.
    out.add("c64", hurray::make_dense(ElementType::kComplex64, {2}),
            {bytes_of(std::vector<float>{0, 0, 1, -1})});
    // uint64 [2, 2].
    out.add("u64", hurray::make_dense(ElementType::kUInt64, {2, 2}), {bytes_of(std::vector<uint64_t>{0, 1, 2, 3})});
    // float64 [0, 5]: no element.
    out.add("empty", hurray::make_dense(ElementType::kFloat64, {0, 5}), {{}});

    // Not exportable.
    out.add("flags", hurray::make_dense(ElementType::kBool, {3}), {{0x05}});
    out.add("i4", hurray::make_dense(ElementType::kInt4, {2, 3}), {{0x10, 0x32, 0x54}});
    out.add("f8", hurray::make_dense(ElementType::kFloat8E4M3, {4}), {{0, 0, 0, 0}});
    out.add("f128", hurray::make_dense(ElementType::kFloat128, {1}), {std::vector<uint8_t>(16, 0)});
    {
        auto q = hurray::make_per_block_quantized(ElementType::kInt8, {2, 4}, 1, 2);
        out.add("q8", q, q.ok() ? zero_buffers(*q) : std::vector<std::vector<uint8_t>>{});
    }
    out.add("csr", hurray::make_csr(ElementType::kFloat32, 3, 3, 1),
            {bytes_of(std::vector<float>{1}), bytes_of(std::vector<uint64_t>{2}),
             bytes_of(std::vector<uint64_t>{0, 1, 1, 1})});
    out.add("morton", with_layout(ElementType::kFloat32, {2, 2}, hurray::MortonLayout{{1, 1}}),
            {bytes_of(std::vector<float>{0, 1, 2, 3})});
    {
        hurray::BufferPlacement cuda;
        cuda.device_tag = hurray::DeviceTag::kCuda;
        out.add("cuda", hurray::make_dense(ElementType::kFloat32, {2}, cuda), {bytes_of(std::vector<float>{0, 1})});
    }

    // A partition composite int32 [2, 3]: a head (not exportable), then its
    // two members [1, 3] (exportable: 0 1 2 and 3 4 5).
    if (out.ok) {
        auto head = hurray::make_composite_head(ElementType::kInt32, {2, 3}, hurray::CompositionRule::kPartition, 2);
        auto top = hurray::make_dense(ElementType::kInt32, {1, 3});
        if (!head.ok() || !top.ok()) {
            std::fprintf(stderr, "composite descriptors\n");
            return 1;
        }
        top->shard = hurray::ShardDescriptor{{2, 3}, {0, 0}};
        auto bottom = *top;
        bottom.shard = hurray::ShardDescriptor{{2, 3}, {1, 0}};
        const auto tb = bytes_of(std::vector<int32_t>{0, 1, 2});
        const auto bb = bytes_of(std::vector<int32_t>{3, 4, 5});
        const std::vector<std::span<const uint8_t>> ts = {tb};
        const std::vector<std::span<const uint8_t>> bs = {bb};
        const hurray::FileTensorInput members[] = {{"part.top", &*top, ts}, {"part.bottom", &bottom, bs}};
        const hurray::Status s = created->add_composite("part", *head, members);
        if (!s.ok()) {
            std::fprintf(stderr, "part: %s\n", s.error().to_string().c_str());
            return 1;
        }
    }
    if (!out.ok) {
        return 1;
    }
    const hurray::Status finished = created->finish();
    if (!finished.ok()) {
        std::fprintf(stderr, "finish: %s\n", finished.error().to_string().c_str());
        return 1;
    }
    return 0;
}
