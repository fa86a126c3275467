# SPDX-License-Identifier: Apache-2.0
"""``hurray.safe_open``: safetensors' lazy reader API on HRRYFILE files, and
what the safetensors drop-ins (``hurray.numpy``, ``hurray.torch``) share."""

import contextlib
import os
import weakref

import numpy as np

from . import _hurray
from ._errors import HurrayError, SafetensorArgumentError, SafetensorUnsupportedError, SliceIndexError
from ._errors import TensorNotFoundError, as_safetensor_error
from ._open import open_file

_NUMPY_FRAMEWORKS = ("np", "numpy")
_TORCH_FRAMEWORKS = ("pt", "torch", "pytorch")
# safetensors' other frameworks: known, not supported here
# (SafetensorUnsupportedError); any other name is a SafetensorArgumentError.
_OTHER_FRAMEWORKS = ("tf", "tensorflow", "flax", "jax", "mlx", "paddle")
# safetensors' storage backends (keyword ``backend``): both read through the mapping here.
_BACKENDS = ("mmap", "pread")


@contextlib.contextmanager
def safetensor_errors():
    """Raises a HurrayError of the block as its SafetensorError variant
    (``_errors.as_safetensor_error``): what the drop-ins raise where
    safetensors raises SafetensorError, still the class the native calls raise."""
    try:
        yield
    except HurrayError as e:
        new = as_safetensor_error(e)
        if new is e:
            raise
        raise new.with_traceback(e.__traceback__) from None


def check_backend(backend):
    """safetensors' ``backend`` argument: ``"mmap"`` or ``"pread"``, else SafetensorArgumentError."""
    if backend not in _BACKENDS:
        raise SafetensorArgumentError(f'backend {backend!r} is invalid (expected one of: "mmap", "pread")')


def open_bytes(data):
    """(file, writable): an HRRYFILE given as bytes, opened for the drop-ins' ``load``.

    Where the system has memfd_create (Linux), ``data`` is copied once into an
    anonymous in-memory file, which is mapped copy-on-write: arrays from it are
    writable views, their writes private (writable True). Elsewhere it is
    ``_hurray.open_bytes``: read-only arrays over one private copy (writable
    False). Errors name ``<bytes>``, as ``_hurray.open_bytes`` does."""
    view = memoryview(data).cast("B")  # TypeError for what is not bytes-like
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        return _hurray.open_bytes(view), False
    fd = os.memfd_create("hurray-bytes", getattr(os, "MFD_CLOEXEC", 0))
    try:
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:])
        try:
            return _hurray.open(f"/proc/self/fd/{fd}", writable=True), True
        except HurrayError:
            pass  # opened again below, for the error as open_bytes words it (it names <bytes>)
    finally:
        os.close(fd)  # the mapping keeps the memory file
    return _hurray.open_bytes(view), False


def array_names(file):
    """The names of an opened file that have an array, in write order: every
    tensor of the index (composite members included, a partition or overlay
    head as its merged view) but the composite heads without a merged view
    (a group; a composite with a nested composite member), whose data is all
    in their members."""
    out = []
    for name in file.keys():
        if file.info(name)["layout"] == "composite":
            from ._composite import Composite  # noqa: PLC0415 - imported late: part of the package

            head = file.tensor(name)
            if isinstance(head, Composite) and (head.composition_rule == "group" or any(
                    isinstance(m, Composite) for m in head.members)):
                continue
        out.append(name)
    return out


def metadata_from_kv(kv):
    """safetensors metadata (str to str) from a file's KV: strings as they
    are, other values as ``str(value)``; None when the file has none."""
    if not kv:
        return None
    return {key: value if isinstance(value, str) else str(value) for key, value in kv.items()}


def kv_from_metadata(metadata):
    """KV metadata from safetensors metadata, which must be str to str."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict of str to str, not {type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(
                f"metadata must be a dict of str to str; {key!r} -> {type(value).__name__} is not")
    return dict(metadata)


class safe_open:  # noqa: N801 - safetensors' name
    """Opens an HRRYFILE the way ``safetensors.safe_open`` opens a .safetensors file.

        with hurray.safe_open("model.hrry", framework="np") as f:
            for name in f.keys():
                array = f.get_tensor(name)

    The file is mapped copy-on-write: tensors view the mapping without a copy
    and are writable, writes staying in this process (the file never changes;
    two ``get_tensor`` calls for one name share memory). ``framework="np"``
    (or ``"numpy"``): numpy arrays, ``device`` must be ``"cpu"``.
    ``framework="pt"`` (``"torch"``, ``"pytorch"``; needs PyTorch): torch
    tensors on ``device`` (``"cpu"``, ``"cuda:1"``, an int for that
    accelerator, or a torch.device): other devices get ``.to(device)`` of the
    cpu tensor, failing as torch fails where the device is absent. Other
    frameworks safetensors knows raise ``SafetensorUnsupportedError``; an
    unknown framework, device or ``backend`` ``SafetensorArgumentError`` (both
    are ``SafetensorError``). A missing file raises ``FileNotFoundError``
    (``hurray.MissingFileError``); a corrupt one a ``SafetensorError`` that is
    also the ``FileError`` (...) ``hurray.open`` raises.
    """

    def __init__(self, filename, framework="np", device="cpu", *, backend="mmap"):
        self._file = None
        check_backend(backend)
        if framework in _TORCH_FRAMEWORKS:
            from . import torch as _hurray_torch  # ImportError without PyTorch
            self._torch = _hurray_torch
            self._device = _hurray_torch._device(device)
        elif framework in _OTHER_FRAMEWORKS:
            raise SafetensorUnsupportedError(
                f"safe_open: framework {framework!r} is not supported yet (use 'np' or 'pt')")
        elif framework not in _NUMPY_FRAMEWORKS:
            raise SafetensorArgumentError(f"framework {framework} is invalid (use 'np' or 'pt')")
        elif device != "cpu":
            raise SafetensorUnsupportedError(f"Device {device} is not supported for framework numpy")
        else:
            self._torch = None
        with safetensor_errors():
            self._file = open_file(filename, writable=True)
        self._names = None
        self._slices = weakref.WeakSet()  # get_slice handles: they keep reading after __exit__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # As in safetensors, the handle is closed, the slices it gave keep reading.
        file, self._file = self._file, None
        if file is not None and not self._slices:
            file.close()
        return False

    def _open(self):
        if self._file is None:
            raise SafetensorArgumentError("File is closed")
        return self._file

    def _name_set(self):
        if self._names is None:
            self._names = frozenset(self._open().keys())
        return self._names

    def _check_name(self, name):
        if name not in self._name_set():
            raise TensorNotFoundError(f"File does not contain tensor {name}")

    def keys(self):
        """Tensor names, sorted (as safetensors sorts them; ``hurray.open(...).keys()``
        keeps the order they were written in)."""
        return sorted(self._open().keys())

    def offset_keys(self):
        """Tensor names in the order of their data in the file (safetensors'
        ``offset_keys``); a composite head, which has no data of its own, where
        it was written."""
        f = self._open()
        names = f.keys()
        return [name for _, _, name in sorted(
            (f.info(name).get("data_offset", 0), i, name) for i, name in enumerate(names))]

    def get_tensor(self, name):
        """The tensor as a writable numpy array over the copy-on-write mapping
        (zero-copy for dense data), or with framework "pt" a torch.Tensor
        (zero-copy on the CPU). A name the file lacks raises
        ``TensorNotFoundError`` (a SafetensorError and a KeyError)."""
        f = self._open()
        self._check_name(name)
        with safetensor_errors():
            if self._torch is not None:
                return self._torch.tensor_from_file(f, name, self._device)
            return f.get_tensor(name)

    def get_tensors(self):
        """Every tensor as a dict of name to tensor, in ``offset_keys()`` order
        (safetensors' ``get_tensors``); composite heads without a merged view
        are left out, as in ``hurray.numpy.load_file``."""
        f = self._open()
        names = set(array_names(f))
        return {name: self.get_tensor(name) for name in self.offset_keys() if name in names}

    def get_slice(self, name):
        """A lazy slice handle: ``get_shape()``, ``get_dtype()`` and ``[...]``
        indexing, which returns a new array (tensor) of just the slice, read
        through the mapping, so that only the pages the slice covers are read.
        A name the file lacks raises ``TensorNotFoundError``."""
        self._open()
        self._check_name(name)
        s = _Slice(self, name)
        self._slices.add(s)
        return s

    def metadata(self):
        """The file's KV metadata as str to str (None when it has none)."""
        return metadata_from_kv(self._open().metadata())


# safetensors' dtype names, from the C++ table (hurray::formats::safetensors_dtype_name):
# Hurray's own type name where SafeTensors has none.
_SAFETENSORS_DTYPES = _hurray._safetensors_dtype_names() if _hurray._have_convert else {}


class _Slice:
    """What ``safe_open.get_slice`` returns. It holds the file: indexing still
    works after the ``safe_open`` handle's ``__exit__``, as in safetensors."""

    def __init__(self, handle, name):
        self._file = handle._file
        with safetensor_errors():
            self._info = self._file.info(name)
        self._torch = handle._torch
        self._device = getattr(handle, "_device", "cpu")
        self._name = name

    def get_shape(self):
        return list(self._info["shape"])

    def get_dtype(self):
        return _SAFETENSORS_DTYPES.get(self._info["dtype"], self._info["dtype"])

    def __getitem__(self, index):
        """``tensor[index]`` as a new array (tensor), with numpy's (torch's)
        indexing: ints (negative ones too), slices with steps, ``...``,
        ``None``, index lists. An int index selecting one element gives a 0-d
        array, as safetensors gives. An index out of range raises
        ``SliceIndexError`` (a SafetensorError and an IndexError)."""
        try:
            with safetensor_errors():
                if self._torch is not None:
                    return self._torch.slice_from_file(self._file, self._name, index, self._device)
                view = self._file.get_tensor(self._name)
                # np.array: a copy of just the slice, and a 0-d array (not a numpy
                # scalar) where the index selects a single element.
                return np.array(view[index])
        except IndexError as e:
            if isinstance(e, SliceIndexError):
                raise
            raise SliceIndexError(f"Error during slicing {index!r} with shape {self.get_shape()}: {e}") from None
