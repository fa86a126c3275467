# SPDX-License-Identifier: Apache-2.0
"""safetensors.torch's calls for PyTorch tensors, on HRRYFILE files.

    import torch
    from hurray.torch import save_file, load_file

    save_file({"w": torch.zeros(2, 2, dtype=torch.bfloat16)}, "model.hrry", metadata={"format": "pt"})
    tensors = load_file("model.hrry")                 # zero-copy over the file's mapping
    tensors = load_file("model.hrry", device="cuda:0")

Loading maps the file copy-on-write: each tensor views the mapping without a
copy, and writing into it (``t += 1``) gives this process private pages, so the
tensor changes and the file does not. ``save_file`` refuses what safetensors
refuses: a tensor that is not contiguous, or several tensors sharing one
storage (save ``.clone()``s, or only the full tensor). Needs PyTorch; the rest
of the package does not (``import hurray`` never imports torch).
"""

import os as _os

import numpy as _np

try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - exercised where torch is absent
    raise ImportError("hurray.torch needs PyTorch (Debian: apt-get install python3-torch)") from _e

from . import _hurray
from ._errors import InvalidArgumentError, UnsupportedError
from ._open import open_file as _open_file
from ._safetensors import array_names as _array_names
from ._safetensors import kv_from_metadata as _kv_from_metadata

__all__ = ["SharedTensorsError", "load", "load_file", "save", "save_file"]


class SharedTensorsError(InvalidArgumentError, RuntimeError):
    """Tensors given to ``save_file`` / ``save`` share storage. A ValueError
    (``InvalidArgumentError``) and, like safetensors' error for this, a RuntimeError."""


# The one mapping between torch dtypes and Hurray element types: (torch dtype
# attribute, Hurray element type). Rows whose torch dtype the installed torch
# lacks are left out (uint16/32/64 came in torch 2.3, float8 in 2.1,
# float8_e8m0fnu in 2.7).
_DTYPE_ROWS = (
    ("bool", "bool"),
    ("uint8", "uint8"),
    ("int8", "int8"),
    ("int16", "int16"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("float16", "float16"),
    ("bfloat16", "bfloat16"),
    ("float32", "float32"),
    ("float64", "float64"),
    ("complex64", "complex64"),
    ("complex128", "complex128"),
    ("float8_e4m3fn", "float8_e4m3"),  # OCP E4M3: no infinities, one NaN pattern per sign
    ("float8_e5m2", "float8_e5m2"),
    ("float8_e8m0fnu", "float8_e8m0"),
)
_TO_HURRAY = {}
_FROM_HURRAY = {}
for _attr, _name in _DTYPE_ROWS:
    _dtype = getattr(_torch, _attr, None)
    if isinstance(_dtype, _torch.dtype):
        _TO_HURRAY[_dtype] = _name
        _FROM_HURRAY[_name] = _dtype

# Element types NumPy has, whose torch tensors convert with .numpy() /
# torch.from_numpy; the others travel as the bits of a same-width signed
# integer (torch.from_numpy takes no uint16..uint64) and are re-viewed.
_NUMPY_NATIVE = frozenset({
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128",
})
_BITS_TORCH = {1: _torch.uint8, 2: _torch.int16, 4: _torch.int32, 8: _torch.int64}
_BITS_NUMPY = {1: _np.uint8, 2: _np.int16, 4: _np.int32, 8: _np.int64}


def _storage_key(tensor):
    """(device, storage address) of a tensor's storage, or None when it has no bytes."""
    storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
    if storage.nbytes() == 0 or storage.data_ptr() == 0:
        return None
    return (tensor.device, storage.data_ptr())


def _check(tensors):
    """Checks a dict of name to tensor the way safetensors does; returns its names."""
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of str to torch.Tensor, not {type(tensors).__name__}")
    by_storage = {}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__}")
        if not isinstance(tensor, _torch.Tensor):
            raise TypeError(f"tensor {name!r}: expected a torch.Tensor, not {type(tensor).__name__}")
        if tensor.layout != _torch.strided:
            raise InvalidArgumentError(f"tensor {name!r}: layout {tensor.layout} is not supported; "
                                       "save a dense tensor (.to_dense())")
        if not tensor.is_contiguous():
            raise InvalidArgumentError(f"tensor {name!r}: not contiguous; save tensor.contiguous() "
                                       "(or the tensor it is a view of, and slice it after loading)")
        if tensor.dtype not in _TO_HURRAY:
            raise UnsupportedError(f"tensor {name!r}: dtype {tensor.dtype} has no Hurray element type")
        key = _storage_key(tensor)
        if key is not None:
            by_storage.setdefault(key, []).append(name)
    shared = [names for names in by_storage.values() if len(names) > 1]
    if shared:
        groups = "; ".join(", ".join(repr(n) for n in names) for names in shared)
        raise SharedTensorsError(
            f"tensors share storage and would be written twice: {groups}; save .clone()s of them, "
            "or only the tensor they view")
    return list(tensors)


def _to_numpy(tensors):
    """(names, numpy arrays over the tensors' bytes, Hurray type names or None)."""
    names = _check(tensors)
    arrays, types = [], []
    for name in names:
        t = tensors[name].detach()
        if t.device.type != "cpu":
            t = t.to("cpu")
        t = t.resolve_conj().resolve_neg()
        hurray_type = _TO_HURRAY[t.dtype]
        if hurray_type in _NUMPY_NATIVE:
            arrays.append(t.numpy())
            types.append(None)
        else:
            arrays.append(t.view(_BITS_TORCH[t.element_size()]).numpy())
            types.append(hurray_type)
    return names, arrays, types


def save_file(tensors, filename, metadata=None, durable=False):
    """Saves a dict of name to torch.Tensor as an HRRYFILE (safetensors.torch's ``save_file``).

    ``metadata`` (str to str) becomes string KV entries. Tensors on other
    devices are copied to the CPU first. Raises ``InvalidArgumentError`` (a
    ValueError) naming a tensor that is not contiguous or not dense, and
    ``SharedTensorsError`` (a ValueError and a RuntimeError) naming tensors
    that share storage. Atomic, like ``hurray.save``, but, like safetensors,
    not fsync'ed unless ``durable=True``.
    """
    names, arrays, types = _to_numpy(tensors)
    _hurray.save(_os.fspath(filename), names, arrays, _kv_from_metadata(metadata), types, durable=True if durable else False)


def save(tensors, metadata=None):
    """The bytes of an HRRYFILE holding the tensors (safetensors.torch's ``save``)."""
    names, arrays, types = _to_numpy(tensors)
    return _hurray.save_bytes(names, arrays, _kv_from_metadata(metadata), types)


def _tensor(file, name, copy=False):
    """Tensor ``name`` of an opened ``_hurray.File`` as a torch.Tensor viewing
    its array (over a copy of it when ``copy``)."""
    array, dtype_name = file._get_bits(name)
    dtype = _FROM_HURRAY.get(dtype_name)
    if dtype is None:
        raise UnsupportedError(
            f"{file.path}: tensor {name!r}: element type {dtype_name} has no dtype in torch {_torch.__version__}")
    if copy:
        array = array.copy()
    if dtype_name in _NUMPY_NATIVE:
        return _torch.from_numpy(array)
    return _torch.from_numpy(array.view(_BITS_NUMPY[array.dtype.itemsize])).view(dtype)


def _device(device):
    if isinstance(device, int):
        return _torch.device("cuda", device)
    return _torch.device(device)


def tensor_from_file(file, name, device="cpu"):
    """Tensor ``name`` of a ``hurray.File`` (opened with ``writable=True`` for
    tensors that may be written) as a torch.Tensor on ``device``. Used by
    ``hurray.safe_open(framework="pt")``."""
    t = _tensor(file, name)
    device = _device(device)
    return t if device.type == "cpu" else t.to(device)


def slice_from_file(file, name, index, device="cpu"):
    """``tensor[index]`` of tensor ``name`` of a ``hurray.File`` as a new
    contiguous torch.Tensor on ``device``; only the pages the slice covers are
    read. Used by ``hurray.safe_open(framework="pt").get_slice``."""
    view = _tensor(file, name)[index]
    return view.clone(memory_format=_torch.contiguous_format).to(_device(device))


def load_file(filename, device="cpu"):
    """Loads every tensor of an HRRYFILE as a dict of name to torch.Tensor (safetensors.torch's ``load_file``).

    On the CPU the tensors view the file's mapping without a copy; the file is
    mapped copy-on-write, so writing into a tensor changes only this process's
    copy of the pages it touches, never the file. Bool tensors (packed 8 per
    byte in the file) are unpacked copies. Other devices: loaded on the CPU,
    then moved with ``.to(device)``. A tensor whose element type torch lacks
    raises ``UnsupportedError``. Composites as ``hurray.numpy.load_file``
    has them: members by name, merged views of partitions and overlays.
    """
    device = _device(device)
    with _open_file(filename, writable=True) as f:
        out = {name: _tensor(f, name) for name in _array_names(f)}
    if device.type != "cpu":
        out = {name: t.to(device) for name, t in out.items()}
    return out


def load(data):
    """Every tensor of an HRRYFILE given as bytes (safetensors.torch's ``load``): writable tensors, copies."""
    with _hurray.open_bytes(data) as f:
        # The arrays view a read-only private copy of `data`: copy each tensor
        # out of it, as torch tensors are writable.
        return {name: _tensor(f, name, copy=True) for name in _array_names(f)}
