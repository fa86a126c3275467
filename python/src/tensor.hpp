// SPDX-License-Identifier: Apache-2.0
/// @file
/// The `hurray.Tensor` class of the `_hurray` extension (tensor.cpp): a
/// descriptor and one byte view per buffer, over memory it keeps alive.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {
class FileTensor;
}  // namespace hurray

namespace hurray::python {

/// A C-contiguous view of a Python object's memory, held through the buffer
/// protocol (writable when the exporter allows it) until destruction, which
/// needs the GIL.
class HeldBuffer {
public:
    /// Requests the buffer of `obj`; TypeError when it has none, BufferError
    /// when it is not C-contiguous. `what` names it in messages.
    HeldBuffer(const py::handle& obj, std::string_view what);
    /// Releases the buffer (PyBuffer_Release).
    ~HeldBuffer();
    HeldBuffer(const HeldBuffer&) = delete;
    HeldBuffer& operator=(const HeldBuffer&) = delete;
    HeldBuffer(HeldBuffer&&) = delete;
    HeldBuffer& operator=(HeldBuffer&&) = delete;

    /// The exported bytes (empty for an empty buffer).
    [[nodiscard]] std::span<const uint8_t> bytes() const noexcept;
    /// Whether the exporter granted write access.
    [[nodiscard]] bool writable() const noexcept { return writable_; }

private:
    Py_buffer view_{};
    bool held_ = false;
    bool writable_ = false;
};

/// Whether a layout stores only some elements, with index structures (COO,
/// CSR, CSC, CSF, block-paged): NumPy and DLPack get no silent densified copy
/// of those (`to_dense()` makes one on request).
bool is_indexed_layout(const LayoutDescriptor& layout) noexcept;

/// `hurray.Tensor`. Destroyed with the GIL held (it holds Python objects).
class Tensor {
public:
    Tensor() = default;
    ~Tensor();
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    Tensor(Tensor&&) = default;
    Tensor& operator=(Tensor&&) = default;

    /// Checks the buffers against the descriptor (count, sizes; the data rules
    /// when `check_data`), trims each span to its declared size and hands the
    /// tensor to Python.
    static py::object finish(std::unique_ptr<Tensor> t, bool check_data);
    /// A Tensor over a file tensor's buffers (the mapping, kept alive); a
    /// composite head becomes a dense copy of its assembled members.
    static py::object from_file(const FileTensor& ft);

    /// The element type as a `hurray.Dtype`.
    [[nodiscard]] py::object dtype() const;
    /// The device of buffer 0 as a `hurray.Device` (cpu when there is none).
    [[nodiscard]] py::object device() const;
    /// Whether the buffers are CPU memory.
    [[nodiscard]] bool on_cpu() const noexcept;

    TensorDescriptor desc;                            ///< The descriptor.
    std::vector<std::span<const uint8_t>> spans;      ///< One per buffer, exactly its declared size.
    std::vector<bool> writable;                       ///< Per buffer: whether its memory may be written.
    std::vector<std::unique_ptr<HeldBuffer>> held;    ///< Python buffers viewed.
    py::object owner;                                 ///< Kept alive with the tensor (any object).
    std::shared_ptr<const void> native;               ///< C++ memory kept alive (a FileTensor, a vector).
    int64_t device_id = 0;                            ///< Runtime device index (not on the wire).
};

/// Adds `__dlpack__` and `__dlpack_device__` to the class and
/// `from_dlpack` to the module (dlpack.cpp).
void add_dlpack(py::class_<Tensor>& cls, py::module_& m);

/// Adds `__hurray__` to the class and `from_hurray` to the module: the native
/// interchange protocol over the C ABI's buffer list and tensor context
/// (native_protocol.cpp).
void add_native_protocol(py::class_<Tensor>& cls, py::module_& m);

/// Adds `layout`, `quantization`, `to_dense`, `dequantize`, `nnz` and
/// `values` to the class and `_set_inspection_support` to the module
/// (inspect.cpp).
void add_inspection(py::class_<Tensor>& cls, py::module_& m);

}  // namespace hurray::python
