// The `hurray` tool on http:// and s3:// URLs (built only with hurray::http): ls, info, verify, cat and
// convert over a local nginx give what they give for the same file read locally; `get`
// downloads a whole file byte for byte, or some tensors into a new valid file; errors
// (unknown name, unreachable server, 404, bad header) exit 1, name the URL without its
// query, never print a header value and leave no output file behind.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "python_writers.hpp"
#include "http/test_servers.hpp"
#include "test_paths.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::clitest {
namespace {

using json = nlohmann::json;

/// Every tensor name of the demo model, in index order.
std::vector<std::string> demo_names(const std::string& path) {
    std::vector<std::string> names;
    auto file = FileReader::open(path);
    EXPECT_TRUE(file) << file.error().to_string();
    for (size_t i = 0; file && i < file->tensor_count(); ++i) {
        names.emplace_back(file->entry(i).name);
    }
    return names;
}

/// The bytes of every buffer of tensor `name` of the file at `path`.
std::vector<std::vector<uint8_t>> tensor_bytes(const std::string& path, const std::string& name) {
    std::vector<std::vector<uint8_t>> out;
    auto file = FileReader::open(path);
    EXPECT_TRUE(file) << file.error().to_string();
    if (!file) {
        return out;
    }
    auto t = file->tensor(name);
    EXPECT_TRUE(t) << name << ": " << t.error().to_string();
    if (!t) {
        return out;
    }
    for (const auto& b : t->buffers()) {
        out.emplace_back(b.span().begin(), b.span().end());
    }
    return out;
}

/// Replaces every `from` in `s` by `to`.
std::string replaced(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
    return s;
}

class RemoteCli : public ::testing::Test {
protected:
    void SetUp() override {
        test::no_proxies();
        ::unsetenv("HURRAY_HTTP_HEADERS");
        www_ = dir_.path() / "www";
        out_ = dir_.path() / "out";
        std::filesystem::create_directories(www_);
        std::filesystem::create_directories(out_);
        ASSERT_TRUE(cli::write_demo_model((www_ / "model.hrry").string()));
        write_big((www_ / "big.hrry").string());
        const auto stream = stream_of((www_ / "model.hrry").string());
        static_cast<void>(dir_.write("www/model.hrrys", stream));
        const std::string why = nginx_.start(www_);
        if (!why.empty()) {
            GTEST_SKIP() << why;
        }
    }
    void TearDown() override {
        nginx_.stop();
        ::unsetenv("HURRAY_HTTP_HEADERS");
    }

    /// A 40 MiB float32 tensor (more than one range of `get` and `convert`) between two
    /// small ones, and KV metadata.
    static void write_big(const std::string& path) {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w) << w.error().to_string();
        auto small = make_dense(ElementType::kFloat32, {4});
        auto large = make_dense(ElementType::kFloat32, {10u << 20});
        ASSERT_TRUE(small && large);
        std::vector<uint8_t> a(16, 7);
        std::vector<uint8_t> big(size_t{40} << 20);
        for (size_t k = 0; k < big.size(); ++k) {
            big[k] = static_cast<uint8_t>((k * 2654435761U) >> 13);
        }
        std::vector<std::span<const uint8_t>> one{a};
        std::vector<std::span<const uint8_t>> two{big};
        ASSERT_TRUE(w->add_tensor("a", *small, one));
        ASSERT_TRUE(w->add_tensor("big", *large, two));
        ASSERT_TRUE(w->add_tensor("z", *small, one));
        ASSERT_TRUE(w->kv().set("general.name", KvValue::string("big")));
        ASSERT_TRUE(w->finish());
    }

    [[nodiscard]] std::string local(const std::string& name) const { return (www_ / name).string(); }
    [[nodiscard]] std::string url(const std::string& name) const { return nginx_.url(name); }
    [[nodiscard]] std::string out(const std::string& name) const { return (out_ / name).string(); }
    /// The names in the output directory (no temporary file may stay behind).
    [[nodiscard]] std::vector<std::string> outputs() const {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(out_)) {
            names.push_back(e.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    TempDir dir_;
    std::filesystem::path www_;
    std::filesystem::path out_;
    test::NginxServer nginx_;
};

TEST_F(RemoteCli, LsInfoVerifyGiveWhatTheyGiveLocally) {
    for (const std::string name : {"model.hrry", "big.hrry", "model.hrrys"}) {
        SCOPED_TRACE(name);
        for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
                 {"ls"}, {"ls", "--json"}, {"info"}, {"info", "--json"}, {"verify"}}) {
            std::vector<std::string> a = cmd;
            std::vector<std::string> b = cmd;
            a.push_back(local(name));
            b.push_back(url(name));
            const Ran l = run_cli(a);
            const Ran r = run_cli(b);
            ASSERT_EQ(l.rc, 0) << cmd[0] << ": " << l.err;
            EXPECT_EQ(r.rc, 0) << cmd[0] << ": " << r.err;
            EXPECT_EQ(replaced(r.out, url(name), local(name)), l.out) << cmd[0];
            EXPECT_EQ(r.err, l.err) << cmd[0];
        }
    }
}

#ifdef HURRAY_CLI_HAS_CONVERT
TEST_F(RemoteCli, SafeTensorsGgufAndNpzUrlsReadAsTheirLocalFiles) {
    const std::string basic = std::string(HURRAY_CONFORMANCE_DIR) + "/files/basic.hrry";
    ASSERT_EQ(run_cli({"convert", basic, local("basic.safetensors")}).rc, 0);
    ASSERT_EQ(run_cli({"convert", basic, local("basic.npz")}).rc, 0);
    ASSERT_EQ(run_cli({"convert", basic, local("basic.gguf")}).rc, 0);
    for (const char* file : {"basic.safetensors", "basic.gguf", "basic.npz"}) {
        for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
                 {"ls"}, {"ls", "--json"}, {"info"}, {"verify"}, {"cat", "weights"}}) {
            SCOPED_TRACE(file);
            std::vector<std::string> a = {cmd[0]};
            std::vector<std::string> b = {cmd[0]};
            for (size_t k = 1; k < cmd.size(); ++k) {
                if (cmd[k] != "weights") {
                    a.push_back(cmd[k]);
                    b.push_back(cmd[k]);
                }
            }
            a.push_back(local(file));
            b.push_back(url(file));
            if (cmd.back() == "weights") {
                a.push_back("weights");
                b.push_back("weights");
            }
            const Ran l = run_cli(a);
            const Ran r = run_cli(b);
            ASSERT_EQ(l.rc, 0) << cmd[0] << ": " << l.err;
            EXPECT_EQ(r.rc, 0) << cmd[0] << ": " << r.err;
            EXPECT_EQ(replaced(r.out, url(file), local(file)), l.out) << cmd[0];
        }
    }
    // `get` downloads them, checked by their readers before they are kept.
    for (const std::string name : {"basic.npz", "basic.safetensors"}) {
        const Ran got = run_cli({"get", url(name), "-o", out(name)});
        ASSERT_EQ(got.rc, 0) << got.err;
        EXPECT_TRUE(read_all(out(name)) == read_all(local(name))) << name;
    }
    EXPECT_EQ(run_cli({"ls", out("basic.npz")}).rc, 0);
}
#endif

TEST_F(RemoteCli, CatOfEveryTensorIsByteIdentical) {
    for (const std::string& t : demo_names(local("model.hrry"))) {
        const Ran l = run_cli({"cat", local("model.hrry"), t});
        const Ran r = run_cli({"cat", url("model.hrry"), t});
        ASSERT_EQ(l.rc, 0) << t << ": " << l.err;
        EXPECT_EQ(r.rc, 0) << t << ": " << r.err;
        EXPECT_EQ(r.out, l.out) << t;
    }
    const Ran l = run_cli({"cat", local("big.hrry"), "big", "--limit", "50", "--raw"});
    const Ran r = run_cli({"cat", url("big.hrry"), "big", "--limit", "50", "--raw"});
    ASSERT_EQ(l.rc, 0) << l.err;
    EXPECT_EQ(r.out, l.out);
    const Ran missing = run_cli({"cat", url("model.hrry"), "nope"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("nope"), std::string::npos) << missing.err;
}

TEST_F(RemoteCli, ConvertStreamsAndRewritesLikeTheLocalFile) {
    for (const std::string name : {"model.hrry", "big.hrry"}) {
        SCOPED_TRACE(name);
        const Ran l = run_cli({"convert", local(name), "-"});
        const Ran r = run_cli({"convert", url(name), "-"});
        ASSERT_EQ(l.rc, 0) << l.err;
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_TRUE(r.out == l.out) << "stream of " << name << " differs (" << r.out.size() << " vs "
                                    << l.out.size() << " bytes)";
        ASSERT_EQ(run_cli({"convert", local(name), out("l.hrry"), "--no-fsync"}).rc, 0);
        const Ran f = run_cli({"convert", url(name), out("r.hrry"), "--no-fsync"});
        ASSERT_EQ(f.rc, 0) << f.err;
        EXPECT_TRUE(read_all(out("l.hrry")) == read_all(out("r.hrry")));
    }
    // The format converters read a URL while it downloads: the same output as from the
    // local file, for an HRRYFILE to SafeTensors (dequantized) and back from a remote
    // SafeTensors file; the same errors too.
    ASSERT_EQ(run_cli({"convert", local("model.hrry"), out("l.safetensors"), "--dequantize"}).rc, 0);
    const Ran st = run_cli({"convert", url("model.hrry"), out("r.safetensors"), "--dequantize", "--verify"});
    ASSERT_EQ(st.rc, 0) << st.err;
    EXPECT_TRUE(read_all(out("l.safetensors")) == read_all(out("r.safetensors")));
    const Ran lossy_local = run_cli({"convert", local("model.hrry"), out("x.safetensors")});
    const Ran lossy_remote = run_cli({"convert", url("model.hrry"), out("x.safetensors")});
    EXPECT_EQ(lossy_remote.rc, lossy_local.rc);
    EXPECT_NE(lossy_remote.rc, 0);
    std::filesystem::copy_file(out("l.safetensors"), local("m.safetensors"));
    ASSERT_EQ(run_cli({"convert", local("m.safetensors"), out("from-local.hrry")}).rc, 0);
    const Ran back = run_cli({"convert", url("m.safetensors"), out("from-url.hrry")});
    ASSERT_EQ(back.rc, 0) << back.err;
    EXPECT_TRUE(read_all(out("from-local.hrry")) == read_all(out("from-url.hrry")));
    // A remote stream converted to a file.
    const Ran s = run_cli({"convert", url("model.hrrys"), out("s.hrry"), "--no-fsync"});
    ASSERT_EQ(s.rc, 0) << s.err;
    EXPECT_EQ(run_cli({"verify", out("s.hrry")}).rc, 0);
}

TEST_F(RemoteCli, SafeTensorsOfAnIndependentWriterListAndConvertAsTheirLocalCopies) {
    // tests/convert/writers/safetensors_writer.py (struct, json and numpy; not our code)
    // writes files of every dtype; each, served by nginx, lists and converts to an HRRYFILE
    // byte-identical to its local copy's conversion.
    if (const std::string why = test::python_numpy_missing(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    std::filesystem::create_directories(www_ / "st");
    std::string cmd(test::kPython);
    cmd.append(" ").append(test::writers_dir()).append("/safetensors_writer.py write ");
    cmd.append((www_ / "st").string()).append(" >/dev/null");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(www_ / "st")) {
        if (e.path().extension() != ".safetensors") {
            continue;
        }
        const std::string name = "st/" + e.path().filename().string();
        SCOPED_TRACE(name);
        ++files;
        const Ran ll = run_cli({"ls", local(name)});
        const Ran lr = run_cli({"ls", url(name)});
        EXPECT_EQ(lr.rc, ll.rc) << lr.err;
        EXPECT_EQ(lr.out, ll.out);
        const Ran cl = run_cli({"convert", local(name), out("local.hrry")});
        const Ran cr = run_cli({"convert", url(name), out("remote.hrry")});
        ASSERT_EQ(cl.rc, 0) << cl.err;
        ASSERT_EQ(cr.rc, 0) << cr.err;
        EXPECT_TRUE(read_all(out("local.hrry")) == read_all(out("remote.hrry")));
    }
    EXPECT_EQ(files, 3U);  // all (every dtype), empty, meta_only
}

TEST_F(RemoteCli, GetWholeFileIsByteIdentical) {
    for (const std::string name : {"model.hrry", "big.hrry"}) {
        SCOPED_TRACE(name);
        const Ran r = run_cli({"get", url(name), "-o", out(name)});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_TRUE(read_all(out(name)) == read_all(local(name)));
        EXPECT_NE(r.err.find("requests"), std::string::npos) << r.err;  // the summary
        const Ran q = run_cli({"get", url(name), "-o", out(name), "--quiet", "--no-fsync"});  // replaces
        ASSERT_EQ(q.rc, 0) << q.err;
        EXPECT_EQ(q.err, "");
        EXPECT_TRUE(read_all(out(name)) == read_all(local(name)));
    }
    EXPECT_EQ(outputs(), (std::vector<std::string>{"big.hrry", "model.hrry"}));
}

TEST_F(RemoteCli, GetNamesWritesThoseTensorsAndTheKv) {
    const Ran r = run_cli({"get", url("model.hrry"), "blk.0.ffn_up.weight", "token_embd.weight", "-o",
                           out("sub.hrry"), "-q"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto sub = FileReader::open(out("sub.hrry"));
    ASSERT_TRUE(sub) << sub.error().to_string();
    EXPECT_EQ(sub->tensor_count(), 2U);
    EXPECT_TRUE(sub->check_all());
    for (const std::string t : {"blk.0.ffn_up.weight", "token_embd.weight"}) {
        EXPECT_EQ(tensor_bytes(out("sub.hrry"), t), tensor_bytes(local("model.hrry"), t)) << t;
        EXPECT_EQ(run_cli({"cat", out("sub.hrry"), t}).out, run_cli({"cat", local("model.hrry"), t}).out) << t;
    }
    const json a = json::parse(run_cli({"ls", "--json", out("sub.hrry")}).out);
    const json b = json::parse(run_cli({"ls", "--json", local("model.hrry")}).out);
    EXPECT_EQ(a["kv"], b["kv"]);
    EXPECT_EQ(a["data_buffer_alignment"], b["data_buffer_alignment"]);
    EXPECT_EQ(run_cli({"verify", out("sub.hrry")}).rc, 0);

    // The 40 MiB tensor, read in more than one range.
    const Ran big = run_cli({"get", url("big.hrry"), "big", "-o", out("big1.hrry"), "-q"});
    ASSERT_EQ(big.rc, 0) << big.err;
    EXPECT_TRUE(tensor_bytes(out("big1.hrry"), "big") == tensor_bytes(local("big.hrry"), "big"));
    EXPECT_EQ(outputs(), (std::vector<std::string>{"big1.hrry", "sub.hrry"}));
}

TEST_F(RemoteCli, GetCompositeHeadOrMemberWritesTheWholeComposite) {
    const Ran head = run_cli({"get", url("model.hrry"), "output.weight", "-o", out("head.hrry"), "-q"});
    ASSERT_EQ(head.rc, 0) << head.err;
    const Ran member = run_cli({"get", url("model.hrry"), "output.weight.part1", "-o", out("member.hrry"), "-q"});
    ASSERT_EQ(member.rc, 0) << member.err;
    EXPECT_NE(member.err.find("member of the composite 'output.weight'"), std::string::npos) << member.err;
    for (const std::string& p : {out("head.hrry"), out("member.hrry")}) {
        SCOPED_TRACE(p);
        auto f = FileReader::open(p);
        ASSERT_TRUE(f) << f.error().to_string();
        EXPECT_EQ(f->tensor_count(), 3U);
        EXPECT_TRUE(f->check_all());
        const auto at = f->find("output.weight");
        ASSERT_TRUE(at);
        EXPECT_TRUE(f->composite(*at));
        EXPECT_EQ(run_cli({"cat", p, "output.weight"}).out, run_cli({"cat", local("model.hrry"), "output.weight"}).out);
        EXPECT_EQ(run_cli({"verify", p}).rc, 0);
    }
}

TEST_F(RemoteCli, UnknownNameNamesItAndLeavesNothing) {
    const Ran r = run_cli({"get", url("model.hrry"), "token_embd.weight", "no.such.tensor", "-o", out("x.hrry")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("no tensor named 'no.such.tensor'"), std::string::npos) << r.err;
    EXPECT_TRUE(outputs().empty());
}

TEST_F(RemoteCli, UnreachableServerIsAClearErrorWithoutSecrets) {
    const std::string dead = "http://127.0.0.1:" + std::to_string(test::free_port()) + "/model.hrry";
    ::setenv("HURRAY_HTTP_HEADERS", "X-Env-Secret: envsecret42\n", 1);
    for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
             {"get", dead + "?X-Amz-Signature=querysecret42", "-o", out("x.hrry")},
             {"ls", dead + "?X-Amz-Signature=querysecret42"},
             {"convert", dead + "?X-Amz-Signature=querysecret42", out("y.hrry")}}) {
        std::vector<std::string> args = cmd;
        for (const std::string a : {"--header", "Authorization: Bearer headersecret42", "--http-retries", "0",
                                    "--http-timeout", "2"}) {
            args.emplace_back(a);
        }
        const Ran r = run_cli(args);
        EXPECT_EQ(r.rc, 1) << cmd[0];
        EXPECT_NE(r.err.find(dead), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("secret42"), std::string::npos) << r.err;
    }
    EXPECT_TRUE(outputs().empty());
}

TEST_F(RemoteCli, NotFoundIsAnError) {
    const Ran g = run_cli({"get", url("missing.hrry"), "-o", out("m.hrry")});
    EXPECT_EQ(g.rc, 1);
    EXPECT_NE(g.err.find("404"), std::string::npos) << g.err;
    EXPECT_NE(g.err.find(url("missing.hrry")), std::string::npos) << g.err;
    for (const std::string c : {"ls", "info", "verify"}) {
        const Ran r = run_cli({c, url("missing.hrry")});
        EXPECT_EQ(r.rc, 1) << c;
        EXPECT_NE(r.err.find("404"), std::string::npos) << c << ": " << r.err;
    }
    EXPECT_EQ(run_cli({"cat", url("missing.hrry"), "w"}).rc, 1);
    EXPECT_TRUE(outputs().empty());
}

TEST_F(RemoteCli, HeadersFromTheOptionAndTheEnvironment) {
    ::setenv("HURRAY_HTTP_HEADERS", "X-One: 1\r\n\nX-Two: two words\n", 1);
    const Ran ok = run_cli({"ls", url("model.hrry"), "--header", "X-Three: 3", "--header", "X-Four: 4"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(ok.out, run_cli({"ls", local("model.hrry")}).out);

    const Ran bad = run_cli({"ls", url("model.hrry"), "--header", "no colon secret42"});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("--header #1"), std::string::npos) << bad.err;
    EXPECT_EQ(bad.err.find("secret42"), std::string::npos) << bad.err;

    ::setenv("HURRAY_HTTP_HEADERS", "X-Good: 1\nBad Name: secret42\n", 1);
    const Ran env = run_cli({"ls", url("model.hrry")});
    EXPECT_EQ(env.rc, 1);
    EXPECT_NE(env.err.find("HURRAY_HTTP_HEADERS: line 2"), std::string::npos) << env.err;
    EXPECT_EQ(env.err.find("secret42"), std::string::npos) << env.err;
}

TEST_F(RemoteCli, GetOfWhatIsNotAValidFileLeavesNothing) {
    // A stream downloads, then fails the check before the rename.
    const Ran whole = run_cli({"get", url("model.hrrys"), "-o", out("s.hrry"), "-q"});
    EXPECT_EQ(whole.rc, 1);
    EXPECT_NE(whole.err.find("does not check"), std::string::npos) << whole.err;
    const Ran named = run_cli({"get", url("model.hrrys"), "tensor_0", "-o", out("s.hrry"), "-q"});
    EXPECT_EQ(named.rc, 1);
    EXPECT_TRUE(outputs().empty());
    // An existing OUT is left as it was.
    write_all_file(out("keep.hrry"), std::string("old"));
    EXPECT_EQ(run_cli({"get", url("model.hrrys"), "-o", out("keep.hrry"), "-q"}).rc, 1);
    EXPECT_EQ(outputs(), std::vector<std::string>{"keep.hrry"});
    const auto kept = read_all(out("keep.hrry"));
    EXPECT_EQ(std::string(kept.begin(), kept.end()), "old");
}

TEST_F(RemoteCli, GetReadsALocalPathTheSameWay) {
    const Ran r = run_cli({"get", local("model.hrry"), "blk.0.attn_mask", "-o", out("mask.hrry"), "-q"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(run_cli({"cat", out("mask.hrry"), "blk.0.attn_mask"}).out,
              run_cli({"cat", url("model.hrry"), "blk.0.attn_mask"}).out);
    const Ran whole = run_cli({"get", local("big.hrry"), "-o", out("big.hrry"), "-q"});
    ASSERT_EQ(whole.rc, 0) << whole.err;
    EXPECT_TRUE(read_all(out("big.hrry")) == read_all(local("big.hrry")));
}

TEST_F(RemoteCli, GetToStandardOutputIsAUsageError) {
    EXPECT_EQ(run_cli({"get", url("model.hrry"), "-o", "-"}).rc, 2);
    EXPECT_EQ(run_cli({"get", url("model.hrry")}).rc, 2);  // -o is required
}

/// The tool against tests/http/fault_server.py serving the demo model: its "sigv4" mode
/// (it verifies AWS Signature Version 4) and its "stall-part@0" mode (the data's first
/// range never comes).
class RemoteCliFault : public ::testing::Test {
protected:
    void SetUp() override {
        test::no_proxies();
        std::filesystem::create_directories(dir_.path() / "www");
        std::filesystem::create_directories(out_);
        ASSERT_TRUE(cli::write_demo_model(model_));
        std::string why;
        port_ = test::start_fault_server(server_, HURRAY_FAULT_SERVER, (dir_.path() / "www").string(), why);
        if (port_ == 0) {
            GTEST_SKIP() << why;
        }
        ASSERT_GT(port_, 0);
    }
    [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

    TempDir dir_;
    const std::string model_ = (dir_.path() / "www" / "model.hrry").string();
    const std::filesystem::path out_ = dir_.path() / "out";
    test::Child server_;
    int port_ = 0;
};

/// `hurray` on s3:// URLs with the credentials and the endpoint of the environment, as
/// the AWS CLI reads them.
TEST_F(RemoteCliFault, S3UrlsAreSignedWithTheEnvironmentsCredentials) {
    const std::pair<const char*, std::string> vars[] = {
        {"AWS_ENDPOINT_URL", endpoint()},        {"AWS_ACCESS_KEY_ID", "AKIDHURRAYTEST"},
        {"AWS_SECRET_ACCESS_KEY", "hurray+test/secret/K7MDENG"}, {"AWS_REGION", "eu-west-3"}};
    for (const auto& [name, value] : vars) {
        ::setenv(name, value.c_str(), 1);
    }
    ::unsetenv("AWS_SESSION_TOKEN");
    ::unsetenv("AWS_ENDPOINT_URL_S3");
    const std::string url = "s3://sigv4/model.hrry";
    EXPECT_EQ(run_cli({"ls", url}).out, run_cli({"ls", model_}).out);
    EXPECT_EQ(run_cli({"cat", url, "blk.0.attn_mask"}).out, run_cli({"cat", model_, "blk.0.attn_mask"}).out);
    const std::string got = (out_ / "got.hrry").string();
    const Ran r = run_cli({"get", url, "-o", got, "-q", "--no-fsync"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(read_all(got) == read_all(model_));
    // A wrong secret: the server's 403 and its code, and no secret in the message.
    ::setenv("AWS_SECRET_ACCESS_KEY", "a-wrong-secret", 1);
    const Ran wrong = run_cli({"ls", url});
    EXPECT_EQ(wrong.rc, 1);
    EXPECT_NE(wrong.err.find("HTTP status 403"), std::string::npos) << wrong.err;
    EXPECT_NE(wrong.err.find("SignatureDoesNotMatch"), std::string::npos) << wrong.err;
    EXPECT_EQ(wrong.err.find("a-wrong-secret"), std::string::npos) << wrong.err;
    for (const char* name : {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}) {
        ::unsetenv(name);
    }
}

/// `hurray get` (the data's first range never comes) and `hurray convert URL OUT` (its
/// requests from the fourth on never come) killed by SIGINT or SIGTERM mid-download: they
/// exit 130 / 143 at once and leave no file, temporary or not.
TEST_F(RemoteCliFault, GetAndConvertInterruptedLeaveNoFileAndExit130Or143) {
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"get", endpoint() + "/stall-part@0/model.hrry"},
        {"convert", endpoint() + "/stall-from@4/model.hrry"},
    };
    for (const auto& [command, url] : runs) {
        for (const int sig : {SIGINT, SIGTERM}) {
            SCOPED_TRACE(command + " " + std::to_string(sig));
            test::Child child;
            // A name of its own per run: the fault server counts requests per mode and name.
            const std::string name = command + std::to_string(sig) + ".hrry";
            std::filesystem::copy_file(model_, dir_.path() / "www" / name);
            const std::string from = url.substr(0, url.rfind('/') + 1) + name;
            std::vector<std::string> argv = {HURRAY_CLI_PATH, command, from};
            if (command == "get") {
                argv.insert(argv.end(), {"-o", (out_ / "model.hrry").string(), "-q"});
            } else {
                argv.push_back((out_ / "model.hrry").string());
            }
            argv.insert(argv.end(), {"--http-timeout", "60"});
            ASSERT_TRUE(child.start(argv));
            // Wait until the temporary output exists: the download has begun.
            bool started = false;
            for (int i = 0; i < 500 && !started; ++i) {
                started = std::filesystem::directory_iterator(out_) != std::filesystem::directory_iterator();
                if (!started) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            }
            ASSERT_TRUE(started) << "no temporary file appeared";
            const auto t0 = std::chrono::steady_clock::now();
            ASSERT_EQ(::kill(child.pid(), sig), 0);
            const int rc = child.wait_exit(std::chrono::seconds(10));
            EXPECT_EQ(rc, 128 + sig);
            EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // not the 60 s timeout
            EXPECT_TRUE(std::filesystem::directory_iterator(out_) == std::filesystem::directory_iterator())
                << "a file was left in " << out_;
        }
    }
}

}  // namespace
}  // namespace hurray::clitest
