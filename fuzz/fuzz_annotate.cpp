// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the annotator behind `hurray inspect` (tools/hurray/annotate*.cpp,
// inspect_walk.cpp) on untrusted bytes, which it walks with its own bounds-checked
// reader, independently of the library's decoders.
//
// Each input is annotated three ways, as `inspect` would for each kind of input: as a
// bare descriptor (annotate_descriptor_input), as an HRRYFILE container read at random
// offsets (inspect_file, validated with FileReader::open_memory) and as a stream read
// front to back in small pieces (inspect_stream over a MemorySource). Both printers run
// on every annotation (the text table and the JSON rows). Properties:
//  - every field row lies inside the input (offset + length <= size, without
//    overflow) and in its section, and keeps min(length, kRowKeptBytes) raw bytes,
//    equal to the input's bytes at its offset; a section of fields lies inside the
//    input; a data row (declared by a descriptor) keeps no bytes, and lies inside the
//    input when a stream was annotated without an error;
//  - an annotation carries its kind, and an error carries a code and a message;
//  - a bare descriptor hurray::decode accepts is walked without an error: the
//    annotation's only possible error is then the bytes that follow descriptor_length;
//  - the JSON form dumps (invalid UTF-8 replaced, as the CLI does) and the table
//    prints without throwing.
// Built with exceptions and RTTI like the tool; a violated property or an exception
// that escapes traps.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "hurray/annotate.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/inspect_walk.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"

namespace {

using hurray::cli::Annotation;

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

/// [offset, offset + length) lies inside [0, size).
bool inside(uint64_t offset, uint64_t length, uint64_t size) {
    return offset <= size && length <= size - offset;
}

void check(const Annotation& a, std::span<const uint8_t> input, const char* kind) {
    require(a.kind == kind);
    if (a.error) {
        require(a.error->code() != hurray::ErrorCode::kOk && !a.error->message().empty());
    }
    for (const hurray::cli::Section& s : a.sections) {
        require(!s.title.empty());
        bool fields = false;
        for (const hurray::cli::Row& r : s.rows) {
            require(!r.field.empty());
            if (r.data) {
                // Declared by a descriptor; a stream without an error got all of them.
                require(r.bytes.empty());
                require(a.error || a.kind != "stream" || inside(r.offset, r.length, input.size()));
                continue;
            }
            fields = true;
            require(inside(r.offset, r.length, input.size()));
            require(r.offset >= s.offset && r.offset - s.offset <= s.length);
            const uint64_t kept = r.length < hurray::cli::kRowKeptBytes ? r.length : hurray::cli::kRowKeptBytes;
            require(r.bytes.size() == kept);
            require(kept == 0 || std::memcmp(r.bytes.data(), input.data() + r.offset, kept) == 0);
        }
        if (fields) {
            require(inside(s.offset, s.length, input.size()));
        }
    }
    // The printers: neither may throw or read outside what the rows hold.
    std::ostringstream table;
    hurray::cli::print_annotation(a, table);
    const std::string json = hurray::cli::annotation_json(a, input.size())
                                 .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    require(!json.empty());
}

void run(std::span<const uint8_t> input) {
    // A bare descriptor.
    const Annotation d = hurray::cli::annotate_descriptor_input(input);
    check(d, input, "descriptor");
    require(d.sections.size() == 1);
    require(d.sections[0].length <= input.size());
    if (hurray::decode(input).ok()) {
        // decode reads descriptor_length bytes and accepts more after them; the
        // annotator walks the same fields and names what follows.
        const uint64_t walked = d.sections[0].length;
        require(!d.error || (walked < input.size() && d.error->offset() == walked &&
                             d.error->code() == hurray::ErrorCode::kInvalidDescriptorLength));
    }

    // An HRRYFILE at random offsets (what `inspect FILE` reads through a seekable file).
    hurray::cli::RandomAccess ra;
    ra.size = input.size();
    ra.read = [input](uint64_t offset, uint64_t len) -> hurray::Result<std::vector<uint8_t>> {
        require(inside(offset, len, input.size()));  // inspect_file bounds-checks first
        const auto part = input.subspan(static_cast<size_t>(offset), static_cast<size_t>(len));
        return std::vector<uint8_t>(part.begin(), part.end());
    };
    ra.validate = [input]() -> hurray::Status {
        auto opened = hurray::FileReader::open_memory(input);
        if (!opened) {
            return opened.error();
        }
        return hurray::Status::success();
    };
    check(hurray::cli::inspect_file(ra), input, "file");

    // A stream read front to back, in short reads.
    hurray::MemorySource source(input, 7);
    check(hurray::cli::inspect_stream(source), input, "stream");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        run(std::span<const uint8_t>(data, size));
    } catch (const std::exception&) {
        __builtin_trap();  // the annotator reports errors as values, never by throwing
    }
    return 0;
}
