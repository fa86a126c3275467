# SPDX-License-Identifier: Apache-2.0
"""scipy.sparse interop: ``hurray.from_scipy(matrix)`` and ``Tensor.to_scipy()``.

    m = scipy.sparse.csr_matrix(dense)
    m.indices = m.indices.astype(np.uint64)     # Hurray's index buffers are uint64
    m.indptr = m.indptr.astype(np.uint64)
    t = hurray.from_scipy(m)                    # CSR tensor over m's three arrays, no copy
    back = t.to_scipy()                         # scipy.sparse.csr_matrix again

SciPy is optional: it is imported when one of these is called, never by
``import hurray``; without it they raise ImportError.
"""

import numpy as _np

from ._errors import InvalidDescriptorError, UnsupportedError

_NO_SCIPY = "scipy.sparse interop needs SciPy, which is not installed (e.g. pip install scipy or apt install python3-scipy)"


def _scipy_sparse():
    try:
        import scipy.sparse as sp  # noqa: PLC0415 - optional dependency, imported on use
    except ImportError as exc:
        raise ImportError(_NO_SCIPY) from exc
    return sp


def _index_array(matrix, attr):
    arr = getattr(matrix, attr)
    if not isinstance(arr, _np.ndarray) or arr.dtype != _np.dtype(_np.uint64):
        got = getattr(arr, "dtype", type(arr).__name__)
        raise UnsupportedError(
            f"from_scipy: the matrix's {attr} are {got}, Hurray's index buffers are uint64; convert them "
            f"first: matrix.{attr} = matrix.{attr}.astype(numpy.uint64)")
    return arr


def from_scipy(matrix):
    """A CSR or CSC ``hurray.Tensor`` over a ``scipy.sparse`` matrix's arrays, without a copy.

    Takes ``csr_matrix``/``csr_array`` (layout CSR: values ``data``, column
    indices ``indices``, row pointers ``indptr``) and ``csc_matrix``/
    ``csc_array`` (layout CSC). The tensor views the matrix's ``data``,
    ``indices`` and ``indptr`` arrays and keeps them alive; writing through
    either side is seen by the other. Boolean matrices are the exception:
    Hurray packs bools 8 per byte, so their values are packed into a new buffer.

    ``indices`` and ``indptr`` must already be uint64 (SciPy picks int32 or
    int64): UnsupportedError otherwise, naming the cast to make. COO, BSR, DIA,
    LIL and DOK matrices raise UnsupportedError (for COO, ``hurray.sparse_coo``
    takes the coordinates packed as an (nnz, 2) uint64 array). A value dtype
    without a Hurray element type (or big-endian) raises UnsupportedError. The
    data rules of the layout (sorted, in-range, duplicate-free indices, a
    monotonic pointer array) are checked by the C++ core: InvalidDescriptorError
    when the matrix breaks them (``matrix.sum_duplicates()`` puts a matrix in
    canonical form). ImportError without SciPy; TypeError for an object that is
    not a scipy.sparse matrix.
    """
    sp = _scipy_sparse()
    if not sp.issparse(matrix):
        raise TypeError(f"from_scipy expects a scipy.sparse matrix or array, not {type(matrix).__name__}")
    fmt = matrix.format
    if fmt == "coo":
        raise UnsupportedError(
            "from_scipy takes CSR and CSC matrices, not COO: SciPy keeps COO rows and columns in two arrays "
            "while a Hurray COO tensor has one (nnz, rank) uint64 coordinate buffer. Build it with "
            "hurray.sparse_coo(m.data, numpy.stack([m.row, m.col], axis=1).astype(numpy.uint64), m.shape), "
            "or convert with m.tocsr()")
    if fmt not in ("csr", "csc"):
        raise UnsupportedError(f"from_scipy takes CSR and CSC matrices, not {fmt.upper()} (convert with .tocsr())")
    if len(matrix.shape) != 2:
        raise InvalidDescriptorError(f"from_scipy: a {fmt.upper()} tensor has rank 2, the matrix has shape "
                                     f"{matrix.shape}")
    from . import _tensor  # noqa: PLC0415 - _tensor needs the initialized package
    from ._layout import CscLayout, CsrLayout  # noqa: PLC0415

    values = matrix.data
    indices = _index_array(matrix, "indices")
    indptr = _index_array(matrix, "indptr")
    if not isinstance(values, _np.ndarray) or values.ndim != 1:
        raise TypeError("from_scipy: the matrix's data is not a 1-D numpy array")
    dt = _tensor.hurray_dtype(values.dtype)
    nnz = int(matrix.nnz)
    if dt.name == "bool":
        values = _np.packbits(values[:nnz], bitorder="little")
    layout = CsrLayout(nnz) if fmt == "csr" else CscLayout(nnz)
    try:
        return _tensor.Tensor(values, dt, [int(d) for d in matrix.shape], aux_buffers=[indices, indptr],
                              layout=layout)
    except InvalidDescriptorError as exc:
        # SciPy's own canonical-form check cannot run on uint64 indices, so the
        # core's complaint about the order is where a hint is added.
        if "increasing" not in str(exc):
            raise
        raise InvalidDescriptorError(f"{exc}; SciPy's matrix.sum_duplicates() (with int32/int64 indices, before "
                                     f"the uint64 cast) sorts the indices and merges duplicates") from exc


def to_scipy(tensor):
    """The ``scipy.sparse.csr_matrix`` (CSR tensor) or ``csc_matrix`` (CSC tensor) of the same values.

    The values are shared without a copy for every element type NumPy has
    (complex64 and complex128 included) but bool, whose packed bits are
    unpacked into a new array; SciPy converts the uint64 index arrays to its
    own index type (int32 or int64), which copies them. UnsupportedError for
    any other layout (COO: read ``.values`` and ``.indices``), for element
    types without a NumPy dtype (bfloat16, sub-byte and float8 types), for
    quantized tensors and for dynamic dimensions. ImportError without SciPy.
    """
    from . import _tensor  # noqa: PLC0415 - _tensor needs the initialized package

    name = tensor.layout.name
    if name == "coo":
        raise UnsupportedError(
            "to_scipy: SciPy has no matrix for a Hurray COO tensor's packed coordinates; build one from "
            "t.values and t.indices: scipy.sparse.coo_matrix((vals, (idx[:, 0], idx[:, 1])), shape=t.shape)")
    if name not in ("csr", "csc"):
        raise UnsupportedError(f"to_scipy: only csr and csc tensors have a scipy.sparse matrix, not {name}")
    if tensor.quantization is not None:
        raise UnsupportedError("to_scipy: the tensor is quantized; SciPy has no type for its stored values")
    if tensor.dtype.name not in _tensor._TO_NUMPY:
        raise UnsupportedError(f"to_scipy: NumPy and SciPy have no element type for {tensor.dtype.name}")
    if any(d is None for d in tensor.shape):
        raise UnsupportedError("to_scipy: the tensor has a dynamic dimension")
    sp = _scipy_sparse()
    values = _np.asarray(tensor.values)
    if name == "csr":
        index, pointer, cls = tensor.col_indices, tensor.row_ptr, sp.csr_matrix
    else:
        index, pointer, cls = tensor.row_indices, tensor.col_ptr, sp.csc_matrix
    return cls((values, _np.asarray(index), _np.asarray(pointer)), shape=tuple(tensor.shape), copy=False)
