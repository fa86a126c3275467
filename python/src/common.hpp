// SPDX-License-Identifier: Apache-2.0
/// @file
/// Shared helpers of the `_hurray` extension: raising the package's exception
/// classes from a `hurray::Error`, and converting KV metadata both ways.
#pragma once

#include <pybind11/pybind11.h>

#include <pybind11/numpy.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/element_type.hpp"
#include "hurray/core/error_table.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_ref.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray {
class FileTensor;
}  // namespace hurray

namespace hurray::python {

namespace py = pybind11;

// The package's exception classes are core's `PythonError` (hurray/core/error_table.hpp:
// one enum for the table and this module; kInternal is raised by the module itself),
// and where an error happened is its `PythonSite` (kOpen, kTensor, kSave here; the
// stream sites in stream.cpp).

/// The name of `obj`'s Python type (`type(obj).__name__`), for messages. Needs the GIL.
inline std::string type_name_of(const py::handle& obj) {
    return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

/// Whether `code` says "not supported" (a version, tag or scheme this build
/// does not know): `UnsupportedError` (hurray/core/error_table.hpp).
bool is_unsupported(ErrorCode code) noexcept;

/// The class of `code` at `site`, from hurray/core/error_table.hpp: the one
/// table every binding presents errors by.
PythonError error_kind(ErrorCode code, PythonSite site) noexcept;


/// What a binding knows of where an error happened.
struct Site {
    /// Put before the message, then ": " (nothing when empty); left out when it
    /// is `file` and the error names a file itself (Error::file).
    std::string_view label{};
    /// The file being read or written: the exception's `file` when the error
    /// names none.
    std::string_view file{};
    /// The tensor's name: the exception's `tensor` when the error names none.
    std::string_view tensor{};
};

/// Raises the exception for `error`, its message put after `site.label`, with
/// attributes `code` (the error code's name), `offset` (the byte offset, or
/// None), `file`, `tensor` and `field` (each None when unknown). Needs the GIL.
[[noreturn]] void raise_error(const Error& error, PythonSite where, const Site& site);

/// As `raise_error`, with the class chosen by the caller (a stream's state
/// decides some: an input that ended is a `StreamError`).
[[noreturn]] void raise_error_as(PythonError kind, const Error& error, const Site& site);

/// Same as `raise_error(error, where, Site{.label = context})`.
[[noreturn]] void raise_error(const Error& error, PythonSite where, std::string_view context);

/// Raises `kind` with `message` (attributes `code` and `offset` are None).
[[noreturn]] void raise_kind(PythonError kind, const std::string& message);

/// Keeps `value` in `slot`, a strong reference the extension holds for its whole
/// life (a callback or class registered from Python), releasing what `slot` held
/// before, after the new reference is taken (so replacing an object by itself is
/// safe). Needs the GIL.
/// @code
/// replace_kept_object(g_make_layout, make_layout);
/// @endcode
inline void replace_kept_object(PyObject*& slot, const py::handle& value) {
    PyObject* old = slot;
    slot = value.inc_ref().ptr();
    Py_XDECREF(old);
}

/// Registers the classes: a dict from the names "FileError",
/// "InvalidDescriptorError", "BufferError", "UnsupportedError", "StreamError",
/// "InvalidArgumentError", "InternalError" to classes.
void set_error_classes(const py::dict& classes);

/// Builds KV metadata from a Python mapping of str to str, int, float, bool,
/// bytes, or a list/tuple of one of those (TypeError, OverflowError or
/// InvalidArgumentError naming the key otherwise).
KvMetadata kv_from_python(const py::handle& mapping);

/// A dict of the file's KV metadata (arrays become lists, bytes become bytes).
py::dict kv_to_python(const KvMetadata& kv);

/// The NumPy dtype name of a Hurray element type, or nothing when NumPy has
/// no such type (bfloat16, float8, sub-byte types, ...). arrays.cpp.
std::optional<const char*> numpy_name(ElementType t) noexcept;

/// A float32 array of shape `dims` that takes over `values` (no copy; the
/// array's base owns them). Raises `mismatch` when their count is not the
/// shape's, `BufferError` when the shape is too large; `context` starts the
/// message. Needs the GIL. arrays.cpp.
py::array float_array(std::vector<float>&& values, std::span<const uint64_t> dims, PythonError mismatch,
                      const std::string& context);

/// Registers `hurray.Tensor` and its helpers (tensor.cpp).
void register_tensor(py::module_& m);

/// A `hurray.Tensor` over a file tensor's memory (zero-copy; keeps the mapping
/// alive). Needs the GIL.
py::object tensor_from_file(const FileTensor& ft);

/// A `TensorRef` over a `hurray.Tensor`'s descriptor and buffers (not copied:
/// `obj` must outlive it), or nothing when `obj` is not a Tensor.
std::optional<TensorRef> tensor_ref_of(const py::handle& obj);

/// What `info(name)` says about a tensor from its descriptor alone: name,
/// dtype, numpy_dtype, shape (None for a dynamic dimension), layout,
/// quantization, nbytes (the sum of its buffer sizes) and buffer_count.
/// Needs the GIL. module.cpp.
py::dict describe_tensor(std::string_view name, const TensorDescriptor& d);

/// Adds `convert`, `detect_format` and the `_Source` class (hurray::convert:
/// SafeTensors, GGUF and NumPy files) to the module (convert.cpp).
void register_convert(py::module_& m);

/// Adds the streaming classes `_StreamReader` / `_StreamWriter` and the
/// `_wire_*` descriptor helpers (stream.cpp) to the module.
void register_stream(py::module_& m);

/// Adds `_wire_materialize_composite` (the merged view of a composite given
/// as wire pieces, for `hurray.Composite.to_dense`) to the module (composite.cpp).
void register_composite(py::module_& m);

}  // namespace hurray::python
