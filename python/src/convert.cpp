// SPDX-License-Identifier: Apache-2.0
/// @file
/// hurray::convert in the `_hurray` extension: `convert` (any supported file to
/// another format, atomically, the GIL released), `detect_format`, and
/// `_Source`, a read-only view of a SafeTensors, GGUF, .npy, .npz or HRRYFILE
/// file (names, descriptors, KV metadata, tensors) without converting it.
/// Without hurray::convert in the build (HURRAY_PY_HAVE_CONVERT undefined)
/// the same names exist and raise UnsupportedError.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "tensor.hpp"

#ifdef HURRAY_PY_HAVE_CONVERT
#include <array>
#include <fstream>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/format.hpp"
#include "hurray/convert/safetensors.hpp"
#include "hurray/convert/tensor_source.hpp"
#endif

namespace hurray::python {

namespace {

#ifndef HURRAY_PY_HAVE_CONVERT

[[noreturn]] void not_built() {
    raise_kind(PythonError::kUnsupported, "this hurray module was built without hurray::convert (HURRAY_BUILD_CONVERT=OFF)");
}

#else

namespace fmt = hurray::convert;

/// The Format a `to=` argument names (None: from the extension).
fmt::Format format_arg(const std::optional<std::string>& to) {
    if (!to) {
        return fmt::Format::kUnknown;
    }
    auto parsed = fmt::parse_format_name(*to);
    if (!parsed) {
        raise_error(parsed.error(), PythonSite::kSave, "to");
    }
    return *parsed;
}

/// The name of `dtype`: its `name` attribute (numpy dtypes, hurray.Dtype),
/// its `__name__` (numpy scalar types) or its str().
py::object dtype_name_of(const py::object& dtype) {
    if (py::hasattr(dtype, "name")) {
        return dtype.attr("name");  // numpy.dtype, hurray.Dtype
    }
    if (py::hasattr(dtype, "__name__")) {
        return dtype.attr("__name__");  // numpy.float16 and the like
    }
    return py::str(dtype);
}

/// The element type a `dtype=` argument names (None: float32): a name such as
/// "float16", or an object whose str() is one (numpy dtypes, hurray.Dtype).
ElementType dtype_arg(const py::object& dtype) {
    if (dtype.is_none()) {
        return ElementType::kFloat32;
    }
    const std::string name = py::str(dtype_name_of(dtype));
    const auto type = type_from_name(name);
    if (!type || (*type != ElementType::kFloat32 && *type != ElementType::kFloat16 &&
                  *type != ElementType::kBFloat16)) {
        raise_kind(PythonError::kInvalidArgument,
                   "dtype: '" + name + "' is not float32, float16 or bfloat16 (the types of dequantized tensors)");
    }
    return *type;
}

/// Called from the converting thread after each chunk: takes the GIL, calls the
/// Python progress callable (when given), then runs the signal handlers (Ctrl-C
/// raises KeyboardInterrupt there). The first exception, from either, cancels the
/// conversion: it is kept, and re-raised once the conversion has cleaned up.
struct PythonProgress {
    py::object callable;
    std::optional<py::error_already_set> error;

    bool operator()(uint64_t done, uint64_t total) {
        const py::gil_scoped_acquire gil;
        if (error) {
            return false;
        }
        try {
            if (callable) {
                callable(done, total);
            }
            if (PyErr_CheckSignals() != 0) {
                throw py::error_already_set();
            }
        } catch (py::error_already_set& e) {
            error.emplace(std::move(e));
            return false;
        }
        return true;
    }
};

py::dict convert(const std::filesystem::path& src, const std::filesystem::path& dst, const std::optional<std::string>& to,
                 bool dequantize, const py::object& dtype, bool verify, bool durable, const py::object& progress) {
    fmt::ConvertOptions options;
    options.to = format_arg(to);
    options.dequantize = dequantize;
    options.dequantize_type = dtype_arg(dtype);
    options.verify = verify;
    options.durable = durable;
    auto reporter = std::make_shared<PythonProgress>();
    if (!progress.is_none()) {
        if (PyCallable_Check(progress.ptr()) == 0) {
            throw py::type_error("progress must be a callable (done_bytes, total_bytes) or None");
        }
        reporter->callable = progress;
    }
    // Always: Ctrl-C cancels a conversion, with or without a progress callable.
    options.progress = [reporter](uint64_t done, uint64_t total) { return (*reporter)(done, total); };
    std::optional<Result<fmt::ConvertReport>> done;
    {
        const py::gil_scoped_release release;
        done.emplace(fmt::convert_file(src, dst, options));
        options.progress = nullptr;  // drops its share of the reporter without touching Python
    }
    if (reporter->error) {
        std::optional<py::error_already_set> e = std::move(reporter->error);
        reporter->callable = py::object();
        throw std::move(*e);
    }
    reporter->callable = py::object();
    if (!*done) {
        raise_error(done->error(), PythonSite::kSave, "");
    }
    const fmt::ConvertReport& r = done->value();
    py::dict out;
    out["source_format"] = py::str(std::string(fmt::format_name(r.from)));
    out["format"] = py::str(std::string(fmt::format_name(r.to)));
    out["tensors"] = py::int_(r.tensors);
    out["bytes"] = py::int_(r.data_bytes);
    out["verified"] = py::bool_(r.verified);
    return out;
}

std::string detect_format(const std::filesystem::path& path) {
    std::array<uint8_t, fmt::kDetectHeadBytes> head{};
    std::optional<uint64_t> size;
    size_t n = 0;
    bool opened = false;
    {
        const py::gil_scoped_release release;
        std::ifstream in(path, std::ios::binary);
        if (in) {
            opened = true;
            // SAFETY: reads at most head.size() bytes into the array.
            in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
            n = static_cast<size_t>(in.gcount());
            std::error_code ec;
            const auto s = std::filesystem::file_size(path, ec);
            if (!ec) {
                size = s;
            }
        }
    }
    if (!opened) {
        raise_error(Error(ErrorCode::kIoError, "cannot open the file"), PythonSite::kOpen, Site{.label = path.string(), .file = path.string()});
    }
    return std::string(fmt::format_name(fmt::detect_format(std::span<const uint8_t>(head.data(), n), size)));
}

/// A tensor name as a Python str. Names are UTF-8, but a GGUF reader passes
/// on whatever bytes the file holds: bytes that are not UTF-8 come back as
/// lone surrogates ("surrogateescape", as os.fsdecode does), so that
/// name_arg() turns the str back into the same bytes.
py::str name_to_python(const std::string& name) {
    PyObject* s = PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "surrogateescape");
    if (s == nullptr) {
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::str>(s);
}

/// The bytes of a name given as a str (name_to_python's inverse).
std::string name_arg(const py::str& name) {
    const auto bytes = py::reinterpret_steal<py::object>(
        PyUnicode_AsEncodedString(name.ptr(), "utf-8", "surrogateescape"));
    if (!bytes) {
        throw py::error_already_set();
    }
    return std::string(py::bytes(bytes));
}

/// An opened TensorSource (`hurray.open_source`). Closing drops the handle;
/// tensors handed out keep the source alive on their own.
class Source {
public:
    static Source open(const std::filesystem::path& path) {
        std::optional<Result<std::unique_ptr<fmt::TensorSource>>> opened;
        {
            const py::gil_scoped_release release;
            opened.emplace(fmt::open_source(path));
        }
        if (!*opened) {
            raise_error(opened->error(), PythonSite::kOpen, Site{.label = path.string(), .file = path.string()});
        }
        Source s;
        s.source_ = std::shared_ptr<const fmt::TensorSource>(std::move(opened->value()));
        s.path_ = path.string();
        return s;
    }

    void close() { source_.reset(); }
    [[nodiscard]] bool closed() const { return !source_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string format() const { return std::string(fmt::format_name(get().format())); }
    [[nodiscard]] size_t size() const { return get().tensor_count(); }
    [[nodiscard]] bool contains(const py::str& name) const { return get().find(name_arg(name)).has_value(); }

    [[nodiscard]] py::list keys() const {
        const fmt::TensorSource& s = get();
        py::list out;
        for (size_t i = 0; i < s.tensor_count(); ++i) {
            out.append(name_to_python(s.tensor(i).name));
        }
        return out;
    }

    [[nodiscard]] py::dict metadata() const { return kv_to_python(get().kv()); }

    [[nodiscard]] py::dict info(const py::str& key) const {
        const fmt::TensorSource& s = get();
        const size_t i = index_of(s, key);
        py::dict out = describe_tensor("", s.tensor(i).descriptor);
        out["name"] = key;
        return out;
    }

    /// The tensor as a `hurray.Tensor`: zero-copy over the source's mapping
    /// where it has a view of a buffer, a copy read in chunks otherwise.
    [[nodiscard]] py::object tensor(const py::str& key) const {
        const std::shared_ptr<const fmt::TensorSource> s = source();
        const size_t i = index_of(*s, key);
        const std::string name = py::str(py::repr(key));
        const fmt::SourceTensor& st = s->tensor(i);
        const std::string context = path_ + ": tensor " + name;
        if (st.descriptor.buffers.empty()) {
            raise_kind(PythonError::kUnsupported,
                       context + ": a composite head owns no buffers; open the HRRYFILE with hurray.open to assemble it");
        }
        struct Keep {
            std::shared_ptr<const fmt::TensorSource> source;
            std::vector<std::vector<uint8_t>> copies;
        };
        auto keep = std::make_shared<Keep>();
        keep->source = s;
        auto t = std::make_unique<Tensor>();
        t->desc = st.descriptor;
        std::optional<Error> error;
        {
            const py::gil_scoped_release release;
            keep->copies.reserve(st.descriptor.buffers.size());
            for (size_t b = 0; b < st.descriptor.buffers.size() && !error; ++b) {
                if (const auto view = s->view(i, b)) {
                    t->spans.push_back(*view);
                    continue;
                }
                std::vector<uint8_t>& copy = keep->copies.emplace_back(st.descriptor.buffers[b].byte_size);
                if (auto r = s->read(i, b, 0, copy); !r) {
                    error = r.error();
                }
                t->spans.emplace_back(copy);
            }
        }
        if (error) {
            raise_error(*error, PythonSite::kTensor, context);
        }
        t->writable.assign(t->spans.size(), false);
        t->native = std::move(keep);
        // The readers checked the spans against the file; the data rules are
        // run once more here (the bytes may have been transformed).
        return Tensor::finish(std::move(t), true);
    }

private:
    [[nodiscard]] const std::shared_ptr<const fmt::TensorSource>& source() const {
        if (!source_) {
            throw py::value_error("I/O operation on a closed hurray source: " + path_);
        }
        return source_;
    }
    [[nodiscard]] const fmt::TensorSource& get() const { return *source(); }

    static size_t index_of(const fmt::TensorSource& s, const py::str& key) {
        const auto found = s.find(name_arg(key));
        if (!found) {
            PyErr_SetObject(PyExc_KeyError, key.ptr());
            throw py::error_already_set();
        }
        return *found;
    }

    std::shared_ptr<const fmt::TensorSource> source_;
    std::string path_;
};

#endif

}  // namespace

void register_convert(py::module_& m) {
#ifdef HURRAY_PY_HAVE_CONVERT
    m.attr("_have_convert") = true;
    m.def("convert", &convert, py::arg("src"), py::arg("dst"), py::arg("to") = py::none(),
          py::arg("dequantize") = false, py::arg("dtype") = py::none(), py::arg("verify") = false,
          py::arg("durable") = true, py::arg("progress") = py::none(),
          "Converts a SafeTensors, GGUF, .npy, .npz or HRRYFILE file to another format, atomically");
    m.def("detect_format", &detect_format, py::arg("path"),
          "The format of a file from its first bytes: hrryfile, safetensors, gguf, npy, npz or unknown");
    py::class_<Source>(m, "_Source", "A read-only view of a SafeTensors, GGUF, NumPy or HRRYFILE file")
        .def_property_readonly("path", &Source::path)
        .def_property_readonly("closed", &Source::closed)
        .def_property_readonly("format", &Source::format)
        .def("keys", &Source::keys)
        .def("info", &Source::info, py::arg("name"))
        .def("metadata", &Source::metadata)
        .def("tensor", &Source::tensor, py::arg("name"))
        .def("close", &Source::close)
        .def("__len__", &Source::size)
        .def("__contains__", &Source::contains);
    m.def("open_source", &Source::open, py::arg("path"));
    m.def(
        "_safetensors_dtype_names",
        [] {
            // From hurray::convert' own table, so that Python never retypes it.
            py::dict out;
            for (unsigned tag = 0; tag <= 0xFFU; ++tag) {
                const auto type = static_cast<ElementType>(tag);
                const std::string_view name = fmt::safetensors_dtype_name(type);
                if (!name.empty()) {
                    out[py::str(std::string(type_name(type)))] = py::str(std::string(name));
                }
            }
            return out;
        },
        "The SafeTensors dtype name of each element type SafeTensors has, keyed by Hurray's type name");
#else
    m.attr("_have_convert") = false;
    m.def("convert", [](const py::args&, const py::kwargs&) { not_built(); });
    m.def("detect_format", [](const py::args&) { not_built(); });
    m.def("open_source", [](const py::args&) { not_built(); });
#endif
}

}  // namespace hurray::python
