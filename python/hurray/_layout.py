# SPDX-License-Identifier: Apache-2.0
"""``hurray.Layout`` and ``hurray.Quantization``: what ``Tensor.layout`` and ``Tensor.quantization`` return.

    t.layout.name          # "row_major", "csr", ...
    t.layout.is_dense      # True for directly addressable element orders
    t.quantization         # None, or hurray.Quantization(scheme='per_block_affine')

Inspection only for now: a layout object describes a tensor's memory layout
(its tag, name, buffer count and parameters such as ``nnz`` or ``strides``);
it cannot yet be passed to the ``hurray.Tensor`` constructor.
"""

from . import _hurray

__all__ = ["Layout", "Quantization"]

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


class Quantization:
    """A quantized tensor's scheme: ``scheme`` (its name, e.g. ``"per_block_affine"``) and ``tag``."""

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
    return Layout(tag, name, 0 if tag == 0x0B else buffer_count, params)


_hurray._set_inspection_support(_make_layout, Quantization)
