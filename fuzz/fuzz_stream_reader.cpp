// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: hurray::StreamReader and hurray::StreamDecoder on
// untrusted bytes.
//
// Each input is read as a stream several ways: whole reads with 1 MiB
// chunks, 7-byte source reads with 64-byte chunks, read_data into a small
// buffer, skipping every tensor, and the bare decoder fed one byte at a
// time. Properties:
//  - every way sees the same descriptors, the reading ways the same data
//    of the same complete tensors, and all end the same way (clean end, or the same error code at the same offset);
//  - a clean end consumed the whole input; a truncation is reported at the
//    end of the input; every other error offset lies inside the input;
//  - every error carries a code and a message;
//  - what the strict reader accepts, the permissive reader accepts too;
//  - what the strict reader accepts, StreamWriter writes back byte for byte.
// Built with -fno-exceptions -fno-rtti: a violated property traps.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace {

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

struct Tensor {
    hurray::TensorDescriptor desc;
    std::vector<std::vector<uint8_t>> buffers;
    bool operator==(const Tensor&) const = default;
};

struct Outcome {
    std::vector<Tensor> tensors;  // every descriptor decoded; data empty when skipped
    size_t complete = 0;          // tensors whose data was all read
    bool clean = false;
    hurray::ErrorCode code = hurray::ErrorCode::kOk;
    uint64_t offset = 0;
};

void note_error(Outcome& o, const hurray::Error& e, size_t input_size) {
    require(e.code() != hurray::ErrorCode::kOk && !e.message().empty());
    if (e.code() == hurray::ErrorCode::kTruncated) {
        require(e.offset() == input_size);
    } else if (e.has_offset()) {
        require(e.offset() <= input_size);
    }
    o.code = e.code();
    o.offset = e.offset();
}

/// mode 0: read_chunk, 1: read_data, 2: skip.
Outcome read(std::span<const uint8_t> input, const hurray::StreamReadOptions& options, size_t max_read, int mode) {
    hurray::MemorySource src(input, max_read);
    hurray::StreamReader r(src, options);
    Outcome o;
    std::vector<uint8_t> scratch(13);
    while (true) {
        auto t = r.next();
        if (!t) {
            note_error(o, t.error(), input.size());
            return o;
        }
        if (*t == nullptr) {
            require(src.position() == input.size());
            require(r.decoder().offset() == input.size());
            o.clean = true;
            return o;
        }
        require((*t)->index == o.tensors.size());
        o.tensors.push_back(Tensor{(*t)->descriptor, {}});
        Tensor& tensor = o.tensors.back();
        tensor.buffers.resize(tensor.desc.buffers.size());
        if (mode == 2) {
            continue;
        }
        while (true) {
            if (mode == 0) {
                auto c = r.read_chunk();
                if (!c) {
                    note_error(o, c.error(), input.size());
                    return o;
                }
                if (c->bytes.empty()) {
                    break;
                }
                require(c->bytes.size() <= options.chunk_size && c->buffer < tensor.buffers.size());
                require(c->offset == tensor.buffers[c->buffer].size());
                tensor.buffers[c->buffer].insert(tensor.buffers[c->buffer].end(), c->bytes.begin(), c->bytes.end());
            } else {
                const uint32_t b = r.data_position().first;
                auto n = r.read_data(scratch);
                if (!n) {
                    note_error(o, n.error(), input.size());
                    return o;
                }
                if (*n == 0) {
                    break;
                }
                tensor.buffers[b].insert(tensor.buffers[b].end(), scratch.begin(),
                                         scratch.begin() + static_cast<std::ptrdiff_t>(*n));
            }
        }
        for (size_t b = 0; b < tensor.buffers.size(); ++b) {
            require(tensor.buffers[b].size() == tensor.desc.buffers[b].byte_size);
        }
        ++o.complete;
    }
}

/// The bare decoder, one byte at a time; returns the number of descriptors
/// and how it ended.
Outcome decode_bytewise(std::span<const uint8_t> input, const hurray::StreamReadOptions& options) {
    hurray::StreamDecoder d(options);
    Outcome o;
    size_t pos = 0;
    while (true) {
        const hurray::StreamNeed need = d.need();
        if (need == hurray::StreamNeed::kFailed || need == hurray::StreamNeed::kEnded) {
            break;
        }
        if (pos == input.size()) {
            auto s = d.end_of_input();
            if (!s) {
                note_error(o, s.error(), input.size());
                return o;
            }
            o.clean = true;
            return o;
        }
        if (need == hurray::StreamNeed::kData) {
            require(d.need_size() > 0);
        } else {
            auto space = d.descriptor_space();
            require(!space.empty() && space.size() <= d.need_size());
            space[0] = input[pos];
        }
        auto ev = d.commit(1);
        ++pos;
        if (!ev) {
            note_error(o, ev.error(), input.size());
            return o;
        }
        require(d.offset() == pos);
        if (*ev == hurray::StreamEvent::kDescriptor) {
            o.tensors.push_back(Tensor{d.tensor()->descriptor, {}});
        }
    }
    return o;
}

/// Same descriptors, same number of complete tensors, same data in them.
bool same_data(const Outcome& a, const Outcome& b) {
    if (a.complete != b.complete || a.tensors.size() < a.complete || b.tensors.size() < b.complete) {
        return false;
    }
    for (size_t i = 0; i < a.complete; ++i) {
        if (!(a.tensors[i] == b.tensors[i])) {
            return false;
        }
    }
    return true;
}

bool same_end(const Outcome& a, const Outcome& b) {
    return a.clean == b.clean && a.code == b.code && a.offset == b.offset;
}

bool same_descriptors(const Outcome& a, const Outcome& b) {
    if (a.tensors.size() != b.tensors.size()) {
        return false;
    }
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        if (!(a.tensors[i].desc == b.tensors[i].desc)) {
            return false;
        }
    }
    return true;
}

hurray::StreamReadOptions options(bool strict, size_t chunk) {
    hurray::StreamReadOptions o;
    o.descriptor.strict = strict;
    o.composite.strict = strict;
    o.chunk_size = chunk;
    o.max_descriptor_length = 1U << 20U;
    return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> input(data, size);
    for (const bool strict : {true, false}) {
        const Outcome whole = read(input, options(strict, size_t{1} << 20U), SIZE_MAX, 0);
        const Outcome small = read(input, options(strict, 64), 7, 0);
        require(same_end(whole, small) && same_descriptors(whole, small) && same_data(whole, small));
        const Outcome by_data = read(input, options(strict, 64), 5, 1);
        require(same_end(whole, by_data) && same_descriptors(whole, by_data) && same_data(whole, by_data));
        const Outcome skipped = read(input, options(strict, 64), 3, 2);
        require(same_end(whole, skipped) && same_descriptors(whole, skipped));
        const Outcome bytewise = decode_bytewise(input, options(strict, 64));
        require(same_end(whole, bytewise) && same_descriptors(whole, bytewise));
        if (strict && whole.clean) {
            require(read(input, options(false, 1U << 20U), SIZE_MAX, 0).clean);
            hurray::MemorySink sink;
            hurray::StreamWriter w(sink);
            for (const Tensor& t : whole.tensors) {
                std::vector<std::span<const uint8_t>> spans(t.buffers.begin(), t.buffers.end());
                require(w.write_tensor(t.desc, spans).ok());
            }
            require(w.finish().ok());
            require(sink.bytes().size() == size &&
                    std::equal(sink.bytes().begin(), sink.bytes().end(), input.begin()));
        }
    }
    return 0;
}
