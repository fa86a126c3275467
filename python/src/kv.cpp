// SPDX-License-Identifier: Apache-2.0
/// @file
/// KV metadata between Python objects and `hurray::KvMetadata`.
///
/// Python to Hurray: str -> string, bool -> bool, int -> int64 (uint64 when
/// above INT64_MAX), float -> float64, bytes/bytearray/memoryview -> bytes, a
/// list or tuple -> an array of the type of its first element (an int array
/// is uint64 when a value is above INT64_MAX, float arrays accept ints, an
/// empty list is an empty int64 array). Hurray to Python: the reverse, arrays
/// as lists.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"

namespace hurray::python {

namespace {

enum class Scalar { kString, kBool, kInt, kFloat, kBytes, kOther };

Scalar classify(const py::handle& v) {
    if (PyBool_Check(v.ptr())) {
        return Scalar::kBool;
    }
    if (PyUnicode_Check(v.ptr())) {
        return Scalar::kString;
    }
    if (PyLong_Check(v.ptr())) {
        return Scalar::kInt;
    }
    if (PyFloat_Check(v.ptr())) {
        return Scalar::kFloat;
    }
    if (PyBytes_Check(v.ptr()) || PyByteArray_Check(v.ptr()) || PyMemoryView_Check(v.ptr())) {
        return Scalar::kBytes;
    }
    return Scalar::kOther;
}

std::vector<uint8_t> to_byte_vector(const py::handle& v) {
    // bytes(v) copies any buffer object (bytes, bytearray, memoryview).
    const auto b = py::reinterpret_steal<py::bytes>(PyBytes_FromObject(v.ptr()));
    if (!b) {
        throw py::error_already_set();
    }
    const std::string_view s = b;
    return {s.begin(), s.end()};
}

/// An int as int64 (`first`) or, when above INT64_MAX and within uint64, as
/// uint64 (`second` true).
std::pair<uint64_t, bool> int_value(const py::handle& v, const std::string& key) {
    int overflow = 0;
    const long long signed_value = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0) {
        if (signed_value == -1 && PyErr_Occurred() != nullptr) {
            throw py::error_already_set();
        }
        return {static_cast<uint64_t>(signed_value), false};
    }
    if (overflow > 0) {
        const unsigned long long unsigned_value = PyLong_AsUnsignedLongLong(v.ptr());
        if (PyErr_Occurred() == nullptr) {
            return {unsigned_value, true};
        }
        PyErr_Clear();
    }
    PyErr_Format(PyExc_OverflowError, "kv '%s': integer does not fit int64 or uint64", key.c_str());
    throw py::error_already_set();
}

KvValue list_value(const py::sequence& seq, const std::string& key) {
    const size_t n = py::len(seq);
    if (n == 0) {
        return KvValue::int64_array({});
    }
    const Scalar kind = classify(seq[0]);
    auto mismatch = [&](const py::handle& item, size_t i) {
        throw py::type_error("kv '" + key + "': list element " + std::to_string(i) + " is a " + type_name_of(item) +
                             "; a list holds one type (str, bool, int, float or bytes)");
    };
    switch (kind) {
        case Scalar::kString: {
            std::vector<std::string> out;
            out.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const py::handle item = seq[i];
                if (classify(item) != Scalar::kString) {
                    mismatch(item, i);
                }
                out.push_back(item.cast<std::string>());
            }
            return KvValue::string_array(std::move(out));
        }
        case Scalar::kBool: {
            std::vector<bool> out;
            out.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const py::handle item = seq[i];
                if (classify(item) != Scalar::kBool) {
                    mismatch(item, i);
                }
                out.push_back(item.ptr() == Py_True);
            }
            return KvValue::bool_array(std::move(out));
        }
        case Scalar::kInt: {
            std::vector<uint64_t> raw;
            raw.reserve(n);
            bool any_unsigned = false;
            bool any_negative = false;
            for (size_t i = 0; i < n; ++i) {
                const py::handle item = seq[i];
                if (classify(item) != Scalar::kInt) {
                    mismatch(item, i);
                }
                const auto [value, is_unsigned] = int_value(item, key);
                any_unsigned = any_unsigned || is_unsigned;
                any_negative = any_negative || (!is_unsigned && static_cast<int64_t>(value) < 0);
                raw.push_back(value);
            }
            if (any_unsigned && any_negative) {
                throw py::value_error("kv '" + key + "': an int list mixes negative values and values above INT64_MAX");
            }
            if (any_unsigned) {
                return KvValue::uint64_array(std::move(raw));
            }
            std::vector<int64_t> out(raw.size());
            for (size_t i = 0; i < raw.size(); ++i) {
                out[i] = static_cast<int64_t>(raw[i]);
            }
            return KvValue::int64_array(std::move(out));
        }
        case Scalar::kFloat: {
            std::vector<double> out;
            out.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const py::handle item = seq[i];
                const Scalar k = classify(item);
                if (k != Scalar::kFloat && k != Scalar::kInt) {
                    mismatch(item, i);
                }
                out.push_back(item.cast<double>());
            }
            return KvValue::float64_array(std::move(out));
        }
        case Scalar::kBytes: {
            std::vector<std::vector<uint8_t>> out;
            out.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const py::handle item = seq[i];
                if (classify(item) != Scalar::kBytes) {
                    mismatch(item, i);
                }
                out.push_back(to_byte_vector(item));
            }
            return KvValue::bytes_array(std::move(out));
        }
        case Scalar::kOther:
            break;
    }
    throw py::type_error("kv '" + key + "': list elements of type " + type_name_of(seq[0]) +
                         " cannot be stored (str, bool, int, float or bytes)");
}

KvValue value_from_python(const py::handle& v, const std::string& key) {
    switch (classify(v)) {
        case Scalar::kString:
            return KvValue::string(v.cast<std::string>());
        case Scalar::kBool:
            return KvValue::boolean(v.ptr() == Py_True);
        case Scalar::kInt: {
            const auto [value, is_unsigned] = int_value(v, key);
            return is_unsigned ? KvValue::uint64(value) : KvValue::int64(static_cast<int64_t>(value));
        }
        case Scalar::kFloat:
            return KvValue::float64(v.cast<double>());
        case Scalar::kBytes:
            return KvValue::bytes(to_byte_vector(v));
        case Scalar::kOther:
            break;
    }
    if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
        return list_value(py::reinterpret_borrow<py::sequence>(v), key);
    }
    throw py::type_error("kv '" + key + "': a value of type " + type_name_of(v) +
                         " cannot be stored (str, bool, int, float, bytes or a list of one of them)");
}

py::bytes bytes_of(const std::vector<uint8_t>& v) {
    // SAFETY: the pointer and length describe the vector's live storage; char
    // may alias any object, and py::bytes copies the bytes.
    return {reinterpret_cast<const char*>(v.data()), v.size()};
}

py::object array_to_python(const KvArray& a) {
    py::list out;
    std::visit(
        [&out](const auto& values) {
            using V = std::decay_t<decltype(values)>;
            for (const auto& x : values) {
                if constexpr (std::is_same_v<V, std::vector<std::vector<uint8_t>>>) {
                    out.append(bytes_of(x));
                } else if constexpr (std::is_same_v<V, std::vector<bool>>) {
                    out.append(py::bool_(static_cast<bool>(x)));
                } else {
                    out.append(py::cast(x));
                }
            }
        },
        a.values);
    return out;
}

}  // namespace

KvMetadata kv_from_python(const py::handle& mapping) {
    KvMetadata kv;
    if (mapping.is_none()) {
        return kv;
    }
    if (!PyDict_Check(mapping.ptr())) {
        throw py::type_error("kv must be a dict of str to values, not " + type_name_of(mapping));
    }
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(mapping)) {
        if (!PyUnicode_Check(k.ptr())) {
            throw py::type_error("kv keys must be str, not " + type_name_of(k));
        }
        const auto key = k.cast<std::string>();
        Status st = kv.add(key, value_from_python(v, key));
        if (!st) {
            raise_error(st.error(), PythonSite::kSave, "kv '" + key + "'");
        }
    }
    return kv;
}

py::dict kv_to_python(const KvMetadata& kv) {
    py::dict out;
    for (const KvEntry& e : kv.entries()) {
        const KvValue& v = e.value;
        py::object value;
        if (const auto* s = v.as_string()) {
            value = py::str(*s);
        } else if (const auto* i = v.as_int64()) {
            value = py::int_(*i);
        } else if (const auto* u = v.as_uint64()) {
            value = py::int_(*u);
        } else if (const auto* f = v.as_float64()) {
            value = py::float_(*f);
        } else if (const auto* b = v.as_bool()) {
            value = py::bool_(*b);
        } else if (const auto* bytes = v.as_bytes()) {
            value = bytes_of(*bytes);
        } else if (const auto* a = v.as_array()) {
            value = array_to_python(*a);
        } else if (const auto* p = v.as_private()) {
            // Only with accept_private_tags, which this module does not set.
            value = py::make_tuple(p->tag, bytes_of(p->payload));
        }
        out[py::str(e.key)] = value;
    }
    return out;
}

}  // namespace hurray::python
