# SPDX-License-Identifier: Apache-2.0
"""``hurray.Layout`` and ``hurray.Quantization``: what ``Tensor.layout`` and ``Tensor.quantization`` return.

    t.layout.name          # "row_major", "csr", ...
    t.layout.is_dense      # True for directly addressable element orders
    t.quantization         # None, or its scheme: PerBlockAffine.symmetric(...), ... (_quantization.py)

A layout object describes a tensor's memory layout (its tag, name, buffer
count and parameters such as ``nnz`` or ``strides``). The classes for the
dense, strided and sparse layouts (RowMajorLayout, ColMajorLayout,
StridedLayout, CooLayout, CsrLayout, CscLayout, CsfLayout) can also be passed
to ``hurray.Tensor(..., layout=..., aux_buffers=[...])``; tiled, curve,
block-paged and composite layouts are inspection only for now.
"""

from . import _hurray
from ._errors import InvalidDescriptorError

__all__ = ["ColMajorLayout", "CooLayout", "CscLayout", "CsfLayout", "CsrLayout", "Layout", "Quantization",
           "RowMajorLayout", "StridedLayout"]

# The reference module's names per layout tag (our core calls 0x02 "column_major").
_NAMES = {0x01: "row_major", 0x02: "col_major", 0x03: "strided", 0x04: "tiled", 0x05: "morton", 0x40: "hilbert",
          0x06: "coo", 0x07: "csr", 0x08: "csc", 0x09: "csf", 0x0A: "block_paged", 0x0B: "composite"}
_DENSE = {0x01, 0x02, 0x03, 0x04, 0x05, 0x40}


class Layout:
    """A tensor's memory layout (ADR-032): immutable, hashable, compared by value.

    ``tag`` (the layout tag byte), ``name``, ``buffer_count`` (buffers the layout
    itself uses, before quantization parameters), ``is_dense`` (one buffer of
    directly addressable elements), ``is_virtual`` (a composite head, no buffers),
    and the layout's parameters as attributes: ``nnz`` (sparse), ``is_sorted``
    (COO), ``strides`` (strided), ``mode_order`` (CSF); ``params`` holds them all.
    """

    __slots__ = ("tag", "name", "buffer_count", "params")

    def __init__(self, tag, name, buffer_count, params=None):
        object.__setattr__(self, "tag", tag)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "buffer_count", buffer_count)
        object.__setattr__(self, "params", dict(params or {}))

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Layout is immutable")

    def __getattr__(self, key):
        params = object.__getattribute__(self, "params")
        if key in params:
            return params[key]
        raise AttributeError(f"a {object.__getattribute__(self, 'name')} layout has no {key!r}")

    @property
    def is_dense(self):
        """Whether the elements lie in one directly addressable buffer (row/column-major, strided, tiled, curves)."""
        return self.tag in _DENSE

    @property
    def is_virtual(self):
        """Whether it is a composite head, which owns no buffers."""
        return self.tag == 0x0B

    def __eq__(self, other):
        if isinstance(other, Layout):
            return (self.tag, self.params) == (other.tag, other.params)
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(("hurray.Layout", self.tag, tuple(sorted(self.params.items()))))

    def __repr__(self):
        return f"Layout(tag=0x{self.tag:02X}, name='{self.name}')"


class RowMajorLayout(Layout):
    """Dense row-major (C order): the default layout."""

    def __init__(self):
        super().__init__(0x01, "row_major", 1)


class ColMajorLayout(Layout):
    """Dense column-major (Fortran order)."""

    def __init__(self):
        super().__init__(0x02, "col_major", 1)


class StridedLayout(Layout):
    """Dense with one stride per dimension, in logical elements (not bytes as in NumPy)."""

    def __init__(self, strides):
        super().__init__(0x03, "strided", 1, {"strides": tuple(int(s) for s in strides)})

    def __repr__(self):
        return f"StridedLayout(strides={list(self.strides)})"


class CooLayout(Layout):
    """Sparse COO: buffer 0 the ``nnz`` values, buffer 1 their coordinates (uint64, ``nnz`` x rank)."""

    def __init__(self, nnz, is_sorted=False):
        super().__init__(0x06, "coo", 2, {"nnz": _count(nnz), "is_sorted": bool(is_sorted)})

    def __repr__(self):
        return f"CooLayout(nnz={self.nnz}, is_sorted={self.is_sorted})"


class CsrLayout(Layout):
    """Sparse CSR (rank 2): values, col_indices (uint64, ``nnz``), row_ptr (uint64, rows + 1)."""

    def __init__(self, nnz):
        super().__init__(0x07, "csr", 3, {"nnz": _count(nnz)})

    def __repr__(self):
        return f"CsrLayout(nnz={self.nnz})"


class CscLayout(Layout):
    """Sparse CSC (rank 2): values, row_indices (uint64, ``nnz``), col_ptr (uint64, columns + 1)."""

    def __init__(self, nnz):
        super().__init__(0x08, "csc", 3, {"nnz": _count(nnz)})

    def __repr__(self):
        return f"CscLayout(nnz={self.nnz})"


class CsfLayout(Layout):
    """Sparse CSF (rank >= 3): values, then a (pos, crd) uint64 pair per level, levels in ``mode_order``."""

    def __init__(self, nnz, mode_order):
        order = tuple(int(m) for m in mode_order)
        super().__init__(0x09, "csf", 2 * len(order) + 1, {"nnz": _count(nnz), "mode_order": order})

    def __repr__(self):
        return f"CsfLayout(nnz={self.nnz}, mode_order={list(self.mode_order)})"


def _count(nnz):
    if not isinstance(nnz, int) or isinstance(nnz, bool) or nnz < 0:
        raise InvalidDescriptorError(f"nnz must be a non-negative int, got {nnz!r}")
    return nnz


_CLASSES = {0x01: RowMajorLayout, 0x02: ColMajorLayout, 0x03: StridedLayout, 0x06: CooLayout, 0x07: CsrLayout,
            0x08: CscLayout, 0x09: CsfLayout}


class Quantization:
    """A quantized tensor's scheme: ``scheme`` (its name, e.g. ``"per_block_affine"``) and ``tag``.

    The base class of the scheme classes (hurray.PerTensorAffine, ...,
    _quantization.py), which add their parameters; a bare Quantization names a
    private or unknown scheme read from a file.
    """

    __slots__ = ("tag", "scheme")

    def __init__(self, tag, scheme):
        object.__setattr__(self, "tag", tag)
        object.__setattr__(self, "scheme", scheme)

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Quantization is immutable")

    @property
    def name(self):
        """The scheme's name (same as ``scheme``)."""
        return self.scheme

    def __eq__(self, other):
        if isinstance(other, Quantization):
            return self.tag == other.tag
        return NotImplemented

    def __hash__(self):
        return hash(("hurray.Quantization", self.tag))

    def __repr__(self):
        return f"hurray.Quantization(scheme='{self.scheme}')"


def _make_layout(tag, core_name, buffer_count, params):
    name = _NAMES.get(tag) or core_name or "extension"
    layout = object.__new__(_CLASSES.get(tag, Layout))
    Layout.__init__(layout, tag, name, 0 if tag == 0x0B else buffer_count, params)
    return layout


_hurray._set_inspection_support(_make_layout, Quantization)
