# SPDX-License-Identifier: Apache-2.0
"""safetensors-style ``save_file`` / ``load_file`` for numpy arrays, on HRRYFILE files.

    from hurray.numpy import save_file, load_file
    save_file({"w": np.zeros((2, 2), np.float32)}, "model.hrry", metadata={"format": "np"})
    tensors = load_file("model.hrry")
"""

from . import load as _load
from . import save as _save
from ._safetensors import kv_from_metadata as _kv_from_metadata

__all__ = ["load_file", "save_file"]


def save_file(tensor_dict, filename, metadata=None):
    """Saves a dict of name to numpy array; ``metadata`` (str to str) becomes string KV entries."""
    _save(filename, tensor_dict, kv=_kv_from_metadata(metadata))


def load_file(filename):
    """Loads every tensor as a dict of name to read-only numpy array (zero-copy for dense data)."""
    return _load(filename)
