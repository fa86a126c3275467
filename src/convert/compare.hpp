// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: compare_sources with a choice about names.

#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// compare_sources(a, b); names are compared only when `compare_names` (a .npy stores
/// no name: its one tensor is named after the file).
Status compare_sources_impl(const TensorSource& a, const TensorSource& b, bool compare_names);

}  // namespace hurray::convert::detail
