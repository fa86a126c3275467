# SPDX-License-Identifier: Apache-2.0
"""Element types: ``hurray.Dtype`` and one constant per type the core knows.

    import hurray
    hurray.float32.bit_width          # 32
    hurray.dtype.int4.is_sub_byte     # True
    hurray.Dtype.from_name("bfloat16") is hurray.bfloat16

Tier 1 types (``bool``, ``int8`` .. ``uint64``, ``float16``, ``bfloat16``,
``float32``, ``float64``) and ``complex64``/``complex128`` (Tier 2 tags, NumPy
types) are also module attributes of ``hurray``; the other Tier 2 types
(``int4``, ``float8_e4m3``, ...) live here only. ``tier`` follows the tag.
Each name is bound to one object, so ``is`` comparisons hold.
"""

import builtins as _builtins
import typing as _typing

from . import _hurray
from ._errors import InvalidDescriptorError

__all__ = ["Dtype"]


class Dtype:
    """A Hurray element type (docs/spec/element-types.md). Immutable and hashable.

    Attributes: ``name`` (the spec's name), ``tag`` (the type tag byte),
    ``bit_width``, ``tier`` (1 or 2), ``is_array_api`` (Tier 1), ``is_integer``,
    ``is_float``, ``is_signed``, ``is_sub_byte``; ``dtype``, the NumPy dtype of
    the types NumPy has (so ``np.dtype(hurray.float32)``, ``np.zeros(3,
    dtype=hurray.float32)`` and ``np.dtype("float32") == hurray.float32``
    work), an AttributeError for the others (bfloat16, Tier 2).
    """

    __slots__ = ("name", "tag", "bit_width", "tier", "is_float", "is_integer", "is_signed", "is_sub_byte")
    # The fields, for type checkers (set once, in __init__, through object.__setattr__).
    name: str
    tag: int
    bit_width: int
    tier: int
    is_float: _builtins.bool
    is_integer: _builtins.bool
    is_signed: _builtins.bool
    is_sub_byte: _builtins.bool

    def __init__(self, tag, name, bit_width, tier, is_float, is_signed_int, is_unsigned_int, is_sub_byte):
        for key, value in (("tag", tag), ("name", name), ("bit_width", bit_width), ("tier", tier),
                           ("is_float", _builtins.bool(is_float)),
                           ("is_integer", _builtins.bool(is_signed_int or is_unsigned_int)),
                           ("is_signed", _builtins.bool(is_signed_int or (is_float and tag != 0x42))),
                           ("is_sub_byte", _builtins.bool(is_sub_byte))):
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Dtype is immutable")

    @property
    def is_array_api(self):
        """Whether it is a Tier 1 type (the Array API's numeric vocabulary)."""
        return self.tier == 1

    @property
    def dtype(self):
        """The NumPy dtype of this type; AttributeError when NumPy has none (bfloat16, Tier 2).

        NumPy reads this attribute wherever it takes a dtype, so a hurray.Dtype
        can be given to NumPy functions and compares equal to its NumPy dtype.
        """
        import numpy as np  # numpy is imported by the package anyway; not at class creation
        found = _NUMPY_NAMES.get(self.name)
        if found is None:
            raise AttributeError(f"element type {self.name} has no NumPy dtype")
        return np.dtype(found)

    @classmethod
    def from_name(cls, name):
        """The Dtype named ``name`` (``"float32"``, ``"int4"``, ...); InvalidDescriptorError otherwise."""
        found = _BY_NAME.get(name)
        if found is None:
            raise InvalidDescriptorError(f"unknown element type name: {name!r}")
        return found

    def __eq__(self, other):
        if isinstance(other, Dtype):
            return self.tag == other.tag
        return NotImplemented

    def __ne__(self, other):
        if isinstance(other, Dtype):
            return self.tag != other.tag
        return NotImplemented

    def __hash__(self):
        return hash(("hurray.Dtype", self.tag))

    def __repr__(self):
        return f"hurray.Dtype('{self.name}')"

    def __str__(self):
        return self.name

    def __reduce__(self):
        return (Dtype.from_name, (self.name,))


# The element types NumPy has, under the same names.
_NUMPY_NAMES = {name: name for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}

_BY_TAG = {}
_BY_NAME = {}
for _entry in _hurray._element_types():
    _dt = Dtype(*_entry)
    _BY_TAG[_dt.tag] = _dt
    _BY_NAME[_dt.name] = _dt
    globals()[_dt.name] = _dt
    __all__.append(_dt.name)
del _entry, _dt

TIER1 = tuple(d for d in _BY_TAG.values() if d.tier == 1)

if _typing.TYPE_CHECKING:
    # The module-level element types made by the loop above (from the extension's
    # table), declared for type checkers.
    float16: Dtype
    bfloat16: Dtype
    float32: Dtype
    float64: Dtype
    int8: Dtype
    uint8: Dtype
    int16: Dtype
    uint16: Dtype
    int32: Dtype
    uint32: Dtype
    int64: Dtype
    uint64: Dtype
    bool: Dtype  # noqa: A001 - the spec's name
    float8_e4m3: Dtype
    float8_e5m2: Dtype
    float8_e8m0: Dtype
    float4_e2m1: Dtype
    float6_e2m3: Dtype
    float6_e3m2: Dtype
    float128: Dtype
    int4: Dtype
    uint4: Dtype
    int2: Dtype
    uint2: Dtype
    complex64: Dtype
    complex128: Dtype


def _dtype_of(tag):
    """The Dtype of a tag; a private tag (0xF0-0xFE) gets an 'extension' Dtype made on the fly."""
    found = _BY_TAG.get(tag)
    if found is None:
        found = Dtype(tag, f"extension_0x{tag:02x}", 0, 2, False, False, False, False)
    return found
