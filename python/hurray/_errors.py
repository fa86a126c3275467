# SPDX-License-Identifier: Apache-2.0
"""The exception classes of the hurray package.

Every error the package raises on purpose is a ``HurrayError``. Each class is
also a subclass of the built-in exception the Hurray reference's Python module
uses for it, so ``except OSError`` or ``except ValueError`` keep working.
Errors raised from libhurray carry ``code`` (the library's error code name,
e.g. ``"truncated"``), ``offset`` (the byte offset), ``file`` (the path or URL),
``tensor`` (the tensor's name) and ``field`` (the field, section or KV key),
each None when unknown; their message says the same in words.

Opening a local file that does not exist raises ``MissingFileError``, a
``FileError`` that is also a ``FileNotFoundError`` (``errno`` ENOENT,
``filename`` the path), as ``open()`` and safetensors raise for it.

The safetensors drop-ins (``hurray.safe_open``, ``hurray.numpy``,
``hurray.torch``) raise ``SafetensorError``, safetensors' class, where
safetensors does; each such error is also the class this package raised for
it before (a missing tensor: ``KeyError``; a bad framework or device:
``InvalidArgumentError``), so code written for either keeps working.
"""


class HurrayError(Exception):
    """Base class of the errors of the hurray package."""

    code: "str | None" = None
    offset: "int | None" = None
    file: "str | None" = None
    tensor: "str | None" = None
    field: "str | None" = None


class FileError(HurrayError, OSError):
    """A file could not be opened, read or written, or its container structure is corrupt."""


class MissingFileError(FileError, FileNotFoundError):
    """The file to open does not exist (ENOENT): a ``FileError`` and a ``FileNotFoundError``.

    ``errno``, ``strerror`` and ``filename`` are set as ``OSError`` sets them;
    the message is the library's, naming the path."""

    def __str__(self):
        return BaseException.__str__(self)  # the message, not OSError's "[Errno 2] ..." rendering


class StreamError(HurrayError, OSError):
    """A stream's framing is truncated, malformed or oversized."""


class InvalidDescriptorError(HurrayError, ValueError):
    """A tensor descriptor does not decode or validate."""


class BufferError(HurrayError, ValueError):  # noqa: A001 - the reference's name
    """A buffer's size or offset disagrees with its descriptor."""


class UnsupportedError(HurrayError, NotImplementedError):
    """Valid, but not supported (yet) by this module: a type, layout or scheme."""


class InvalidArgumentError(HurrayError, ValueError):
    """An argument cannot be honoured: a bad name, a duplicate key, a non-contiguous array."""


class InternalError(HurrayError, RuntimeError):
    """A bug in libhurray or this module."""


class CopyRequiredError(HurrayError, ValueError):
    """``copy=False`` was asked of ``Tensor.__array__`` but the conversion needs a copy (a cast, bools, a layout)."""


class SafetensorError(HurrayError):
    """safetensors' own error class (``safetensors.SafetensorError``), raised by
    the safetensors drop-ins where safetensors raises it: a name the file lacks,
    a framework or device it does not know, a handle used after ``__exit__``,
    an index out of range in ``get_slice``, and errors reading or decoding the
    file (those are also the ``FileError``, ``InvalidDescriptorError``, ... the
    native calls raise). Exported as ``hurray.SafetensorError``,
    ``hurray.numpy.SafetensorError`` and ``hurray.torch.SafetensorError``."""


class TensorNotFoundError(SafetensorError, KeyError):
    """``safe_open(...).get_tensor`` / ``get_slice`` of a name the file lacks: a
    ``SafetensorError``, as safetensors raises, and a ``KeyError``."""

    def __str__(self):
        return BaseException.__str__(self)  # "File does not contain tensor x", unquoted


class SafetensorArgumentError(SafetensorError, InvalidArgumentError):
    """An argument of a safetensors drop-in it cannot honour (an unknown framework,
    device or backend) or a ``safe_open`` handle used after it was closed: a
    ``SafetensorError``, as safetensors raises, and a ValueError."""


class SafetensorUnsupportedError(SafetensorError, UnsupportedError):
    """What safetensors offers but this package does not (yet): a framework other
    than numpy and PyTorch, a numpy array on another device than the cpu. A
    ``SafetensorError`` and an ``UnsupportedError`` (NotImplementedError)."""


class SliceIndexError(SafetensorError, IndexError):
    """``get_slice(name)[index]`` with an index out of range: a ``SafetensorError``,
    as safetensors raises, and an ``IndexError``, as numpy and torch raise."""


class InvalidTensorsError(InvalidArgumentError, TypeError):
    """``save_file`` / ``save`` of the drop-ins given something other than a dict,
    or a value that is not a tensor (array). safetensors raises ValueError for
    these; this class is a ValueError and, as these calls raised TypeError
    before, a TypeError too."""


def _safetensor_variant(cls):
    """``cls`` combined with SafetensorError, a module attribute (so that it pickles)."""
    name = "Safetensor" + cls.__name__
    variant = type(name, (cls, SafetensorError), {
        "__doc__": f"A {cls.__name__} raised by a safetensors drop-in: also a SafetensorError.",
        "__module__": __name__,
        "__qualname__": name,
    })
    globals()[name] = variant
    return variant


# The class a safetensors drop-in raises for an error the native calls raise as the key.
_SAFETENSOR_VARIANTS = {
    InvalidArgumentError: SafetensorArgumentError,
    UnsupportedError: SafetensorUnsupportedError,
}
_SAFETENSOR_VARIANTS.update({cls: _safetensor_variant(cls) for cls in (
    FileError, StreamError, InvalidDescriptorError, BufferError, InternalError, CopyRequiredError)})


def as_safetensor_error(error):
    """``error`` (a HurrayError) as an instance of its SafetensorError variant,
    with the same message and attributes; ``error`` itself when it already is
    one, or when it is a ``FileNotFoundError`` (safetensors raises
    FileNotFoundError, not SafetensorError, for a missing file)."""
    if isinstance(error, (SafetensorError, FileNotFoundError)) or not isinstance(error, HurrayError):
        return error
    variant = _SAFETENSOR_VARIANTS.get(type(error))
    if variant is None:
        return error
    new = variant(*error.args)
    new.__dict__.update(error.__dict__)
    for attr in ("code", "offset", "file", "tensor", "field"):
        setattr(new, attr, getattr(error, attr))
    return new


ERROR_CLASSES = {
    "FileError": FileError,
    "InvalidDescriptorError": InvalidDescriptorError,
    "BufferError": BufferError,
    "UnsupportedError": UnsupportedError,
    "StreamError": StreamError,
    "InvalidArgumentError": InvalidArgumentError,
    "InternalError": InternalError,
    "MissingFileError": MissingFileError,
}
