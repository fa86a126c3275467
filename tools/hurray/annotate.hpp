#pragma once
/// @file
/// The annotator behind `hurray inspect`: walks the bytes of a descriptor, an HRRYFILE
/// container or a stream and describes every field as a Row (absolute offset, raw bytes,
/// field name, decoded value).
///
/// The walk is written from the layouts of docs/spec/metadata.md and file-format.md,
/// independently of the library's decoders, and bounds-checks every read. It checks only
/// what it needs to go on (magic, lengths, rank); the commands run the library's decoders
/// as well and report their verdict, and tests cross-check the rows against
/// hurray::decode.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"

namespace hurray::cli {

/// Raw bytes kept in a Row (longer fields keep their first bytes and their length).
inline constexpr uint64_t kRowKeptBytes = 64;

/// One field: where it is, its raw bytes, its name and its decoded value.
struct Row {
    uint64_t offset = 0;              ///< absolute offset in the input
    uint64_t length = 0;              ///< length of the field in bytes
    std::vector<uint8_t> bytes{};     ///< its first min(length, kRowKeptBytes) bytes
    std::string field{};              ///< dotted field name, e.g. `buffer[0].byte_size`
    std::string value{};              ///< decoded value, e.g. `48` or `float32 (0x03)`
    std::optional<uint64_t> number{}; ///< the integer read (floats: raw bits), for checks
    bool data = false;                ///< a data region, summarised: `bytes` is empty
};

/// A titled run of rows (a descriptor, the header, the index, ...).
struct Section {
    std::string title{};          ///< e.g. `descriptor`, `tensor "w" descriptor`, `trailer`
    uint64_t offset = 0;          ///< absolute offset of its first byte
    uint64_t length = 0;          ///< bytes it spans
    std::vector<Row> rows{};      ///< its fields, in order
};

/// What `inspect` found: the sections it could annotate and, for invalid input, the
/// first error (with its absolute offset).
struct Annotation {
    std::string kind{};           ///< "descriptor", "stream" or "file"
    std::vector<Section> sections{};
    std::optional<Error> error{};
};

/// Appends the rows of the descriptor at the start of `bytes` (which sit at absolute
/// offset `base`) to `rows`. Returns the bytes the descriptor spans (its
/// descriptor_length, as far as it could be read) or the first structural error (bad
/// magic, length below 20, rank above 64, a field past descriptor_length or past the end
/// of `bytes`). Rows read before the error stay in `rows`.
/// @code
/// std::vector<hurray::cli::Row> rows;
/// auto n = hurray::cli::annotate_descriptor(bytes, 0, rows);
/// @endcode
Result<uint64_t> annotate_descriptor(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows);

/// Annotates a bare descriptor (the whole input): its rows, then hurray::decode's verdict.
Annotation annotate_descriptor_input(std::span<const uint8_t> bytes);

/// Rows of the 64-byte HRRYFILE header (`bytes` from offset 0).
Status annotate_file_header(std::span<const uint8_t> bytes, std::vector<Row>& rows);
/// Rows of the 40-byte trailer; `bytes` start at absolute offset `base`.
Status annotate_file_trailer(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows);
/// Rows of the index section; `bytes` are exactly the section, at absolute `base`.
Status annotate_file_index(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows);
/// Rows of the KV section; `bytes` are exactly the section, at absolute `base`.
Status annotate_file_kv(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows);

}  // namespace hurray::cli
