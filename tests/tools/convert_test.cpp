// `hurray convert`: file -> file (alignment, index order), file -> stream -> file, standard
// input and output, usage errors, atomic outputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_support.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/save.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/progress.hpp"

namespace hurray::clitest {
namespace {

/// Every tensor of `a` is in `b` under the same name with the same descriptor and bytes;
/// same tensor count; same KV (when `kv`).
void expect_same_tensors(const std::string& a_path, const std::string& b_path, bool kv = true) {
    auto a = FileReader::open(a_path);
    auto b = FileReader::open(b_path);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    ASSERT_EQ(a->tensor_count(), b->tensor_count());
    if (kv) {
        EXPECT_TRUE(a->kv() == b->kv());
    }
    for (size_t i = 0; i < a->tensor_count(); ++i) {
        const std::string name(a->entry(i).name);
        auto ta = a->tensor(i);
        auto tb = b->tensor(name);
        ASSERT_TRUE(ta.ok());
        ASSERT_TRUE(tb.ok()) << name;
        EXPECT_TRUE(ta->descriptor() == tb->descriptor()) << name;
        ASSERT_EQ(ta->buffers().size(), tb->buffers().size());
        for (size_t k = 0; k < ta->buffers().size(); ++k) {
            const auto x = ta->buffers()[k].span();
            const auto y = tb->buffers()[k].span();
            EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << name << " buffer " << k;
        }
    }
    // Composites survive: every head of a has the same members (by name) in b.
    for (size_t i = 0; i < a->tensor_count(); ++i) {
        auto ca = a->composite(i);
        if (!ca.ok()) {
            continue;
        }
        auto j = b->find(a->entry(i).name);
        ASSERT_TRUE(j.has_value());
        auto cb = b->composite(*j);
        ASSERT_TRUE(cb.ok()) << a->entry(i).name;
        ASSERT_EQ(ca->members.size(), cb->members.size());
        for (size_t m = 0; m < ca->members.size(); ++m) {
            EXPECT_EQ(a->entry(ca->members[m]).name, b->entry(cb->members[m]).name);
        }
    }
    EXPECT_TRUE(b->check_all().ok());
}

TEST(Convert, FileToFileChangesAlignmentAndSortsTheIndex) {
    TempDir dir;
    const std::string in = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(in).ok());
    const std::string out = dir.file("big.hrry");
    const Ran r = run_cli({"convert", in, out, "--alignment", "65536", "--sorted-index"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto f = FileReader::open(out);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->header().data_buffer_alignment, 65536U);
    EXPECT_NE(f->header().flags & file_flags::kSortedIndex, 0U);
    for (size_t i = 0; i + 1 < f->tensor_count(); ++i) {
        EXPECT_LT(f->entry(i).name, f->entry(i + 1).name);
    }
    for (size_t i = 0; i < f->tensor_count(); ++i) {
        if (!f->descriptor(i).value()->buffers.empty()) {
            EXPECT_EQ(f->entry(i).data_offset % 65536, 0U);
        }
    }
    expect_same_tensors(in, out);
    // And back: the sorted order is kept unless --write-order.
    const std::string back = dir.file("back.hrry");
    ASSERT_EQ(run_cli({"convert", out, back, "--alignment", "4096"}).rc, 0);
    auto kept = FileReader::open(back);
    EXPECT_NE(kept->header().flags & file_flags::kSortedIndex, 0U);
    EXPECT_EQ(kept->header().data_buffer_alignment, 4096U);
    const std::string unsorted = dir.file("unsorted.hrry");
    ASSERT_EQ(run_cli({"convert", out, unsorted, "--write-order"}).rc, 0);
    auto u = FileReader::open(unsorted);
    EXPECT_EQ(u->header().flags & file_flags::kSortedIndex, 0U);
    EXPECT_EQ(u->header().data_buffer_alignment, 65536U);  // the input's
    expect_same_tensors(in, back);
    expect_same_tensors(in, unsorted);
    // The conformance file too.
    const std::string basic = dir.file("basic.hrry");
    ASSERT_EQ(run_cli({"convert", basic_file(), basic, "--alignment", "8192"}).rc, 0);
    expect_same_tensors(basic_file(), basic);
}

TEST(Convert, FileToStreamToFileKeepsEveryTensorKvAndComposite) {
    TempDir dir;
    const std::string in = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(in).ok());
    const std::string stream = dir.file("model.stream");
    const Ran to_stream = run_cli({"convert", in, stream, "--to", "stream"});
    ASSERT_EQ(to_stream.rc, 0) << to_stream.err;
    EXPECT_NE(to_stream.err.find("KV entries"), std::string::npos) << "the dropped KV is announced";
    const std::string back = dir.file("back.hrry");
    const Ran to_file = run_cli({"convert", stream, back, "--names-from", in, "--kv-from", in});
    ASSERT_EQ(to_file.rc, 0) << to_file.err;
    expect_same_tensors(in, back);
    // Without names: tensor_0, tensor_1, ...; with --names: those first.
    const std::string generated = dir.file("generated.hrry");
    ASSERT_EQ(run_cli({"convert", stream, generated, "--names", "embd,q"}).rc, 0);
    auto g = FileReader::open(generated);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->entry(0).name, "embd");
    EXPECT_EQ(g->entry(1).name, "q");
    EXPECT_EQ(g->entry(2).name, "tensor_2");
    EXPECT_TRUE(g->kv().empty());
    EXPECT_TRUE(g->composite(6).ok());
    // Too many names.
    std::string many;
    for (int i = 0; i < 11; ++i) {
        many += (i ? "," : "") + std::string("n") + std::to_string(i);
    }
    const Ran too_many = run_cli({"convert", stream, dir.file("x.hrry"), "--names", many});
    EXPECT_EQ(too_many.rc, 1);
    EXPECT_FALSE(std::filesystem::exists(dir.file("x.hrry")));
}

TEST(Convert, StreamToStandardOutputAndFromStandardInput) {
    TempDir dir;
    const std::string in = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(in).ok());
    // In-process: a file to '-' becomes a stream on console.out.
    const Ran r = run_cli({"convert", in, "-"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<uint8_t> bytes(r.out.begin(), r.out.end());
    MemorySource source(bytes);
    StreamReader reader(source);
    size_t n = 0;
    for (;;) {
        auto t = reader.next();
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        if (*t == nullptr) {
            break;
        }
        ++n;
    }
    EXPECT_EQ(n, cli::kDemoTensorCount);
    // A process reading the stream from standard input (a pipe) into a file.
    write_all_file(dir.file("m.stream"), bytes);
    const std::string back = dir.file("back.hrry");
    const Ran proc = run_piped("cat '" + dir.file("m.stream") + "'",
                               "convert - '" + back + "' --names-from '" + in + "' --kv-from '" + in + "'", dir);
    ASSERT_EQ(proc.rc, 0) << proc.err;
    expect_same_tensors(in, back);
    // A file from standard input to a stream on standard output, into a file.
    const Ran file_in = run_process("convert - '" + dir.file("basic.stream") + "' --to stream", basic_file(), dir);
    ASSERT_EQ(file_in.rc, 0) << file_in.err;
    const Ran listed = run_cli({"ls", dir.file("basic.stream")});
    EXPECT_NE(listed.out.find("tensor_1"), std::string::npos) << listed.out;
    // Stream to stream re-packs too.
    const Ran s2s = run_cli({"convert", dir.file("m.stream"), dir.file("copy.stream"), "--to", "stream"});
    ASSERT_EQ(s2s.rc, 0) << s2s.err;
    EXPECT_EQ(read_all(dir.file("copy.stream")), bytes);
}

TEST(Convert, FastPathsThroughPipes) {
    TempDir dir;
    // 8 MiB of data over a few tensors, more than a pipe holds.
    const std::string in = dir.file("big.hrry");
    std::vector<float> a(size_t{1} << 20, 0.25F);
    std::vector<float> b((size_t{1} << 20) + 77, -1.5F);
    std::vector<int8_t> c = {1, 2, 3};
    ASSERT_TRUE(save(in, {{"a", TensorRef(a)}, {"b", TensorRef(b)}, {"c", TensorRef(c)}}).ok());
    const std::vector<uint8_t> expected = stream_of(in);
    // File -> stream on a pipe (standard output straight from the mapping): the same bytes as
    // the library's sink path.
    const std::string hurray = std::string("'") + HURRAY_CLI_PATH + "'";
    const Ran sent = run_shell(hurray + " convert '" + in + "' - | cat", dir);
    ASSERT_EQ(sent.rc, 0) << sent.err;
    EXPECT_TRUE(std::vector<uint8_t>(sent.out.begin(), sent.out.end()) == expected);
    // A reader that stops early: an error and exit status 1, not a death by SIGPIPE.
    const std::string rc_file = dir.file("rc");
    const std::string err_file = dir.file("early.err");
    (void)run_shell("(" + hurray + " convert '" + in + "' - 2> '" + err_file + "'; echo $? > '" + rc_file +
                        "') | head -c 10 > /dev/null",
                    dir);
    const auto rc = read_all(rc_file);
    EXPECT_EQ(std::string(rc.begin(), rc.end()), "1\n");
    const auto err = read_all(err_file);
    EXPECT_NE(std::string(err.begin(), err.end()).find("Broken pipe"), std::string::npos);
    // Stream -> file from a pipe (read straight into the writer's buffer), with and without fsync.
    write_all_file(dir.file("big.stream"), expected);
    for (const char* flag : {"", " --no-fsync"}) {
        const std::string back = dir.file("back.hrry");
        const Ran got = run_piped("cat '" + dir.file("big.stream") + "'",
                                  "convert - '" + back + "' --names-from '" + in + "'" + flag, dir);
        ASSERT_EQ(got.rc, 0) << got.err;
        expect_same_tensors(in, back, false);
        EXPECT_TRUE(read_all(back) == read_all(in)) << flag;
    }
    // --no-fsync does not apply to the format converters.
    EXPECT_EQ(run_cli({"convert", in, dir.file("x.npz"), "--no-fsync"}).rc, 2);
}

TEST(Convert, InvalidInputWritesNothingAndUsageErrorsAreStatusTwo) {
    TempDir dir;
    auto bytes = read_all(basic_file());
    bytes[64] ^= 0xFF;
    write_all_file(dir.file("bad.hrry"), bytes);
    const std::string out = dir.file("out.hrry");
    const Ran bad = run_cli({"convert", dir.file("bad.hrry"), out});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("invalid_magic at byte 64"), std::string::npos) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    // A truncated stream: no output file, no temporary left behind.
    write_all_file(dir.file("cut.stream"), std::string("HRRY"));
    const Ran cut = run_cli({"convert", dir.file("cut.stream"), out});
    EXPECT_EQ(cut.rc, 1);
    EXPECT_FALSE(std::filesystem::exists(out));
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) {
        ++entries;
    }
    EXPECT_EQ(entries, 2U) << "only bad.hrry and cut.stream";
    // An existing output is kept when conversion fails.
    write_all_file(out, std::string("old"));
    EXPECT_EQ(run_cli({"convert", dir.file("bad.hrry"), out}).rc, 1);
    EXPECT_EQ(read_all(out).size(), 3U);

    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--sorted-index", "--write-order"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), "-", "--to", "stream", "--alignment", "8192"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--names", "a"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--to", "tape"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file()}).rc, 2);
    const Ran align = run_cli({"convert", basic_file(), out, "--alignment", "1000"});
    EXPECT_EQ(align.rc, 1);
    EXPECT_NE(align.err.find("alignment"), std::string::npos) << align.err;
    const Ran help = run_cli({"convert", "--help"});
    EXPECT_EQ(help.rc, 0);
    EXPECT_NE(help.out.find("--sorted-index"), std::string::npos);
    EXPECT_NE(help.out.find("--names"), std::string::npos);
}

TEST(Convert, NoProgressOutputWhenNotATerminalOrQuick) {
    TempDir dir;
    const std::string out = dir.file("o.hrry");
    std::ostringstream o;
    std::ostringstream e;
    const int rc = cli::run({"hurray", "convert", basic_file(), out}, {o, e, 0, true});
    EXPECT_EQ(rc, 0);
    EXPECT_TRUE(e.str().empty()) << "a conversion under a second draws no bar";
}

}  // namespace
}  // namespace hurray::clitest

namespace hurray::clitest {
namespace {

TEST(Progress, DrawsOnATerminalOnlyOnceDue) {
    std::ostringstream out;
    std::ostringstream err;
    const cli::Console tty{out, err, 0, true};
    cli::Progress now(tty, 200, std::chrono::seconds(0));
    now.update(100);
    EXPECT_TRUE(now.drawn());
    now.update(200);
    now.finish();
    EXPECT_NE(err.str().find("converting ["), std::string::npos) << err.str();
    EXPECT_NE(err.str().find("100%"), std::string::npos) << err.str();
    EXPECT_EQ(err.str().back(), '\n');

    std::ostringstream err2;
    const cli::Console pipe{out, err2, 0, false};
    cli::Progress never(pipe, 200, std::chrono::seconds(0));
    never.update(100);
    never.finish();
    EXPECT_TRUE(err2.str().empty());

    std::ostringstream err3;
    const cli::Console tty3{out, err3, 0, true};
    cli::Progress later(tty3, 0);  // the default one-second delay
    later.update(100);
    later.finish();
    EXPECT_TRUE(err3.str().empty());
}

}  // namespace
}  // namespace hurray::clitest
