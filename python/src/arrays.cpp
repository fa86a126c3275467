// SPDX-License-Identifier: Apache-2.0
// NumPy helpers shared by the File handle (module.cpp) and hurray.Tensor
// (tensor.cpp, inspect.cpp): element type names and float32 results.
#include <pybind11/numpy.h>

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"

namespace hurray::python {

std::optional<const char*> numpy_name(ElementType t) noexcept {
    switch (t) {
        case ElementType::kBool: return "bool";
        case ElementType::kInt8: return "int8";
        case ElementType::kInt16: return "int16";
        case ElementType::kInt32: return "int32";
        case ElementType::kInt64: return "int64";
        case ElementType::kUInt8: return "uint8";
        case ElementType::kUInt16: return "uint16";
        case ElementType::kUInt32: return "uint32";
        case ElementType::kUInt64: return "uint64";
        case ElementType::kFloat16: return "float16";
        case ElementType::kFloat32: return "float32";
        case ElementType::kFloat64: return "float64";
        case ElementType::kComplex64: return "complex64";
        case ElementType::kComplex128: return "complex128";
        default: return std::nullopt;
    }
}

py::array float_array(std::vector<float>&& values, std::span<const uint64_t> dims, PythonError mismatch,
                      const std::string& context) {
    std::vector<py::ssize_t> shape;
    shape.reserve(dims.size());
    uint64_t count = 1;
    for (const uint64_t dim : dims) {
        if (dim > static_cast<uint64_t>(std::numeric_limits<py::ssize_t>::max()) ||
            (dim != 0 && count > std::numeric_limits<uint64_t>::max() / dim)) {
            raise_kind(PythonError::kBuffer, context + ": the shape is too large");
        }
        count *= dim;
        shape.push_back(static_cast<py::ssize_t>(dim));
    }
    if (count != values.size()) {
        raise_kind(mismatch, context + ": " + std::to_string(values.size()) + " values for " + std::to_string(count) +
                                 " elements");
    }
    if (values.empty()) {
        return py::array_t<float>(shape);
    }
    auto keep = std::make_unique<std::vector<float>>(std::move(values));
    const float* data = keep->data();
    // The capsule owns the vector from here on (it deletes it with the array).
    const py::capsule owner(keep.release(), [](void* p) { delete static_cast<std::vector<float>*>(p); });
    // SAFETY: `data` holds exactly `count` floats (checked above), C-contiguous
    // for this shape; `owner`, the array's base, keeps the vector alive.
    return py::array_t<float>(shape, {}, data, owner);
}

}  // namespace hurray::python
