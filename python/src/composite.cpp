// SPDX-License-Identifier: Apache-2.0
/// @file
/// Helpers of `hurray.Composite` (python/hurray/_composite.py):
///  - `_wire_materialize_composite(head, members)`: the merged logical view of
///    a partition or overlay composite given as its encoded head and its
///    direct members' (descriptor bytes, buffers), as the bytes of a dense
///    row-major tensor of the head's type (core `materialize_composite`).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common.hpp"
#include "wire.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::python {

namespace {

/// `_wire_materialize_composite(head, members)`: a uint8 numpy array holding
/// the head's logical tensor (storage bytes of its element type, row-major).
py::array materialize(const py::bytes& head, const py::sequence& members) {
    const TensorDescriptor head_desc = decode_for_write(head, "composite head");
    const auto* layout = std::get_if<CompositeLayout>(&head_desc.layout);
    if (layout == nullptr) {
        raise_kind(PythonError::kInvalidArgument, "composite head: its layout is not composite");
    }
    if (layout->rule != CompositionRule::kPartition && layout->rule != CompositionRule::kOverlay) {
        raise_kind(PythonError::kUnsupported, "Composite.to_dense: only partition and overlay composites have a merged "
                                            "view (the members of a group are independent tensors)");
    }
    std::vector<PreparedTensor> prepared;
    prepared.reserve(static_cast<size_t>(py::len(members)));
    for (const py::handle m : members) {
        const std::string what = "composite member " + std::to_string(prepared.size());
        const auto pair = py::reinterpret_borrow<py::sequence>(m);
        if (py::len(pair) != 2) {
            throw py::type_error(what + ": expected a (descriptor, buffers) pair");
        }
        PreparedTensor p = prepare_tensor(py::bytes(pair[0]), py::sequence(pair[1]), what);
        if (std::holds_alternative<CompositeLayout>(p.descriptor.layout)) {
            raise_kind(PythonError::kUnsupported, what + " is itself a composite; nested composites are not assembled "
                                                       "(assemble the inner composite on its own)");
        }
        prepared.push_back(std::move(p));
    }
    std::optional<Error> error;
    std::unique_ptr<std::vector<uint8_t>> bytes;
    {
        const py::gil_scoped_release release;
        std::vector<TensorView> views;
        views.reserve(prepared.size());
        for (size_t i = 0; i < prepared.size() && !error; ++i) {
            auto v = TensorView::make(prepared[i].descriptor, prepared[i].spans);
            if (!v) {
                error = v.error().with_context({.prefix = "composite member " + std::to_string(i)});
            } else {
                views.push_back(std::move(*v));
            }
        }
        if (!error) {
            auto merged = materialize_composite(head_desc, views);
            if (!merged) {
                error = merged.error();
            } else {
                bytes = std::make_unique<std::vector<uint8_t>>(std::move(*merged));
            }
        }
    }
    if (error) {
        raise_error(*error, PythonSite::kTensor, "Composite.to_dense");
    }
    const auto n = static_cast<py::ssize_t>(bytes->size());
    const uint8_t* data = bytes->data();
    auto* keep = bytes.release();
    const py::capsule owner(keep, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
    // SAFETY: `data` points at the `n` bytes of the vector that `owner` (the
    // array's base) deletes only when the array and its views are gone.
    return py::array(py::dtype("uint8"), {n}, {}, data, owner);
}

}  // namespace

void register_composite(py::module_& m) {
    m.def("_wire_materialize_composite", &materialize, py::arg("head"), py::arg("members"),
          "The merged view of a partition or overlay composite as a uint8 array of storage bytes");
}

}  // namespace hurray::python
