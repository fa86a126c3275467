# SPDX-License-Identifier: Apache-2.0
"""The exception classes of the hurray package.

Every error the package raises on purpose is a ``HurrayError``. Each class is
also a subclass of the built-in exception the Hurray reference's Python module
uses for it, so ``except OSError`` or ``except ValueError`` keep working.
Errors raised from libhurray carry ``code`` (the library's error code name,
e.g. ``"truncated"``), ``offset`` (the byte offset), ``file`` (the path or URL),
``tensor`` (the tensor's name) and ``field`` (the field, section or KV key),
each None when unknown; their message says the same in words.
"""


class HurrayError(Exception):
    """Base class of the errors of the hurray package."""

    code = None
    offset = None
    file = None
    tensor = None
    field = None


class FileError(HurrayError, OSError):
    """A file could not be opened, read or written, or its container structure is corrupt."""


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


ERROR_CLASSES = {
    "FileError": FileError,
    "InvalidDescriptorError": InvalidDescriptorError,
    "BufferError": BufferError,
    "UnsupportedError": UnsupportedError,
    "StreamError": StreamError,
    "InvalidArgumentError": InvalidArgumentError,
    "InternalError": InternalError,
}
