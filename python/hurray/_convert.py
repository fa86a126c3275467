# SPDX-License-Identifier: Apache-2.0
"""Other tensor formats: ``hurray.convert``, ``hurray.detect_format`` and ``hurray.open_source``.

    report = hurray.convert("model.safetensors", "model.hrry", verify=True)
    print(report.tensors, report.bytes)
    hurray.detect_format("model.gguf")              # "gguf"
    with hurray.open_source("weights.npz") as src:  # read in place, nothing converted
        for name in src.keys():
            print(src.info(name), src.get_tensor(name))

Built on libhurray's ``hurray::convert`` (docs/convert.md): SafeTensors, GGUF, NumPy
``.npy`` / ``.npz`` and HRRYFILE files, read and written a chunk at a time, outputs
replaced atomically.
"""

import os as _os
from collections import namedtuple as _namedtuple

import numpy as _np

from . import _hurray

ConvertReport = _namedtuple("ConvertReport", ["tensors", "bytes", "format", "source_format", "verified"])
ConvertReport.__doc__ = """What ``hurray.convert`` did.

``tensors``: tensors written; ``bytes``: bytes of tensor data written; ``format`` and
``source_format``: the output's and the input's format names; ``verified``: True when
``verify=True`` re-read the output and found every value equal."""


def _dtype_name(dtype):
    if dtype is None or isinstance(dtype, str):
        return dtype
    name = getattr(dtype, "name", None)  # numpy.dtype, hurray.Dtype
    if isinstance(name, str):
        return name
    return _np.dtype(dtype).name  # numpy.float16 and the like


def convert(src, dst, *, to=None, dequantize=False, dtype=None, verify=False, durable=True, progress=None):
    """Converts the file ``src`` to ``dst`` and returns a ``ConvertReport``.

    ``src``: an HRRYFILE, SafeTensors, GGUF, ``.npy`` or ``.npz`` file, its format
    detected from its bytes. ``to``: the output format ("hrryfile", "safetensors",
    "gguf", "npy", "npz"; "stream" is refused: use ``hurray.StreamWriter``), by default
    the one ``dst``'s extension names (.hrry, .safetensors, .gguf, .npy, .npz).
    ``dequantize=True`` writes quantized, sparse and composite tensors densely as
    ``dtype`` (float32, the default, float16 or bfloat16), which formats that hold
    dense tensors only need. ``verify=True`` re-reads the output and compares every
    value before it replaces anything. ``durable=False`` skips the fsyncs (scratch
    files). ``progress(done_bytes, total_bytes)`` is called as data is written (from
    the converting thread, with the GIL); an exception it raises is raised again once
    the conversion is over (it does not stop it).

    The output appears atomically: after an error ``dst`` is untouched and no
    temporary file is left. The GIL is released while the conversion runs. Errors are
    ``hurray.HurrayError`` subclasses whose message names the tensor, the field and
    the byte offset: ``FileError`` (an ``OSError``) for an unreadable or malformed
    input, ``UnsupportedError`` for what the output format cannot hold,
    ``InvalidArgumentError`` for bad arguments.
    """
    r = _hurray.convert(_os.fspath(src), _os.fspath(dst), to=to, dequantize=bool(dequantize),
                        dtype=_dtype_name(dtype), verify=bool(verify), durable=bool(durable), progress=progress)
    return ConvertReport(r["tensors"], r["bytes"], r["format"], r["source_format"], r["verified"])


def detect_format(path):
    """The format of the file at ``path`` from its first bytes: "hrryfile", "safetensors",
    "gguf", "npy", "npz", or "unknown" (a Hurray stream included: it has no magic)."""
    return _hurray.detect_format(_os.fspath(path))


class Source:
    """A SafeTensors, GGUF, NumPy or HRRYFILE file opened read-only (``hurray.open_source``).

    Its tensors are presented in Hurray's terms, as ``hurray::convert`` reads them
    (docs/convert.md has the mappings), without converting the file: ``keys()`` (the
    file's order), ``info(name)`` (dtype, numpy_dtype, shape, layout, quantization,
    nbytes, buffer_count), ``metadata()`` (the KV metadata as a dict), ``tensor(name)``
    (a ``hurray.Tensor``, viewing the file's mapping where the reader presents the
    stored bytes, else a copy) and ``get_tensor(name)`` (a read-only numpy array).
    A context manager; tensors stay valid after ``close()``.
    """

    __slots__ = ("_src",)

    def __init__(self, path):
        self._src = _hurray.open_source(_os.fspath(path))

    @property
    def path(self):
        return self._src.path

    @property
    def format(self):
        """The file's format name: "safetensors", "gguf", "npy", "npz" or "hrryfile"."""
        return self._src.format

    @property
    def closed(self):
        return self._src.closed

    def keys(self):
        return self._src.keys()

    def info(self, name):
        return self._src.info(name)

    def metadata(self):
        return self._src.metadata()

    def tensor(self, name):
        return self._src.tensor(name)

    def get_tensor(self, name):
        """The tensor as a read-only numpy array (``numpy.asarray(self.tensor(name))``)."""
        return _np.asarray(self._src.tensor(name))

    def close(self):
        self._src.close()

    def __len__(self):
        return len(self._src)

    def __contains__(self, name):
        return name in self._src

    def __iter__(self):
        return iter(self._src.keys())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = " (closed)" if self.closed else ""
        return f"<hurray.Source {self.path}{state}>"


def open_source(path):
    """Opens ``path`` (SafeTensors, GGUF, ``.npy``, ``.npz`` or HRRYFILE) read-only as a ``hurray.Source``."""
    return Source(path)
