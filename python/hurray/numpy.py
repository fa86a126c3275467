# SPDX-License-Identifier: Apache-2.0
"""safetensors-style ``save_file`` / ``load_file`` for numpy arrays, on HRRYFILE files.

    from hurray.numpy import save_file, load_file
    save_file({"w": np.zeros((2, 2), np.float32)}, "model.hrry", metadata={"format": "np"})
    tensors = load_file("model.hrry")
"""

from . import _hurray
from . import _savable
from . import save as _save
from ._open import open_file as _open_file
from ._safetensors import array_names as _array_names
from ._safetensors import kv_from_metadata as _kv_from_metadata

__all__ = ["load", "load_file", "save", "save_file"]


def save_file(tensor_dict, filename, metadata=None, durable=False):
    """Saves a dict of name to numpy array; ``metadata`` (str to str) becomes string KV entries.

    Atomic (a temporary file renamed over ``filename``) but, like
    safetensors' ``save_file``, not fsync'ed unless ``durable=True``
    (see ``hurray.save``).
    """
    _save(filename, tensor_dict, kv=_kv_from_metadata(metadata), durable=True if durable else False)


def load_file(filename):
    """Loads every tensor as a dict of name to read-only numpy array (zero-copy for dense data).

    Composite members are entries like any tensor; a partition or overlay
    head is its merged view (assembled, a copy); a head without one (a group,
    a composite of composites) is left out: its data is in its members.
    """
    with _open_file(filename) as f:
        return {name: f.get_tensor(name) for name in _array_names(f)}


def save(tensor_dict, metadata=None):
    """The bytes of an HRRYFILE holding the arrays (safetensors' ``save``)."""
    names, arrays = _savable(tensor_dict)
    return _hurray.save_bytes(names, arrays, _kv_from_metadata(metadata))


def load(data):
    """Every tensor of an HRRYFILE given as bytes (safetensors' ``load``): read-only
    arrays over one private copy of ``data``."""
    with _hurray.open_bytes(data) as f:
        return {name: f.get_tensor(name) for name in _array_names(f)}
