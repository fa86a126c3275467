#pragma once
/// @file
/// `hurray inspect` on whole inputs: an HRRYFILE read at random offsets, a stream read
/// front to back; and the two printers of an Annotation (text table, JSON).
///
/// JSON shape of the rows (`inspect --json` on a file or a stream, or `--rows`):
/// @code
/// {"kind": "file", "size": 4242,
///  "sections": [{"title": "header", "offset": 0, "length": 64,
///                "rows": [{"offset": 0, "length": 8, "hex": "48 52 ...", "field": "magic",
///                          "value": "\"HRRYFILE\""}, ...]},
///               {"title": "tensor \"w\" data", ..., "rows": [{"offset": 4096, "length": 16,
///                          "data": true, "field": "buffer[0]", "value": "16 bytes"}]}],
///  "error": null}
/// @endcode
/// `hex` holds at most the first 64 bytes of a field (`length` says how many it has);
/// integer fields carry `number` (their exact value; floats: raw bits). `error` is null or
/// {"code", "message", "offset"} (offset null when unknown).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "hurray/annotate.hpp"
#include "hurray/io/byte_source.hpp"

namespace hurray::cli {

/// Random access to a container: its size and a reader of `len` bytes at `offset`.
struct RandomAccess {
    uint64_t size = 0;                                                                     ///< total bytes
    std::function<Result<std::vector<uint8_t>>(uint64_t offset, uint64_t len)> read{};   ///< exact read
    /// Validates the whole container with hurray::FileReader (cross-structure rules: CRC,
    /// overlaps); called once the annotation found nothing wrong. May be empty.
    std::function<Status()> validate{};
};

/// Annotates an HRRYFILE: header, trailer, index, KV section, each descriptor and a
/// summary of each tensor's data regions, sorted by offset; stops at the first error.
Annotation inspect_file(const RandomAccess& in);

/// Annotates a stream read from `source`: each tensor's descriptor and a summary of its
/// data (skipped, never held); stops at the first error.
Annotation inspect_stream(ByteSource& source);

/// Prints the annotated table (see docs in cmd_inspect.cpp).
void print_annotation(const Annotation& a, std::ostream& out);

/// The rows as JSON (shape above).
nlohmann::ordered_json annotation_json(const Annotation& a, std::optional<uint64_t> size);

/// An error as JSON: {"code", "message", "offset"}.
nlohmann::ordered_json error_json(const Error& e);

}  // namespace hurray::cli
