# SPDX-License-Identifier: Apache-2.0
"""``hurray.safe_open``: safetensors' lazy reader API on HRRYFILE files."""

import os

from . import _hurray
from ._errors import UnsupportedError

_NUMPY_FRAMEWORKS = ("np", "numpy")


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

    Only ``framework="np"`` (or ``"numpy"``) for now; ``device`` must be ``"cpu"``.
    """

    def __init__(self, filename, framework="np", device="cpu"):
        if framework not in _NUMPY_FRAMEWORKS:
            raise UnsupportedError(f"safe_open: framework {framework!r} is not supported yet (use 'np')")
        if device != "cpu":
            raise UnsupportedError(f"safe_open: device {device!r} is not supported (numpy arrays live on the cpu)")
        self._file = _hurray.open(os.fspath(filename))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()
        return False

    def keys(self):
        """Tensor names, in the order they were written."""
        return self._file.keys()

    def get_tensor(self, name):
        """The tensor as a read-only numpy array (zero-copy for dense data)."""
        return self._file.get_tensor(name)

    def get_slice(self, name):
        """A lazy slice handle: ``get_shape()``, ``get_dtype()`` and ``[...]``
        indexing, which returns a new array of just the slice. Dense tensors
        are views of the file's mapping, so only the pages the slice covers are
        read."""
        return _Slice(self._file, name)

    def metadata(self):
        """The file's KV metadata as str to str (None when it has none)."""
        return metadata_from_kv(self._file.metadata())


# safetensors' dtype names (complex types have none there; Hurray's are used).
_SAFETENSORS_DTYPES = {
    "bool": "BOOL", "int8": "I8", "uint8": "U8", "int16": "I16", "uint16": "U16",
    "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64",
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64",
    "float8_e4m3": "F8_E4M3", "float8_e5m2": "F8_E5M2", "complex64": "C64", "complex128": "C128",
}


class _Slice:
    """What ``safe_open.get_slice`` returns."""

    def __init__(self, file, name):
        self._info = file.info(name)  # KeyError for a missing name, before any data is read
        self._file = file
        self._name = name

    def get_shape(self):
        return list(self._info["shape"])

    def get_dtype(self):
        return _SAFETENSORS_DTYPES.get(self._info["dtype"], self._info["dtype"])

    def __getitem__(self, index):
        view = self._file.get_tensor(self._name)
        return view[index].copy()
