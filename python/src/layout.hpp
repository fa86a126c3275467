// SPDX-License-Identifier: Apache-2.0
/// @file
/// The bridge between the package's layout classes (python/hurray/_layout.py:
/// `hurray.Layout` and its subclasses) and the core's `LayoutDescriptor`
/// (layout.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string_view>

#include "common.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::python {

/// The LayoutDescriptor a `hurray.Layout` instance describes. TypeError for
/// anything else (strings included); ValueError for a parameter the core's
/// model cannot hold. An `UnknownLayout` becomes an `ExtensionLayout` whose tag
/// is outside 0xF0-0xFE (the core never produces one from bytes, so the tag
/// alone tells the two apart).
LayoutDescriptor layout_from_python(const py::handle& layout);

/// Whether `layout` is the in-memory stand-in for an `UnknownLayout`.
bool is_unknown_layout(const LayoutDescriptor& layout) noexcept;

/// The layout's name as the package reports it (`layout.name`): the
/// specification's names, `"col_major"` for 0x02, `"extension"` for private
/// and unknown tags.
std::string_view python_layout_name(const LayoutDescriptor& layout) noexcept;

/// The specification's name of buffer `index` under `layout` ("values",
/// "row_ptr", "page_pool", ...), for error messages; "data" where there is none.
std::string_view buffer_role(const LayoutDescriptor& layout, size_t index) noexcept;

/// `Tensor.layout`: the layout object for a tensor's descriptor, made by the
/// package's `make_layout(tag, name, buffer_count, params)`.
py::object layout_to_python(const TensorDescriptor& d, const py::handle& make_layout);

/// Adds `_check_layout` and `_set_layout_class` to the module.
void add_layout_support(py::module_& m);

}  // namespace hurray::python
