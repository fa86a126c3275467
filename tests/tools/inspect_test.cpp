// `hurray inspect`: conformance vectors through --json, golden text outputs, the annotated
// rows cross-checked against hurray::decode, and invalid inputs (prefixes, mutations).
//
// Golden files live in tests/tools/golden/. To regenerate them after an intended change
// of the output, run the tests with HURRAY_UPDATE_GOLDEN=1 (they are rewritten, and the
// tests pass), then review the diff:
//   HURRAY_UPDATE_GOLDEN=1 build/gcc/tests/hurray_cli_tests --gtest_filter='InspectGolden.*'
#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "descriptor_generator.hpp"
#include "hurray/annotate.hpp"
#include "cli_support.hpp"
#include "hurray/cli.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/inspect_walk.hpp"
#include "hurray/io/file_reader.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kConformance = HURRAY_CONFORMANCE_DIR;
const fs::path kGolden = fs::path(HURRAY_TESTS_DIR) / "tools" / "golden";

using namespace hurray::clitest;  // Ran, run_cli, run_process, run_piped, TempDir, read_all

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {(std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()};
}

// ---- conformance vectors ------------------------------------------------------------

TEST(InspectConformance, EveryDescriptorMatchesTheManifest) {
    const auto manifest = nlohmann::json::parse(read_text(kConformance / "manifest.json"));
    size_t checked = 0;
    std::set<std::string> listed;
    for (const auto& entry : manifest.at("descriptors")) {
        const std::string file = entry.at("file").get<std::string>();
        listed.insert(fs::path(file).filename().string());
        SCOPED_TRACE(file);
        const Ran r = run_cli({"inspect", "--json", (kConformance / file).string()});
        if (entry.contains("expect_error") || entry.contains("error")) {
            EXPECT_EQ(r.rc, 1);
            EXPECT_FALSE(r.err.empty());
            ++checked;
            continue;
        }
        ASSERT_EQ(r.rc, 0) << r.err;
        const auto got = nlohmann::json::parse(r.out);
        EXPECT_EQ(got.at("kind"), "descriptor");
        for (const auto& [key, value] : entry.at("expect").items()) {
            ASSERT_TRUE(got.contains(key)) << key;
            EXPECT_EQ(got.at(key), value) << key;
        }
        ++checked;
    }
    EXPECT_EQ(checked, manifest.at("descriptors").size());
    // Every vector in the directory is listed (so none escapes the check).
    for (const auto& f : fs::directory_iterator(kConformance / "descriptors")) {
        if (f.path().extension() == ".bin") {
            EXPECT_TRUE(listed.count(f.path().filename().string())) << f.path();
        }
    }
}

TEST(InspectConformance, EveryDescriptorDecodesWithTheAnnotator) {
    for (const auto& f : fs::directory_iterator(kConformance / "descriptors")) {
        SCOPED_TRACE(f.path().string());
        const auto bytes = read_all(f.path());
        const auto a = hurray::cli::annotate_descriptor_input(bytes);
        EXPECT_FALSE(a.error.has_value()) << a.error->to_string();
    }
}

TEST(InspectConformance, FileJsonRowsAndKinds) {
    const Ran r = run_cli({"inspect", "--json", (kConformance / "files/basic.hrry").string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("kind"), "file");
    EXPECT_TRUE(j.at("error").is_null());
    std::vector<std::string> titles;
    for (const auto& s : j.at("sections")) {
        titles.push_back(s.at("title"));
    }
    const std::vector<std::string> expected = {"header",    "tensor \"weights\" descriptor", "tensor \"weights\" data",
                                               "tensor \"bias\" descriptor", "tensor \"bias\" data", "kv",
                                               "index",     "trailer"};
    EXPECT_EQ(titles, expected);
    // KV entries are typed.
    bool saw_producer = false;
    for (const auto& row : j.at("sections")[5].at("rows")) {
        if (row.at("field") == "kv[0].string") {
            EXPECT_EQ(row.at("value"), "\"hurray-conformance\"");
            saw_producer = true;
        }
        if (row.at("field") == "kv[1].int64") {
            EXPECT_EQ(row.at("value"), "2");
        }
    }
    EXPECT_TRUE(saw_producer);
}

TEST(InspectConformance, FileRowsAgreeWithFileReader) {
    const fs::path path = kConformance / "files/basic.hrry";
    auto reader = hurray::FileReader::open(path.string());
    ASSERT_TRUE(reader) << reader.error().to_string();
    const Ran r = run_cli({"inspect", "--json", path.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    std::map<std::string, uint64_t> n;
    const auto parsed = nlohmann::json::parse(r.out);
    for (const auto& section : parsed.at("sections")) {
        for (const auto& row : section.at("rows")) {
            if (row.contains("number")) {
                n[section.at("title").get<std::string>() + "/" + row.at("field").get<std::string>()] =
                    row.at("number").get<uint64_t>();
            }
        }
    }
    const auto& h = reader->header();
    EXPECT_EQ(n["header/file_flags"], h.flags);
    EXPECT_EQ(n["header/data_buffer_alignment"], h.data_buffer_alignment);
    EXPECT_EQ(n["header/first_descriptor_offset"], h.first_descriptor_offset);
    EXPECT_EQ(n["header/tensor_count_hint"], h.tensor_count_hint);
    const auto& t = reader->trailer();
    EXPECT_EQ(n["trailer/index_offset"], t.index_offset);
    EXPECT_EQ(n["trailer/index_length"], t.index_length);
    EXPECT_EQ(n["trailer/kv_offset"], t.kv_offset);
    EXPECT_EQ(n["trailer/kv_length"], t.kv_length);
    EXPECT_EQ(n["trailer/index_crc32c"], t.index_crc32c);
    EXPECT_EQ(n["index/entry_count"], reader->tensor_count());
    for (size_t i = 0; i < reader->tensor_count(); ++i) {
        const auto& e = reader->entry(i);
        const std::string p = "index/entry[" + std::to_string(i) + "].";
        EXPECT_EQ(n[p + "name_length"], e.name.size());
        EXPECT_EQ(n[p + "descriptor_offset"], e.descriptor_offset);
        EXPECT_EQ(n[p + "descriptor_length"], e.descriptor_length);
        EXPECT_EQ(n[p + "data_offset"], e.data_offset);
        EXPECT_EQ(n[p + "data_length"], e.data_length);
        EXPECT_EQ(n[p + "flags"], e.flags);
        const std::string d = "tensor \"" + std::string(e.name) + "\" descriptor/";
        auto desc = reader->descriptor(i);
        ASSERT_TRUE(desc);
        EXPECT_EQ(n[d + "descriptor_length"], e.descriptor_length);
        ASSERT_FALSE((*desc)->buffers.empty());
        EXPECT_EQ(n[d + "buffer[0].byte_size"], (*desc)->buffers[0].byte_size);
    }
    EXPECT_EQ(n["kv/kv_count"], reader->kv().size());
}

// ---- golden text outputs ------------------------------------------------------------

void check_golden(const fs::path& input, const std::string& golden_name) {
    const Ran r = run_cli({"inspect", input.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const fs::path golden = kGolden / golden_name;
    const char* update = std::getenv("HURRAY_UPDATE_GOLDEN");
    if (update != nullptr && std::string(update) == "1") {
        fs::create_directories(kGolden);
        std::ofstream(golden, std::ios::binary) << r.out;
        return;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run with HURRAY_UPDATE_GOLDEN=1";
    EXPECT_EQ(r.out, read_text(golden)) << "regenerate with HURRAY_UPDATE_GOLDEN=1 if intended";
}

TEST(InspectGolden, DenseDescriptor) {
    check_golden(kConformance / "descriptors/row_major_f32_3x4.bin", "row_major_f32_3x4.txt");
}

TEST(InspectGolden, QuantizedDescriptor) {
    check_golden(kConformance / "descriptors/quant_per_block_int4_128x128.bin", "quant_per_block_int4_128x128.txt");
}

TEST(InspectGolden, ShardedDescriptor) {
    check_golden(kConformance / "descriptors/sharded_f32_8x4.bin", "sharded_f32_8x4.txt");
}

TEST(InspectGolden, BasicFile) { check_golden(kConformance / "files/basic.hrry", "basic_hrry.txt"); }

// ---- cross-check against hurray::decode ----------------------------------------------

using Expected = std::map<std::string, uint64_t>;

void expect_array(Expected& e, const std::string& name, const auto& values) {
    for (size_t i = 0; i < values.size(); ++i) {
        e[name + "[" + std::to_string(i) + "]"] = static_cast<uint64_t>(values[i]);
    }
}

// Every numeric field of `d`, named as the annotator names it.
Expected expected_fields(const hurray::TensorDescriptor& d, size_t size) {
    using namespace hurray;
    Expected e;
    e["version_major"] = d.version_major;
    e["version_minor"] = d.version_minor;
    e["descriptor_length"] = size;
    e["flags"] = d.flags();
    e["type_tag"] = type_tag(d.element_type);
    e["layout_tag"] = d.layout_tag();
    e["rank"] = d.rank();
    expect_array(e, "shape", d.shape);
    e["byte_offset"] = d.byte_offset;
    std::visit(
        [&](const auto& l) {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, StridedLayout>) {
                expect_array(e, "strided.strides", l.strides);
            } else if constexpr (std::is_same_v<L, TiledLayout>) {
                for (size_t k = 0; k < l.levels.size(); ++k) {
                    const std::string p = "tiled.level[" + std::to_string(k) + "].";
                    const TiledLevel& lv = l.levels[k];
                    expect_array(e, p + "tile_shape", lv.tile_shape);
                    e[p + "outer_layout"] = static_cast<uint8_t>(lv.outer_layout);
                    e[p + "inner_layout"] = static_cast<uint8_t>(lv.inner_layout);
                    expect_array(e, p + "outer_strides", lv.outer_strides);
                    expect_array(e, p + "inner_strides", lv.inner_strides);
                }
            } else if constexpr (std::is_same_v<L, MortonLayout>) {
                expect_array(e, "morton.morton_bits", l.morton_bits);
            } else if constexpr (std::is_same_v<L, CooLayout>) {
                e["coo.nnz"] = l.nnz;
                e["coo.is_sorted"] = l.is_sorted ? 1 : 0;
            } else if constexpr (std::is_same_v<L, CsrLayout>) {
                e["csr.nnz"] = l.nnz;
            } else if constexpr (std::is_same_v<L, CscLayout>) {
                e["csc.nnz"] = l.nnz;
            } else if constexpr (std::is_same_v<L, CsfLayout>) {
                e["csf.nnz"] = l.nnz;
                expect_array(e, "csf.mode_order", l.mode_order);
            } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
                e["block_paged.page_size"] = l.page_size;
                e["block_paged.num_pages"] = l.num_pages;
                e["block_paged.paged_axis"] = l.paged_axis;
                e["block_paged.num_seqs"] = l.num_seqs;
                e["block_paged.kv_role"] = static_cast<uint8_t>(l.kv_role);
                e["block_paged.layer_index"] = l.layer_index;
                e["block_paged.block_table_index_type"] = static_cast<uint8_t>(l.index_type);
            } else if constexpr (std::is_same_v<L, CompositeLayout>) {
                e["composite.composition_rule"] = static_cast<uint8_t>(l.rule);
                e["composite.combine_op"] = static_cast<uint8_t>(l.combine_op);
                e["composite.member_count"] = l.member_count;
            } else if constexpr (std::is_same_v<L, HilbertLayout>) {
                e["hilbert.hilbert_order"] = l.hilbert_order;
                e["hilbert.hilbert_rank"] = l.hilbert_rank;
            } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
                e["extension.extension_layout_id"] = l.layout_id;
                e["extension.extension_data_length"] = l.data.size();
            }
        },
        d.layout);
    e["buffer_count"] = d.buffers.size();
    for (size_t i = 0; i < d.buffers.size(); ++i) {
        const std::string p = "buffer[" + std::to_string(i) + "].";
        e[p + "byte_size"] = d.buffers[i].byte_size;
        e[p + "alignment"] = d.buffers[i].alignment;
        e[p + "device_tag"] = static_cast<uint8_t>(d.buffers[i].device_tag);
        e[p + "sync_mode"] = static_cast<uint8_t>(d.buffers[i].sync_mode);
        e[p + "memory_class"] = static_cast<uint8_t>(d.buffers[i].memory_class);
    }
    if (d.quantization) {
        const auto& q = *d.quantization;
        const uint64_t none = 0xFFFFFFFF;
        std::visit(
            [&](const auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, PerTensorAffine>) {
                    e["quantization.scheme_tag"] = 1;
                    e["quantization.per_tensor_affine.scale"] = std::bit_cast<uint32_t>(s.scale);
                    e["quantization.per_tensor_affine.zero_point"] = static_cast<uint32_t>(s.zero_point);
                } else if constexpr (std::is_same_v<S, PerChannelAffine>) {
                    e["quantization.scheme_tag"] = 2;
                    e["quantization.flags"] = s.zero_point_buffer_index ? 0 : 1;
                    e["quantization.per_channel_affine.axis"] = s.axis;
                    e["quantization.per_channel_affine.scale_buffer_index"] = s.scale_buffer_index;
                    e["quantization.per_channel_affine.zero_point_buffer_index"] =
                        s.zero_point_buffer_index.value_or(none);
                    e["quantization.per_channel_affine.scale_type_tag"] = type_tag(s.scale_type);
                } else if constexpr (std::is_same_v<S, PerBlockAffine>) {
                    e["quantization.scheme_tag"] = 3;
                    e["quantization.flags"] = s.zero_point_buffer_index ? 0 : 1;
                    e["quantization.per_block_affine.axis"] = s.axis;
                    e["quantization.per_block_affine.block_size"] = s.block_size;
                    e["quantization.per_block_affine.scale_buffer_index"] = s.scale_buffer_index;
                    e["quantization.per_block_affine.zero_point_buffer_index"] = s.zero_point_buffer_index.value_or(none);
                    e["quantization.per_block_affine.scale_type_tag"] = type_tag(s.scale_type);
                } else if constexpr (std::is_same_v<S, Nf4Quantization> || std::is_same_v<S, MxfpQuantization>) {
                    const std::string p = std::is_same_v<S, Nf4Quantization> ? "quantization.nf4." : "quantization.mxfp.";
                    e["quantization.scheme_tag"] = std::is_same_v<S, Nf4Quantization> ? 4 : 5;
                    e[p + "axis"] = s.axis;
                    e[p + "block_size"] = s.block_size;
                    e[p + "scale_buffer_index"] = s.scale_buffer_index;
                } else {
                    e["quantization.scheme_tag"] = s.scheme_tag;
                    e["quantization.scheme_version"] = s.scheme_version;
                    e["quantization.flags"] = s.flags;
                }
            },
            q.scheme);
    }
    if (d.shard) {
        expect_array(e, "shard.parent_shape", d.shard->parent_shape);
        expect_array(e, "shard.shard_offset", d.shard->shard_offset);
    }
    if (d.statistics) {
        const auto& s = *d.statistics;
        e["statistics.computed_mask"] = s.computed_mask;
        e["statistics.nnz"] = s.nnz;
        e["statistics.sparsity_ratio"] = std::bit_cast<uint64_t>(s.sparsity_ratio);
        e["statistics.value_min"] = std::bit_cast<uint64_t>(s.value_min);
        e["statistics.value_max"] = std::bit_cast<uint64_t>(s.value_max);
        e["statistics.value_abs_max"] = std::bit_cast<uint64_t>(s.value_abs_max);
        e["statistics.value_mean"] = std::bit_cast<uint64_t>(s.value_mean);
        e["statistics.value_stddev"] = std::bit_cast<uint64_t>(s.value_stddev);
        e["statistics.nm_n"] = s.nm_n;
        e["statistics.nm_m"] = s.nm_m;
        e["statistics.has_nan"] = s.has_nan ? 1 : 0;
        e["statistics.has_inf"] = s.has_inf ? 1 : 0;
    }
    if (d.extension_type) {
        const auto& x = *d.extension_type;
        e["extension_type.bit_width"] = x.bit_width;
        e["extension_type.packing_factor"] = x.packing_factor;
        e["extension_type.is_float"] = x.is_float ? 1 : 0;
        e["extension_type.is_signed"] = x.is_signed ? 1 : 0;
        e["extension_type.sign_bits"] = x.sign_bits;
        e["extension_type.exponent_bits"] = x.exponent_bits;
        e["extension_type.mantissa_bits"] = x.mantissa_bits;
        e["extension_type.exponent_bias"] = x.exponent_bias;
        e["extension_type.has_nan"] = x.has_nan ? 1 : 0;
        e["extension_type.has_inf"] = x.has_inf ? 1 : 0;
    }
    if (d.composite_member) {
        e["composite_member.member_role"] = static_cast<uint8_t>(d.composite_member->role);
    }
    return e;
}

// Numeric rows the model does not carry as such.
bool derived_field(const std::string& f) {
    return f == "quantization_length" || f == "quantization.scheme_version" || f == "quantization.flags";
}

TEST(InspectCrossCheck, GeneratedDescriptorsAreCoveredAndAgreeWithDecode) {
    const uint64_t cases = hurray_test::property_scale(400);
    for (uint64_t seed = 0; seed < cases; ++seed) {
        const auto g = hurray_test::generate_descriptor(seed);
        if (!g.generator_error.empty()) {
            continue;
        }
        SCOPED_TRACE("seed " + std::to_string(seed));
        auto bytes = hurray::encode_unchecked(g.descriptor);
        ASSERT_TRUE(bytes) << bytes.error().to_string();
        auto decoded = hurray::decode(*bytes, g.options());
        ASSERT_TRUE(decoded) << decoded.error().to_string();

        std::vector<hurray::cli::Row> rows;
        auto walked = hurray::cli::annotate_descriptor(*bytes, 100, rows);
        ASSERT_TRUE(walked) << walked.error().to_string();
        EXPECT_EQ(*walked, bytes->size());
        // Every byte exactly once, in order (absolute offsets from base 100).
        uint64_t at = 100;
        for (const auto& r : rows) {
            ASSERT_EQ(r.offset, at) << r.field;
            ASSERT_GT(r.length, 0U) << r.field;
            at += r.length;
            const size_t kept = std::min<uint64_t>(r.length, hurray::cli::kRowKeptBytes);
            ASSERT_EQ(r.bytes.size(), kept);
            EXPECT_TRUE(std::equal(r.bytes.begin(), r.bytes.end(), bytes->begin() + static_cast<long>(r.offset - 100)));
        }
        EXPECT_EQ(at, 100 + bytes->size());
        // The numbers agree with the decoded descriptor, field by field.
        const Expected want = expected_fields(*decoded, bytes->size());
        std::map<std::string, uint64_t> got;
        for (const auto& r : rows) {
            if (r.number) {
                EXPECT_TRUE(got.emplace(r.field, *r.number).second) << "duplicate field " << r.field;
                if (!want.count(r.field)) {
                    EXPECT_TRUE(derived_field(r.field)) << "unexpected numeric field " << r.field;
                }
            }
        }
        for (const auto& [field, value] : want) {
            auto it = got.find(field);
            ASSERT_NE(it, got.end()) << "missing " << field;
            EXPECT_EQ(it->second, value) << field;
        }
    }
}

// ---- invalid inputs ------------------------------------------------------------------

TEST(InspectInvalid, EveryDescriptorPrefixFailsWithPartialRows) {
    for (const auto& f : fs::directory_iterator(kConformance / "descriptors")) {
        const auto bytes = read_all(f.path());
        for (size_t n = 0; n < bytes.size(); ++n) {
            SCOPED_TRACE(f.path().filename().string() + " prefix " + std::to_string(n));
            const auto a = hurray::cli::annotate_descriptor_input(std::span(bytes).first(n));
            ASSERT_TRUE(a.error.has_value());
            EXPECT_TRUE(a.error->has_offset());
            if (n >= 4) {
                EXPECT_FALSE(a.sections.front().rows.empty());
            }
            std::ostringstream out;
            hurray::cli::print_annotation(a, out);
        }
    }
}

TEST(InspectInvalid, EveryFilePrefixFails) {
    const auto bytes = read_all(kConformance / "files/basic.hrry");
    for (size_t n = 0; n < bytes.size(); ++n) {
        SCOPED_TRACE("prefix " + std::to_string(n));
        std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(n));
        hurray::cli::RandomAccess ra;
        ra.size = n;
        ra.read = [&prefix](uint64_t off, uint64_t len) -> hurray::Result<std::vector<uint8_t>> {
            return std::vector<uint8_t>(prefix.begin() + static_cast<long>(off),
                                        prefix.begin() + static_cast<long>(off + len));
        };
        const auto a = hurray::cli::inspect_file(ra);
        ASSERT_TRUE(a.error.has_value());
        if (n >= 8) {
            EXPECT_FALSE(a.sections.empty());
        }
    }
}

TEST(InspectInvalid, TruncatedInputsThroughTheCommand) {
    TempDir dir;
    const auto desc = read_all(kConformance / "descriptors/quant_per_block_int4_128x128.bin");
    // Cut inside the quantization payload: the rows before it are printed, then the error.
    const std::string cut = dir.write("cut.bin", std::vector<uint8_t>(desc.begin(), desc.begin() + 90));
    Ran r = run_cli({"inspect", cut});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("quantization.per_block_affine.axis = 1"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("at byte"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;

    const auto file = read_all(kConformance / "files/basic.hrry");
    std::vector<uint8_t> bad = file;
    bad[8] = 9;  // container_version_major
    r = run_cli({"inspect", dir.write("bad.hrry", bad)});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("container_version_major = 9"), std::string::npos);
    EXPECT_NE(r.err.find("at byte 8"), std::string::npos) << r.err;

    bad = file;
    bad[bad.size() - 10] ^= 0x01;  // the trailer's index_crc32c: caught by the whole-file check
    r = run_cli({"inspect", dir.write("crc.hrry", bad)});
    EXPECT_EQ(r.rc, 1);
    EXPECT_FALSE(r.err.empty());

    r = run_cli({"inspect", "--json", cut});
    EXPECT_EQ(r.rc, 1);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j.at("error").is_object());

    r = run_cli({"inspect", (fs::path(cut).parent_path() / "missing").string()});
    EXPECT_EQ(r.rc, 1);
    r = run_cli({"inspect"});
    EXPECT_EQ(r.rc, 2);
    r = run_cli({"inspect", "--help"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("--json"), std::string::npos);
}

TEST(InspectInvalid, RandomMutationsNeverCrash) {
    hurray_test::Rng rng(7);
    const auto file = read_all(kConformance / "files/basic.hrry");
    std::vector<std::vector<uint8_t>> descriptors;
    for (const auto& f : fs::directory_iterator(kConformance / "descriptors")) {
        descriptors.push_back(read_all(f.path()));
    }
    const uint64_t cases = hurray_test::property_scale(1500);
    for (uint64_t c = 0; c < cases; ++c) {
        const bool on_file = c % 3 == 0;
        std::vector<uint8_t> bytes = on_file ? file : descriptors[c % descriptors.size()];
        const uint64_t flips = 1 + rng.below(4);
        for (uint64_t k = 0; k < flips; ++k) {
            // Bias towards the structures (header, descriptors, index, KV, trailer).
            size_t at = static_cast<size_t>(rng.below(bytes.size()));
            if (on_file && rng.chance(3, 4)) {
                const size_t regions[] = {0, 64, 4112, 8200};
                at = std::min(bytes.size() - 1, regions[rng.below(4)] + static_cast<size_t>(rng.below(64)));
                if (rng.chance(1, 3)) {
                    at = bytes.size() - 1 - static_cast<size_t>(rng.below(200));
                }
            }
            bytes[at] = rng.u8();
        }
        hurray::cli::Annotation a;
        if (on_file) {
            hurray::cli::RandomAccess ra;
            ra.size = bytes.size();
            ra.read = [&bytes](uint64_t off, uint64_t len) -> hurray::Result<std::vector<uint8_t>> {
                return std::vector<uint8_t>(bytes.begin() + static_cast<long>(off),
                                            bytes.begin() + static_cast<long>(off + len));
            };
            a = hurray::cli::inspect_file(ra);
        } else {
            a = hurray::cli::annotate_descriptor_input(bytes);
            // What decodes is annotated without an error, and every byte covered.
            if (hurray::decode(bytes)) {
                ASSERT_FALSE(a.error.has_value()) << a.error->to_string();
                uint64_t at = 0;
                for (const auto& r : a.sections.front().rows) {
                    ASSERT_EQ(r.offset, at);
                    at += r.length;
                }
                EXPECT_EQ(at, bytes.size());
            }
        }
        std::ostringstream out;
        hurray::cli::print_annotation(a, out);
        (void)hurray::cli::annotation_json(a, bytes.size()).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::strict);
    }
}

TEST(InspectPrinter, LongFieldsAreWrappedThenElidedWithACount) {
    hurray::cli::Annotation a;
    hurray::cli::Section s{"x", 0, 100, {}};
    hurray::cli::Row r;
    r.offset = 1000;
    r.length = 100;
    for (size_t i = 0; i < hurray::cli::kRowKeptBytes; ++i) {
        r.bytes.push_back(static_cast<uint8_t>(i));
    }
    r.field = "extension.extension_data";
    r.value = "100 bytes";
    s.rows.push_back(r);
    a.sections.push_back(s);
    std::ostringstream out;
    hurray::cli::print_annotation(a, out);
    EXPECT_EQ(out.str(),
              "x: offset 0, 100 bytes\n"
              "  offset  bytes                                            field = value\n"
              "    1000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f  extension.extension_data = 100 bytes\n"
              "    1016  10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f\n"
              "    1032  20 21 22 23 24 25 26 27 28 29 2a 2b 2c 2d 2e 2f\n"
              "    1048  30 31 32 33 34 35 36 37 38 39 3a 3b 3c 3d 3e 3f\n"
              "          ... 36 more bytes (100 in all)\n");
}

// ---- streams and standard input -------------------------------------------------------

TEST(InspectStream, DescriptorsAnnotatedDataSummarised) {
    TempDir dir;
    // Two conformance descriptors followed by their data: a stream of two tensors.
    const auto d1 = read_all(kConformance / "descriptors/row_major_int8_5.bin");
    const auto d2 = read_all(kConformance / "descriptors/row_major_f16_2x2.bin");
    std::vector<uint8_t> stream = d1;
    stream.insert(stream.end(), 5, 0x11);
    stream.insert(stream.end(), d2.begin(), d2.end());
    stream.insert(stream.end(), 8, 0x22);
    Ran r = run_cli({"inspect", dir.write("s.bin", stream)});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("kind: stream"), std::string::npos);
    EXPECT_NE(r.out.find("tensor_1 descriptor: offset " + std::to_string(d1.size() + 5)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tensor_0 data: offset " + std::to_string(d1.size()) + ", 5 bytes"), std::string::npos);
    EXPECT_EQ(r.out.find("11 11"), std::string::npos);  // data is never dumped

    stream.resize(stream.size() - 3);  // the last buffer is short
    r = run_cli({"inspect", dir.write("short.bin", stream)});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("tensor_1 buffer[0]"), std::string::npos) << r.err;
}

TEST(InspectProcess, StandardInput) {
    TempDir dir;
    const std::string file = (kConformance / "files/basic.hrry").string();
    const Ran redirected = run_process("inspect -", file, dir);
    EXPECT_EQ(redirected.rc, 0);
    const std::string& out = redirected.out;
    const Ran direct = run_cli({"inspect", file});
    // Same rows; only the size note of the first line differs (a pipe has no size).
    EXPECT_EQ(out.substr(out.find('\n')), direct.out.substr(direct.out.find('\n')));
    const Ran piped = run_piped("cat '" + file + "'", "cat - bias", dir);
    EXPECT_EQ(piped.rc, 0);
    EXPECT_FALSE(piped.out.empty());
    const Ran cut = run_piped("printf 'HRRY'", "inspect -", dir);
    EXPECT_EQ(cut.rc, 1);
    const std::string out3 = cut.out + cut.err;  // both streams, as `2>&1` gave them
    EXPECT_NE(out3.find("<stdin>"), std::string::npos) << out3;
}

}  // namespace
