# SPDX-License-Identifier: Apache-2.0
"""The layout descriptor classes (``t.layout``) and ``hurray.Quantization``.

    t.layout                       # CsrLayout(nnz=2), RowMajorLayout(), ...
    t.layout.name                  # "row_major", "csr", "tiled", ...
    isinstance(t.layout, hurray.TiledLayout)
    hurray.Tensor(data, hurray.float32, [2, 2], aux_buffers=[...], layout=hurray.CsrLayout(nnz=2))

Every layout the format defines has a class derived from ``hurray.Layout``:
RowMajorLayout, ColMajorLayout, StridedLayout, TiledLayout, MortonLayout,
HilbertLayout (dense), CooLayout, CsrLayout, CscLayout, CsfLayout (sparse),
BlockPagedLayout (indirect), CompositeLayout (a virtual head),
PrivateExtensionLayout (tags 0xF0-0xFE) and UnknownLayout (an unassigned tag).
Layout objects are immutable values: they compare and hash by their
parameters, never equal a string, and hold no reference to a tensor.

The rules a layout's parameters must follow on their own (tile shapes, Morton
bits, Hilbert order, composition rules, extension tags) are checked by
libhurray when the object is made (InvalidDescriptorError); the rules that
need the tensor's shape and buffers are checked by ``hurray.Tensor``.
Strides (StridedLayout, the tiled layout's outer and inner strides) count
logical elements (tiles for the outer ones), not bytes, and may be zero or
negative.
"""

import operator as _operator

from . import _hurray
from ._errors import InvalidDescriptorError
from ._value import ByValue

__all__ = ["BlockPagedLayout", "ColMajorLayout", "CompositeLayout", "CooLayout", "CscLayout", "CsfLayout",
           "CsrLayout", "HilbertLayout", "Layout", "MortonLayout", "PrivateExtensionLayout", "Quantization",
           "RowMajorLayout", "StridedLayout", "TiledLayout", "UnknownLayout"]

# Layout tags (docs/spec/memory-layout.md).
_ROW_MAJOR, _COL_MAJOR, _STRIDED, _TILED, _MORTON = 0x01, 0x02, 0x03, 0x04, 0x05
_COO, _CSR, _CSC, _CSF, _BLOCK_PAGED, _COMPOSITE, _HILBERT = 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x40

# The names the tiled layout uses for its outer and inner element orders.
_TILE_ORDERS = ("row_major", "col_major", "strided", "tiled")
_KV_ROLES = ("key", "value", "fused")
_INDEX_TYPES = ("uint32", "uint64")
_RULES = ("partition", "overlay", "group")
_COMBINE_OPS = ("replace", "add")
_NO_LAYER = 0xFFFFFFFF


class _OutOfRangeError(InvalidDescriptorError, OverflowError):
    """An integer layout parameter outside its field's range (also an OverflowError)."""


def _uint(value, bits, what):
    """``value`` as an int of ``bits`` unsigned bits: TypeError for non-integers, OverflowError outside."""
    try:
        number = _operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if number < 0 or number >= 1 << bits:
        raise _OutOfRangeError(f"{what} must be in [0, 2**{bits}), got {number}")
    return number


def _ints(values, bits, what, signed=False):
    """A tuple of ints from a sequence (not a string), each within ``bits`` (signed or unsigned)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ints, not {type(values).__name__}")
    out = []
    for value in values:
        if not signed:
            out.append(_uint(value, bits, what))
            continue
        try:
            number = _operator.index(value)
        except TypeError:
            raise TypeError(f"{what} must hold ints, not {type(value).__name__}") from None
        if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
            raise _OutOfRangeError(f"{what}: {number} does not fit a signed {bits}-bit integer")
        out.append(number)
    return tuple(out)


def _choice(value, allowed, what):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{what} {value!r} is not one of " + ", ".join(repr(a) for a in allowed))
    return value


def _blob(value, what):
    if value is None:
        return b""
    try:
        return bytes(memoryview(value))
    except TypeError:
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}") from None


def _tuple_repr(values):
    return repr(tuple(values))


def _param(key, doc):
    """A read-only property giving the layout parameter ``key``."""
    return property(lambda self: self._params[key], doc=doc)


class Layout(ByValue):
    """A tensor's memory layout: a layout tag plus that layout's parameters (ADR-032).

    The base of every layout class; not constructible itself. ``t.layout``
    returns a bare ``Layout`` (with ``tag`` and ``name``) only for a layout
    this build cannot describe further. Layouts are immutable, compare and
    hash by value, and never equal a string (compare ``layout.name``).

    Common attributes: ``tag`` (the layout tag byte), ``name`` (the spec's
    name: ``"row_major"``, ``"col_major"``, ``"strided"``, ``"tiled"``,
    ``"morton"``, ``"hilbert"``, ``"coo"``, ``"csr"``, ``"csc"``, ``"csf"``,
    ``"block_paged"``, ``"composite"``, or ``"extension"`` for private and
    unknown tags), ``buffer_count`` (buffers the layout itself uses, 0 for a
    composite head, None when unknowable), ``is_dense``, ``is_virtual``, and
    ``params`` (every parameter, as a new dict).
    """

    __slots__ = ("_tag", "_name", "_params")

    # Set by each subclass.
    _TAG = None
    _NAME = None
    _DENSE = False

    def __init__(self, *args, **kwargs):
        raise TypeError("hurray.Layout cannot be constructed; use a concrete layout class "
                        "(hurray.RowMajorLayout(), hurray.CsrLayout(nnz=4), ...)")

    def _set(self, tag, params):
        object.__setattr__(self, "_tag", tag)
        object.__setattr__(self, "_name", self._NAME)
        object.__setattr__(self, "_params", params)

    @classmethod
    def _from_params(cls, tag, params):
        """An instance with already validated parameters (used for layouts read from tensors)."""
        layout = object.__new__(cls)
        layout._set(tag, params)
        return layout

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, key):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self):
        return (_rebuild, (type(self), self._tag, self._name, self._params))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    @property
    def tag(self):
        """The layout tag byte (0x01 row-major ... 0x0B composite, 0x40 Hilbert, 0xF0-0xFE private)."""
        return self._tag

    @property
    def name(self):
        """The layout's name from the specification (``"extension"`` for private and unknown tags)."""
        return self._name

    @property
    def buffer_count(self):
        """How many buffers the layout itself uses: 0 for a composite head, None for private and unknown ones."""
        return None

    @property
    def is_dense(self):
        """Whether every element sits in one directly addressable buffer (row/column-major, strided, tiled, curves)."""
        return self._DENSE

    @property
    def is_virtual(self):
        """Whether the layout owns no buffers (a composite head)."""
        return False

    @property
    def params(self):
        """The layout's parameters as a new dict (``{"nnz": 4}``, ``{"strides": (4, 1)}``, ...)."""
        return dict(self._params)

    def _key(self):
        return (self._tag, self._name, tuple(self._params.items()))

    def __repr__(self):
        return f"Layout(tag=0x{self._tag:02X}, name='{self._name}')"


def _rebuild(cls, tag, name, params):
    layout = object.__new__(cls)
    object.__setattr__(layout, "_tag", tag)
    object.__setattr__(layout, "_name", name)
    object.__setattr__(layout, "_params", params)
    return layout


def _bare(tag, name):
    """The fallback object for a layout this build has no class for."""
    return _rebuild(Layout, tag, name or "extension", {})


class _OneBuffer(Layout):
    __slots__ = ()
    _DENSE = True

    @property
    def buffer_count(self):
        """1: the elements' buffer."""
        return 1


class RowMajorLayout(_OneBuffer):
    """Dense row-major (C order), the default layout. ``RowMajorLayout()``."""

    __slots__ = ()
    _TAG, _NAME = _ROW_MAJOR, "row_major"

    def __init__(self):
        self._set(_ROW_MAJOR, {})

    def __repr__(self):
        return "RowMajorLayout()"


class ColMajorLayout(_OneBuffer):
    """Dense column-major (Fortran order). ``ColMajorLayout()``."""

    __slots__ = ()
    _TAG, _NAME = _COL_MAJOR, "col_major"

    def __init__(self):
        self._set(_COL_MAJOR, {})

    def __repr__(self):
        return "ColMajorLayout()"


class StridedLayout(_OneBuffer):
    """Dense with one stride per dimension: ``StridedLayout([4, 1])``.

    Strides count logical elements (not bytes as in NumPy), are signed, and
    may be zero; their number must equal the tensor's rank.
    """

    __slots__ = ()
    _TAG, _NAME = _STRIDED, "strided"

    def __init__(self, strides):
        self._set(_STRIDED, {"strides": _ints(strides, 64, "strides", signed=True)})

    strides = _param("strides", "The per-dimension strides in elements, a tuple.")

    def __repr__(self):
        return f"StridedLayout(strides={_tuple_repr(self.strides)})"


class TiledLayout(_OneBuffer):
    """Dense in regular tiles: ``TiledLayout(tile_shape, outer_layout="row_major",
    inner_layout="row_major", outer_strides=None, inner_strides=None, inner_tiled=None)``.

    ``tile_shape`` has one extent (> 0) per dimension. ``outer_layout`` orders
    the tiles (``"row_major"``, ``"col_major"`` or ``"strided"`` with
    ``outer_strides``, counted in tiles); ``inner_layout`` orders the elements
    inside a tile (the same, with ``inner_strides`` in elements, or
    ``"tiled"`` with ``inner_tiled``, a nested TiledLayout). libhurray checks
    the combination (InvalidDescriptorError), including the nesting depth.
    """

    __slots__ = ()
    _TAG, _NAME = _TILED, "tiled"

    def __init__(self, tile_shape, outer_layout="row_major", inner_layout="row_major", outer_strides=None,
                 inner_strides=None, inner_tiled=None):
        if inner_tiled is not None and not isinstance(inner_tiled, TiledLayout):
            raise TypeError(f"inner_tiled must be a hurray.TiledLayout or None, not {type(inner_tiled).__name__}")
        self._set(_TILED, {
            "tile_shape": _ints(tile_shape, 64, "tile_shape"),
            "outer_layout": _choice(outer_layout, _TILE_ORDERS, "outer_layout"),
            "inner_layout": _choice(inner_layout, _TILE_ORDERS, "inner_layout"),
            # No strides and an empty list are the same descriptor: both read back as None.
            "outer_strides": _ints(outer_strides, 64, "outer_strides", True) or None if outer_strides is not None
            else None,
            "inner_strides": _ints(inner_strides, 64, "inner_strides", True) or None if inner_strides is not None
            else None,
            "inner_tiled": inner_tiled,
        })
        _hurray._check_layout(self)

    tile_shape = _param("tile_shape", "The tile's extent per dimension, a tuple.")
    outer_layout = _param("outer_layout",
                          'The order of the tiles: ``"row_major"``, ``"col_major"`` or ``"strided"``.')
    inner_layout = _param("inner_layout",
                          'The order inside a tile: ``"row_major"``, ``"col_major"``, ``"strided"`` or ``"tiled"``.')
    outer_strides = _param("outer_strides",
                           "The tile-grid strides in tiles when ``outer_layout`` is strided, else None.")
    inner_strides = _param("inner_strides",
                           "The in-tile strides in elements when ``inner_layout`` is strided, else None.")
    inner_tiled = _param("inner_tiled", 'The nested TiledLayout when ``inner_layout`` is ``"tiled"``, else None.')

    def __repr__(self):
        # The core bounds the nesting depth, so this recursion is shallow.
        shape = _tuple_repr(self.tile_shape)
        text = f"TiledLayout(tile_shape={shape}, outer_layout='{self.outer_layout}', inner_layout='{self.inner_layout}'"
        if self.outer_strides is not None:
            text += f", outer_strides={_tuple_repr(self.outer_strides)}"
        if self.inner_strides is not None:
            text += f", inner_strides={_tuple_repr(self.inner_strides)}"
        if self.inner_tiled is not None:
            text += f", inner_tiled={self.inner_tiled!r}"
        return text + ")"


class MortonLayout(_OneBuffer):
    """Dense in Z-order (Morton curve): ``MortonLayout(morton_bits)``, bits per dimension (each > 0, sum <= 63);
    dimension ``k`` holds at most ``2**morton_bits[k]`` elements."""

    __slots__ = ()
    _TAG, _NAME = _MORTON, "morton"

    def __init__(self, morton_bits):
        self._set(_MORTON, {"morton_bits": _ints(morton_bits, 32, "morton_bits")})
        _hurray._check_layout(self)

    morton_bits = _param("morton_bits", "Bits of the curve index per dimension, a tuple.")

    def __repr__(self):
        return f"MortonLayout(morton_bits={_tuple_repr(self.morton_bits)})"


class HilbertLayout(_OneBuffer):
    """Dense along a Hilbert curve: ``HilbertLayout(hilbert_order, hilbert_rank)``; the tensor has rank
    ``hilbert_rank`` (>= 2) and every dimension is ``2**hilbert_order`` (order >= 1)."""

    __slots__ = ()
    _TAG, _NAME = _HILBERT, "hilbert"

    def __init__(self, hilbert_order, hilbert_rank):
        self._set(_HILBERT, {"hilbert_order": _uint(hilbert_order, 32, "hilbert_order"),
                             "hilbert_rank": _uint(hilbert_rank, 32, "hilbert_rank")})
        _hurray._check_layout(self)

    hilbert_order = _param("hilbert_order", "The curve's order: each dimension is ``2**hilbert_order``.")
    hilbert_rank = _param("hilbert_rank", "The tensor rank the curve covers.")

    def __repr__(self):
        return f"HilbertLayout(hilbert_order={self.hilbert_order}, hilbert_rank={self.hilbert_rank})"


class CooLayout(Layout):
    """Sparse COO: ``CooLayout(nnz, is_sorted=False)``. Buffer 0 holds the ``nnz`` values, buffer 1
    their coordinates (uint64, ``nnz`` x rank, row-major). ``nnz`` is required, never inferred."""

    __slots__ = ()
    _TAG, _NAME = _COO, "coo"

    def __init__(self, nnz, is_sorted=False):
        self._set(_COO, {"nnz": _uint(nnz, 64, "nnz"), "is_sorted": bool(is_sorted)})

    @property
    def buffer_count(self):
        """2: values and indices."""
        return 2

    nnz = _param("nnz", "The number of stored elements.")
    is_sorted = _param("is_sorted",
                       "Whether the coordinates are in increasing lexicographic order (dimension 0 major).")

    def __repr__(self):
        return f"CooLayout(nnz={self.nnz}, is_sorted={self.is_sorted})"


class CsrLayout(Layout):
    """Sparse CSR (rank 2): ``CsrLayout(nnz)``. Buffers: values, col_indices (uint64, ``nnz``),
    row_ptr (uint64, rows + 1)."""

    __slots__ = ()
    _TAG, _NAME = _CSR, "csr"

    def __init__(self, nnz):
        self._set(_CSR, {"nnz": _uint(nnz, 64, "nnz")})

    @property
    def buffer_count(self):
        """3: values, col_indices, row_ptr."""
        return 3

    nnz = _param("nnz", "The number of stored elements.")

    def __repr__(self):
        return f"CsrLayout(nnz={self.nnz})"


class CscLayout(Layout):
    """Sparse CSC (rank 2): ``CscLayout(nnz)``. Buffers: values, row_indices (uint64, ``nnz``),
    col_ptr (uint64, columns + 1)."""

    __slots__ = ()
    _TAG, _NAME = _CSC, "csc"

    def __init__(self, nnz):
        self._set(_CSC, {"nnz": _uint(nnz, 64, "nnz")})

    @property
    def buffer_count(self):
        """3: values, row_indices, col_ptr."""
        return 3

    nnz = _param("nnz", "The number of stored elements.")

    def __repr__(self):
        return f"CscLayout(nnz={self.nnz})"


class CsfLayout(Layout):
    """Sparse CSF (rank >= 3): ``CsfLayout(nnz, mode_order)``. Buffers: values, then a (pos, crd) uint64
    pair per level; level ``L`` stores dimension ``mode_order[L]`` (a permutation of the dimensions)."""

    __slots__ = ()
    _TAG, _NAME = _CSF, "csf"

    def __init__(self, nnz, mode_order):
        self._set(_CSF, {"nnz": _uint(nnz, 64, "nnz"), "mode_order": _ints(mode_order, 32, "mode_order")})

    @property
    def buffer_count(self):
        """``2 * len(mode_order) + 1``."""
        return 2 * len(self.mode_order) + 1

    nnz = _param("nnz", "The number of stored elements.")
    mode_order = _param("mode_order", "The dimension each level stores, a tuple.")

    def __repr__(self):
        return f"CsfLayout(nnz={self.nnz}, mode_order={_tuple_repr(self.mode_order)})"


class BlockPagedLayout(Layout):
    """A paged KV cache (rank 3, ``[total_tokens, num_heads, head_dim]``): ``BlockPagedLayout(page_size,
    num_pages, paged_axis, num_seqs, kv_role="key", layer_index=None, block_table_index_type="uint32")``.

    Buffers: the page pool, the block table and the sequence pointers
    (``block_table_index_type`` entries). ``kv_role`` is ``"key"``,
    ``"value"`` or ``"fused"``; ``layer_index`` None means not layer-scoped.
    The rules that need the shape (rank 3, ``paged_axis`` 0, ``page_size`` >=
    1) are checked when a tensor is built.
    """

    __slots__ = ()
    _TAG, _NAME = _BLOCK_PAGED, "block_paged"

    def __init__(self, page_size, num_pages, paged_axis, num_seqs, kv_role="key", layer_index=None,
                 block_table_index_type="uint32"):
        layer = None if layer_index is None else _uint(layer_index, 32, "layer_index")
        if layer == _NO_LAYER:
            raise ValueError("layer_index 0xFFFFFFFF is the wire value for 'no layer'; pass layer_index=None")
        self._set(_BLOCK_PAGED, {
            "page_size": _uint(page_size, 32, "page_size"),
            "num_pages": _uint(num_pages, 64, "num_pages"),
            "paged_axis": _uint(paged_axis, 32, "paged_axis"),
            "num_seqs": _uint(num_seqs, 32, "num_seqs"),
            "kv_role": _choice(kv_role, _KV_ROLES, "kv_role"),
            "layer_index": layer,
            "block_table_index_type": _choice(block_table_index_type, _INDEX_TYPES, "block_table_index_type"),
        })

    @property
    def buffer_count(self):
        """3: page pool, block table, sequence pointers."""
        return 3

    page_size = _param("page_size", "Tokens per page.")
    num_pages = _param("num_pages", "Pages in the pool.")
    paged_axis = _param("paged_axis", "The axis split into pages (0).")
    num_seqs = _param("num_seqs", "Sequences in the batch.")
    kv_role = _param("kv_role", '``"key"``, ``"value"`` or ``"fused"``.')
    layer_index = _param("layer_index", "The model layer, or None.")
    block_table_index_type = _param("block_table_index_type",
                                    '``"uint32"`` or ``"uint64"``: the element type of the block table and sequence pointers.')

    def __repr__(self):
        p = self._params
        return (f"BlockPagedLayout(page_size={p['page_size']}, num_pages={p['num_pages']}, "
                f"paged_axis={p['paged_axis']}, num_seqs={p['num_seqs']}, kv_role='{p['kv_role']}', "
                f"layer_index={p['layer_index']}, block_table_index_type='{p['block_table_index_type']}')")


class CompositeLayout(Layout):
    """A composite head: ``CompositeLayout(composition_rule, member_count, combine_op=None)``.

    ``composition_rule`` is ``"partition"``, ``"overlay"`` or ``"group"``;
    ``combine_op`` (``"replace"`` or ``"add"``) is required for an overlay and
    refused otherwise (ValueError). A head owns no buffers, so
    ``hurray.Tensor(..., layout=CompositeLayout(...))`` raises UnsupportedError;
    the class describes heads read from files and streams.
    """

    __slots__ = ()
    _TAG, _NAME = _COMPOSITE, "composite"

    def __init__(self, composition_rule, member_count, combine_op=None):
        rule = _choice(composition_rule, _RULES, "composition_rule")
        if rule == "overlay":
            if combine_op is None:
                raise ValueError("an overlay composite needs combine_op='replace' or combine_op='add'")
            op = _choice(combine_op, _COMBINE_OPS, "combine_op")
        elif combine_op is not None:
            raise ValueError(f"combine_op applies only to an 'overlay' composite, not to {rule!r}")
        else:
            op = None
        self._set(_COMPOSITE, {"composition_rule": rule, "member_count": _uint(member_count, 32, "member_count"),
                               "combine_op": op})
        _hurray._check_layout(self)

    @property
    def buffer_count(self):
        """0: a head owns no buffers."""
        return 0

    @property
    def is_virtual(self):
        """True: a composite head owns no buffers."""
        return True

    composition_rule = _param("composition_rule",
                              '``"partition"``, ``"overlay"`` or ``"group"`` (``"unknown"`` for a private rule read permissively).')
    combine_op = _param("combine_op", '``"replace"`` or ``"add"`` for an overlay; None for the other rules.')
    member_count = _param("member_count", "How many members follow the head.")

    def __repr__(self):
        text = f"CompositeLayout(composition_rule='{self.composition_rule}', member_count={self.member_count}"
        if self.combine_op is not None:
            text += f", combine_op='{self.combine_op}'"
        return text + ")"


class PrivateExtensionLayout(Layout):
    """An implementation-private layout: ``PrivateExtensionLayout(tag, extension_layout_id, extension_data=None)``,
    ``tag`` in 0xF0-0xFE. Its buffer count is unknown (None), so ``hurray.Tensor`` cannot check
    the buffers' count and sizes against it."""

    __slots__ = ()
    _NAME = "extension"

    def __init__(self, tag, extension_layout_id, extension_data=None):
        self._set(_uint(tag, 8, "tag"), {"extension_layout_id": _uint(extension_layout_id, 64, "extension_layout_id"),
                                         "extension_data": _blob(extension_data, "extension_data")})
        _hurray._check_layout(self)

    extension_layout_id = _param("extension_layout_id", "The implementation-defined layout id.")
    extension_data = _param("extension_data", "The layout's opaque parameter bytes.")

    def __repr__(self):
        return (f"PrivateExtensionLayout(tag=0x{self._tag:02X}, extension_layout_id={self.extension_layout_id}, "
                f"extension_data={len(self.extension_data)} bytes)")


class UnknownLayout(Layout):
    """A layout tag with no assigned meaning in this version: ``UnknownLayout(tag, raw_bytes=None)``.

    Tags with a class of their own (named layouts, 0xF0-0xFE private ones)
    are refused with ValueError; 0x00 and 0xFF are invalid
    (InvalidDescriptorError). A tensor may carry one in memory, with its
    buffers taken as given (the count and sizes cannot be checked), but the
    format cannot encode it: saving or streaming such a tensor fails.
    """

    __slots__ = ()
    _NAME = "extension"

    def __init__(self, tag, raw_bytes=None):
        tag = _uint(tag, 8, "tag")
        known = _CLASSES.get(tag) or (PrivateExtensionLayout if 0xF0 <= tag <= 0xFE else None)
        if known is not None:
            what = known._NAME if known is not PrivateExtensionLayout else "private extension"
            raise ValueError(f"tag 0x{tag:02X} is the {what} layout, not an unknown one; use hurray.{known.__name__}")
        self._set(tag, {"raw_bytes": _blob(raw_bytes, "raw_bytes")})
        _hurray._check_layout(self)

    raw_bytes = _param("raw_bytes", "The layout's parameter bytes, uninterpreted.")

    def __repr__(self):
        return f"UnknownLayout(tag=0x{self._tag:02X}, raw_bytes={len(self.raw_bytes)} bytes)"


_CLASSES = {cls._TAG: cls for cls in (RowMajorLayout, ColMajorLayout, StridedLayout, TiledLayout, MortonLayout,
                                      HilbertLayout, CooLayout, CsrLayout, CscLayout, CsfLayout, BlockPagedLayout,
                                      CompositeLayout)}


class Quantization:
    """A quantized tensor's scheme: ``scheme`` (its name, e.g. ``"per_block_affine"``) and ``tag``.

    The base class of the scheme classes (hurray.PerTensorAffine, ...,
    _quantization.py), which add their parameters; a bare Quantization names a
    private or unknown scheme read from a file.
    """

    __slots__ = ("tag", "scheme")
    # The fields, for type checkers (set once, in __init__, through object.__setattr__).
    tag: int
    scheme: str

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


def _tiled_from_levels(levels):
    inner = None
    for level in reversed(levels):
        params = dict(level)
        params["inner_tiled"] = inner
        inner = TiledLayout._from_params(_TILED, params)
    return inner


def _make_layout(tag, core_name, buffer_count, params):
    """The layout object of a tensor's descriptor (called by the extension with the core's fields)."""
    del buffer_count  # each class knows its own
    if tag == _TILED:
        return _tiled_from_levels(params["levels"])
    cls = _CLASSES.get(tag)
    if cls is None and "extension_layout_id" in params:
        cls = PrivateExtensionLayout
    elif cls is None and "raw_bytes" in params:
        cls = UnknownLayout
    if cls is None:
        return _bare(tag, core_name)
    return cls._from_params(tag, dict(params))


_hurray._set_inspection_support(_make_layout, Quantization)
_hurray._set_layout_class(Layout)
