# SPDX-License-Identifier: Apache-2.0
"""Read and write Hurray tensor files (HRRYFILE) from Python with NumPy.

    import numpy as np
    import hurray

    hurray.save("model.hrry", {"w": np.ones((2, 3), np.float32)}, kv={"epochs": 3})
    tensors = hurray.load("model.hrry")          # dict of read-only numpy arrays, zero-copy
    with hurray.open("model.hrry") as f:         # lazy: names, info and KV without data
        print(f.keys(), f.info("w"), f.metadata())

``hurray.numpy.save_file`` / ``load_file`` and ``hurray.safe_open`` offer the
safetensors calls on HRRYFILE files.
"""

import os as _os

import numpy as _np

from . import _hurray
from ._errors import (
    BufferError,
    FileError,
    HurrayError,
    InternalError,
    InvalidArgumentError,
    InvalidDescriptorError,
    StreamError,
    UnsupportedError,
)
from ._errors import ERROR_CLASSES as _ERROR_CLASSES

_hurray._set_error_classes(_ERROR_CLASSES)

__version__ = _hurray.__version__

File = _hurray.File

__all__ = [
    "BufferError",
    "File",
    "FileError",
    "HurrayError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidDescriptorError",
    "StreamError",
    "UnsupportedError",
    "load",
    "open",
    "safe_open",
    "save",
]


def open(path):  # noqa: A001 - the package's name for it, like io.open
    """Opens and validates an HRRYFILE; returns a lazy ``hurray.File``.

    The handle reads nothing but the header, index and KV section: ``keys()``,
    ``info(name)`` (dtype, shape, layout, quantization, nbytes) and
    ``metadata()`` touch no tensor data; ``get_tensor(name)`` returns a
    read-only numpy array viewing the file's mapping. It is a context manager;
    arrays stay valid after it is closed.
    """
    return _hurray.open(_os.fspath(path))


def load(path, names=None):
    """Loads tensors as a dict of name to read-only numpy array.

    Dense tensors view the file's memory mapping without a copy; the mapping
    lives as long as any array from it. ``names`` (an iterable of str) limits
    what is loaded; a name the file lacks raises KeyError. Bool tensors and
    other layouts are copied (Hurray packs bools 8 per byte).
    """
    if isinstance(names, (str, bytes)):
        raise TypeError("names must be an iterable of tensor names, not a single name")
    with open(path) as f:
        wanted = f.keys() if names is None else list(names)
        return {name: f.get_tensor(name) for name in wanted}


def _as_savable(name, value):
    if not isinstance(name, str):
        raise TypeError(f"tensor names must be str, not {type(name).__name__}")
    array = _np.asarray(value)
    # Non-contiguous arrays (slices, transposes) are saved as a contiguous copy.
    if not array.flags.c_contiguous:
        array = _np.ascontiguousarray(array)
    if array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and not _np.little_endian):
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def save(path, tensors, kv=None):
    """Writes ``tensors`` (a dict of name to numpy array) and ``kv`` metadata as an HRRYFILE.

    Atomic: a temporary file in the same directory is renamed over ``path``
    once complete, so a failure leaves any existing file untouched. Arrays
    that are not C-contiguous are written from a contiguous copy; big-endian
    arrays are converted. ``kv`` values: str, int, float, bool, bytes, or a
    list of one of those.
    """
    names, arrays = _savable(tensors)
    _hurray.save(_os.fspath(path), names, arrays, kv)


def _savable(tensors):
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of str to numpy arrays, not {type(tensors).__name__}")
    names = list(tensors.keys())
    return names, [_as_savable(name, tensors[name]) for name in names]


from ._safetensors import safe_open  # noqa: E402
from . import numpy  # noqa: E402,F401
from ._stream import Composite, StreamReader, StreamWriter  # noqa: E402
__all__ += ["Composite", "StreamReader", "StreamWriter"]
