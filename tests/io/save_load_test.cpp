// SPDX-License-Identifier: Apache-2.0
// The short path: hurray::save, hurray::load, TensorFile, FileTensor::as<T>,
// to_float32, and the lifetimes of what a loaded file hands out.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/hurray.hpp"
#include "io_test_util.hpp"

namespace hurray {
namespace {

using test::TempDir;

template <typename T>
std::vector<T> iota_values(size_t n, double scale) {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<T>(static_cast<double>(i) * scale - 3.0);
    }
    return v;
}

template <typename T>
bool same_values(const TypedBuffer<T>& a, const std::vector<T>& b) {
    const std::span<const T> s = a;
    return s.size() == b.size() && std::equal(s.begin(), s.end(), b.begin());
}

bool has(const Error& e, const std::string& text) { return e.message().find(text) != std::string::npos; }

TEST(SaveLoad, EveryScalarTypeRoundTripsZeroCopy) {
    TempDir dir;
    const auto f32 = iota_values<float>(12, 0.25);
    const auto f64 = iota_values<double>(5, 1e100);
    const auto i8 = iota_values<int8_t>(7, 1);
    const auto u8 = iota_values<uint8_t>(9, 3);
    const auto i16 = iota_values<int16_t>(3, 1000);
    const auto u16 = iota_values<uint16_t>(3, 1000);
    const auto i32 = iota_values<int32_t>(4, 1e6);
    const auto u32 = iota_values<uint32_t>(4, 1e6);
    const auto i64 = iota_values<int64_t>(4, 1e12);
    const auto u64 = iota_values<uint64_t>(4, 1e12);
    const std::vector<float16_t> f16 = to_float16(f32);
    const std::vector<bfloat16_t> bf16 = to_bfloat16(f32);
    const std::vector<float8_e4m3_t> e4 = to_float8_e4m3(f32);
    const std::vector<std::complex<float>> c64 = {{1, 2}, {3, -4}};
    const std::vector<std::byte> raw = {std::byte{1}, std::byte{0xFF}};

    const Status st = save(dir.path() / "all.hrry",
                           {{"f32", TensorRef(f32, {3, 4})},
                            {"f64", TensorRef(f64)},
                            {"i8", TensorRef(i8)},
                            {"u8", TensorRef(u8, {3, 3})},
                            {"i16", TensorRef(i16)},
                            {"u16", TensorRef(u16)},
                            {"i32", TensorRef(i32, {2, 2})},
                            {"u32", TensorRef(u32)},
                            {"i64", TensorRef(i64)},
                            {"u64", TensorRef(u64)},
                            {"f16", TensorRef(f16, {3, 4})},
                            {"bf16", TensorRef(bf16, {12})},
                            {"e4", TensorRef(e4)},
                            {"c64", TensorRef(c64)},
                            {"raw", TensorRef(raw)}},
                           {{"general.architecture", KvValue::string("test")}, {"n", KvValue::uint64(15)}});
    ASSERT_TRUE(st.ok()) << st.error().to_string();

    auto file = load(dir.path() / "all.hrry");
    ASSERT_TRUE(file.ok()) << file.error().to_string();
    ASSERT_TRUE(file->reader().mapped());
    EXPECT_EQ(file->size(), 15U);
    const TensorFile& f = *file;
    EXPECT_TRUE(same_values(*f["f32"].as<float>(), f32));
    EXPECT_TRUE(same_values(*f["f64"].as<double>(), f64));
    EXPECT_TRUE(same_values(*f["i8"].as<int8_t>(), i8));
    EXPECT_TRUE(same_values(*f["u8"].as<uint8_t>(), u8));
    EXPECT_TRUE(same_values(*f["i16"].as<int16_t>(), i16));
    EXPECT_TRUE(same_values(*f["u16"].as<uint16_t>(), u16));
    EXPECT_TRUE(same_values(*f["i32"].as<int32_t>(), i32));
    EXPECT_TRUE(same_values(*f["u32"].as<uint32_t>(), u32));
    EXPECT_TRUE(same_values(*f["i64"].as<int64_t>(), i64));
    EXPECT_TRUE(same_values(*f["i64"].as<long long>(), std::vector<long long>(i64.begin(), i64.end())));
    EXPECT_TRUE(same_values(*f["u64"].as<uint64_t>(), u64));
    EXPECT_TRUE(same_values(*f["f16"].as<float16_t>(), f16));
    EXPECT_TRUE(same_values(*f["bf16"].as<bfloat16_t>(), bf16));
    EXPECT_TRUE(same_values(*f["e4"].as<float8_e4m3_t>(), e4));
    EXPECT_TRUE(same_values(*f["c64"].as<std::complex<float>>(), c64));
    EXPECT_TRUE(same_values(*f["raw"].as<std::byte>(), raw));
    EXPECT_TRUE(same_values(*f["raw"].as<uint8_t>(), std::vector<uint8_t>{1, 0xFF}));

    // Zero-copy: the span points into the file's mapping, at its data offset.
    const FileTensor t = *f["f32"];
    const TypedBuffer<float> w = *t.as<float>();
    EXPECT_EQ(reinterpret_cast<const uint8_t*>(w.data()), t.buffers()[0].data());
    EXPECT_EQ(t.entry().data_offset % 4096, 0U);
    EXPECT_EQ(std::vector<uint64_t>(t.shape().begin(), t.shape().end()), (std::vector<uint64_t>{3, 4}));
    EXPECT_EQ(t.element_type(), ElementType::kFloat32);
    EXPECT_EQ(t.name(), "f32");

    // to_float32 of every type.
    EXPECT_EQ(*f["f32"].to_float32(), f32);
    EXPECT_EQ(*f["f16"].to_float32(), to_float32(std::span<const float16_t>(f16)));
    EXPECT_EQ(*f["i8"].to_float32(), std::vector<float>(i8.begin(), i8.end()));
    EXPECT_EQ(*f["c64"].to_float32(), (std::vector<float>{1, 3}));  // the real parts

    EXPECT_EQ(*f.kv().get_string("general.architecture"), "test");
    EXPECT_EQ(*f.kv().get_uint64("n"), 15U);
}

TEST(SaveLoad, AsReportsWhichConditionFailed) {
    TempDir dir;
    const std::vector<float> w(64, 1.0F);
    auto q = make_per_block_quantized(ElementType::kInt4, {2, 64}, 1, 32);
    ASSERT_TRUE(q.ok());
    std::vector<uint8_t> codes(q->buffers[0].byte_size, 0x21);
    std::vector<uint8_t> scales(q->buffers[1].byte_size, 0);
    for (size_t i = 0; i + 1 < scales.size(); i += 2) {
        scales[i + 1] = 0x3C;  // float16 1.0
    }
    const std::span<const uint8_t> qb[] = {codes, scales};
    auto csr = make_csr(ElementType::kFloat32, 2, 2, 1);
    ASSERT_TRUE(csr.ok());
    const std::vector<uint8_t> vals = {0, 0, 0x80, 0x3F};  // 1.0F
    const std::vector<uint8_t> cols = {1, 0, 0, 0, 0, 0, 0, 0};
    const std::vector<uint8_t> rows = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    const std::span<const uint8_t> cb[] = {vals, cols, rows};
    const bool bits[] = {true, false, true};
    const std::vector<uint8_t> nibbles = {0x21, 0x03};
    ASSERT_TRUE(save(dir.file("m.hrry"), {{"w", TensorRef(w, {8, 8})},
                                          {"q", TensorRef::from_descriptor(*q, qb)},
                                          {"csr", TensorRef::from_descriptor(*csr, cb)},
                                          {"b", TensorRef(std::span<const bool>(bits), {3})},
                                          {"i4", TensorRef::from_bytes(ElementType::kInt4, {3}, nibbles)}})
                    .ok());
    auto file = load(dir.file("m.hrry"));
    ASSERT_TRUE(file.ok());
    const TensorFile& f = *file;

    auto wrong = f["w"].as<int32_t>();
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().code(), ErrorCode::kTypeMismatch);
    EXPECT_TRUE(has(wrong.error(), "tensor 'w': as<int32_t>(): it holds float32, not int32")) << wrong.error().message();

    auto quant = f["q"].as<int8_t>();
    ASSERT_FALSE(quant.ok());
    EXPECT_EQ(quant.error().code(), ErrorCode::kUnsupported);
    EXPECT_TRUE(has(quant.error(), "quantized")) << quant.error().message();

    auto sparse = f["csr"].as<float>();
    ASSERT_FALSE(sparse.ok());
    EXPECT_TRUE(has(sparse.error(), "layout is csr, not dense row-major")) << sparse.error().message();

    auto packed = f["b"].as<bool>();
    ASSERT_FALSE(packed.ok());
    EXPECT_TRUE(has(packed.error(), "bool elements are not whole bytes")) << packed.error().message();
    EXPECT_FALSE(f["i4"].bytes().ok());

    auto missing = f["nope"].as<float>();
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
    EXPECT_TRUE(has(missing.error(), "'nope'"));
    EXPECT_EQ(f["nope"].to_float32().error().code(), ErrorCode::kNotFound);
    EXPECT_EQ(f.at(99).error().code(), ErrorCode::kInvalidArgument);

    // to_float32 works for all of them.
    auto qv = f["q"].to_float32();
    ASSERT_TRUE(qv.ok()) << qv.error().to_string();
    auto view = f["q"].view();
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(*qv, *dequantize(*view));
    EXPECT_EQ((*qv)[0], 1.0F);
    EXPECT_EQ((*qv)[1], 2.0F);
    EXPECT_EQ(*f["csr"].to_float32(), (std::vector<float>{0, 1, 0, 0}));
    EXPECT_EQ(*f["b"].to_float32(), (std::vector<float>{1, 0, 1}));
    EXPECT_EQ(*f["i4"].to_float32(), (std::vector<float>{1, 2, 3}));
}

TEST(SaveLoad, CompositeIsMaterializedByToFloat32) {
    TempDir dir;
    auto head = make_composite_head(ElementType::kFloat32, {4, 2}, CompositionRule::kPartition, 2);
    ASSERT_TRUE(head.ok());
    std::vector<TensorDescriptor> parts;
    for (uint64_t row : {0U, 2U}) {
        TensorDescriptor d = *make_dense(ElementType::kFloat32, {2, 2});
        d.shard = ShardDescriptor{{4, 2}, {row, 0}};
        parts.push_back(d);
    }
    const std::vector<float> top = {1, 2, 3, 4};
    const std::vector<float> bottom = {5, 6, 7, 8};
    const std::span<const uint8_t> tb[] = {std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(top.data()), 16)};
    const std::span<const uint8_t> bb[] = {std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bottom.data()), 16)};
    const Status st = save(dir.file("c.hrry"), {{"m", TensorRef::from_descriptor(*head, {})},
                                                {"m.top", TensorRef::from_descriptor(parts[0], tb)},
                                                {"m.bottom", TensorRef::from_descriptor(parts[1], bb)}});
    ASSERT_TRUE(st.ok()) << st.error().to_string();
    auto file = load(dir.file("c.hrry"));
    ASSERT_TRUE(file.ok());
    auto m = file->tensor("m");
    ASSERT_TRUE(m.ok());
    EXPECT_TRUE(m->is_composite());
    EXPECT_EQ(m.as<float>().error().code(), ErrorCode::kUnsupported);
    auto values = m.to_float32();
    ASSERT_TRUE(values.ok()) << values.error().to_string();
    EXPECT_EQ(*values, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(SaveLoad, IterationNamesAndMaps) {
    TempDir dir;
    const std::vector<int32_t> a = {1, 2};
    const std::vector<int32_t> b = {3};
    std::map<std::string, TensorRef> tensors;
    tensors.emplace("b", TensorRef(b));
    tensors.emplace("a", TensorRef(a));
    ASSERT_TRUE(save(dir.file("m.hrry"), tensors).ok());
    auto file = load(dir.file("m.hrry"));
    ASSERT_TRUE(file.ok());
    std::vector<std::string> seen;
    for (const auto& [name, t] : *file) {
        ASSERT_TRUE(t.ok());
        EXPECT_EQ(t->name(), name);
        seen.emplace_back(name);
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));  // map order
    EXPECT_EQ(file->names(), (std::vector<std::string_view>{"a", "b"}));
    EXPECT_TRUE(file->contains("a"));
    EXPECT_FALSE(file->contains("c"));
    EXPECT_TRUE(file->kv().empty());

    std::vector<std::pair<std::string, TensorRef>> pairs = {{"x", TensorRef(a)}};
    MemorySink sink;
    KvMetadata kv;
    ASSERT_TRUE(kv.set("k", KvValue::int64(-1)).ok());
    ASSERT_TRUE(save(sink, pairs, kv).ok());
    auto mem = FileReader::open_memory(sink.bytes());
    ASSERT_TRUE(mem.ok()) << mem.error().to_string();
    EXPECT_EQ(*mem->kv().get_int64("k"), -1);
    EXPECT_TRUE(same_values(*mem->tensor("x").as<int32_t>(), a));
}

TEST(SaveLoad, ErrorsLeaveNoFileBehind) {
    TempDir dir;
    const std::vector<float> w(6, 1.0F);
    const std::string path = dir.file("m.hrry");
    // A shape that disagrees with the data: named, and nothing written.
    Status st = save(path, {{"ok", TensorRef(w)}, {"bad", TensorRef(w, {4})}});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kSizeMismatch);
    EXPECT_TRUE(has(st.error(), "tensor 'bad': float32[4] has 4 element(s), 6 value(s) given")) << st.error().message();
    EXPECT_TRUE(dir.list().empty());

    // An existing file is untouched by a failed save.
    ASSERT_TRUE(save(path, {{"w", TensorRef(w)}}).ok());
    const auto before = test::read_all(path);
    st = save(path, {{"w", TensorRef(w)}, {"w", TensorRef(w)}});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kDuplicateName);
    EXPECT_EQ(test::read_all(path), before);
    st = save(path, {{"w", TensorRef(w)}}, {{"k", KvValue::boolean(true)}, {"k", KvValue::boolean(false)}});
    EXPECT_EQ(st.error().code(), ErrorCode::kDuplicateName);
    st = save(path, {{"", TensorRef(w)}});
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidName);
    EXPECT_EQ(test::read_all(path), before);
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"m.hrry"}));

    auto none = load(dir.path() / "missing.hrry");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code(), ErrorCode::kIoError);
    EXPECT_TRUE(has(none.error(), "missing.hrry")) << none.error().message();
}

// Everything a loaded file hands out stays valid after the file object is
// gone, mapped or read with pread: run under ASan, a dangling read here is a
// test failure.
class SaveLoadLifetime : public ::testing::TestWithParam<bool> {};

TEST_P(SaveLoadLifetime, TensorsViewsAndSpansOutliveTheirFile) {
    TempDir dir;
    std::vector<float> w(1024);
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(i);
    }
    ASSERT_TRUE(save(dir.file("m.hrry"), {{"w", TensorRef(w, {32, 32})}}).ok());
    FileReadOptions options;
    options.use_mmap = GetParam();

    std::optional<FileTensor> tensor;
    std::optional<TensorView> view;
    {
        auto file = load(dir.file("m.hrry"), options);
        ASSERT_TRUE(file.ok());
        EXPECT_EQ(file->reader().mapped(), GetParam());
        // A span from a temporary tensor lives as long as the file.
        const auto from_temporary = (*file)["w"].as<float>();
        ASSERT_TRUE(from_temporary.ok());
        EXPECT_TRUE(same_values(*from_temporary, w));
        tensor = *(*file)["w"];
        auto v = (*file)["w"].view();  // made from a temporary FileTensorResult
        ASSERT_TRUE(v.ok());
        view = std::move(*v);
    }  // the TensorFile and its reader are gone
    const TypedBuffer<float> values = *tensor->as<float>();
    EXPECT_TRUE(same_values(values, w));
    EXPECT_EQ(tensor->descriptor().shape, (Shape{32, 32}));
    EXPECT_EQ(tensor->name(), "w");
    tensor.reset();  // only the view holds the file now
    EXPECT_EQ(*view->read_double(std::vector<uint64_t>{31, 31}), 1023.0);
    EXPECT_EQ(view->descriptor().shape, (Shape{32, 32}));

    // Reader copies share the file.
    auto r = FileReader::open(dir.path() / "m.hrry", options);
    ASSERT_TRUE(r.ok());
    FileReader copy = *r;
    r = Error(ErrorCode::kIoError, "dropped");
    EXPECT_EQ(copy.tensor_count(), 1U);
    EXPECT_TRUE(same_values(*copy.tensor("w").as<float>(), w));
    // Without a mapping the data is read once and shared by later lookups.
    EXPECT_EQ(copy.tensor("w")->buffers()[0].data(), copy.tensor(size_t{0})->buffers()[0].data());
}

INSTANTIATE_TEST_SUITE_P(MappedOrNot, SaveLoadLifetime, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "mmap" : "pread"; });

}  // namespace
}  // namespace hurray
