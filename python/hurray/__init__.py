# SPDX-License-Identifier: Apache-2.0
"""Read and write Hurray tensor files (HRRYFILE) from Python with NumPy.

    import numpy as np
    import hurray

    hurray.save("model.hrry", {"w": np.ones((2, 3), np.float32)}, kv={"epochs": 3})
    tensors = hurray.load("model.hrry")          # dict of hurray.Tensor, zero-copy
    w = np.asarray(tensors["w"])                 # read-only numpy view of the mapping
    with hurray.open("model.hrry") as f:         # lazy: names, info and KV without data
        print(f.keys(), f.info("w"), f.metadata())

``hurray.numpy.save_file`` / ``load_file`` and ``hurray.safe_open`` offer the
safetensors calls on HRRYFILE files.
"""

import os as _os

import numpy as _np

from . import _hurray
from ._open import is_url as _is_url
from ._errors import (
    BufferError,
    FileError,
    HurrayError,
    InternalError,
    InvalidArgumentError,
    InvalidDescriptorError,
    SafetensorError,
    StreamError,
    UnsupportedError,
)
from ._errors import ERROR_CLASSES as _ERROR_CLASSES

_hurray._set_error_classes(_ERROR_CLASSES)

__version__ = _hurray.__version__

File = _hurray.File

from . import device, dtype  # noqa: E402
from .device import Device  # noqa: E402
from .dtype import Dtype  # noqa: E402
from .dtype import (  # noqa: E402,F401 - the Tier 1 element types
    bfloat16, complex64, complex128, float16, float32, float64,
    int8, int16, int32, int64, uint8, uint16, uint32, uint64,
)
bool = dtype.bool  # noqa: A001 - the reference's name for the Tier 1 bool type
_hurray._set_tensor_support(dtype._dtype_of, device._make_device)
from ._tensor import (  # noqa: E402
    Tensor, arange, asarray, empty, empty_like, eye, from_numpy, from_torch, full, full_like, linspace, ones,
    ones_like, sparse_coo, zeros, zeros_like,
)
from_dlpack = _hurray.from_dlpack
from_hurray = _hurray.from_hurray
from ._layout import (  # noqa: E402
    BlockPagedLayout, ColMajorLayout, CompositeLayout, CooLayout, CscLayout, CsfLayout, CsrLayout, HilbertLayout,
    Layout, MortonLayout, PrivateExtensionLayout, Quantization, RowMajorLayout, StridedLayout, TiledLayout,
    UnknownLayout,
)
from ._errors import CopyRequiredError  # noqa: E402
from ._quantization import MXFP, NF4, PerBlockAffine, PerChannelAffine, PerTensorAffine, Shard, Statistics  # noqa: E402
from ._print_options import PrintOptionsCtx, get_print_options, print_options, set_print_options  # noqa: E402
from ._scipy import from_scipy  # noqa: E402 - imports SciPy only when called

__all__ = [
    "BufferError",
    "File",
    "FileError",
    "HurrayError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidDescriptorError",
    "SafetensorError",
    "StreamError",
    "UnsupportedError",
    "load",
    "open",
    "open_url",
    "safe_open",
    "save",
]
__all__ += [  # hurray.Tensor, dtypes, devices, creation (_tensor.py, dtype.py, device.py, _layout.py)
    "BlockPagedLayout", "ColMajorLayout", "CompositeLayout", "CooLayout", "CopyRequiredError", "CscLayout",
    "CsfLayout", "CsrLayout", "Device", "Dtype", "HilbertLayout", "Layout", "MortonLayout", "PrivateExtensionLayout",
    "Quantization", "RowMajorLayout", "StridedLayout", "Tensor", "TiledLayout", "UnknownLayout", "arange", "asarray", "bfloat16",
    "complex64", "complex128", "device", "dtype", "empty", "empty_like", "eye", "float16", "float32", "float64",
    "from_dlpack", "from_hurray", "from_numpy", "from_torch", "full", "full_like", "int8", "int16", "int32", "int64", "linspace",
    "ones", "ones_like", "sparse_coo", "uint8", "uint16", "uint32", "uint64", "zeros", "zeros_like",
]
__all__ += [  # scipy.sparse interop and print options (_scipy.py, _print_options.py)
    "PrintOptionsCtx", "from_scipy", "get_print_options", "print_options", "set_print_options",
]


def open(path, writable=False, spec_only=False):  # noqa: A001 - the package's name for it, like io.open
    """Opens and validates an HRRYFILE; returns a lazy ``hurray.File``.

    The handle reads nothing but the header, index and KV section: ``keys()``
    (every tensor of the index, composite members included),
    ``info(name)`` (dtype, shape, layout, quantization, nbytes) and
    ``metadata()`` touch no tensor data; ``get_tensor(name)`` returns a
    read-only numpy array viewing the file's mapping (a composite head: its
    merged view, assembled), ``tensor(name)`` a ``hurray.Tensor`` (a
    composite head: a ``hurray.Composite`` with its members). It is a
    context manager; arrays and tensors stay valid after it is closed.

    ``writable=True`` maps the file copy-on-write: ``get_tensor`` returns
    writable arrays, still without a copy, whose writes stay in this process
    (the file never changes; arrays of one handle share them).

    libhurray's own private quantization scheme, GGML blocks (files converted
    from GGUF hold it), is understood: listed, validated and dequantized
    (``Tensor.dequantize()``). ``spec_only=True`` reads by the Hurray
    specification alone, as another implementation does: such a tensor raises
    ``UnsupportedError`` naming the private scheme when it is first described
    or read (opening decodes no descriptor).

    An ``http://``, ``https://`` or ``s3://`` URL is opened as ``open_url(path)`` does.
    """
    if _is_url(path):
        return open_url(path, spec_only=spec_only, writable=writable)
    return _hurray.open(_os.fspath(path), writable=writable, spec_only=spec_only)


def open_url(url, headers=None, timeout=0.0, spec_only=False, aws=None, endpoint=None, writable=False):
    """Opens an HRRYFILE over HTTP(S) or S3 with range requests; returns a lazy ``hurray.File``.

    A web server, a CDN or an S3-compatible store that answers range requests
    serves it: the open reads the file's trailer, then its header, index and KV
    section (with a descriptor table, the descriptors come with them), and each
    tensor's bytes are fetched when first read, then kept while the handle is
    open. ``headers`` is a list of extra request headers (``"Name: value"``,
    e.g. an ``Authorization`` for a private bucket); ``timeout``, when not 0,
    the seconds a request may go without progress. Errors are ``FileError``
    naming the URL (without credentials or query string) and the byte range.
    A file replaced on the server while it is read is an error, never a mix of
    two versions.

    ``s3://bucket/key`` reads an object of S3 or of an S3-compatible store:
    at ``endpoint`` (else ``$AWS_ENDPOINT_URL_S3``, ``$AWS_ENDPOINT_URL``, else
    AWS), path-style on a custom endpoint, signed with AWS Signature Version 4
    by ``aws`` (else the environment's ``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``; unsigned
    without them). ``aws`` is a dict of ``access_key_id``,
    ``secret_access_key``, and optionally ``session_token``, ``region``
    (default ``$AWS_REGION``, else ``us-east-1``) and ``service`` (``s3``); it signs http(s) URLs
    too. A refused request names the server's error code (``HTTP status 403
    (SignatureDoesNotMatch: ...)``), never the secret. ``writable=True``:
    ``get_tensor`` returns writable private copies of the downloaded bytes.
    """
    return _hurray.open_url(url, headers=list(headers or []), timeout=float(timeout), spec_only=spec_only,
                            aws=None if aws is None else {str(k): str(v) for k, v in dict(aws).items()},
                            endpoint=endpoint or "", writable=writable)


def load(path, names=None, spec_only=False):
    """Loads tensors as a dict of name to ``hurray.Tensor`` or ``hurray.Composite``.

    Every tensor (any layout, quantization or element type) views the file's
    memory mapping without a copy; the mapping lives as long as any Tensor,
    or numpy array made from one (``np.asarray(t)``), uses it. A composite
    comes back as a ``hurray.Composite`` whose members are such Tensors (or
    nested composites); its members are not entries of the dict themselves,
    so ``save(path2, load(path))`` writes the same tensors and composites
    again. ``Composite.to_dense()`` / ``numpy.asarray`` give a composite's
    merged view. ``names`` (an iterable of str) limits what is loaded, any
    name of the file's index allowed (a member's too); a name the file lacks
    raises KeyError. ``spec_only``: as in ``hurray.open``.
    """
    if isinstance(names, (str, bytes)):
        raise TypeError("names must be an iterable of tensor names, not a single name")
    with open(path, spec_only=spec_only) as f:
        if names is not None:
            return {name: f.tensor(name) for name in list(names)}
        keys = f.keys()
        composites = {}
        members = set()
        for name in keys:
            # _member_names decodes the descriptor once, kept for f.tensor (info() would decode a copy).
            if name not in composites and f._member_names(name) is not None:
                composites[name] = f.tensor(name)
                members.update(composites[name]._member_file_names())
        return {name: composites[name] if name in composites else f.tensor(name)
                for name in keys if name not in members}


def _as_savable(name, value):
    if not isinstance(name, str):
        raise TypeError(f"tensor names must be str, not {type(name).__name__}")
    if isinstance(value, Composite):
        # (head, [(member name, descriptor, buffers)] in pre-order): the extension writes it whole.
        return (value.descriptor, value._file_entries(name))
    if isinstance(value, Tensor):
        if value.layout.is_virtual:
            raise UnsupportedError(f"tensor {name!r}: a composite head owns no buffers; save a hurray.Composite "
                                   "(head and members) instead")
        return value  # written as it is: descriptor and every buffer
    array = _np.asarray(value)
    # Non-contiguous arrays (slices, transposes) are saved as a contiguous copy.
    if not array.flags.c_contiguous:
        array = _np.ascontiguousarray(array)
    if array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and not _np.little_endian):
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def save(path, tensors, kv=None, durable=True, descriptor_table=True):
    """Writes ``tensors`` (a dict of name to hurray.Tensor, hurray.Composite or numpy array) and ``kv`` metadata
    as an HRRYFILE.

    A ``hurray.Tensor`` is written as it is (its descriptor and every buffer:
    any layout, quantization or element type round-trips byte for byte);
    a ``hurray.Composite`` as its head followed by its members (pre-order,
    nested composites included), each an entry of the file's index: member
    ``i`` of head ``name`` is named ``name.i`` (``name.i.j`` inside a nested
    composite), unless the composite was read from a file under ``name``,
    whose member names are kept. The whole composite is validated before any
    of it is written; a member name that is already taken raises
    InvalidArgumentError. Other values go through ``numpy.asarray``.

    Atomic: a temporary file in the same directory is renamed over ``path``
    once complete, so a failure leaves any existing file untouched.
    ``durable=True`` (the default) also fsyncs the file before the rename and
    its directory after it, so the new content survives a power loss once
    ``save`` returns; ``durable=False`` skips both fsyncs (the rename is still
    atomic for other processes), so saving costs what writing the bytes
    costs, but a power loss soon after may leave the old, an empty or a
    partly written file (what ``numpy.save`` and safetensors give). Arrays
    that are not C-contiguous are written from a contiguous copy; big-endian
    arrays are converted. ``kv`` values: str, int, float, bool, bytes, or a
    list of one of those.

    ``descriptor_table=True`` (the default) also stores a copy of every
    descriptor in one KV entry, so that readers list the file from its tail
    (``docs/descriptor-table.md``); ``False`` writes the file as the
    reference writer does, without it.
    """
    names, arrays = _savable(tensors)
    _hurray.save(_os.fspath(path), names, arrays, kv, durable=True if durable else False,
                 descriptor_table=True if descriptor_table else False)


def _savable(tensors):
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of str to hurray.Tensor or numpy arrays, not {type(tensors).__name__}")
    names = list(tensors.keys())
    return names, [_as_savable(name, tensors[name]) for name in names]


from ._safetensors import safe_open  # noqa: E402
from . import numpy  # noqa: E402,F401
from ._stream import Composite, StreamReader, StreamWriter  # noqa: E402
_hurray._set_composite_factory(Composite._from_file)
__all__ += ["MXFP", "NF4", "PerBlockAffine", "PerChannelAffine", "PerTensorAffine", "Shard", "Statistics"]
__all__ += ["Composite", "StreamReader", "StreamWriter"]
from ._convert import ConvertReport, Source, convert, detect_format, open_source  # noqa: E402
__all__ += ["ConvertReport", "Source", "convert", "detect_format", "open_source"]
