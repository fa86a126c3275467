// SPDX-License-Identifier: Apache-2.0
/// @file
/// Read-only inspection of any `hurray.Tensor`: its layout and quantization
/// (as `hurray.Layout` / `hurray.Quantization` objects built by the package,
/// registered with `_set_inspection_support`), `to_dense()` / `dequantize()`
/// (every element as a float32 numpy array, by the core's `to_float32`), and
/// the sparse components `nnz` and `values`.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"
#include "layout.hpp"
#include "sections.hpp"
#include "tensor.hpp"

namespace hurray::python {

namespace {

// make_layout(tag, core_name, buffer_count, params) and
// make_quantization(tag, scheme_name), set by the package at import; strong
// references owned for the life of the process on purpose (see errors.cpp).
PyObject* g_make_layout = nullptr;
PyObject* g_make_quantization = nullptr;

/// The stored-element count of a sparse layout, or nothing.
std::optional<uint64_t> sparse_nnz(const LayoutDescriptor& layout) noexcept {
    if (const auto* coo = std::get_if<CooLayout>(&layout)) {
        return coo->nnz;
    }
    if (const auto* csr = std::get_if<CsrLayout>(&layout)) {
        return csr->nnz;
    }
    if (const auto* csc = std::get_if<CscLayout>(&layout)) {
        return csc->nnz;
    }
    if (const auto* csf = std::get_if<CsfLayout>(&layout)) {
        return csf->nnz;
    }
    return std::nullopt;
}

py::object layout_of(const Tensor& t) {
    if (g_make_layout == nullptr) {
        throw py::type_error("hurray: layouts are not registered (import the hurray package)");
    }
    return layout_to_python(t.desc, py::handle(g_make_layout));
}

py::object quantization_of(const Tensor& t) {
    if (!t.desc.quantization) {
        return py::none();
    }
    // An assigned scheme comes back as its class (hurray.PerChannelAffine, ...);
    // an opaque one as a hurray.Quantization naming it.
    if (auto scheme = scheme_to_python(t.desc.quantization->scheme)) {
        return *scheme;
    }
    if (g_make_quantization == nullptr) {
        throw py::type_error("hurray: quantization classes are not registered (import the hurray package)");
    }
    const uint8_t tag = scheme_tag(t.desc.quantization->scheme);
    return py::reinterpret_borrow<py::object>(g_make_quantization)(tag, std::string(scheme_name(tag)));
}

/// Every element as float32 (dequantized, densified, converted), a new array.
py::array to_float32_array(const Tensor& t, const char* what) {
    std::optional<Error> error;
    std::vector<float> values;
    {
        const py::gil_scoped_release release;
        auto view = TensorView::make(t.desc, std::span<const std::span<const uint8_t>>(t.spans));
        if (!view) {
            error = view.error();
        } else if (auto v = to_float32(*view); !v) {
            error = v.error();
        } else {
            values = std::move(*v);
        }
    }
    if (error) {
        raise_error(*error, PythonSite::kTensor, what);
    }
    return float_array(std::move(values), t.desc.shape, PythonError::kInternal, what);
}

/// A sparse tensor's stored-element count; AttributeError for other layouts.
uint64_t nnz_of(const Tensor& t) {
    const auto nnz = sparse_nnz(t.desc.layout);
    if (!nnz) {
        throw py::attribute_error("nnz: a " + std::string(python_layout_name(t.desc.layout)) +
                                  " tensor is not sparse (COO, CSR, CSC, CSF)");
    }
    return *nnz;
}

/// Where buffer `index` of `t` lives, so a view of it keeps the parent's device
/// label (the default placement, cpu, when there is no such buffer).
BufferPlacement placement_of(const Tensor& t, size_t index) noexcept {
    BufferPlacement placement;
    if (index < t.desc.buffers.size()) {
        placement.device_tag = t.desc.buffers[index].device_tag;
        placement.memory_class = t.desc.buffers[index].memory_class;
    }
    return placement;
}

/// A sparse tensor's values (buffer 0, `nnz` elements) as a 1-D Tensor viewing
/// the same memory; AttributeError for other layouts.
py::object values_of(const py::object& self) {
    const auto& t = self.cast<const Tensor&>();
    const uint64_t nnz = nnz_of(t);
    std::optional<Result<TensorDescriptor>> d;
    {
        const py::gil_scoped_release release;
        d.emplace(make_dense(t.desc.element_type, Shape{nnz}, placement_of(t, 0)));
    }
    if (!*d) {
        raise_error(d->error(), PythonSite::kTensor, "values");
    }
    auto out = std::make_unique<Tensor>();
    out->desc = std::move(d->value());
    out->spans.push_back(t.spans.empty() ? std::span<const uint8_t>() : t.spans[0]);
    out->writable.push_back(!t.writable.empty() && t.writable[0]);
    out->owner = self;  // the parent keeps the memory alive
    out->device_id = t.device_id;
    return Tensor::finish(std::move(out), false);
}

/// Buffer `index` of a tensor with layout `Want` as a uint64 Tensor of
/// `shape` viewing the same memory (the parent kept alive); AttributeError
/// naming `what` for other layouts.
template <typename Want>
py::object index_component(const py::object& self, size_t index, const char* what) {
    const auto& t = self.cast<const Tensor&>();
    if (!std::holds_alternative<Want>(t.desc.layout)) {
        throw py::attribute_error(std::string(what) + ": a " + std::string(python_layout_name(t.desc.layout)) +
                                  " tensor has no such component");
    }
    const uint64_t nnz = *sparse_nnz(t.desc.layout);
    Shape shape;
    if constexpr (std::is_same_v<Want, CooLayout>) {
        shape = {nnz, t.desc.rank()};
    } else if (index == 1) {
        shape = {nnz};
    } else {
        // CSR row_ptr: rows + 1; CSC col_ptr: columns + 1.
        const size_t axis = std::is_same_v<Want, CsrLayout> ? 0 : 1;
        if (axis >= t.desc.shape.size()) {
            raise_kind(PythonError::kInternal, std::string(what) + ": the tensor has rank " +
                                                 std::to_string(t.desc.shape.size()) + ", not 2");
        }
        const uint64_t dim = t.desc.shape[axis];
        if (dim == std::numeric_limits<uint64_t>::max()) {
            raise_kind(PythonError::kUnsupported, std::string(what) + ": the dimension is dynamic");
        }
        shape = {dim + 1};
    }
    std::optional<Result<TensorDescriptor>> d;
    {
        const py::gil_scoped_release release;
        d.emplace(make_dense(ElementType::kUInt64, std::move(shape), placement_of(t, index)));
    }
    if (!*d) {
        raise_error(d->error(), PythonSite::kTensor, what);
    }
    auto out = std::make_unique<Tensor>();
    out->desc = std::move(d->value());
    out->spans.push_back(index < t.spans.size() ? t.spans[index] : std::span<const uint8_t>());
    out->writable.push_back(index < t.writable.size() && t.writable[index]);
    out->owner = self;
    out->device_id = t.device_id;
    return Tensor::finish(std::move(out), false);
}

}  // namespace

void add_inspection(py::class_<Tensor>& cls, py::module_& m) {
    m.def(
        "_set_inspection_support",
        [](const py::object& make_layout, const py::object& make_quantization) {
            replace_kept_object(g_make_layout, make_layout);
            replace_kept_object(g_make_quantization, make_quantization);
        },
        py::arg("make_layout"), py::arg("make_quantization"));
    cls.def_property_readonly("layout", &layout_of, "The memory layout: a new hurray.Layout subclass instance (RowMajorLayout(), CsrLayout(nnz=2), "
                                       "TiledLayout(...), ...) carrying the layout's parameters; read-only")
        .def_property_readonly("quantization", &quantization_of,
                               "None, or the quantization scheme: a hurray.PerTensorAffine, PerChannelAffine, PerBlockAffine, NF4 "
                               "or MXFP (each a hurray.Quantization), or a bare hurray.Quantization for a private scheme")
        .def(
            "to_dense", [](const Tensor& t) { return to_float32_array(t, "to_dense"); },
            "Every logical element as a new float32 numpy array, row-major: densified (sparse, strided, tiled, "
            "paged layouts), dequantized, converted from any element type")
        .def(
            "dequantize", [](const Tensor& t) { return to_float32_array(t, "dequantize"); },
            "Same as to_dense(): the tensor's real values as a new float32 numpy array")
        .def_property_readonly("nnz", &nnz_of, "Stored elements of a sparse tensor (AttributeError otherwise)")
        .def_property_readonly(
            "indices", [](const py::object& self) { return index_component<CooLayout>(self, 1, "indices"); },
            "COO: the coordinates, a uint64 Tensor (nnz, rank) over buffer 1")
        .def_property_readonly(
            "col_indices", [](const py::object& self) { return index_component<CsrLayout>(self, 1, "col_indices"); },
            "CSR: the column of each value, a uint64 Tensor over buffer 1")
        .def_property_readonly(
            "row_ptr", [](const py::object& self) { return index_component<CsrLayout>(self, 2, "row_ptr"); },
            "CSR: where each row starts, a uint64 Tensor (rows + 1) over buffer 2")
        .def_property_readonly(
            "row_indices", [](const py::object& self) { return index_component<CscLayout>(self, 1, "row_indices"); },
            "CSC: the row of each value, a uint64 Tensor over buffer 1")
        .def_property_readonly(
            "col_ptr", [](const py::object& self) { return index_component<CscLayout>(self, 2, "col_ptr"); },
            "CSC: where each column starts, a uint64 Tensor (columns + 1) over buffer 2")
        .def_property_readonly("values", &values_of,
                               "A sparse tensor's stored values as a 1-D Tensor over the same memory "
                               "(AttributeError otherwise)");
}

}  // namespace hurray::python
