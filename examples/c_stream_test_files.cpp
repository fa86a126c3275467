// SPDX-License-Identifier: Apache-2.0
// Not an example: writes, with the C++ writer, the files that ctest
// example.c_stream_pipe streams with c_stream_send | c_stream_recv besides
// basic.hrry (the conformance set holds no other file):
//   layouts.hrry         a tensor per conformance descriptor (CSR, per-block
//                        int4, Morton, strided, sharded, empty, bool, float16...)
//   layouts_sorted.hrry  the same with a SORTED_INDEX (index order is not write order)
//   composite.hrry       a group composite between two tensors (c_stream_send refuses it)
//   hurray_c_stream_test_files CONFORMANCE_DIR OUT_DIR
#include <hurray/hurray.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

namespace {

struct Tensor {
    std::string name;
    hurray::TensorDescriptor desc;
    std::vector<std::vector<uint8_t>> data;  // one per buffer
    std::vector<std::span<const uint8_t>> spans;
};

// The bytes of `d`'s buffers, a pattern that differs per tensor and buffer.
void fill(Tensor& t, size_t salt) {
    t.data.clear();
    t.spans.clear();
    for (size_t b = 0; b < t.desc.buffers.size(); ++b) {
        std::vector<uint8_t> bytes(static_cast<size_t>(t.desc.buffers[b].byte_size));
        for (size_t j = 0; j < bytes.size(); ++j) {
            bytes[j] = static_cast<uint8_t>(salt * 41 + b * 5 + j * 7 + 3);
        }
        t.data.push_back(std::move(bytes));
    }
    for (const auto& bytes : t.data) {
        t.spans.emplace_back(bytes);
    }
}

int fail(const std::string& what, const hurray::Error& e) {
    std::fprintf(stderr, "hurray_c_stream_test_files: %s: %s\n", what.c_str(), e.to_string().c_str());
    return 1;
}

int write_layouts(const std::string& dir, const std::string& path, bool sorted) {
    // Names chosen so that sorting them reverses the write order.
    const char* const files[] = {"csr_f32_3x3",          "quant_per_block_int4_128x128", "morton_f32_4x4",
                                 "strided_f32_3x4",      "sharded_f32_8x4",              "empty_f32_0x4",
                                 "bool_packed_10",       "row_major_f16_2x2",            "row_major_int8_5",
                                 "row_major_f32_3x4"};
    std::vector<Tensor> tensors;
    size_t salt = 0;
    for (const char* f : files) {
        std::ifstream in(dir + "/descriptors/" + f + ".bin", std::ios::binary);
        const std::vector<uint8_t> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto d = hurray::decode(raw);
        if (!d) {
            return fail(f, d.error());
        }
        Tensor t;
        t.name = std::string(1, static_cast<char>('z' - salt)) + "_" + f;
        t.desc = *d;
        fill(t, ++salt);
        tensors.push_back(std::move(t));
    }
    hurray::FileWriterOptions options;
    options.sorted_index = sorted;
    auto writer = hurray::FileWriter::create_file(path, options);
    if (!writer) {
        return fail(path, writer.error());
    }
    for (const Tensor& t : tensors) {
        if (auto s = writer->add_tensor(t.name, t.desc, t.spans); !s) {
            return fail(t.name, s.error());
        }
    }
    if (auto s = writer->finish(); !s) {
        return fail(path, s.error());
    }
    return 0;
}

int write_composite(const std::string& path) {
    Tensor first{"first", *hurray::make_dense(hurray::ElementType::kFloat32, {4}), {}, {}};
    Tensor a{"group.a", *hurray::make_dense(hurray::ElementType::kInt8, {5}), {}, {}};
    Tensor b{"group.b", *hurray::make_dense(hurray::ElementType::kFloat16, {2, 3}), {}, {}};
    Tensor last{"last", *hurray::make_dense(hurray::ElementType::kInt32, {2}), {}, {}};
    fill(first, 1);
    fill(a, 2);
    fill(b, 3);
    fill(last, 4);
    auto head = hurray::make_composite_head(hurray::ElementType::kFloat32, {2}, hurray::CompositionRule::kGroup, 2);
    if (!head) {
        return fail("group head", head.error());
    }
    auto writer = hurray::FileWriter::create_file(path);
    if (!writer) {
        return fail(path, writer.error());
    }
    const hurray::FileTensorInput members[] = {{a.name, &a.desc, a.spans}, {b.name, &b.desc, b.spans}};
    if (auto s = writer->add_tensor(first.name, first.desc, first.spans); !s) {
        return fail(first.name, s.error());
    }
    if (auto s = writer->add_composite("group", *head, members); !s) {
        return fail("group", s.error());
    }
    if (auto s = writer->add_tensor(last.name, last.desc, last.spans); !s) {
        return fail(last.name, s.error());
    }
    if (auto s = writer->finish(); !s) {
        return fail(path, s.error());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: hurray_c_stream_test_files CONFORMANCE_DIR OUT_DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    const std::string out = argv[2];
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (write_layouts(dir, out + "/layouts.hrry", false) != 0 ||
        write_layouts(dir, out + "/layouts_sorted.hrry", true) != 0 || write_composite(out + "/composite.hrry") != 0) {
        return 1;
    }
    return 0;
}
