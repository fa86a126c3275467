# SPDX-License-Identifier: Apache-2.0
"""``hurray.safe_open``: safetensors' lazy reader API on HRRYFILE files."""

from . import _hurray
from ._errors import InvalidArgumentError, UnsupportedError
from ._open import open_file

_NUMPY_FRAMEWORKS = ("np", "numpy")
_TORCH_FRAMEWORKS = ("pt", "torch")
# safetensors' other frameworks: known, not supported here (UnsupportedError);
# any other name is a ValueError.
_OTHER_FRAMEWORKS = ("tf", "tensorflow", "flax", "jax", "mlx", "paddle")


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

    ``framework="np"`` (or ``"numpy"``): read-only numpy arrays, ``device``
    must be ``"cpu"``. ``framework="pt"`` (or ``"torch"``, needs PyTorch):
    torch tensors on ``device``; on the CPU they view the file's mapping,
    which is mapped copy-on-write, so writing into them never reaches the file
    (two ``get_tensor`` calls for one name share memory). Other frameworks
    safetensors knows raise ``UnsupportedError``; an unknown one
    ``InvalidArgumentError`` (a ValueError).
    """

    def __init__(self, filename, framework="np", device="cpu"):
        if framework in _TORCH_FRAMEWORKS:
            from . import torch as _hurray_torch  # ImportError without PyTorch
            self._torch = _hurray_torch
            self._device = device
            self._file = open_file(filename, writable=True)
            return
        if framework in _OTHER_FRAMEWORKS:
            raise UnsupportedError(f"safe_open: framework {framework!r} is not supported yet (use 'np' or 'pt')")
        if framework not in _NUMPY_FRAMEWORKS:
            raise InvalidArgumentError(f"safe_open: unknown framework {framework!r} (use 'np' or 'pt')")
        if device != "cpu":
            raise UnsupportedError(f"safe_open: device {device!r} is not supported (numpy arrays live on the cpu)")
        self._torch = None
        self._file = open_file(filename)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()
        return False

    def keys(self):
        """Tensor names, in the order they were written."""
        return self._file.keys()

    def get_tensor(self, name):
        """The tensor as a read-only numpy array (zero-copy for dense data), or
        with framework "pt" a torch.Tensor (zero-copy on the CPU)."""
        if self._torch is not None:
            return self._torch.tensor_from_file(self._file, name, self._device)
        return self._file.get_tensor(name)

    def get_slice(self, name):
        """A lazy slice handle: ``get_shape()``, ``get_dtype()`` and ``[...]``
        indexing, which returns a new array of just the slice. Dense tensors
        are views of the file's mapping, so only the pages the slice covers are
        read."""
        return _Slice(self, name)

    def metadata(self):
        """The file's KV metadata as str to str (None when it has none)."""
        return metadata_from_kv(self._file.metadata())


# safetensors' dtype names, from the C++ table (hurray::formats::safetensors_dtype_name):
# Hurray's own type name where SafeTensors has none.
_SAFETENSORS_DTYPES = _hurray._safetensors_dtype_names() if _hurray._have_convert else {}


class _Slice:
    """What ``safe_open.get_slice`` returns."""

    def __init__(self, handle, name):
        self._info = handle._file.info(name)  # KeyError for a missing name, before any data is read
        self._handle = handle
        self._name = name

    def get_shape(self):
        return list(self._info["shape"])

    def get_dtype(self):
        return _SAFETENSORS_DTYPES.get(self._info["dtype"], self._info["dtype"])

    def __getitem__(self, index):
        handle = self._handle
        if handle._torch is not None:
            return handle._torch.slice_from_file(handle._file, self._name, index, handle._device)
        view = handle._file.get_tensor(self._name)
        return view[index].copy()
