// SPDX-License-Identifier: Apache-2.0
// docs/guide.md's "each piece on its own" snippets as one program, built and run by ctest.
// The guide shows the lines between `// readme:begin NAME` and `// readme:end NAME`;
// scripts/check_readme_examples.py checks that they are the same.
#include <hurray/hurray.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

uint64_t g_received = 0;

/// What the stream example does with each chunk: count the bytes.
void consume(const hurray::TensorDescriptor&, uint32_t, uint64_t, std::span<const uint8_t> bytes) {
    g_received += bytes.size();
}

hurray::Status run(const std::string& path) {
    // readme:begin descriptor
    // Build: the builders compute every buffer size from shape, type, layout and scheme.
    auto w = hurray::make_per_block_quantized(hurray::ElementType::kInt4, {64, 64},
                                              /*axis=*/1, /*block_size=*/32);
    if (!w) return w.error();
    auto bytes = hurray::encode(*w);           // Result<std::vector<uint8_t>>: the exact wire bytes
    if (!bytes) return bytes.error();

    // Read: validate once, get a plain struct back; errors name the field and byte offset.
    auto d = hurray::decode(*bytes);           // Result<TensorDescriptor>
    if (!d) return d.error();
    std::puts(hurray::summarize(*d).c_str());  // int4[64, 64] row_major, 2 buffers (2304 B), ...
    // readme:end descriptor

    const std::vector<uint8_t> data(d->buffers[0].byte_size, 0x21);  // int4 codes 1, 2, 1, 2, ...
    const std::vector<hurray::float16_t> scale_values(d->buffers[1].byte_size / 2, hurray::float16_t(0.5F));
    const std::span<const uint8_t> scales = hurray::byte_span(scale_values);

    // readme:begin view
    std::vector<std::span<const uint8_t>> buffers = {data, scales};  // one span per buffer
    auto view = hurray::TensorView::make(*d, buffers);                // sizes checked once
    if (!view) return view.error();
    if (auto bad = hurray::validate_data(*view); !bad) return bad;    // sparse indices, scales, ...
    auto x = view->read_double(std::vector<uint64_t>{1, 2});         // storage value at [1, 2]
    auto real = hurray::dequantize(*view);                            // row-major float32
    if (!x || !real) return !x ? x.error() : real.error();
    // readme:end view
    if (*x != 1.0 || (*real)[1] != 1.0F) {
        return hurray::Error(hurray::ErrorCode::kInvalidData, "view: unexpected values");
    }

    // readme:begin file
    auto out = hurray::FileWriter::create_file(path);                      // atomic: temp, fsync, rename
    if (!out) return out.error();
    const std::span<const uint8_t> bufs[] = {data, scales};
    HURRAY_RETURN_IF_ERROR(out->add_tensor("layers.0.mlp.up", *w, bufs));  // names checked first
    HURRAY_RETURN_IF_ERROR(out->kv().set("general.architecture", hurray::KvValue::string("llama")));
    HURRAY_RETURN_IF_ERROR(out->finish());                                 // KV, index, CRC-32C, trailer

    auto file = hurray::FileReader::open(path);            // mmap + full structural check
    if (!file) return file.error();
    auto up = file->tensor("layers.0.mlp.up");            // zero-copy SharedBuffers
    auto arch = file->kv().get_string("general.architecture");  // typed KV getters
    if (!up || !arch) return !up ? up.error() : arch.error();
    // readme:end file

    // readme:begin list
    hurray::TensorDescriptor desc;                          // reused: no allocation per tensor
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        HURRAY_RETURN_IF_ERROR(file->decode_descriptor(i, desc));  // from the descriptor table
        std::printf("%.*s: %s\n", static_cast<int>(file->entry(i).name.size()), file->entry(i).name.data(),
                    hurray::summarize(desc).c_str());
    }
    hurray::FileWriterOptions no_table;
    no_table.descriptor_table = false;                      // the table's 1 copy per descriptor, left out
    auto plain = hurray::FileWriter::create_file(path + ".plain", no_table);
    // readme:end list
    if (!plain) return plain.error();
    HURRAY_RETURN_IF_ERROR(plain->add_tensor("layers.0.mlp.up", *w, bufs));
    HURRAY_RETURN_IF_ERROR(plain->finish());
    auto reread = hurray::FileReader::open(path + ".plain");
    std::filesystem::remove(path + ".plain");
    if (!reread) return reread.error();
    if (reread->descriptor_table_bytes() || !file->descriptor_table_bytes()) {
        return hurray::Error(hurray::ErrorCode::kInvalidData, "list: descriptor table not as written");
    }

    int fds[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
        return hurray::Error(hurray::ErrorCode::kIoError, "socketpair failed");
    }
    const int socket_fd = fds[0];
    {
        // readme:begin stream-write
        hurray::FdSink sink(socket_fd);
        hurray::StreamWriter writer(sink);
        HURRAY_RETURN_IF_ERROR(writer.write_tensor(*w, bufs));  // descriptor, then each buffer, no copy
        HURRAY_RETURN_IF_ERROR(writer.finish());                 // checks the stream may end here
        // readme:end stream-write
    }
    ::shutdown(socket_fd, SHUT_WR);
    const int peer_fd = fds[1];
    // readme:begin stream-read
    hurray::FdSource source(peer_fd);
    hurray::StreamReader reader(source);
    for (;;) {
        auto t = reader.next();                        // Result<const StreamTensor*>
        if (!t) return t.error();                      // names the tensor and byte offset
        if (*t == nullptr) break;                      // clean end on a tensor boundary
        for (;;) {
            auto c = reader.read_chunk();              // <= 1 MiB at a time, any tensor size
            if (!c) return c.error();
            if (c->bytes.empty()) break;               // this tensor's data is all read
            consume((*t)->descriptor, c->buffer, c->offset, c->bytes);
        }
    }
    // readme:end stream-read
    ::close(fds[0]);
    ::close(fds[1]);
    if (g_received != data.size() + scales.size()) {
        return hurray::Error(hurray::ErrorCode::kInvalidData, "stream: wrong byte count");
    }
    return hurray::Status::success();
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : "readme_layers.hrry";
    const hurray::Status st = run(path);
    std::filesystem::remove(path);
    if (!st) {
        std::fprintf(stderr, "readme_layers: %s\n", st.error().to_string().c_str());
        return 1;
    }
    std::puts("readme_layers: ok");
    return 0;
}
