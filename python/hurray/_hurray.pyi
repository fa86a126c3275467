# SPDX-License-Identifier: Apache-2.0
"""Type stubs of ``hurray._hurray``, libhurray's pybind11 extension (python/src/*.cpp).

Written by hand from the bindings (``m.def`` / ``py::class_`` / ``py::arg``) and
checked against the built module with ``python3 -m mypy.stubtest hurray._hurray``
(python/typecheck/run_mypy.sh). Update it with the bindings.

Describes a build with the optional libraries (``HURRAY_PY_HAVE_HTTP``,
``HURRAY_PY_HAVE_CONVERT``): without hurray::http, ``open_url`` exists but raises
``UnsupportedError``; without hurray::convert, ``convert`` / ``detect_format`` /
``open_source`` take any arguments and raise, and ``_Source`` and
``_safetensors_dtype_names`` are absent (``_have_convert`` is False).
"""

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, SupportsIndex, TypeVar, type_check_only

import numpy as np
import numpy.typing as npt
from _typeshed import ReadableBuffer
from typing_extensions import Self, TypeAlias, TypedDict

from hurray._composite import Composite
from hurray._layout import Layout, Quantization
from hurray._quantization import Shard, Statistics
from hurray.device import Device
from hurray.dtype import Dtype

__version__: str
_have_convert: bool

# ── argument and result types ─────────────────────────────────────────────────

# pybind11's std::filesystem::path caster: str, bytes or os.PathLike (os.fspath).
_Path: TypeAlias = str | bytes | os.PathLike[str] | os.PathLike[bytes]
# Any object with the buffer protocol (C-contiguous where the binding says so).
# _typeshed.ReadableBuffer lists the stdlib's; NumPy arrays are the usual case.
_Buffer: TypeAlias = ReadableBuffer | npt.NDArray[Any]
# A PyCapsule ("dltensor", "dltensor_versioned", "hurray_tensor"): Python 3.11
# has no type for it (types.CapsuleType is 3.13), so it is opaque.
_PyCapsule: TypeAlias = Any
# KV metadata values hurray.save accepts (kv_from_python, kv.cpp).
_KvScalar: TypeAlias = str | bool | int | float | bytes
_KvValue: TypeAlias = (
    _KvScalar
    | list[str] | list[bool] | list[int] | list[float] | list[bytes]
    | tuple[str, ...] | tuple[bool, ...] | tuple[int, ...] | tuple[float, ...] | tuple[bytes, ...]
)
# (encoded descriptor, one buffer-protocol object per buffer).
_WireTensor: TypeAlias = tuple[bytes, Sequence[_Buffer]]
# What _StreamReader.next() yields: (descriptor, buffers, None) for a tensor,
# (head, [], members) for a composite.
_WireItem: TypeAlias = tuple[bytes, list[npt.NDArray[np.uint8]], "list[_WireItem] | None"]
# A flattened hurray.Composite as hurray.save passes it: (head, [(member name,
# descriptor, buffers), ...] in pre-order).
_SavedComposite: TypeAlias = tuple[bytes, Sequence[tuple[str, bytes, Sequence[_Buffer]]]]
_Savable: TypeAlias = npt.NDArray[Any] | Tensor | _SavedComposite

# The binding takes a `list` / `dict` exactly (py::list, PyDict_Check); a type
# variable keeps list[NDArray[float32]] or dict[str, int] acceptable (list and
# dict are invariant).
_SavableT = TypeVar("_SavableT", bound=_Savable)
_KvT = TypeVar("_KvT", bound=_KvValue)

@type_check_only
class _SupportsDLPack(Protocol):
    def __dlpack__(self) -> Any: ...

@type_check_only
class _SupportsHurray(Protocol):
    def __hurray__(self) -> Any: ...

@type_check_only
class _SourceTensorInfo(TypedDict):
    name: str
    dtype: str
    numpy_dtype: str | None
    shape: tuple[int | None, ...]
    layout: str
    quantization: str | None
    nbytes: int
    buffer_count: int

@type_check_only
class _TensorInfo(_SourceTensorInfo):
    data_offset: int

@type_check_only
class _ConvertResult(TypedDict):
    tensors: int
    bytes: int
    format: str
    source_format: str
    verified: bool

# ── hurray.Tensor (tensor.cpp, dlpack.cpp, inspect.cpp, sections.cpp, native_protocol.cpp) ──

class Tensor:
    """A Hurray tensor: a descriptor (element type, shape, layout, quantization) and its buffers."""

    def __init__(
        self,
        data: _Buffer,
        dtype: Dtype,
        shape: Sequence[SupportsIndex],
        device: Device | None = None,
        *,
        aux_buffers: Sequence[_Buffer] | None = None,
        layout: Layout | None = None,
        quantization: Quantization | None = None,
        statistics: Statistics | None = None,
        shard: Shard | None = None,
    ) -> None: ...
    @staticmethod
    def _from_wire(
        descriptor: _Buffer, buffers: Sequence[_Buffer], owner: object = None, device_id: int = 0
    ) -> Tensor: ...
    def _wire(self) -> tuple[bytes, list[npt.NDArray[np.uint8]]]: ...
    @property
    def dtype(self) -> Dtype: ...
    @property
    def shape(self) -> tuple[int | None, ...]:
        """A tuple of int, None for a dynamic dimension."""
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int | None:
        """The element count, or None when a dimension is dynamic."""
    @property
    def device(self) -> Device: ...
    @property
    def device_id(self) -> int: ...
    @property
    def buffer_count(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def readonly(self) -> bool: ...
    def buffer(self, i: int) -> npt.NDArray[np.uint8]: ...
    @property
    def T(self) -> Tensor: ...
    def __array__(self, dtype: npt.DTypeLike = None, copy: bool | None = None) -> npt.NDArray[Any]: ...
    def to_scipy(self) -> Any:
        """A scipy.sparse csr_matrix / csc_matrix (SciPy is optional and untyped)."""
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __str__(self) -> str:
        """The values as NumPy prints them (Tier 1 cpu tensors), else the repr."""
    # dlpack.cpp
    def __dlpack__(
        self,
        stream: int | None = None,
        *,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> _PyCapsule: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def to_torch(self) -> Any:
        """A torch.Tensor (typed Any: PyTorch is an optional dependency)."""
    # inspect.cpp
    @property
    def layout(self) -> Layout: ...
    @property
    def quantization(self) -> Quantization | None: ...
    def to_dense(self) -> npt.NDArray[np.float32]: ...
    def dequantize(self) -> npt.NDArray[np.float32]: ...
    @property
    def nnz(self) -> int:
        """Sparse layouts only (AttributeError otherwise)."""
    @property
    def indices(self) -> Tensor: ...
    @property
    def col_indices(self) -> Tensor: ...
    @property
    def row_ptr(self) -> Tensor: ...
    @property
    def row_indices(self) -> Tensor: ...
    @property
    def col_ptr(self) -> Tensor: ...
    @property
    def values(self) -> Tensor: ...
    # sections.cpp
    @property
    def statistics(self) -> Statistics | None: ...
    @property
    def shard(self) -> Shard | None: ...
    # native_protocol.cpp
    def __hurray__(self, stream: int | None = None) -> _PyCapsule: ...

def from_dlpack(x: _SupportsDLPack) -> Tensor:
    """A Tensor sharing the memory of an object with __dlpack__ (or of a DLPack capsule)."""

def from_hurray(obj: _SupportsHurray, /) -> Tensor: ...
def _set_tensor_support(dtype_of: Callable[[int], Dtype], make_device: Callable[[str, int, str], Device]) -> None: ...
def _element_types() -> list[tuple[int, str, int, int, bool, bool, bool, bool]]:
    """(tag, name, bit_width, tier, is_float, is_signed_int, is_unsigned_int, is_sub_byte) per type."""

def _set_inspection_support(
    make_layout: Callable[[int, str, int | None, dict[str, Any]], Layout],
    make_quantization: Callable[[int, str], Quantization],
) -> None: ...
def _set_quantization_support(
    scheme_base: type[Quantization],
    make_scheme: Callable[[int, dict[str, Any]], Quantization],
    statistics_cls: type[Statistics],
    make_statistics: Callable[..., Statistics],
    shard_cls: type[Shard],
    make_shard: Callable[[tuple[int, ...], tuple[int, ...]], Shard],
) -> None: ...
def _set_layout_class(cls: type[Layout]) -> None: ...
def _check_layout(layout: Layout) -> None: ...

# ── files (module.cpp) ────────────────────────────────────────────────────────

class File:
    """A lazy handle to an HRRYFILE (hurray.open): names, info and KV without reading data."""

    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def mapped(self) -> bool: ...
    @property
    def writable(self) -> bool: ...
    def keys(self) -> list[str]: ...
    def info(self, name: str) -> _TensorInfo: ...
    def metadata(self) -> dict[str, Any]:
        """The KV metadata: str, int, float, bool, bytes or a list of one of those per key."""
    def get_tensor(self, name: str) -> npt.NDArray[Any]: ...
    def _get_bits(self, name: str) -> tuple[npt.NDArray[Any], str]: ...
    def tensor(self, name: str) -> Tensor | Composite: ...
    def _member_names(self, name: str) -> list[str] | None: ...
    def to_float32(self, name: str) -> npt.NDArray[np.float32]: ...
    def _data_range(self, name: str) -> tuple[int, int] | None: ...
    def close(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *args: object) -> None: ...
    def __repr__(self) -> str: ...

def open(path: _Path, writable: bool = False, spec_only: bool = False) -> File: ...
def open_url(
    url: str,
    headers: Sequence[str] = [],
    timeout: float = 0.0,
    spec_only: bool = False,
    aws: dict[str, str] | None = None,
    endpoint: str = "",
    writable: bool = False,
) -> File: ...
def open_bytes(data: _Buffer) -> File: ...
def save_bytes(
    names: Sequence[str],
    arrays: list[_SavableT],
    kv: dict[str, _KvT] | None = None,
    types: Sequence[str | None] | None = None,
) -> bytes: ...
def save(
    path: _Path,
    names: Sequence[str],
    arrays: list[_SavableT],
    kv: dict[str, _KvT] | None = None,
    types: Sequence[str | None] | None = None,
    durable: bool = True,
    descriptor_table: bool = True,
) -> None: ...
def _set_error_classes(classes: dict[str, type[Exception]]) -> None: ...
def _set_composite_factory(factory: Callable[[bytes, list[Tensor | Composite], str, list[str]], Composite]) -> None: ...

# ── streams (stream.cpp, composite.cpp) ───────────────────────────────────────

class _StreamReader:
    """Wire-level stream reader (use hurray.StreamReader)."""

    @staticmethod
    def from_path(path: _Path, max_tensor_bytes: int = 1073741824) -> _StreamReader: ...
    @staticmethod
    def from_fd(fd: int, max_tensor_bytes: int = 1073741824) -> _StreamReader: ...
    @staticmethod
    def from_buffer(data: _Buffer) -> _StreamReader: ...
    def next(self) -> _WireItem | None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def offset(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def name(self) -> str: ...

class _StreamWriter:
    """Wire-level stream writer (use hurray.StreamWriter)."""

    @staticmethod
    def to_path(path: _Path) -> _StreamWriter: ...
    @staticmethod
    def to_fd(fd: int) -> _StreamWriter: ...
    @staticmethod
    def to_memory() -> _StreamWriter: ...
    def write(self, descriptor: bytes, buffers: Sequence[_Buffer]) -> None: ...
    def write_composite(self, head: bytes, members: Sequence[_WireTensor]) -> None: ...
    def finish(self) -> None: ...
    def close(self) -> None: ...
    def getvalue(self) -> bytes: ...
    @property
    def finished(self) -> bool: ...
    @property
    def offset(self) -> int: ...
    @property
    def count(self) -> int: ...

def _wire_info(descriptor: bytes) -> dict[str, Any]: ...
def _wire_composite_head(
    dtype: str, shape: Sequence[int], rule: str, member_count: int, combine_op: str = "none"
) -> bytes: ...
def _wire_dense(
    dtype: str,
    shape: Sequence[int],
    shard_parent_shape: Sequence[int] | None = None,
    shard_offset: Sequence[int] | None = None,
    member_role: str | None = None,
) -> bytes: ...
def _wire_csr(dtype: str, rows: int, cols: int, nnz: int) -> bytes: ...
def _wire_check_composite(head: bytes, members: Sequence[bytes]) -> None: ...
def _wire_materialize_composite(head: bytes, members: Sequence[_WireTensor]) -> npt.NDArray[np.uint8]: ...

# ── other formats (convert.cpp) ───────────────────────────────────────────────

class _Source:
    """A read-only view of a SafeTensors, GGUF, NumPy or HRRYFILE file."""

    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def format(self) -> str: ...
    def keys(self) -> list[str]: ...
    def info(self, name: str) -> _SourceTensorInfo: ...
    def metadata(self) -> dict[str, Any]: ...
    def tensor(self, name: str) -> Tensor: ...
    def close(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str, /) -> bool: ...

def convert(
    src: _Path,
    dst: _Path,
    to: str | None = None,
    dequantize: bool = False,
    dtype: Dtype | npt.DTypeLike = None,
    verify: bool = False,
    durable: bool = True,
    progress: Callable[[int, int], object] | None = None,
) -> _ConvertResult: ...
def detect_format(path: _Path) -> str: ...
def open_source(path: _Path) -> _Source: ...
def _safetensors_dtype_names() -> dict[str, str]: ...
