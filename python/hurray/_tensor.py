# SPDX-License-Identifier: Apache-2.0
"""NumPy bridges and creation functions around ``hurray.Tensor`` (the class itself is in C++).

    t = hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))   # zero-copy
    a = np.asarray(t)                                                       # zero-copy back
    z = hurray.zeros((4, 4), dtype=hurray.float32)
"""

import numpy as _np

from . import _hurray
from . import dtype as _dtype
from ._errors import InvalidArgumentError, UnsupportedError

Tensor = _hurray.Tensor

# Tier 1 element types NumPy has (bfloat16 has none).
_TO_NUMPY = {name: _np.dtype(name) for name in _dtype._NUMPY_NAMES}
_FROM_NUMPY = {npdt: _dtype.Dtype.from_name(name) for name, npdt in _TO_NUMPY.items()}


def numpy_dtype(dt):
    """The numpy dtype of a hurray.Dtype; UnsupportedError when NumPy has none (bfloat16, Tier 2)."""
    found = _TO_NUMPY.get(dt.name) if isinstance(dt, _dtype.Dtype) else None
    if found is None:
        raise UnsupportedError(f"element type {dt} has no NumPy dtype")
    return found


def hurray_dtype(npdt):
    """The hurray.Dtype of a numpy dtype (native or little-endian); UnsupportedError otherwise."""
    npdt = _np.dtype(npdt)
    found = None
    if not (npdt.byteorder == ">" or (npdt.byteorder == "=" and not _np.little_endian)):
        found = _FROM_NUMPY.get(npdt.newbyteorder("="))
    if found is None:
        raise UnsupportedError(f"numpy dtype {npdt} has no Hurray element type (or is big-endian)")
    return found


def from_numpy(array):
    """A Tensor sharing a C-contiguous numpy array's memory (no copy; it keeps the array alive).

    Non-C-contiguous arrays raise UnsupportedError (call ``numpy.ascontiguousarray``
    first), as do dtypes without a Hurray type and big-endian arrays. Bool arrays
    are the exception to zero-copy: Hurray packs bools 8 per byte, so their
    values are packed into a new buffer.
    """
    if not isinstance(array, _np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, not {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise UnsupportedError("from_numpy requires a C-contiguous array; call numpy.ascontiguousarray(arr) first")
    dt = hurray_dtype(array.dtype)
    if dt.name == "bool":
        packed = _np.packbits(array.reshape(-1), bitorder="little")
        return Tensor(packed, dt, array.shape)
    return Tensor(array, dt, array.shape)


def asarray(obj, dtype=None, *, copy=None):
    """A Tensor from a Tensor, a numpy array, anything with ``__array__`` or a (nested) list.

    A Tensor of the same dtype is returned as it is; numpy arrays are shared
    without a copy where ``from_numpy`` can (C-contiguous, same dtype), else
    converted. ``dtype`` is a hurray.Dtype with a NumPy equivalent.
    """
    if isinstance(obj, Tensor) and (dtype is None or obj.dtype == dtype) and not copy:
        return obj
    npdt = None if dtype is None else numpy_dtype(dtype)
    if isinstance(obj, Tensor):
        array = _np.asarray(obj)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, _np.ndarray) and not hasattr(obj, "__array__"):
        from . import from_dlpack  # noqa: PLC0415 - DLPack support is optional
        return asarray(from_dlpack(obj), dtype, copy=copy)
    else:
        array = _np.asarray(obj)
    if npdt is not None and array.dtype != npdt:
        array = array.astype(npdt)
    elif copy:
        array = array.copy()
    return from_numpy(_np.asarray(array, order="C"))  # not ascontiguousarray: it makes 0-d arrays 1-d


def _creation_dtype(dtype, default):
    if dtype is None:
        dtype = default
    if not isinstance(dtype, _dtype.Dtype):
        raise TypeError(f"dtype must be a hurray.Dtype, not {type(dtype).__name__}")
    if dtype.tier != 1 or dtype.name not in _TO_NUMPY:
        raise UnsupportedError(f"creation functions support Tier 1 dtypes with a NumPy equivalent, not {dtype}")
    return _TO_NUMPY[dtype.name]


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def zeros(shape, dtype=None):
    """A new tensor of zeros (``dtype`` defaults to float64)."""
    return from_numpy(_np.zeros(_shape(shape), _creation_dtype(dtype, _dtype.float64)))


def ones(shape, dtype=None):
    """A new tensor of ones (``dtype`` defaults to float64)."""
    return from_numpy(_np.ones(_shape(shape), _creation_dtype(dtype, _dtype.float64)))


def full(shape, fill_value, dtype=None):
    """A new tensor filled with ``fill_value`` (``dtype`` defaults to float64)."""
    return from_numpy(_np.full(_shape(shape), fill_value, _creation_dtype(dtype, _dtype.float64)))


def empty(shape, dtype=None):
    """A new tensor whose values are unspecified (``dtype`` defaults to float64)."""
    return from_numpy(_np.empty(_shape(shape), _creation_dtype(dtype, _dtype.float64)))


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in [start, stop) (int64 for int arguments, else float64 by default)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, stop, step))
        dtype = _dtype.int64 if ints else _dtype.float64
    return from_numpy(_np.arange(start, stop, step, dtype=_creation_dtype(dtype, None)))


def linspace(start, stop, num=50, *, dtype=None, endpoint=True):
    """``num`` evenly spaced values from start to stop (float64 by default)."""
    return from_numpy(_np.linspace(start, stop, num, endpoint=endpoint,
                                   dtype=_creation_dtype(dtype, _dtype.float64)))


def eye(n_rows, n_cols=None, *, k=0, dtype=None):
    """A 2-D tensor with ones on diagonal ``k`` (float64 by default)."""
    return from_numpy(_np.eye(n_rows, n_cols, k=k, dtype=_creation_dtype(dtype, _dtype.float64)))


def zeros_like(x, *, dtype=None):
    """zeros with the shape (and by default the dtype) of ``x``."""
    return zeros(x.shape, dtype=dtype or x.dtype)


def ones_like(x, *, dtype=None):
    """ones with the shape (and by default the dtype) of ``x``."""
    return ones(x.shape, dtype=dtype or x.dtype)


def full_like(x, fill_value, *, dtype=None):
    """full with the shape (and by default the dtype) of ``x``."""
    return full(x.shape, fill_value, dtype=dtype or x.dtype)


def empty_like(x, *, dtype=None):
    """empty with the shape (and by default the dtype) of ``x``."""
    return empty(x.shape, dtype=dtype or x.dtype)


def from_torch(tensor):
    """A Tensor sharing a torch.Tensor's memory (CPU, contiguous), through DLPack."""
    if not hasattr(tensor, "__dlpack__"):
        raise TypeError(f"from_torch expects a torch.Tensor, not {type(tensor).__name__}")
    return _hurray.from_dlpack(tensor)


def sparse_coo(values, indices, shape):
    """A COO Tensor sharing ``values`` (1-D, ``nnz`` elements) and ``indices``
    (uint64, ``nnz`` x rank, row-major) without a copy; the data rules (in range,
    no duplicates) are checked."""
    values = _np.asarray(values)
    if values.ndim != 1:
        raise InvalidArgumentError(f"sparse_coo: values must be 1-D, not {values.ndim}-D")
    if not isinstance(indices, _np.ndarray) or indices.dtype != _np.uint64:
        raise TypeError("sparse_coo: indices must be a numpy uint64 array of shape (nnz, rank)")
    if not values.flags.c_contiguous or not indices.flags.c_contiguous:
        raise UnsupportedError("sparse_coo: values and indices must be C-contiguous")
    shape = [int(d) for d in shape]
    if indices.shape != (values.shape[0], len(shape)):
        raise InvalidArgumentError(
            f"sparse_coo: indices have shape {indices.shape}; {values.shape[0]} values of rank {len(shape)} "
            f"need ({values.shape[0]}, {len(shape)})")
    from ._layout import CooLayout  # noqa: PLC0415 - _layout imports the package's extension first
    return Tensor(values, hurray_dtype(values.dtype), shape, layout=CooLayout(values.shape[0]),
                  aux_buffers=[indices])
