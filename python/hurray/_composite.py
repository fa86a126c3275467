# SPDX-License-Identifier: Apache-2.0
"""``hurray.Composite``: a tensor made of member tensors (ADR-036).

A composite head owns no data; its members do. A partition tiles the head's
index space with shards, an overlay lays corrections over a base, a group
keeps independent tensors under one identity. Members are ``hurray.Tensor``
objects or composites themselves (nesting is bounded by the core, 8 levels).
The head's shape and dtype are stated, never derived from the members, and
every rule is checked by libhurray's composite validator, not here.
"""

import numpy as _np

from . import _hurray
from ._errors import InvalidArgumentError, UnsupportedError
from ._layout import CompositeLayout as _CompositeLayout

_RULES = ("partition", "overlay", "group")
_NUMPY_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
}
_COMBINE_OPS = ("replace", "add")


def _package():
    import hurray  # the package, imported lazily: this module is part of it

    return hurray


def _dtype_name(dtype):
    """The Hurray element type name of ``dtype`` (str, numpy dtype, hurray dtype)."""
    if isinstance(dtype, str):
        return dtype
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return name
    try:
        return _np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"dtype must be a str, a numpy dtype or a hurray dtype, not {type(dtype).__name__}") from None


def _dtype_object(name):
    """The ``hurray.Dtype`` named ``name`` (the name itself for a private type)."""
    dtype_class = getattr(_package(), "Dtype", None)
    if isinstance(name, str) and dtype_class is not None:
        try:
            return dtype_class.from_name(name)
        except Exception:  # noqa: BLE001 - a name the Dtype class does not know: keep the name
            pass
    return name


def _array_wire(array):
    """(descriptor, [buffer]) of a numpy array as a dense row-major tensor."""
    array = _np.asarray(array)
    name = array.dtype.name
    if name not in _NUMPY_DTYPES:
        raise UnsupportedError(f"numpy dtype {array.dtype} has no Hurray element type")
    order = array.dtype.byteorder
    if array.dtype.itemsize > 1 and (order == ">" or (order == "=" and not _np.little_endian)):
        array = array.astype(array.dtype.newbyteorder("<"))  # Hurray data is little-endian
    # order="C", not ascontiguousarray: that one returns at least 1-d arrays, and a
    # 0-d array or numpy scalar must keep its rank-0 shape.
    array = _np.asarray(array, order="C")
    if name == "bool":
        data = _np.packbits(array.reshape(-1), bitorder="little")  # Hurray packs bools LSB first
    else:
        data = array.reshape(-1).view(_np.uint8)
    return _hurray._wire_dense(name, list(array.shape)), [data]


def _wire_of_tensor(tensor):
    if isinstance(tensor, (_np.ndarray, _np.generic)):
        return _array_wire(tensor)
    wire = getattr(tensor, "_wire", None)
    if wire is None:
        raise TypeError(f"composite members must be hurray.Tensor, hurray.Composite or numpy arrays, not {type(tensor).__name__}")
    descriptor, buffers = wire()
    return bytes(descriptor), list(buffers)


class Composite:
    """A composite tensor: a head (rule, shape, dtype) and its members.

    ``Composite(rule, shape, dtype, members, combine_op=None)`` builds one
    from ``hurray.Tensor`` / ``hurray.Composite`` members (numpy arrays are
    taken as dense tensors); ``rule`` is
    ``"partition"``, ``"overlay"`` or ``"group"``; ``combine_op``
    (``"replace"`` or ``"add"``) applies to overlays only. The composite is
    validated by libhurray (InvalidDescriptorError naming the broken rule).
    Streams read composites back as this class (``hurray.StreamReader``) and
    write them whole (``hurray.StreamWriter.write``).

    ``members`` is a tuple; iterating a composite iterates its members.
    ``hurray.save`` writes composites into files and ``hurray.load`` /
    ``hurray.open(path).tensor(name)`` read them back as this class (members
    viewing the file's mapping). ``to_dense()`` (and ``numpy.asarray``)
    assemble the merged view of a partition or overlay.
    """

    __slots__ = ("_head", "_info", "_members", "_origin")

    def __init__(self, rule, shape, dtype, members, combine_op=None):
        if rule not in _RULES:
            raise InvalidArgumentError(f"composition rule must be one of {_RULES}, not {rule!r}")
        if combine_op is not None and combine_op not in _COMBINE_OPS:
            raise InvalidArgumentError(f"combine_op must be None or one of {_COMBINE_OPS}, not {combine_op!r}")
        if isinstance(members, (Composite, str, bytes)) or not hasattr(members, "__iter__"):
            raise TypeError("members must be a sequence of hurray.Tensor or hurray.Composite")
        members = tuple(members)
        shape = [int(d) for d in shape]
        head = _hurray._wire_composite_head(_dtype_name(dtype), shape, rule, len(members), combine_op or "none")
        descriptors = [descriptor for descriptor, _ in _flatten(members)]
        _hurray._wire_check_composite(head, descriptors)
        self._set(head, members)

    @classmethod
    def _from_wire(cls, head, members):
        """A composite from its encoded head and its members (already objects), as a stream read them."""
        self = cls.__new__(cls)
        self._set(bytes(head), tuple(members))
        return self

    @classmethod
    def _from_file(cls, head, members, head_name, member_names):
        """A composite read from a file: its head, its members (Tensors over the
        mapping, nested composites) and the names they have there."""
        self = cls._from_wire(head, members)
        self._origin = (str(head_name), tuple(str(n) for n in member_names))
        return self

    def _set(self, head, members):
        self._head = head
        self._info = _hurray._wire_info(head)
        self._members = members
        self._origin = None  # (head name, member names) when read from a file

    def _file_entries(self, name):
        """[(name, descriptor bytes, buffers)] of every member in pre-order, for ``save``
        under ``name``: the names the members had in the file the composite was read
        from, when it is saved under the head's name there, else ``name.0``, ``name.1``, ..."""
        if self._origin is not None and self._origin[0] == name and len(self._origin[1]) == len(self._members):
            names = self._origin[1]
        else:
            names = [f"{name}.{i}" for i in range(len(self._members))]
        out = []
        for member_name, m in zip(names, self._members):
            if isinstance(m, Composite):
                out.append((member_name, m._head, []))
                out.extend(m._file_entries(member_name))
            else:
                descriptor, buffers = _wire_of_tensor(m)
                out.append((member_name, descriptor, buffers))
        return out

    def _member_file_names(self):
        """The names of every member (pre-order) in the file the composite was read
        from; empty for a composite that was not read from a file."""
        if self._origin is None:
            return []
        out = []
        for member_name, m in zip(self._origin[1], self._members):
            out.append(member_name)
            if isinstance(m, Composite):
                out.extend(m._member_file_names())
        return out

    def to_dense(self):
        """The merged logical tensor as a new dense row-major ``hurray.Tensor`` (a copy).

        Partition: each member's values placed in its box; overlay: the base,
        then each correction replacing (``"replace"``) or added to (``"add"``)
        what lies under it. A group has no merged view, nor does a composite
        with a nested composite member: ``hurray.UnsupportedError``.
        """
        members = []
        for m in self._members:
            if isinstance(m, Composite):
                members.append((m._head, []))
            else:
                members.append(_wire_of_tensor(m))
        data = _hurray._wire_materialize_composite(self._head, members)
        descriptor = _hurray._wire_dense(self._info["dtype"], list(self._info["shape"]))
        return _package().Tensor._from_wire(descriptor, [data])

    def __array__(self, dtype=None, copy=None):
        """``numpy.asarray(composite)``: the merged view (``to_dense()``) as a numpy array."""
        if copy is False:
            raise ValueError("a composite's merged view is always a new array (copy=False cannot be honoured)")
        array = _np.asarray(self.to_dense())
        return array if dtype is None else array.astype(dtype, copy=False)

    def _wire_tree(self):
        """(head descriptor bytes, [(descriptor bytes, buffers)] of every member in pre-order)."""
        return self._head, _flatten(self._members)

    @property
    def members(self):
        """The member tensors and composites, in order (a tuple)."""
        return self._members

    @property
    def composition_rule(self):
        """``"partition"``, ``"overlay"`` or ``"group"`` (an int for a private rule)."""
        return self._info["composition_rule"]

    @property
    def combine_op(self):
        """``"replace"`` or ``"add"`` for an overlay, else None."""
        op = self._info["combine_op"]
        return None if op == "none" else op

    @property
    def member_count(self):
        """How many members the head declares (the length of ``members``)."""
        return self._info["member_count"]

    @property
    def layout(self):
        """The head's layout: a ``hurray.Layout`` named ``"composite"`` (virtual: no buffers)
        with ``composition_rule``, ``member_count`` and ``combine_op``."""
        return _CompositeLayout._from_params(0x0B, {"composition_rule": self.composition_rule,
                                                    "member_count": self.member_count,
                                                    "combine_op": self.combine_op})

    @property
    def shape(self):
        """The head's shape (a tuple)."""
        return self._info["shape"]

    @property
    def ndim(self):
        """The head's rank."""
        return len(self._info["shape"])

    @property
    def dtype(self):
        """The head's element type (the ``hurray`` dtype object when there is one, else its name)."""
        return _dtype_object(self._info["dtype"])

    @property
    def descriptor(self):
        """The head's encoded descriptor (bytes)."""
        return self._head

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def __eq__(self, other):
        if not isinstance(other, Composite):
            return NotImplemented
        if self._head != other._head or len(self._members) != len(other._members):
            return False
        return _flat_bytes(self._members) == _flat_bytes(other._members)

    __hash__ = None

    def __repr__(self):
        return self._repr(0)

    def _repr(self, depth):
        pad = "  " * (depth + 1)
        lines = [f"Composite({self.composition_rule!r}, shape={self.shape}, dtype={self._info['dtype']}"
                 + (f", combine_op={self.combine_op!r}" if self.combine_op else "") + ", members=["]
        for m in self._members:
            lines.append(pad + (m._repr(depth + 1) if isinstance(m, Composite) else repr(m)) + ",")
        lines.append("  " * depth + "])")
        return "\n".join(lines)


def _flatten(members):
    """[(descriptor bytes, buffers)] of ``members`` and their own members, pre-order."""
    out = []
    for m in members:
        if isinstance(m, Composite):
            head, rest = m._wire_tree()
            out.append((head, []))
            out.extend(rest)
        else:
            out.append(_wire_of_tensor(m))
    return out


def _flat_bytes(members):
    return [(d, [bytes(memoryview(b).cast("B")) for b in bufs]) for d, bufs in _flatten(members)]
