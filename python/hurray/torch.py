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
refuses: a tensor that is not contiguous, or several tensors whose memory
overlaps (save ``.clone()``s, only the full tensor, or use ``save_model``,
which saves tied parameters once and ``load_model`` ties them again); views of
one storage that do not overlap (``qkv.chunk(3)``) are saved. Needs PyTorch;
the rest of the package does not (``import hurray`` never imports torch).
"""

import os as _os

import numpy as _np

try:
    import torch as _torch
except ImportError as _e:  # pragma: no cover - exercised where torch is absent
    raise ImportError("hurray.torch needs PyTorch (Debian: apt-get install python3-torch)") from _e

from . import _hurray
from ._errors import InvalidArgumentError, InvalidTensorsError, SafetensorArgumentError, SafetensorError
from ._errors import UnsupportedError
from ._open import open_file as _open_file
from ._safetensors import array_names as _array_names
from ._safetensors import check_backend as _check_backend
from ._safetensors import kv_from_metadata as _kv_from_metadata
from ._safetensors import open_bytes as _open_bytes
from ._safetensors import safetensor_errors as _safetensor_errors

__all__ = ["SafetensorError", "SharedTensorsError", "load", "load_file", "load_model", "save", "save_file",
           "save_model", "storage_ptr", "storage_size"]


class SharedTensorsError(InvalidArgumentError, RuntimeError):
    """Tensors given to ``save_file`` / ``save`` overlap in memory (views of one
    storage whose bytes overlap). A RuntimeError, as safetensors raises for
    this, and a ValueError (``InvalidArgumentError``). Views of one storage
    that do not overlap (``qkv.chunk(3)``) are saved, as safetensors saves them."""


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


def storage_ptr(tensor):
    """The address of the storage a tensor views (safetensors.torch's
    ``storage_ptr``); 0 where it has none (a meta tensor)."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
        return storage.data_ptr()
    except NotImplementedError:  # storages without data (meta) in some torch versions
        return 0


def storage_size(tensor):
    """The size in bytes of the storage a tensor views (safetensors.torch's ``storage_size``)."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
        return storage.nbytes()
    except NotImplementedError:
        return tensor.nelement() * tensor.element_size()


def _end_ptr(tensor):
    """One past the address of the last byte a tensor reaches (any strides)."""
    start = tensor.data_ptr()
    if tensor.nelement() == 0:
        return start
    reach = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()) if stride > 0)
    return start + (reach + 1) * tensor.element_size()


def _is_complete(tensor):
    """Whether a tensor covers its whole storage, from its first byte."""
    return (tensor.data_ptr() == storage_ptr(tensor)
            and tensor.nelement() * tensor.element_size() == storage_size(tensor))


def _filter_shared_not_shared(groups, state_dict):
    """Splits each group of names sharing one storage into the groups whose
    bytes overlap: [start, end) ranges sorted by start, a range that begins
    at or past the end of every range before it starts a new group."""
    out = []
    for group in groups:
        if len(group) < 2:
            out.append(group)
            continue
        areas = sorted((state_dict[name].data_ptr(), _end_ptr(state_dict[name]), name) for name in group)
        reach = None
        for start, stop, name in areas:
            if reach is None or start >= reach:
                out.append({name})
                reach = stop
            else:
                out[-1].add(name)
                reach = max(reach, stop)
    return out


def _find_shared_tensors(state_dict):
    """The names of a dict of tensors grouped by the memory they share, as
    safetensors.torch groups them: one set per storage (device, address and
    size; meta tensors and storages without bytes are left out), split into
    the sets of tensors whose bytes overlap. A set of two or more names is
    what ``save_file`` refuses and ``save_model`` de-duplicates."""
    by_storage = {}
    for name, tensor in state_dict.items():
        if tensor.device.type == "meta":
            continue
        ptr, size = storage_ptr(tensor), storage_size(tensor)
        if ptr != 0 and size != 0:
            by_storage.setdefault((tensor.device, ptr, size), set()).add(name)
    return _filter_shared_not_shared(list(by_storage.values()), state_dict)


def _remove_duplicate_names(state_dict, *, preferred_names=None, discard_names=None):
    """For each set of tensors that overlap in memory, the name to keep (one
    covering the whole storage: the smallest of ``preferred_names`` among
    them, else of those not in ``discard_names``, else of all) and the sorted
    others to drop: {kept: [dropped, ...]}. RuntimeError when no tensor of a
    set covers its whole storage, a set of one included (a tensor viewing
    part of a bigger storage: safetensors refuses it too)."""
    preferred = set(preferred_names or [])
    discard = set(discard_names or [])
    out = {}
    for shared in _find_shared_tensors(state_dict):
        complete = {name for name in shared if _is_complete(state_dict[name])}
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no suitable name to "
                f"keep for saving amongst: {_names_text(shared)}. None is covering the entire storage. Refusing "
                "to save/load the model since you could be storing much more memory than needed. Please refer to "
                "https://huggingface.co/docs/safetensors/torch_shared_tensors for more information.")
        keep = min(complete)
        if complete - discard:
            keep = min(complete - discard)
        if preferred & complete:
            keep = min(preferred & complete)
        dropped = [name for name in sorted(shared) if name != keep]
        if dropped:
            out.setdefault(keep, []).extend(dropped)
    return out


def _names_text(names):
    """A set of names as text, sorted (a set's own repr has no stable order)."""
    return "{" + ", ".join(repr(n) for n in sorted(names)) + "}"


def _check(tensors):
    """Checks a dict of name to tensor in safetensors' order (a dict, tensors,
    dense, not overlapping, contiguous) and for a dtype Hurray has; returns its names."""
    if not isinstance(tensors, dict):
        raise InvalidTensorsError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__}")
        if not isinstance(tensor, _torch.Tensor):
            raise InvalidTensorsError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(tensor)}")
    for name, tensor in tensors.items():
        if tensor.layout != _torch.strided:
            raise InvalidArgumentError(f"tensor {name!r}: layout {tensor.layout} is not supported; "
                                       "save a dense tensor (.to_dense())")
    shared = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if shared:
        raise SharedTensorsError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: [{', '.join(_names_text(names) for names in shared)}]. A potential way to "
            "correctly save your model is to use `save_model` (or save .clone()s, or only the tensor they view). "
            "More information at https://huggingface.co/docs/safetensors/torch_shared_tensors")
    for name, tensor in tensors.items():
        if not tensor.is_contiguous():
            raise InvalidArgumentError(f"tensor {name!r}: not contiguous; save tensor.contiguous() "
                                       "(or the tensor it is a view of, and slice it after loading)")
        if tensor.dtype not in _TO_HURRAY:
            raise UnsupportedError(f"tensor {name!r}: dtype {tensor.dtype} has no Hurray element type")
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
    devices are copied to the CPU first. Raises ``InvalidTensorsError`` (a
    ValueError, as safetensors raises, and a TypeError) for a ``tensors`` that
    is not a dict or a value that is not a torch.Tensor,
    ``InvalidArgumentError`` (a ValueError) naming a tensor that is not
    contiguous or not dense, and ``SharedTensorsError`` (a RuntimeError and a
    ValueError) naming tensors whose memory overlaps (views of one storage that
    do not overlap are fine). Atomic, like ``hurray.save``, but, like
    safetensors, not fsync'ed unless ``durable=True``.
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
    """A torch.device from what safetensors takes (a str such as ``"cpu"`` or
    ``"cuda:1"``, an int: that accelerator's index) or a torch.device; an
    unknown name raises ``SafetensorArgumentError`` (a SafetensorError and a ValueError)."""
    if isinstance(device, _torch.device):
        return device
    if isinstance(device, int) and not isinstance(device, bool):
        return _torch.device(device)
    if isinstance(device, str):
        try:
            return _torch.device(device)
        except RuntimeError:
            pass
    raise SafetensorArgumentError(f"device {device} is invalid")


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


def load_file(filename, device="cpu", *, backend="mmap"):
    """Loads every tensor of an HRRYFILE as a dict of name to torch.Tensor (safetensors.torch's ``load_file``).

    On the CPU the tensors view the file's mapping without a copy; the file is
    mapped copy-on-write, so writing into a tensor changes only this process's
    copy of the pages it touches, never the file. Bool tensors (packed 8 per
    byte in the file) are unpacked copies. Other devices (a str or an int, as
    safetensors takes them): loaded on the CPU, then moved with
    ``.to(device)``, failing as torch fails where the device is absent. A
    tensor whose element type torch lacks raises ``UnsupportedError``. The
    dict is in sorted name order, as safetensors' ``safe_open.keys()``.
    Composites as ``hurray.numpy.load_file`` has them: members by name, merged
    views of partitions and overlays. ``backend`` (``"mmap"`` or ``"pread"``)
    is accepted for safetensors' signature; both read through the mapping.
    """
    device = _device(device)
    _check_backend(backend)
    with _safetensor_errors(), _open_file(filename, writable=True) as f:
        out = {name: _tensor(f, name) for name in sorted(_array_names(f))}
    if device.type != "cpu":
        out = {name: t.to(device) for name, t in out.items()}
    return out


def load(data):
    """Every tensor of an HRRYFILE given as bytes (safetensors.torch's ``load``),
    in sorted name order: writable tensors over a private copy of ``data``,
    mapped copy-on-write (see ``hurray.numpy.load``)."""
    with _safetensor_errors():
        f, writable = _open_bytes(data)
        with f:
            # Without a copy-on-write mapping (no memfd), the arrays view a
            # read-only private copy: copy each tensor out, as torch tensors are writable.
            return {name: _tensor(f, name, copy=not writable) for name in sorted(_array_names(f))}


def save_model(model, filename, metadata=None, force_contiguous=True, durable=False):
    """Saves ``model.state_dict()`` (safetensors.torch's ``save_model``),
    parameters tied to others (one storage, e.g. shared embeddings) once.

    Of each set of state-dict entries whose memory overlaps, the entry that
    covers the whole storage and sorts first is kept; each other one is left
    out and recorded as metadata ``{dropped name: kept name}`` (an entry the
    caller's ``metadata`` already has is not overwritten; the caller's dict is
    not changed). ``RuntimeError`` when no entry of such a set covers its
    whole storage. ``force_contiguous`` (the default, as in safetensors):
    tensors are saved as ``.contiguous()``; without it a non-contiguous one
    raises ``InvalidArgumentError`` (a ValueError) pointing at
    ``force_contiguous=True``. ``durable``: as for ``save_file``.
    """
    state_dict = model.state_dict()
    metadata = dict(metadata) if metadata is not None else None
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            if metadata is None:
                metadata = {}
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {name: t.contiguous() for name, t in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata, durable=durable)
    except InvalidArgumentError as e:
        if isinstance(e, (SharedTensorsError, InvalidTensorsError)):
            raise
        raise InvalidArgumentError(f"{e} Or use save_model(..., force_contiguous=True), read the docs for "
                                   "potential caveats.") from e


def load_model(model, filename, strict=True, device="cpu", *, backend="mmap"):
    """Loads a file ``save_model`` (or ``save_file``) wrote into ``model``
    (safetensors.torch's ``load_model``); returns ``(missing, unexpected)``.

    The model's tied parameters are matched as ``save_model`` saved them: of
    each set sharing memory, the name the file holds is loaded and the others
    follow through the tie. ``missing`` (a set) are model names the file did
    not fill, ``unexpected`` (a list) file names the model did not take, a
    tied name the file holds as well included. ``strict`` (the default):
    ``RuntimeError`` listing both when either is not empty. ``device``: as
    for ``load_file``.
    """
    state_dict = load_file(filename, device=device, backend=backend)
    to_remove = _remove_duplicate_names(model.state_dict(), preferred_names=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    unexpected = list(unexpected)
    for dropped in to_remove.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected
