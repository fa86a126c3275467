# SPDX-License-Identifier: Apache-2.0
"""Quantization schemes and the optional descriptor sections (statistics, shard).

    scheme = hurray.PerChannelAffine.symmetric(axis=0, scale_buffer_index=1)
    t = hurray.Tensor(weights, hurray.int8, [2, 4], aux_buffers=[scales], quantization=scheme,
                      statistics=hurray.Statistics(nnz=8), shard=hurray.Shard([4, 4], [2, 0]))
    t.quantization == scheme       # the same classes come back out, from memory, files and streams

Each class only carries values: the C++ core (quantization.hpp, statistics.hpp,
shard.hpp) encodes and validates the descriptor they end up in. The classes
check the rules that hold whatever tensor they are attached to (a finite
non-zero scale, a power-of-two block size, complete statistics groups, equal
shard lengths); ``hurray.Tensor`` checks the rest (buffer indices).

All objects are immutable, hashable and compared by value. Every scheme class
is a subclass of ``hurray.Quantization`` and keeps its ``tag``, ``scheme`` and
``name`` attributes.
"""

import math as _math
import operator as _operator
import struct as _struct

import numpy as _np

from . import _hurray
from . import dtype as _dtype
from ._errors import InvalidDescriptorError
from ._layout import Quantization
from ._value import ByValue

__all__ = ["MXFP", "NF4", "PerBlockAffine", "PerChannelAffine", "PerTensorAffine", "Quantization", "Shard",
           "Statistics"]

_U32_MAX = 0xFFFFFFFF
_NO_BUFFER = 0xFFFFFFFF  # the wire's "no zero-point buffer" sentinel
_U64_MAX = 0xFFFFFFFFFFFFFFFF


# ── argument helpers ──────────────────────────────────────────────────────────

def _integer(value, what):
    if isinstance(value, (bool, _np.bool_)):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        return _operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None


def _bounded(value, what, low, high):
    n = _integer(value, what)
    if n < low or n > high:
        raise OverflowError(f"{what} = {n} is outside [{low}, {high}]")
    return n


def _u32(value, what):
    return _bounded(value, what, 0, _U32_MAX)


def _buffer_index(value, what):
    n = _u32(value, what)
    if n == _NO_BUFFER:
        raise InvalidDescriptorError(f"{what}: 0xFFFFFFFF is the wire's 'no buffer' marker, not an index")
    return n


def _real(value, what):
    if isinstance(value, (bool, _np.bool_)) or isinstance(value, (str, bytes)):
        raise TypeError(f"{what} must be a real number, not {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number, not {type(value).__name__}") from None


def _as_float32(value):
    """``value`` rounded to the nearest float32 (inf when it is out of range)."""
    with _np.errstate(over="ignore"):
        return float(_np.float32(value))


def _float32_text(value):
    """The shortest text that reads back as the same float32 (0.02, not 0.019999999552965164)."""
    return str(_np.float32(value))


def _block_size(value, scheme, low, high):
    n = _u32(value, f"{scheme}.block_size")
    if n < low or n > high or n & (n - 1):
        bound = f"in [{low}, {high}]" if high < _U32_MAX else f">= {low}"
        raise InvalidDescriptorError(f"{scheme}.block_size: {n} must be a power of two {bound}")
    return n


_SCALE_TYPES = ("float16", "bfloat16", "float32")


def _scale_type(value):
    if not isinstance(value, _dtype.Dtype):
        raise TypeError(f"scale_type must be a hurray.Dtype (hurray.float16, bfloat16 or float32), "
                        f"not {type(value).__name__}")
    if value.name not in _SCALE_TYPES:
        raise InvalidDescriptorError(f"per_block_affine.scale_type: {value.name} is not float16, bfloat16 or float32")
    return value


def _init(obj, **fields):
    for key, value in fields.items():
        object.__setattr__(obj, key, value)


# ── schemes ───────────────────────────────────────────────────────────────────

class _Scheme(Quantization):
    """Shared behaviour of the five assigned schemes: value equality, hashing, pickling."""

    __slots__ = ()
    _TAG = 0
    _NAME = ""
    _FIELDS = ()

    def _set_header(self):
        Quantization.__init__(self, self._TAG, self._NAME)

    def _key(self):
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other):
        if type(other) is type(self):
            return self._key() == other._key()
        if isinstance(other, Quantization):
            return False
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    @property
    def buffer_indices(self):
        """The buffer-table indices the scheme's parameters live in (scales first), a tuple."""
        scale = getattr(self, "scale_buffer_index", None)
        zero = getattr(self, "zero_point_buffer_index", None)
        return tuple(i for i in (scale, zero) if i is not None)

    @classmethod
    def _from_fields(cls, fields):
        obj = object.__new__(cls)
        obj._set_header()
        _init(obj, **{f: fields[f] for f in cls._FIELDS})
        return obj

    def __reduce__(self):
        return (type(self)._from_fields, ({f: getattr(self, f) for f in self._FIELDS},))


class PerTensorAffine(_Scheme):
    """Per-tensor affine quantization: ``value = scale * (q - zero_point)`` for every element.

    ``scale`` (stored as float32: finite, non-zero) and ``zero_point`` (int32)
    are inline in the descriptor, so the tensor keeps a single buffer.
    ``zero_point`` 0 is the symmetric case. InvalidDescriptorError for a zero,
    NaN or infinite scale (or one that rounds to such a float32).
    """

    __slots__ = ("scale", "zero_point")
    _TAG = 0x01
    _NAME = "per_tensor_affine"
    _FIELDS = ("scale", "zero_point")

    def __init__(self, scale, zero_point):
        s = _as_float32(_real(scale, "scale"))
        if not _math.isfinite(s) or s == 0.0:
            raise InvalidDescriptorError(f"per_tensor_affine.scale: {scale!r} is not a finite, non-zero float32")
        self._set_header()
        _init(self, scale=s, zero_point=_bounded(zero_point, "zero_point", -(1 << 31), (1 << 31) - 1))

    def __repr__(self):
        return f"PerTensorAffine(scale={_float32_text(self.scale)}, zero_point={self.zero_point})"


class PerChannelAffine(_Scheme):
    """Per-channel affine quantization: one float32 scale (and int32 zero point) per index along ``axis``.

    The scales live in buffer ``scale_buffer_index`` of the tensor (supply
    them with ``aux_buffers``); ``zero_point_buffer_index`` is None for the
    symmetric form. Build one with ``PerChannelAffine.symmetric(axis,
    scale_buffer_index)`` or ``.asymmetric(axis, scale_buffer_index,
    zero_point_buffer_index)``, or call the class with an optional
    ``zero_point_buffer_index``.
    """

    __slots__ = ("axis", "scale_buffer_index", "zero_point_buffer_index")
    _TAG = 0x02
    _NAME = "per_channel_affine"
    _FIELDS = ("axis", "scale_buffer_index", "zero_point_buffer_index")

    def __init__(self, axis, scale_buffer_index, zero_point_buffer_index=None):
        zp = None if zero_point_buffer_index is None else _buffer_index(zero_point_buffer_index,
                                                                         "zero_point_buffer_index")
        self._set_header()
        _init(self, axis=_u32(axis, "axis"), scale_buffer_index=_buffer_index(scale_buffer_index, "scale_buffer_index"),
              zero_point_buffer_index=zp)

    @staticmethod
    def symmetric(axis, scale_buffer_index):
        """Scales only (zero points implicitly 0)."""
        return PerChannelAffine(axis, scale_buffer_index)

    @staticmethod
    def asymmetric(axis, scale_buffer_index, zero_point_buffer_index):
        """Scales and per-channel int32 zero points, each in its own buffer."""
        return PerChannelAffine(axis, scale_buffer_index, zero_point_buffer_index)

    @property
    def is_symmetric(self):
        """Whether there are no zero points."""
        return self.zero_point_buffer_index is None

    @property
    def scale_type(self):
        """The element type of the scales: always hurray.float32 for this scheme."""
        return _dtype.float32

    def __repr__(self):
        if self.zero_point_buffer_index is None:
            return f"PerChannelAffine.symmetric(axis={self.axis}, scale_buffer_index={self.scale_buffer_index})"
        return (f"PerChannelAffine.asymmetric(axis={self.axis}, scale_buffer_index={self.scale_buffer_index}, "
                f"zero_point_buffer_index={self.zero_point_buffer_index})")


class PerBlockAffine(_Scheme):
    """Per-block affine quantization: one scale (and zero point) per ``block_size`` elements along ``axis``.

    ``block_size`` is a power of two >= 2; ``scale_type`` (a hurray.Dtype) is
    float16, bfloat16 or float32; zero points are int32. Build one with
    ``PerBlockAffine.symmetric(axis, block_size, scale_buffer_index,
    scale_type)`` or ``.asymmetric(axis, block_size, scale_buffer_index,
    zero_point_buffer_index, scale_type)``, or call the class with an optional
    ``zero_point_buffer_index``.
    """

    __slots__ = ("axis", "block_size", "scale_buffer_index", "zero_point_buffer_index", "scale_type")
    _TAG = 0x03
    _NAME = "per_block_affine"
    _FIELDS = ("axis", "block_size", "scale_buffer_index", "zero_point_buffer_index", "scale_type")

    def __init__(self, axis, block_size, scale_buffer_index, scale_type, zero_point_buffer_index=None):
        zp = None if zero_point_buffer_index is None else _buffer_index(zero_point_buffer_index,
                                                                         "zero_point_buffer_index")
        self._set_header()
        _init(self, axis=_u32(axis, "axis"), block_size=_block_size(block_size, "per_block_affine", 2, _U32_MAX),
              scale_buffer_index=_buffer_index(scale_buffer_index, "scale_buffer_index"),
              zero_point_buffer_index=zp, scale_type=_scale_type(scale_type))

    @staticmethod
    def symmetric(axis, block_size, scale_buffer_index, scale_type):
        """Scales only (zero points implicitly 0)."""
        return PerBlockAffine(axis, block_size, scale_buffer_index, scale_type)

    @staticmethod
    def asymmetric(axis, block_size, scale_buffer_index, zero_point_buffer_index, scale_type):
        """Scales and per-block int32 zero points, each in its own buffer."""
        return PerBlockAffine(axis, block_size, scale_buffer_index, scale_type, zero_point_buffer_index)

    @property
    def is_symmetric(self):
        """Whether there are no zero points."""
        return self.zero_point_buffer_index is None

    def __repr__(self):
        common = f"axis={self.axis}, block_size={self.block_size}, scale_buffer_index={self.scale_buffer_index}"
        if self.zero_point_buffer_index is None:
            return f"PerBlockAffine.symmetric({common}, scale_type=hurray.{self.scale_type.name})"
        return (f"PerBlockAffine.asymmetric({common}, zero_point_buffer_index={self.zero_point_buffer_index}, "
                f"scale_type=hurray.{self.scale_type.name})")


class _BlockScaled(_Scheme):
    """NF4 and MXFP: one scale per block of ``block_size`` elements along ``axis``, in
    buffer ``scale_buffer_index``; they differ in tag, name and the allowed block sizes."""

    __slots__ = ("axis", "block_size", "scale_buffer_index")
    _FIELDS = ("axis", "block_size", "scale_buffer_index")
    _BLOCK_MIN = 0
    _BLOCK_MAX = 0

    def __init__(self, axis, block_size, scale_buffer_index):
        self._set_header()
        _init(self, axis=_u32(axis, "axis"),
              block_size=_block_size(block_size, self._NAME, self._BLOCK_MIN, self._BLOCK_MAX),
              scale_buffer_index=_buffer_index(scale_buffer_index, "scale_buffer_index"))

    def __repr__(self):
        return (f"{type(self).__name__}(axis={self.axis}, block_size={self.block_size}, "
                f"scale_buffer_index={self.scale_buffer_index})")


class NF4(_BlockScaled):
    """NormalFloat4: 4-bit codes (uint4 storage) into a fixed 16-level table, times a float32 absmax per block.

    ``block_size`` is a power of two >= 8; the absmax values live in buffer
    ``scale_buffer_index``.
    """

    __slots__ = ()
    _TAG = 0x04
    _NAME = "nf4"
    _BLOCK_MIN, _BLOCK_MAX = 8, _U32_MAX


class MXFP(_BlockScaled):
    """OCP microscaling: one shared 8-bit exponent (float8_e8m0) per block of micro-float elements.

    ``block_size`` is a power of two in [16, 2048] (32 is the OCP default);
    the exponents live in buffer ``scale_buffer_index``.
    """

    __slots__ = ()
    _TAG = 0x05
    _NAME = "mxfp"
    _BLOCK_MIN, _BLOCK_MAX = 16, 2048


_SCHEMES = {cls._TAG: cls for cls in (PerTensorAffine, PerChannelAffine, PerBlockAffine, NF4, MXFP)}


def _make_scheme(tag, fields):
    """The scheme object of a decoded quantization section (called by the extension)."""
    fields = dict(fields)
    if "scale_type" in fields:
        fields["scale_type"] = _dtype.Dtype.from_name(fields["scale_type"])
    return _SCHEMES[tag]._from_fields(fields)


# ── statistics ────────────────────────────────────────────────────────────────

# computed_mask bits (docs/spec/metadata.md § Statistics Section) and the fields each one covers.
_GROUPS = (
    (0x01, ("nnz",)),
    (0x02, ("sparsity_ratio",)),
    (0x04, ("value_min", "value_max", "value_abs_max")),
    (0x08, ("value_mean", "value_stddev")),
    (0x10, ("nm_n", "nm_m")),
    (0x20, ("has_nan", "has_inf")),
)
_STAT_FIELDS = tuple(f for _, group in _GROUPS for f in group)
_ZERO = {"nnz": 0, "nm_n": 0, "nm_m": 0, "has_nan": False, "has_inf": False}


class Statistics(ByValue):
    """Advisory statistics of a tensor's values (the descriptor's statistics section).

    Every argument is optional and keyword-only; ``computed_mask`` (the
    section's validity bits) follows from which ones are given, and a field
    not given reads back as None. Fields sharing a bit come as a group, all or
    none: ``value_min``/``value_max``/``value_abs_max``,
    ``value_mean``/``value_stddev``, ``nm_n``/``nm_m``, ``has_nan``/``has_inf``
    (InvalidDescriptorError otherwise). Also InvalidDescriptorError:
    ``sparsity_ratio`` outside [0, 1], a negative ``value_stddev``, ``nm_n`` >
    ``nm_m``. ``nnz`` is an int, ``nm_n``/``nm_m`` ints in [0, 255],
    ``has_nan``/``has_inf`` bools, the rest floats.
    """

    __slots__ = ("_mask", "_values")

    def __init__(self, *, nnz=None, sparsity_ratio=None, value_min=None, value_max=None, value_abs_max=None,
                 value_mean=None, value_stddev=None, nm_n=None, nm_m=None, has_nan=None, has_inf=None):
        given = {"nnz": nnz, "sparsity_ratio": sparsity_ratio, "value_min": value_min, "value_max": value_max,
                 "value_abs_max": value_abs_max, "value_mean": value_mean, "value_stddev": value_stddev,
                 "nm_n": nm_n, "nm_m": nm_m, "has_nan": has_nan, "has_inf": has_inf}
        mask = 0
        for bit, group in _GROUPS:
            present = [f for f in group if given[f] is not None]
            if not present:
                continue
            if len(present) != len(group):
                missing = [f for f in group if given[f] is None]
                raise InvalidDescriptorError(
                    f"statistics: {', '.join(group)} share one validity bit and come together; "
                    f"{', '.join(present)} given without {', '.join(missing)}")
            mask |= bit
        values = {}
        for name in _STAT_FIELDS:
            v = given[name]
            if v is None:
                values[name] = _ZERO.get(name, 0.0)
            elif name == "nnz":
                values[name] = _bounded(v, "nnz", 0, _U64_MAX)
            elif name in ("nm_n", "nm_m"):
                values[name] = _bounded(v, name, 0, 255)
            elif name in ("has_nan", "has_inf"):
                if not isinstance(v, (bool, _np.bool_)):
                    raise TypeError(f"{name} must be a bool, not {type(v).__name__}")
                values[name] = bool(v)
            else:
                values[name] = _real(v, name)
        if mask & 0x02 and not 0.0 <= values["sparsity_ratio"] <= 1.0:
            raise InvalidDescriptorError(f"statistics.sparsity_ratio: {sparsity_ratio!r} is not in [0, 1]")
        if mask & 0x08 and not values["value_stddev"] >= 0.0:
            raise InvalidDescriptorError(f"statistics.value_stddev: {value_stddev!r} is not >= 0")
        if mask & 0x10 and values["nm_n"] > values["nm_m"]:
            raise InvalidDescriptorError(f"statistics: nm_n {nm_n} exceeds nm_m {nm_m}")
        object.__setattr__(self, "_mask", mask)
        object.__setattr__(self, "_values", tuple(values[f] for f in _STAT_FIELDS))

    @classmethod
    def _from_fields(cls, mask, *values):
        """A Statistics holding a decoded section as it is (called by the extension)."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "_mask", int(mask))
        object.__setattr__(obj, "_values", tuple(values))
        return obj

    def _fields(self):
        """(computed_mask, then every field in wire order, zero where not valid): what the extension encodes."""
        return (self._mask,) + self._values

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Statistics is immutable")

    def _get(self, name):
        index = _STAT_FIELDS.index(name)
        for bit, group in _GROUPS:
            if name in group:
                return self._values[index] if self._mask & bit else None
        return None  # pragma: no cover - every field is in a group

    @property
    def computed_mask(self):
        """The validity bits as they appear on the wire (1: nnz, 2: sparsity, 4: value range, 8: mean/stddev, 16: N:M, 32: NaN/inf)."""
        return self._mask

    nnz = property(lambda self: self._get("nnz"), doc="Count of non-zero elements, or None.")
    sparsity_ratio = property(lambda self: self._get("sparsity_ratio"), doc="Fraction of zero elements, or None.")
    value_min = property(lambda self: self._get("value_min"), doc="Smallest value, or None.")
    value_max = property(lambda self: self._get("value_max"), doc="Largest value, or None.")
    value_abs_max = property(lambda self: self._get("value_abs_max"), doc="Largest absolute value, or None.")
    value_mean = property(lambda self: self._get("value_mean"), doc="Mean value, or None.")
    value_stddev = property(lambda self: self._get("value_stddev"), doc="Population standard deviation, or None.")
    nm_n = property(lambda self: self._get("nm_n"), doc="N of N:M structured sparsity, or None.")
    nm_m = property(lambda self: self._get("nm_m"), doc="M of N:M structured sparsity, or None.")
    has_nan = property(lambda self: self._get("has_nan"), doc="Whether a NaN is present, or None.")
    has_inf = property(lambda self: self._get("has_inf"), doc="Whether an infinity is present, or None.")

    def _present(self):
        return {f: self._get(f) for f in _STAT_FIELDS if self._get(f) is not None}

    def _key(self):
        # Floats by their bits, so a NaN statistic equals itself.
        return (self._mask,) + tuple(_struct.pack("<d", v) if isinstance(v, float) else v
                                     for v in self._present().values())


    def __reduce__(self):
        return (Statistics._from_fields, self._fields())

    def __repr__(self):
        return "Statistics(" + ", ".join(f"{k}={v!r}" for k, v in self._present().items()) + ")"


def _make_statistics(*fields):
    """The Statistics of a decoded section (called by the extension)."""
    return Statistics._from_fields(*fields)


# ── shard ─────────────────────────────────────────────────────────────────────

def _dims(value, what):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ints, not {type(value).__name__}")
    out = tuple(_bounded(v, f"{what} entry", 0, _U64_MAX) for v in value)
    if _U64_MAX in out:
        raise InvalidDescriptorError(f"{what}: 2**64 - 1 is the dynamic-dimension marker; a shard needs static sizes")
    return out


class Shard(ByValue):
    """Where a tensor lies inside a larger logical tensor (the descriptor's shard section).

    ``parent_shape`` is the whole tensor's shape and ``shard_offset`` the
    index of this piece's first element in it, one entry per dimension
    (tuples of int). InvalidDescriptorError when the two differ in length or an
    offset lies past its parent dimension; the tensor it is attached to must
    have the same rank and fit (``offset + shape <= parent_shape``).
    """

    __slots__ = ("parent_shape", "shard_offset")
    # The fields, for type checkers (set once, in __init__, through object.__setattr__).
    parent_shape: "tuple[int, ...]"
    shard_offset: "tuple[int, ...]"

    def __init__(self, parent_shape, shard_offset):
        parent = _dims(parent_shape, "parent_shape")
        offset = _dims(shard_offset, "shard_offset")
        if len(parent) != len(offset):
            raise InvalidDescriptorError(f"shard: parent_shape has {len(parent)} entries but shard_offset has "
                                         f"{len(offset)}; they need one per dimension")
        for k, (p, o) in enumerate(zip(parent, offset)):
            if o > p:
                raise InvalidDescriptorError(f"shard: shard_offset[{k}] = {o} lies past parent_shape[{k}] = {p}")
        object.__setattr__(self, "parent_shape", parent)
        object.__setattr__(self, "shard_offset", offset)

    @property
    def rank(self):
        """The number of dimensions."""
        return len(self.parent_shape)

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Shard is immutable")

    def _key(self):
        return (self.parent_shape, self.shard_offset)

    def __reduce__(self):
        return (Shard, (self.parent_shape, self.shard_offset))

    def __repr__(self):
        return f"Shard(parent_shape={list(self.parent_shape)}, shard_offset={list(self.shard_offset)})"


def _make_shard(parent_shape, shard_offset):
    """The Shard of a decoded section (called by the extension), taken as it is."""
    obj = object.__new__(Shard)
    object.__setattr__(obj, "parent_shape", tuple(parent_shape))
    object.__setattr__(obj, "shard_offset", tuple(shard_offset))
    return obj


_hurray._set_quantization_support(Quantization, _make_scheme, Statistics, _make_statistics, Shard, _make_shard)
