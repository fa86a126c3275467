// SPDX-License-Identifier: Apache-2.0
/// @file
/// From `hurray::Error` to the package's exception classes.

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "common.hpp"

namespace hurray::python {

namespace {

// The package's name of each class, by PythonError; none for kNone (not an error)
// and kMemory (the built-in MemoryError, raised by pybind11 from std::bad_alloc).
constexpr std::array<const char*, static_cast<size_t>(PythonError::kCount)> kKindNames = {
    nullptr,       "FileError",           "InvalidDescriptorError", "BufferError",  "UnsupportedError",
    "StreamError", "InvalidArgumentError", nullptr,                  "InternalError",
};
static_assert(static_cast<size_t>(PythonError::kInternal) == 8 && static_cast<size_t>(PythonError::kFile) == 1,
              "kKindNames follows PythonError's order");

// Strong references, owned for the life of the process on purpose: they are
// set once at import, and destroying Python objects from a static destructor
// after the interpreter has finalised would crash.
std::array<PyObject*, static_cast<size_t>(PythonError::kCount)> g_classes{};

// The class raised for a FileError whose cause is ENOENT (a FileError and a
// FileNotFoundError), registered under this name; FileError itself without it.
constexpr const char* kMissingFileName = "MissingFileError";
PyObject* g_missing_file = nullptr;

py::handle class_of(PythonError kind) {
    PyObject* cls = g_classes.at(static_cast<size_t>(kind));
    if (cls == nullptr) {
        // The package registers the classes when it imports; `_hurray` used on
        // its own falls back to RuntimeError.
        return {PyExc_RuntimeError};
    }
    return {cls};
}

/// The exception's attributes, each None when unknown.
struct Attributes {
    py::object code = py::none();
    py::object offset = py::none();
    py::object file = py::none();
    py::object tensor = py::none();
    py::object field = py::none();
};

/// `text` as a str: bytes of the input that are not UTF-8 (a GGUF string, a
/// name) show as \xNN escapes instead of failing to decode.
py::object text_of(std::string_view text) {
    auto s = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
    if (!s) {
        throw py::error_already_set();
    }
    return s;
}

py::object text_or_none(std::string_view text) { return text.empty() ? py::object(py::none()) : text_of(text); }

/// `os_errno`: the operating system's error code behind a FileError, 0 when
/// none is known. ENOENT raises the registered MissingFileError (also a
/// FileNotFoundError) with `errno`, `strerror` and `filename` set, as OSError has them.
[[noreturn]] void raise_instance(PythonError kind, const std::string& message, Attributes attributes, int os_errno = 0) {
    const bool missing = kind == PythonError::kFile && os_errno == ENOENT && g_missing_file != nullptr;
    const py::handle cls = missing ? py::handle(g_missing_file) : class_of(kind);
    py::object exc = cls(text_of(message));
    if (missing) {
        exc.attr("errno") = py::int_(os_errno);
        exc.attr("strerror") = text_of(std::strerror(os_errno));  // NOLINT(concurrency-mt-unsafe): under the GIL
        exc.attr("filename") = attributes.file;
    }
    if (cls.ptr() != PyExc_RuntimeError) {
        exc.attr("code") = std::move(attributes.code);
        exc.attr("offset") = std::move(attributes.offset);
        exc.attr("file") = std::move(attributes.file);
        exc.attr("tensor") = std::move(attributes.tensor);
        exc.attr("field") = std::move(attributes.field);
    }
    PyErr_SetObject(cls.ptr(), exc.ptr());
    throw py::error_already_set();
}

/// The errno behind an I/O error of opening a file: ENOENT when the path
/// named nothing (the failed open(2)'s own errno, kept by the library as
/// `Error::os_error()`), else 0.
int missing_file_errno(const Error& error, PythonSite where) {
    return where == PythonSite::kOpen && error.code() == ErrorCode::kIoError && error.os_error() == ENOENT ? ENOENT : 0;
}

/// raise_error_as, with the OS errno (0: none) given to raise_instance.
[[noreturn]] void raise_with_errno(PythonError kind, const Error& error, const Site& site, int os_errno);

}  // namespace

PythonError error_kind(ErrorCode code, PythonSite site) noexcept {
    const ErrorPresentation* row = find_error_presentation(code);
    if (row == nullptr) {
        return PythonError::kInternal;
    }
    const PythonError e = row->python.at(static_cast<size_t>(site));
    // kNone and kMemory never reach here as classes: kOk raises nothing, and
    // kOutOfMemory is raised as MemoryError before a class is chosen.
    return e == PythonError::kNone || e == PythonError::kMemory ? PythonError::kInternal : e;
}

bool is_unsupported(ErrorCode code) noexcept {
    return error_kind(code, PythonSite::kTensor) == PythonError::kUnsupported;
}

void raise_error(const Error& error, PythonSite where, const Site& site) {
    const PythonError kind = error_kind(error.code(), where);
    raise_with_errno(kind, error, site, kind == PythonError::kFile ? missing_file_errno(error, where) : 0);
}

void raise_error_as(PythonError kind, const Error& error, const Site& site) { raise_with_errno(kind, error, site, 0); }

namespace {

void raise_with_errno(PythonError kind, const Error& error, const Site& site, int os_errno) {
    if (error.code() == ErrorCode::kCancelled && PyErr_Occurred() != nullptr) {
        // Cancelled because a signal handler raised (Ctrl-C during a transfer:
        // KeyboardInterrupt): that exception is the one to see.
        throw py::error_already_set();
    }
    if (error.code() == ErrorCode::kOutOfMemory) {
        throw std::bad_alloc();  // pybind11 turns it into MemoryError
    }
    std::string message;
    // A label that is only the file is left out when the library's message
    // names a file itself (Error::file): the path is said once.
    const bool names_file = !error.file().empty();
    if (!site.label.empty() && !(names_file && site.label == site.file)) {
        message.append(site.label);
        message.append(": ");
    }
    message += error.to_string();
    Attributes a;
    a.code = py::str(std::string(error_code_name(error.code())));
    if (error.has_offset()) {
        a.offset = py::int_(error.offset());
    }
    a.file = text_or_none(names_file ? error.file() : site.file);
    a.tensor = text_or_none(!error.tensor().empty() ? error.tensor() : site.tensor);
    a.field = text_or_none(error.field());
    raise_instance(kind, message, std::move(a), os_errno);
}

}  // namespace

void raise_error(const Error& error, PythonSite where, std::string_view context) {
    raise_error(error, where, Site{.label = context});
}

void raise_kind(PythonError kind, const std::string& message) {
    raise_instance(kind, message, Attributes{});
}

void set_error_classes(const py::dict& classes) {
    for (size_t i = 0; i < kKindNames.size(); ++i) {
        if (kKindNames.at(i) == nullptr) {
            continue;  // kNone, kMemory: no class of the package
        }
        const py::object cls = classes[py::str(kKindNames.at(i))];
        // SAFETY: the casts are CPython's own convention: a type object is a
        // PyTypeObject (PyType_Check is evaluated first), and every exception
        // class object, PyExc_Exception included, is a type object.
        if (PyType_Check(cls.ptr()) == 0 ||
            PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                             reinterpret_cast<PyTypeObject*>(PyExc_Exception)) == 0) {
            throw py::type_error(std::string("_set_error_classes: ") + kKindNames.at(i) +
                                 " is not an exception class");
        }
        replace_kept_object(g_classes.at(i), cls);
    }
    if (classes.contains(kMissingFileName)) {
        const py::object cls = classes[py::str(kMissingFileName)];
        // SAFETY: as above: a type object checked with PyType_Check first.
        if (PyType_Check(cls.ptr()) == 0 ||
            PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                             reinterpret_cast<PyTypeObject*>(PyExc_FileNotFoundError)) == 0) {
            throw py::type_error(std::string("_set_error_classes: ") + kMissingFileName +
                                 " is not a FileNotFoundError class");
        }
        replace_kept_object(g_missing_file, cls);
    }
}

}  // namespace hurray::python
