// SPDX-License-Identifier: Apache-2.0
/// @file
/// The optional descriptor sections a `hurray.Tensor` can carry, between the
/// core's structs and the package's Python classes (hurray/_quantization.py,
/// registered with `_set_quantization_support`): the quantization schemes
/// (`PerTensorAffine`, `PerChannelAffine`, `PerBlockAffine`, `NF4`, `MXFP`),
/// `Statistics` and `Shard` (sections.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <optional>

#include "hurray/core/quantization.hpp"
#include "hurray/core/shard.hpp"
#include "hurray/core/statistics.hpp"
#include "tensor.hpp"

namespace hurray::python {

/// The scheme a `quantization=` argument describes: nothing for None,
/// InvalidDescriptorError for an object that is not a scheme, UnsupportedError
/// for a scheme that cannot be authored (a private scheme read from a file).
std::optional<QuantizationDescriptor> quantization_from_python(const py::handle& obj);

/// The section a `statistics=` argument describes: nothing for None,
/// TypeError for an object that is not a `hurray.Statistics`.
std::optional<Statistics> statistics_from_python(const py::handle& obj);

/// The section a `shard=` argument describes: nothing for None, TypeError for
/// an object that is not a `hurray.Shard`.
std::optional<ShardDescriptor> shard_from_python(const py::handle& obj);

/// The scheme object of an assigned scheme (`hurray.PerChannelAffine`, ...),
/// or nothing for an opaque (private) one or before the package registered
/// its classes.
std::optional<py::object> scheme_to_python(const QuantizationScheme& scheme);

/// The buffer-table indices a scheme's parameters use (scale, then zero
/// point), in that order; empty for per-tensor affine and opaque schemes.
std::vector<uint32_t> parameter_buffer_indices(const QuantizationScheme& scheme);

/// Adds `statistics` and `shard` to the class and `_set_quantization_support`
/// to the module.
void add_sections(py::class_<Tensor>& cls, py::module_& m);

}  // namespace hurray::python
