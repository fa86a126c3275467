// SPDX-License-Identifier: Apache-2.0
/// @file
/// From `hurray::Error` to the package's exception classes.

#include <array>
#include <cstddef>
#include <string>

#include "common.hpp"

namespace hurray::python {

namespace {

constexpr std::array<const char*, static_cast<size_t>(ErrorKind::kCount)> kKindNames = {
    "FileError",      "InvalidDescriptorError", "BufferError",  "UnsupportedError",
    "StreamError",    "InvalidArgumentError",   "InternalError",
};

// Strong references, owned for the life of the process on purpose: they are
// set once at import, and destroying Python objects from a static destructor
// after the interpreter has finalised would crash.
std::array<PyObject*, static_cast<size_t>(ErrorKind::kCount)> g_classes{};

py::handle class_of(ErrorKind kind) {
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

[[noreturn]] void raise_instance(ErrorKind kind, const std::string& message, Attributes attributes) {
    const py::handle cls = class_of(kind);
    py::object exc = cls(text_of(message));
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

}  // namespace

bool is_unsupported(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::kUnsupported:
        case ErrorCode::kUnsupportedVersion:
        case ErrorCode::kUnknownElementType:
        case ErrorCode::kUnknownLayoutTag:
        case ErrorCode::kUnsupportedExtensionLayout:
        case ErrorCode::kUnknownQuantizationScheme:
        case ErrorCode::kUnsupportedQuantizationVersion:
            return true;
        default:
            return false;
    }
}

ErrorKind error_kind(const Error& error, Where where) noexcept {
    if (error.code() == ErrorCode::kIoError) {
        return ErrorKind::kFile;
    }
    if (is_unsupported(error.code())) {
        return ErrorKind::kUnsupported;
    }
    switch (where) {
        case Where::kOpen:
            // Everything about the container: header, index, trailer, KV section.
            return ErrorKind::kFile;
        case Where::kTensor:
            switch (error.code()) {
                case ErrorCode::kInvalidFile:
                case ErrorCode::kChecksumMismatch:
                case ErrorCode::kOverlap:
                    return ErrorKind::kFile;
                case ErrorCode::kBufferTooSmall:
                case ErrorCode::kByteOffsetOutOfRange:
                case ErrorCode::kInvalidBufferHandle:
                case ErrorCode::kSizeMismatch:
                    return ErrorKind::kBuffer;
                case ErrorCode::kInvalidArgument:
                case ErrorCode::kTypeMismatch:
                    return ErrorKind::kInvalidArgument;
                default:
                    return ErrorKind::kInvalidDescriptor;
            }
        case Where::kSave:
            switch (error.code()) {
                case ErrorCode::kInvalidArgument:
                case ErrorCode::kInvalidName:
                case ErrorCode::kDuplicateName:
                case ErrorCode::kTypeMismatch:
                case ErrorCode::kSizeMismatch:
                    return ErrorKind::kInvalidArgument;
                case ErrorCode::kInvalidShape:
                case ErrorCode::kInvalidLayoutTag:  // a tensor carrying an UnknownLayout
                case ErrorCode::kSizeOverflow:
                case ErrorCode::kRankTooLarge:
                case ErrorCode::kInvalidElementType:
                // A hurray.Tensor whose sections do not validate (a scheme
                // that does not fit its tensor): the descriptor, not the file.
                case ErrorCode::kInvalidQuantization:
                case ErrorCode::kInvalidQuantizationStorageType:
                case ErrorCode::kInvalidQuantizationBuffer:
                case ErrorCode::kInvalidShard:
                case ErrorCode::kInvalidStatistics:
                // A hurray.Composite whose members break its rule.
                case ErrorCode::kInvalidComposite:
                case ErrorCode::kNestingTooDeep:
                    return ErrorKind::kInvalidDescriptor;
                default:
                    return ErrorKind::kFile;
            }
    }
    return ErrorKind::kInternal;
}

void raise_error(const Error& error, Where where, const Site& site) {
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
    raise_instance(error_kind(error, where), message, std::move(a));
}

void raise_error(const Error& error, Where where, std::string_view context) {
    raise_error(error, where, Site{.label = context});
}

void raise_kind(ErrorKind kind, const std::string& message) {
    raise_instance(kind, message, Attributes{});
}

void set_error_classes(const py::dict& classes) {
    for (size_t i = 0; i < kKindNames.size(); ++i) {
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
}

}  // namespace hurray::python
