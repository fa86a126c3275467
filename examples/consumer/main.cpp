// SPDX-License-Identifier: Apache-2.0
// A small libhurray consumer, built against the installed package: it encodes
// a descriptor, decodes it back, prints it, sends it through its JSON form, and
// writes a small HRRYFILE container to memory and reads it back.
#include <hurray/core/builder.hpp>
#include <hurray/core/describe.hpp>
#include <hurray/core/version.hpp>
#include <hurray/io/file_reader.hpp>
#include <hurray/io/file_writer.hpp>
#include <hurray/json/descriptor_json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// A file with one float32 [3, 4] tensor and one KV entry, in memory.
bool container_round_trip(const hurray::TensorDescriptor& desc) {
    std::vector<uint8_t> data(48, 0x3F);
    const std::span<const uint8_t> buffers[] = {data};
    hurray::MemorySink sink;
    auto writer = hurray::FileWriter::create(sink);
    if (!writer || !writer->add_tensor("w", desc, buffers) ||
        !writer->kv().set("producer", hurray::KvValue::string("consumer")) || !writer->finish()) {
        std::printf("error: could not write the container\n");
        return false;
    }
    auto file = hurray::FileReader::open_memory(sink.bytes());
    if (!file) {
        std::printf("error: %s\n", file.error().to_string().c_str());
        return false;
    }
    auto w = file->tensor("w");
    auto producer = file->kv().get_string("producer");
    if (!w || !producer || w->buffers().size() != 1 || w->buffers()[0].size() != 48) {
        std::printf("error: the container did not read back\n");
        return false;
    }
    std::printf("container: %zu bytes, tensor 'w' at offset %llu, producer=%.*s\n", sink.bytes().size(),
                static_cast<unsigned long long>(w->entry().data_offset), static_cast<int>(producer->size()),
                producer->data());
    return true;
}

}  // namespace

int main() {
    std::printf("libhurray %s\n", hurray::kVersionString);
    auto made = hurray::make_dense(hurray::ElementType::kFloat32, {3, 4});
    if (!made) {
        std::printf("error: %s\n", made.error().to_string().c_str());
        return 1;
    }
    auto bytes = hurray::encode(*made);
    if (!bytes) {
        std::printf("error: %s\n", bytes.error().to_string().c_str());
        return 1;
    }
    auto back = hurray::decode(*bytes);
    if (!back) {
        std::printf("error: %s\n", back.error().to_string().c_str());
        return 1;
    }
    std::printf("%zu bytes: %s\n", bytes->size(), hurray::summarize(*back).c_str());
    const std::string json = hurray::to_json(*back);
    std::printf("JSON: %s\n", json.c_str());
    auto from_json = hurray::from_json(json);
    if (!from_json) {
        std::printf("error: %s\n", from_json.error().to_string().c_str());
        return 1;
    }
    return *back == *made && *from_json == *made && container_round_trip(*made) ? 0 : 1;
}
