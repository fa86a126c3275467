// `hurray serve`, `hurray fetch` and `hurray ls hurray://...`: the tool serves the demo
// model on a Unix socket (as a process, stopped by SIGTERM) and fetches it back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <thread>

#include "cli_support.hpp"

namespace hurray::clitest {
namespace {

/// `hurray serve ARGS...` as a child process, its output in `dir`.
pid_t spawn_serve(const std::vector<std::string>& args, const TempDir& dir) {
    std::vector<std::string> argv = {"hurray", "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = dir.file("serve.out");
    const std::string err = dir.file("serve.err");
    std::filesystem::remove(out);  // wait_for_server reads it: no earlier server's address
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(o, 1);
        ::dup2(e, 2);
        std::vector<char*> c;
        for (auto& a : argv) {
            c.push_back(a.data());
        }
        c.push_back(nullptr);
        ::execv(HURRAY_CLI_PATH, c.data());
        ::_exit(127);
    }
    return pid;
}

/// Waits until the server listens: it prints its bound address on stdout
/// (`serve.out` in `dir`) once `listen` has succeeded. The socket file alone
/// is not enough: it appears at bind(), before listen(), and a client that
/// connects in between is refused.
bool wait_for_server(const TempDir& dir) {
    const std::string out = dir.file("serve.out");
    for (int i = 0; i < 2000; ++i) {
        std::error_code ec;
        if (std::filesystem::file_size(out, ec) > 0 && !ec) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

TEST(CliServe, ServesListsFetchesAndStopsOnSigterm) {
    TempDir dir;
    const std::string model = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(model).ok());
    const std::string sock = dir.file("s.sock");
    const pid_t pid = spawn_serve({model, "--listen", "unix:" + sock}, dir);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_for_server(dir)) << "the server did not start";
    const std::string url = "hurray+unix://" + sock;

    auto file = FileReader::open(model);
    ASSERT_TRUE(file.ok());
    const Ran ls = run_cli({"ls", url});
    EXPECT_EQ(ls.rc, 0) << ls.err;
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        EXPECT_NE(ls.out.find(file->entry(i).name), std::string::npos) << file->entry(i).name;
    }
    const Ran js = run_cli({"ls", "--json", url});
    EXPECT_EQ(js.rc, 0) << js.err;
    EXPECT_NE(js.out.find("\"kind\": \"server\""), std::string::npos);

    // Everything: the same tensors, descriptors and bytes in the same order.
    const std::string copy = dir.file("copy.hrry");
    const Ran all = run_cli({"fetch", url, "-o", copy});
    ASSERT_EQ(all.rc, 0) << all.err;
    EXPECT_EQ(stream_of(copy), stream_of(model));
    auto fetched = FileReader::open(copy);
    ASSERT_TRUE(fetched.ok());
    ASSERT_EQ(fetched->tensor_count(), file->tensor_count());
    for (size_t i : file->write_order()) {
        EXPECT_TRUE(fetched->find(file->entry(i).name).has_value()) << file->entry(i).name;
    }

    // One key; a key that is not there; a server that is not there.
    const std::string first(file->entry(file->write_order()[0]).name);
    const std::string one = dir.file("one.hrry");
    const Ran r1 = run_cli({"fetch", url, first, "-o", one});
    EXPECT_EQ(r1.rc, 0) << r1.err;
    EXPECT_GE(FileReader::open(one)->tensor_count(), 1U);
    const Ran missing = run_cli({"fetch", url, "no-such-tensor", "-o", dir.file("x.hrry")});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("no tensor 'no-such-tensor'"), std::string::npos) << missing.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("x.hrry")));
    const Ran gone = run_cli({"ls", "hurray+unix://" + dir.file("nobody.sock")});
    EXPECT_EQ(gone.rc, 1);
    const Ran bad_layout = run_cli({"fetch", url, "--layout", "diagonal", "-o", dir.file("y.hrry")});
    EXPECT_EQ(bad_layout.rc, 2) << bad_layout.err;

    // --dequantize: quantized tensors come as their float32 values, the others
    // as stored; --layout tiled --transcode: unquantized ones come tiled.
    const std::string dq = dir.file("dq.hrry");
    const Ran rdq = run_cli({"fetch", url, "--dequantize", "-o", dq});
    ASSERT_EQ(rdq.rc, 0) << rdq.err;
    const std::string tiled = dir.file("tiled.hrry");
    const Ran rt = run_cli({"fetch", url, "--layout", "tiled", "--transcode", "-o", tiled});
    ASSERT_EQ(rt.rc, 0) << rt.err;
    auto dqf = FileReader::open(dq);
    auto tf = FileReader::open(tiled);
    ASSERT_TRUE(dqf.ok() && tf.ok());
    // Members come with their composite, as stored: only what is asked for is transcoded.
    std::set<size_t> members;
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        if ((**file->descriptor(file->entry(i).name)).layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            auto comp = file->composite(i);
            ASSERT_TRUE(comp.ok());
            members.insert(comp->members.begin(), comp->members.end());
        }
    }
    size_t dequantized = 0;
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        const std::string name(file->entry(i).name);
        SCOPED_TRACE(name);
        const TensorDescriptor& stored = **file->descriptor(name);
        const TensorDescriptor& got = **dqf->descriptor(name);
        const TensorDescriptor& t = **tf->descriptor(name);
        const bool composite = stored.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite);
        if (stored.quantization && !composite) {
            EXPECT_EQ(got.element_type, ElementType::kFloat32);
            EXPECT_FALSE(got.quantization.has_value());
            EXPECT_EQ(got.shape, stored.shape);
            ++dequantized;
            EXPECT_EQ(t, stored) << "quantized tensors are not transcoded";
        } else {
            EXPECT_EQ(got, stored);
        }
        const bool tileable = !stored.quantization && !stored.extension_type && !composite && !members.contains(i) &&
                              !stored.shape.empty() &&
                              bit_width(stored.element_type) % 8 == 0;
        if (tileable) {
            EXPECT_EQ(t.layout_tag(), 0x04);
            auto back = tf->tensor(name)->materialize();
            auto want = file->tensor(name)->materialize();
            ASSERT_TRUE(back.ok() && want.ok());
            EXPECT_EQ(*back, *want);
        }
    }
    EXPECT_GE(dequantized, 2U);

    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    const auto out = read_all(dir.file("serve.out"));
    EXPECT_EQ(std::string(out.begin(), out.end()), url + "\n");
    const auto err = read_all(dir.file("serve.err"));
    EXPECT_NE(std::string(err.begin(), err.end()).find("stopped after"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(sock));
}

TEST(CliServe, PushUploadsIntoTheAcceptDirectory) {
    TempDir dir;
    const std::string model = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(model).ok());
    const std::string up = dir.file("up");
    std::filesystem::create_directories(up);
    const std::string sock = dir.file("p.sock");
    const pid_t pid = spawn_serve({model, "--listen", "unix:" + sock, "--accept-put", up}, dir);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_for_server(dir));
    const std::string url = "hurray+unix://" + sock;
    const Ran one = run_cli({"push", url, model, "token_embd.weight", "blk.0.attn_mask"});
    EXPECT_EQ(one.rc, 0) << one.err;
    EXPECT_NE(one.err.find("2 tensors"), std::string::npos) << one.err;
    auto stored = FileReader::open(up + "/blk.0.attn_mask.hrry");
    ASSERT_TRUE(stored.ok());
    auto original = FileReader::open(model);
    EXPECT_EQ(**stored->descriptor("blk.0.attn_mask"), **original->descriptor("blk.0.attn_mask"));
    const Ran comp = run_cli({"push", url, model, "output.weight"});
    EXPECT_EQ(comp.rc, 1);
    EXPECT_NE(comp.err.find("composite"), std::string::npos) << comp.err;
    const Ran missing = run_cli({"push", url, model, "nope"});
    EXPECT_EQ(missing.rc, 1);
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // A server without --accept-put refuses.
    const pid_t ro = spawn_serve({model, "--listen", "unix:" + sock}, dir);
    ASSERT_TRUE(wait_for_server(dir));
    const Ran refused = run_cli({"push", url, model, "token_embd.weight"});
    EXPECT_EQ(refused.rc, 1);
    EXPECT_NE(refused.err.find("PUT_REJECTED"), std::string::npos) << refused.err;
    ::kill(ro, SIGTERM);
    ::waitpid(ro, &status, 0);
}

TEST(CliServe, RefusesWhatItCannotServe) {
    TempDir dir;
    const Ran nofile = run_process("serve '" + dir.file("missing.hrry") + "' --listen unix:" + dir.file("s"), "", dir);
    EXPECT_EQ(nofile.rc, 1);
    const std::string model = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(model).ok());
    const Ran badaddr = run_process("serve '" + model + "' --listen 'http://x'", "", dir);
    EXPECT_EQ(badaddr.rc, 1);
    EXPECT_NE(badaddr.err.find("unknown scheme"), std::string::npos) << badaddr.err;
    const Ran twice = run_process("serve '" + model + "' '" + model + "' --listen unix:" + dir.file("s2"), "", dir);
    EXPECT_EQ(twice.rc, 1);
    EXPECT_NE(twice.err.find("two files hold"), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace hurray::clitest
