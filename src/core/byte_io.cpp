// SPDX-License-Identifier: Apache-2.0
#include "core/byte_io.hpp"

#include "core/text.hpp"

#include <string>

namespace hurray::detail {

Error ByteReader::truncated(uint64_t n, const char* field) const {
    return {ErrorCode::kTruncated,
            std::string(field) + ": needs " + std::to_string(n) + " bytes, only " +
                std::to_string(remaining()) + " remain",
            abs_pos()};
}

Status ByteReader::reserved(uint64_t n, const char* field) {
    const uint64_t at = abs_pos();
    HURRAY_ASSIGN_OR_RETURN(auto b, bytes(n, field));
    for (size_t i = 0; i < b.size(); ++i) {
        if (b[i] != 0) {
            return Error(ErrorCode::kReservedBytesNonZero,
                         std::string(field) + ": reserved byte " + std::to_string(i) +
                             " is " + hex(b[i]) + ", must be 0",
                         at + i);
        }
    }
    return Status::success();
}

}  // namespace hurray::detail
