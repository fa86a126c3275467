// SPDX-License-Identifier: Apache-2.0
/// @file
/// Quantization schemes, statistics and shard sections between the core's
/// structs and the package's classes (sections.hpp).

#include "sections.hpp"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common.hpp"
#include "hurray/core/element_type.hpp"

namespace hurray::python {

namespace {

// Set by the package at import (hurray/_quantization.py); strong references
// owned for the life of the process on purpose (see errors.cpp).
PyObject* g_scheme_base = nullptr;      // hurray.Quantization
PyObject* g_make_scheme = nullptr;      // make_scheme(tag, fields dict)
PyObject* g_statistics_cls = nullptr;   // hurray.Statistics
PyObject* g_make_statistics = nullptr;  // make_statistics(mask, nnz, ..., has_inf)
PyObject* g_shard_cls = nullptr;        // hurray.Shard
PyObject* g_make_shard = nullptr;       // make_shard(parent_shape, shard_offset)

void require_registered(const PyObject* slot, const char* what) {
    if (slot == nullptr) {
        throw py::type_error(std::string("hurray: ") + what + " is not registered (import the hurray package)");
    }
}

bool is_instance(const py::handle& obj, PyObject* cls) {
    const int r = PyObject_IsInstance(obj.ptr(), cls);
    if (r < 0) {
        throw py::error_already_set();
    }
    return r == 1;
}

std::optional<uint32_t> optional_index(const py::handle& value) {
    if (value.is_none()) {
        return std::nullopt;
    }
    return value.cast<uint32_t>();
}

py::object optional_index_object(const std::optional<uint32_t>& index) {
    return index ? py::object(py::int_(*index)) : py::object(py::none());
}

}  // namespace

std::optional<QuantizationDescriptor> quantization_from_python(const py::handle& obj) {
    if (obj.is_none()) {
        return std::nullopt;
    }
    require_registered(g_scheme_base, "hurray.Quantization");
    if (!is_instance(obj, g_scheme_base)) {
        raise_kind(PythonError::kInvalidDescriptor,
                   "quantization must be a quantization scheme (hurray.PerTensorAffine, PerChannelAffine, "
                   "PerBlockAffine, NF4 or MXFP), not " + type_name_of(obj));
    }
    const auto tag = obj.attr("tag").cast<int>();
    // A bare hurray.Quantization names a scheme (an unassigned or private one
    // read from a file) without the parameters that would encode it.
    if (!py::hasattr(obj, "_key") || tag < 0x01 || tag > 0x05) {
        raise_kind(PythonError::kUnsupported,
                   "authoring a tensor with quantization " + std::string(py::repr(obj)) +
                       " is not supported: only the assigned schemes (PerTensorAffine, PerChannelAffine, "
                       "PerBlockAffine, NF4, MXFP) carry their parameters");
    }
    QuantizationDescriptor q;
    switch (tag) {
        case 0x01:
            q.scheme = PerTensorAffine{obj.attr("scale").cast<float>(), obj.attr("zero_point").cast<int32_t>()};
            break;
        case 0x02: {
            PerChannelAffine p;
            p.axis = obj.attr("axis").cast<uint32_t>();
            p.scale_buffer_index = obj.attr("scale_buffer_index").cast<uint32_t>();
            p.zero_point_buffer_index = optional_index(obj.attr("zero_point_buffer_index"));
            q.scheme = p;
            break;
        }
        case 0x03: {
            PerBlockAffine p;
            p.axis = obj.attr("axis").cast<uint32_t>();
            p.block_size = obj.attr("block_size").cast<uint32_t>();
            p.scale_buffer_index = obj.attr("scale_buffer_index").cast<uint32_t>();
            p.zero_point_buffer_index = optional_index(obj.attr("zero_point_buffer_index"));
            const std::string name = py::str(obj.attr("scale_type").attr("name"));
            const auto type = type_from_name(name);
            if (!type) {
                raise_kind(PythonError::kInvalidDescriptor, "per_block_affine.scale_type: unknown type " + name);
            }
            p.scale_type = *type;
            q.scheme = p;
            break;
        }
        case 0x04:
            q.scheme = Nf4Quantization{obj.attr("axis").cast<uint32_t>(), obj.attr("block_size").cast<uint32_t>(),
                                       obj.attr("scale_buffer_index").cast<uint32_t>()};
            break;
        default:
            q.scheme = MxfpQuantization{obj.attr("axis").cast<uint32_t>(), obj.attr("block_size").cast<uint32_t>(),
                                        obj.attr("scale_buffer_index").cast<uint32_t>()};
            break;
    }
    return q;
}

std::optional<Statistics> statistics_from_python(const py::handle& obj) {
    if (obj.is_none()) {
        return std::nullopt;
    }
    require_registered(g_statistics_cls, "hurray.Statistics");
    if (!is_instance(obj, g_statistics_cls)) {
        throw py::type_error("statistics must be a hurray.Statistics, not " + type_name_of(obj));
    }
    const py::tuple f = obj.attr("_fields")();
    if (f.size() != 12) {
        raise_kind(PythonError::kInternal, "hurray.Statistics._fields() returned " + std::to_string(f.size()) +
                                             " values, not 12");
    }
    Statistics s;
    s.computed_mask = f[0].cast<uint32_t>();
    s.nnz = f[1].cast<uint64_t>();
    s.sparsity_ratio = f[2].cast<double>();
    s.value_min = f[3].cast<double>();
    s.value_max = f[4].cast<double>();
    s.value_abs_max = f[5].cast<double>();
    s.value_mean = f[6].cast<double>();
    s.value_stddev = f[7].cast<double>();
    s.nm_n = f[8].cast<uint8_t>();
    s.nm_m = f[9].cast<uint8_t>();
    s.has_nan = f[10].cast<bool>();
    s.has_inf = f[11].cast<bool>();
    return s;
}

std::optional<ShardDescriptor> shard_from_python(const py::handle& obj) {
    if (obj.is_none()) {
        return std::nullopt;
    }
    require_registered(g_shard_cls, "hurray.Shard");
    if (!is_instance(obj, g_shard_cls)) {
        throw py::type_error("shard must be a hurray.Shard, not " + type_name_of(obj));
    }
    ShardDescriptor s;
    s.parent_shape = obj.attr("parent_shape").cast<std::vector<uint64_t>>();
    s.shard_offset = obj.attr("shard_offset").cast<std::vector<uint64_t>>();
    return s;
}

std::vector<uint32_t> parameter_buffer_indices(const QuantizationScheme& scheme) {
    std::vector<uint32_t> out;
    auto scale_and_zero = [&out](uint32_t scale, const std::optional<uint32_t>& zero) {
        out.push_back(scale);
        if (zero) {
            out.push_back(*zero);
        }
    };
    if (const auto* p = std::get_if<PerChannelAffine>(&scheme)) {
        scale_and_zero(p->scale_buffer_index, p->zero_point_buffer_index);
    } else if (const auto* b = std::get_if<PerBlockAffine>(&scheme)) {
        scale_and_zero(b->scale_buffer_index, b->zero_point_buffer_index);
    } else if (const auto* n = std::get_if<Nf4Quantization>(&scheme)) {
        out.push_back(n->scale_buffer_index);
    } else if (const auto* x = std::get_if<MxfpQuantization>(&scheme)) {
        out.push_back(x->scale_buffer_index);
    }
    return out;
}

std::optional<py::object> scheme_to_python(const QuantizationScheme& scheme) {
    if (g_make_scheme == nullptr || std::holds_alternative<OpaqueQuantization>(scheme)) {
        return std::nullopt;
    }
    py::dict f;
    if (const auto* t = std::get_if<PerTensorAffine>(&scheme)) {
        f["scale"] = py::float_(static_cast<double>(t->scale));
        f["zero_point"] = py::int_(t->zero_point);
    } else if (const auto* p = std::get_if<PerChannelAffine>(&scheme)) {
        f["axis"] = py::int_(p->axis);
        f["scale_buffer_index"] = py::int_(p->scale_buffer_index);
        f["zero_point_buffer_index"] = optional_index_object(p->zero_point_buffer_index);
    } else if (const auto* b = std::get_if<PerBlockAffine>(&scheme)) {
        f["axis"] = py::int_(b->axis);
        f["block_size"] = py::int_(b->block_size);
        f["scale_buffer_index"] = py::int_(b->scale_buffer_index);
        f["zero_point_buffer_index"] = optional_index_object(b->zero_point_buffer_index);
        f["scale_type"] = py::str(std::string(type_name(b->scale_type)));
    } else if (const auto* n = std::get_if<Nf4Quantization>(&scheme)) {
        f["axis"] = py::int_(n->axis);
        f["block_size"] = py::int_(n->block_size);
        f["scale_buffer_index"] = py::int_(n->scale_buffer_index);
    } else if (const auto* x = std::get_if<MxfpQuantization>(&scheme)) {
        f["axis"] = py::int_(x->axis);
        f["block_size"] = py::int_(x->block_size);
        f["scale_buffer_index"] = py::int_(x->scale_buffer_index);
    }
    return py::reinterpret_borrow<py::object>(g_make_scheme)(scheme_tag(scheme), f);
}

void add_sections(py::class_<Tensor>& cls, py::module_& m) {
    m.def(
        "_set_quantization_support",
        [](const py::object& scheme_base, const py::object& make_scheme, const py::object& statistics_cls,
           const py::object& make_statistics, const py::object& shard_cls, const py::object& make_shard) {
            replace_kept_object(g_scheme_base, scheme_base);
            replace_kept_object(g_make_scheme, make_scheme);
            replace_kept_object(g_statistics_cls, statistics_cls);
            replace_kept_object(g_make_statistics, make_statistics);
            replace_kept_object(g_shard_cls, shard_cls);
            replace_kept_object(g_make_shard, make_shard);
        },
        py::arg("scheme_base"), py::arg("make_scheme"), py::arg("statistics_cls"), py::arg("make_statistics"),
        py::arg("shard_cls"), py::arg("make_shard"));
    cls.def_property_readonly(
           "statistics",
           [](const Tensor& t) -> py::object {
               if (!t.desc.statistics) {
                   return py::none();
               }
               require_registered(g_make_statistics, "hurray.Statistics");
               const Statistics& s = *t.desc.statistics;
               return py::reinterpret_borrow<py::object>(g_make_statistics)(
                   s.computed_mask, s.nnz, s.sparsity_ratio, s.value_min, s.value_max, s.value_abs_max, s.value_mean,
                   s.value_stddev, s.nm_n, s.nm_m, s.has_nan, s.has_inf);
           },
           "The statistics section as a hurray.Statistics (fields never computed read as None), or None")
        .def_property_readonly(
            "shard",
            [](const Tensor& t) -> py::object {
                if (!t.desc.shard) {
                    return py::none();
                }
                require_registered(g_make_shard, "hurray.Shard");
                return py::reinterpret_borrow<py::object>(g_make_shard)(py::tuple(py::cast(t.desc.shard->parent_shape)),
                                                                        py::tuple(py::cast(t.desc.shard->shard_offset)));
            },
            "The shard section as a hurray.Shard (parent_shape, shard_offset), or None");
}

}  // namespace hurray::python
