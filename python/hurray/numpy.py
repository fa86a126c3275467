# SPDX-License-Identifier: Apache-2.0
"""safetensors.numpy's calls (``save_file``, ``load_file``, ``save``, ``load``) for numpy arrays, on HRRYFILE files.

    from hurray.numpy import save_file, load_file
    save_file({"w": np.zeros((2, 2), np.float32)}, "model.hrry", metadata={"format": "np"})
    tensors = load_file("model.hrry")

Loaded arrays are writable views of the file's mapping, mapped copy-on-write:
no copy is made, and writing into an array (``w *= 2``) gives this process
private pages, so the array changes and the file does not.
"""

import numpy as _np

from . import _hurray
from . import _savable
from . import save as _save
from ._errors import InvalidTensorsError, SafetensorError
from ._open import open_file as _open_file
from ._safetensors import array_names as _array_names
from ._safetensors import check_backend as _check_backend
from ._safetensors import kv_from_metadata as _kv_from_metadata
from ._safetensors import open_bytes as _open_bytes
from ._safetensors import safetensor_errors as _safetensor_errors

__all__ = ["SafetensorError", "load", "load_file", "save", "save_file"]


def _check(tensor_dict):
    """What safetensors requires of ``tensor_dict``: a dict whose values are
    arrays. Anything ``numpy.asarray`` turns into an array of numbers or bools
    (a list, a scalar, a ``hurray.Tensor``) is taken as well; other values
    (strings, dicts, None: object arrays) raise ``InvalidTensorsError``, a
    ValueError (safetensors' class for this) and a TypeError."""
    if not isinstance(tensor_dict, dict):
        raise InvalidTensorsError(f"Expected a dict of [str, np.ndarray] but received {type(tensor_dict)}")
    from ._stream import Composite  # noqa: PLC0415 - imported late: part of the package
    from ._tensor import Tensor  # noqa: PLC0415

    for name, value in tensor_dict.items():
        if isinstance(value, (_np.ndarray, Tensor, Composite)):
            continue
        try:
            kind = _np.asarray(value).dtype.kind
        except (TypeError, ValueError):
            kind = "O"
        if kind in "OUSV":
            raise InvalidTensorsError(f"Key `{name}` is invalid, expected np.ndarray but received {type(value)}")


def save_file(tensor_dict, filename, metadata=None, durable=False):
    """Saves a dict of name to numpy array; ``metadata`` (str to str) becomes string KV entries.

    Atomic (a temporary file renamed over ``filename``) but, like
    safetensors' ``save_file``, not fsync'ed unless ``durable=True``
    (see ``hurray.save``). Arrays that are not C-contiguous are saved from a
    contiguous copy; arrays viewing one buffer, overlapping or not, are each
    saved (safetensors' numpy calls check no sharing either). A
    ``tensor_dict`` that is not a dict, or a value that is no array, raises
    ``InvalidTensorsError`` (a ValueError and a TypeError).
    """
    _check(tensor_dict)
    _save(filename, tensor_dict, kv=_kv_from_metadata(metadata), durable=True if durable else False)


def load_file(filename, *, backend="mmap"):
    """Loads every tensor as a dict of name to numpy array, in sorted name order (as safetensors).

    The arrays are writable views of the file's mapping without a copy (dense
    data): the file is mapped copy-on-write, so writing into an array changes
    only this process's copy of the pages it touches, never the file.
    Composite members are entries like any tensor; a partition or overlay
    head is its merged view (assembled, a copy); a head without one (a group,
    a composite of composites) is left out: its data is in its members.
    ``backend`` (``"mmap"`` or ``"pread"``) is accepted for safetensors'
    signature; both read through the mapping. A missing file raises
    ``FileNotFoundError`` (``hurray.MissingFileError``); a corrupt one a
    ``SafetensorError`` that is also the ``FileError`` (...) ``hurray.open`` raises.
    """
    _check_backend(backend)
    with _safetensor_errors(), _open_file(filename, writable=True) as f:
        return {name: f.get_tensor(name) for name in sorted(_array_names(f))}


def save(tensor_dict, metadata=None):
    """The bytes of an HRRYFILE holding the arrays (safetensors' ``save``)."""
    _check(tensor_dict)
    names, arrays = _savable(tensor_dict)
    return _hurray.save_bytes(names, arrays, _kv_from_metadata(metadata))


def load(data):
    """Every tensor of an HRRYFILE given as bytes (safetensors' ``load``), in
    sorted name order: writable arrays over one private copy of ``data``, an
    in-memory file mapped copy-on-write (Linux: memfd), so that the arrays
    share it without a further copy; elsewhere each array is a copy."""
    with _safetensor_errors():
        f, writable = _open_bytes(data)
        with f:
            return {name: f.get_tensor(name) if writable else _np.array(f.get_tensor(name))
                    for name in sorted(_array_names(f))}
