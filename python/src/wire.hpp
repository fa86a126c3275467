// SPDX-License-Identifier: Apache-2.0
/// @file
/// Tensors given from Python as (descriptor bytes, buffers) pairs, prepared
/// for a C++ writer: the descriptor decoded, each buffer held through the
/// buffer protocol. Shared by the stream writer (stream.cpp), `save` of
/// composites (module.cpp) and the composite helpers (composite.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::python {

namespace py = pybind11;

/// A buffer-protocol export held while its bytes are written.
class Export {
public:
    explicit Export(const py::handle& obj, const std::string& what) {
        // SAFETY: filled by CPython, released once in the destructor (GIL held:
        // exports are created and destroyed outside the released sections).
        if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
            PyErr_Clear();
            throw py::type_error(what + ": expected a C-contiguous buffer-protocol object (bytes, numpy array, ...), not " +
                                 std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
        }
        held_ = true;
    }
    ~Export() {
        if (held_) {
            PyBuffer_Release(&view_);
        }
    }
    Export(const Export&) = delete;
    Export& operator=(const Export&) = delete;
    Export(Export&& other) noexcept : view_(other.view_), held_(other.held_) { other.held_ = false; }
    Export& operator=(Export&&) = delete;

    /// The bytes.
    [[nodiscard]] std::span<const uint8_t> bytes() const noexcept {
        // SAFETY: a C-contiguous export holds `len` readable bytes at `buf`
        // until it is released.
        return {static_cast<const uint8_t*>(view_.buf), static_cast<size_t>(view_.len)};
    }

private:
    Py_buffer view_{};
    bool held_ = false;
};

/// One tensor prepared for writing: its decoded descriptor and its buffers.
struct PreparedTensor {
    TensorDescriptor descriptor;
    std::vector<Export> exports;
    std::vector<std::span<const uint8_t>> spans;
};

/// Decodes `descriptor` (strict) for writing; InvalidDescriptorError (or
/// UnsupportedError) naming `what` when it does not decode.
TensorDescriptor decode_for_write(const py::bytes& descriptor, const std::string& what);

/// `descriptor` decoded and `buffers` held (one per buffer of the
/// descriptor: BufferError when the count differs, TypeError for an object
/// without a C-contiguous buffer). Needs the GIL.
PreparedTensor prepare_tensor(const py::bytes& descriptor, const py::sequence& buffers, const std::string& what);

}  // namespace hurray::python
