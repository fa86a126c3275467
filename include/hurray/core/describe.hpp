// SPDX-License-Identifier: Apache-2.0
/// @file
/// Human-readable text for descriptors, for logs, tools and the demo.
#pragma once

#include <string>

#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// A one-line summary: type, shape, layout and the optional sections, e.g.
/// `float32[3, 4] row_major, 1 buffer (48 B)`.
///
/// @code
/// std::puts(hurray::summarize(d).c_str());
/// @endcode
std::string summarize(const TensorDescriptor& d);

/// A multi-line listing of every field of a descriptor: header, layout
/// fields, each buffer handle and each optional section, one per line,
/// each line starting with `indent`.
///
/// @code
/// std::fputs(hurray::describe(d).c_str(), stdout);
/// @endcode
std::string describe(const TensorDescriptor& d, const std::string& indent = "  ");

}  // namespace hurray
