# SPDX-License-Identifier: Apache-2.0
"""DLPack: Tensor.__dlpack__ / __dlpack_device__, hurray.from_dlpack, to_torch / from_torch."""

import builtins
import ctypes
import gc
import struct
import weakref

import numpy as np
import pytest

import hurray
from conftest import sample

DLPACK_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"]

_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid.restype = ctypes.c_int


@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_numpy_reads_a_tensor_without_a_copy(dtype):
    a = sample(dtype, (3, 5))
    t = hurray.from_numpy(a)
    view = np.from_dlpack(t)
    assert view.dtype == a.dtype and view.shape == a.shape
    assert np.shares_memory(view, a)
    np.testing.assert_array_equal(view, a)


def test_zero_d_and_empty():
    assert np.from_dlpack(hurray.Tensor(struct.pack("<i", 7), hurray.int32, [])).tolist() == 7
    assert np.from_dlpack(hurray.zeros((0, 3), dtype=hurray.float32)).shape == (0, 3)


def test_capsule_is_legacy_dltensor_and_keeps_the_tensor_alive():
    a = np.arange(10, dtype=np.float64)
    t = hurray.from_numpy(a)
    capsule = t.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule" and _capsule_is_valid(capsule, b"dltensor")
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is not None  # the capsule holds the Tensor
    del capsule  # unconsumed: its destructor runs the deleter
    gc.collect()
    assert ref() is None


def test_consumer_array_keeps_the_tensor_alive():
    t = hurray.arange(100, dtype=hurray.int32)
    ref = weakref.ref(t)
    view = np.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None and view[99] == 99
    del view
    gc.collect()
    assert ref() is None


def test_device_mapping():
    buf = bytes(16)

    def dev(*args):
        return hurray.Tensor(buf, hurray.float32, [4], hurray.Device(*args)).__dlpack_device__()

    assert hurray.zeros(3).__dlpack_device__() == (1, 0)
    assert dev("cpu", 0, "host_pinned") == (1, 0)
    assert dev("cuda", 2) == (2, 2)
    assert dev("cuda", 0, "host_pinned") == (3, 0)
    assert dev("cuda", 0, "unified") == (13, 0)
    assert dev("rocm", 1) == (10, 1)
    assert dev("rocm", 0, "host_pinned") == (11, 0)
    assert dev("metal", 0, "unified") == (8, 0)
    assert dev("vulkan") == (7, 0)
    assert dev("webgpu") == (15, 0)
    assert dev("hexagon") == (16, 0)
    assert dev("level_zero") == (14, 0)
    assert dev("opencl") == (4, 0)
    for args in [("cuda", 0, "peer"), ("rocm", 0, "unified"), ("vulkan", 0, "peer")]:
        with pytest.raises(hurray.UnsupportedError):
            dev(*args)
    with pytest.raises(hurray.BufferError, match="not valid for device webgpu"):
        dev("webgpu", 0, "unified")  # the core refuses the combination (ADR-020)
    assert hurray.Tensor._from_wire(hurray.zeros(2)._wire()[0], [bytes(16)], device_id=5).__dlpack_device__() == (1, 5)
    # The memory behind any Tensor is host memory: it is never exported as device memory.
    with pytest.raises(builtins.BufferError, match="host memory"):
        hurray.Tensor(buf, hurray.float32, [4], hurray.Device("cuda", 0)).__dlpack__()
    pinned = hurray.Tensor(buf, hurray.float32, [4], hurray.Device("cuda", 0, "host_pinned"))
    assert type(pinned.__dlpack__()).__name__ == "PyCapsule"


@pytest.mark.parametrize("make", [
    lambda: hurray.Tensor(bytes(2), hurray.dtype.int4, [4]),
    lambda: hurray.Tensor(bytes(4), hurray.dtype.float8_e4m3, [4]),
    lambda: hurray.from_numpy(np.array([True, False])),
], ids=["int4", "float8", "bool"])
def test_types_outside_dlpack_raise_the_builtin_buffer_error(make):
    t = make()
    with pytest.raises(builtins.BufferError):
        t.__dlpack__()
    with pytest.raises(builtins.BufferError):
        np.from_dlpack(t)


def test_quantized_raises_the_builtin_buffer_error(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    t = hurray.Tensor._from_wire(descriptor, [bytes(8192), bytes([0, 0x3C]) * 128])
    with pytest.raises(builtins.BufferError, match="quantized"):
        t.__dlpack__()


def test_arguments():
    a = np.arange(4, dtype=np.float32)
    t = hurray.from_numpy(a)
    for stream in (None, -1, 1, 12345):
        assert np.shares_memory(np.asarray(hurray.from_dlpack(t.__dlpack__(stream=stream))), a)
    with pytest.raises(TypeError):
        t.__dlpack__(stream="default")
    assert np.shares_memory(np.asarray(hurray.from_dlpack(t.__dlpack__(max_version=(1, 0)))), a)
    assert np.shares_memory(np.asarray(hurray.from_dlpack(t.__dlpack__(dl_device=(1, 0)))), a)
    with pytest.raises(builtins.BufferError, match="device"):
        t.__dlpack__(dl_device=(2, 0))
    copied = np.asarray(hurray.from_dlpack(t.__dlpack__(copy=True)))
    assert not np.shares_memory(copied, a) and copied.tolist() == [0, 1, 2, 3]
    assert np.shares_memory(np.asarray(hurray.from_dlpack(t.__dlpack__(copy=False))), a)


def test_other_dense_layouts_are_exported_as_a_copy_sparse_ones_refused(conformance_dir):
    col = hurray.Tensor(struct.pack("<4f", 1, 2, 3, 4), hurray.float32, [2, 2], layout=hurray.ColMajorLayout())
    np.testing.assert_array_equal(np.from_dlpack(col), [[1, 3], [2, 4]])
    with pytest.raises(builtins.BufferError, match="copy"):
        col.__dlpack__(copy=False)
    descriptor = (conformance_dir / "descriptors" / "csr_f32_3x3.bin").read_bytes()
    t = hurray.Tensor._from_wire(descriptor, [struct.pack("<2f", 5, 7), struct.pack("<2Q", 0, 1),
                                              struct.pack("<4Q", 0, 1, 2, 2)])
    with pytest.raises(builtins.BufferError, match="csr"):
        np.from_dlpack(t)


def test_from_dlpack_of_a_numpy_array_is_zero_copy_and_releases_once():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    ref = weakref.ref(a)
    t = hurray.from_dlpack(a)
    assert t.dtype is hurray.int16 and t.shape == (3, 4)
    assert np.shares_memory(np.asarray(t), a)
    del a
    gc.collect()
    assert ref() is not None  # numpy's manager context, kept by the Tensor
    view = np.asarray(t)
    del t
    gc.collect()
    assert ref() is not None and view[2, 3] == 11
    del view
    gc.collect()
    assert ref() is None  # the deleter ran (exactly once: a second call would double-free)


def test_from_dlpack_consumes_the_capsule():
    a = np.arange(3.0)
    capsule = a.__dlpack__()
    t = hurray.from_dlpack(capsule)
    assert _capsule_is_valid(capsule, b"used_dltensor") and not _capsule_is_valid(capsule, b"dltensor")
    with pytest.raises(hurray.InvalidArgumentError, match="unconsumed"):
        hurray.from_dlpack(capsule)
    del capsule
    gc.collect()
    assert np.asarray(t).tolist() == [0.0, 1.0, 2.0]


def test_from_dlpack_errors():
    with pytest.raises(TypeError):
        hurray.from_dlpack([1, 2, 3])
    with pytest.raises(hurray.UnsupportedError, match="C-contiguous"):
        hurray.from_dlpack(np.arange(10.0)[::2])  # numpy exports strides; only dense data is taken
    with pytest.raises(hurray.UnsupportedError, match="C-contiguous"):
        hurray.from_dlpack(np.zeros((3, 4)).T)
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.from_dlpack(_NotACapsule())


class _NotACapsule:
    def __dlpack__(self, stream=None):
        return object()


def test_torch_bridge():
    torch = pytest.importorskip("torch")
    t = hurray.Tensor(struct.pack("<2H", 0x3F80, 0x4000), hurray.bfloat16, [2])
    tt = t.to_torch()
    assert tt.dtype == torch.bfloat16 and tt.tolist() == [1.0, 2.0]
    back = hurray.from_torch(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    assert back.dtype is hurray.float32 and np.asarray(back).tolist() == [[0, 1, 2], [3, 4, 5]]
    bf = hurray.from_torch(torch.ones(3, dtype=torch.bfloat16))
    assert bf.dtype is hurray.bfloat16 and bytes(bf.buffer(0)) == struct.pack("<3H", 0x3F80, 0x3F80, 0x3F80)
    src = torch.zeros(4)
    shared = hurray.from_torch(src)
    src[1] = 5.0
    assert np.asarray(shared)[1] == 5.0  # zero-copy


@pytest.mark.parametrize("code", [
    "t = hurray.zeros(3); c = t.__dlpack__()",
    "c = hurray.zeros(3).__dlpack__()",
    "a = np.arange(3.0); t = hurray.from_dlpack(a); del a",
    "t = hurray.from_dlpack(np.arange(3.0)); v = np.asarray(t); c = t.__dlpack__()",
    "d = hurray.load(sys.argv[1]); v = np.from_dlpack(d['a']); c = d['a'].__dlpack__()",
], ids=["capsule", "capsule-only", "import", "import-export", "file"])
def test_interpreter_exits_cleanly_with_live_capsules(tmp_path, code):
    import os
    import subprocess
    import sys
    path = tmp_path / "s.hrry"
    hurray.save(path, {"a": np.arange(3.0)})
    script = "import sys\nimport numpy as np\nimport hurray\n" + code + "\nprint('ok')\n"
    result = subprocess.run([sys.executable, "-X", "dev", "-c", script, str(path)], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ), check=False)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr


def test_threads_share_one_tensor():
    import concurrent.futures
    a = sample("float32", (256, 256))
    t = hurray.from_numpy(a)

    def work(i):
        for _ in range(50):
            if i % 4 == 0:
                ok = np.shares_memory(np.from_dlpack(t), a)
            elif i % 4 == 1:
                ok = np.array_equal(t.to_dense(), a)
            elif i % 4 == 2:
                ok = np.shares_memory(np.asarray(hurray.Tensor._from_wire(*t._wire())), a)
            else:
                ok = np.shares_memory(np.asarray(hurray.from_dlpack(t)), a)
            if not ok:
                return i
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(work, range(16))) == [None] * 16


def test_a_capsule_outlives_its_producer():
    a = np.arange(5, dtype=np.int32)
    ref = weakref.ref(a)
    capsule = a.__dlpack__()
    del a
    gc.collect()
    assert ref() is not None  # numpy's capsule holds the array
    t = hurray.from_dlpack(capsule)
    del capsule
    gc.collect()
    assert np.asarray(t).tolist() == [0, 1, 2, 3, 4]
    del t
    gc.collect()
    assert ref() is None
    # And ours: the Tensor is gone from every name, the capsule alone keeps it.
    capsule = hurray.arange(4, dtype=hurray.int16).__dlpack__()
    gc.collect()
    assert np.asarray(hurray.from_dlpack(capsule)).tolist() == [0, 1, 2, 3]


# DLPack 1.x: "dltensor_versioned" capsules. The struct is read with ctypes to
# check what a C consumer sees: version, flags, and the DLTensor after them.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p

_READ_ONLY, _IS_COPIED = 1, 2


def _versioned(capsule):
    assert _capsule_is_valid(capsule, b"dltensor_versioned")
    return _DLManagedTensorVersioned.from_address(_capsule_pointer(capsule, b"dltensor_versioned"))


@pytest.mark.parametrize("max_version", [None, (0, 8)])
def test_legacy_capsule_unless_the_consumer_offers_version_1(max_version):
    t = hurray.arange(4, dtype=hurray.int32)
    capsule = t.__dlpack__(max_version=max_version)
    assert _capsule_is_valid(capsule, b"dltensor") and not _capsule_is_valid(capsule, b"dltensor_versioned")


@pytest.mark.parametrize("max_version", [(1, 0), (1, 3), (2, 0)])
def test_versioned_capsule_when_the_consumer_offers_version_1(max_version):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = hurray.from_numpy(a)
    capsule = t.__dlpack__(max_version=max_version)
    m = _versioned(capsule)
    assert (m.major, m.minor) == (1, 0)
    assert m.flags == 0  # writable memory, not a copy
    dl = m.dl_tensor
    assert dl.data == a.ctypes.data and dl.ndim == 2 and [dl.shape[0], dl.shape[1]] == [2, 3]
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (2, 32, 1)  # kDLFloat
    assert (dl.device.device_type, dl.device.device_id) == (1, 0)
    assert not dl.strides and dl.byte_offset == 0


def test_versioned_capsule_flags_read_only_memory_and_copies(tmp_path):
    path = tmp_path / "v.hrry"
    hurray.save(path, {"w": np.arange(8, dtype=np.int16)})
    mapped = hurray.load(path)["w"]
    assert _versioned(mapped.__dlpack__(max_version=(1, 0))).flags == _READ_ONLY
    assert _versioned(mapped.__dlpack__(max_version=(1, 0), copy=True)).flags == _IS_COPIED
    # A read-only capsule gives a read-only Tensor: no write reaches the file.
    imported = hurray.from_dlpack(mapped.__dlpack__(max_version=(1, 0)))
    view = np.asarray(imported)
    assert not view.flags.writeable and view.tolist() == list(range(8))
    col = hurray.Tensor(struct.pack("<4f", 1, 2, 3, 4), hurray.float32, [2, 2], layout=hurray.ColMajorLayout())
    assert _versioned(col.__dlpack__(max_version=(1, 0))).flags == _IS_COPIED


def test_versioned_capsule_round_trips_zero_copy_and_releases_once():
    a = np.arange(10, dtype=np.uint16)
    t = hurray.from_numpy(a)
    ref = weakref.ref(t)
    capsule = t.__dlpack__(max_version=(1, 0))
    back = hurray.from_dlpack(capsule)
    assert _capsule_is_valid(capsule, b"used_dltensor_versioned")
    assert np.shares_memory(np.asarray(back), a) and np.asarray(back).flags.writeable
    with pytest.raises(hurray.InvalidArgumentError, match="unconsumed"):
        hurray.from_dlpack(capsule)
    del t, capsule
    gc.collect()
    assert ref() is not None  # kept by the imported Tensor
    del back
    gc.collect()
    assert ref() is None


def test_an_unconsumed_versioned_capsule_releases_the_tensor():
    t = hurray.zeros((3,), dtype=hurray.float64)
    ref = weakref.ref(t)
    capsule = t.__dlpack__(max_version=(1, 0))
    del t
    gc.collect()
    assert ref() is not None
    del capsule
    gc.collect()
    assert ref() is None


class _Producer:
    """A producer in the DLPack 1.x style: answers what the consumer offers."""

    def __init__(self, tensor, accepts_max_version=True):
        self.tensor = tensor
        self.accepts = accepts_max_version
        self.offered = []

    def __dlpack__(self, stream=None, **kwargs):
        if not self.accepts and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        self.offered.append(kwargs.get("max_version"))
        return self.tensor.__dlpack__(stream=stream, **kwargs)


@pytest.mark.parametrize("accepts", [True, False])
def test_from_dlpack_offers_version_1_and_falls_back_for_older_producers(accepts):
    a = np.arange(5, dtype=np.int64)
    producer = _Producer(hurray.from_numpy(a), accepts)
    t = hurray.from_dlpack(producer)
    assert np.shares_memory(np.asarray(t), a)
    assert producer.offered == ([(1, 0)] if accepts else [None])


def test_versioned_capsule_errors():
    t = hurray.zeros((2,), dtype=hurray.float32)
    with pytest.raises(TypeError, match="max_version"):
        t.__dlpack__(max_version=1)
    with pytest.raises(TypeError, match="max_version"):
        t.__dlpack__(max_version=("1", "0"))
    # A capsule from a later major version is refused and left unconsumed.
    capsule = t.__dlpack__(max_version=(1, 0))
    m = _versioned(capsule)
    m.major = 2
    with pytest.raises(builtins.BufferError, match="version 2"):
        hurray.from_dlpack(capsule)
    assert _capsule_is_valid(capsule, b"dltensor_versioned")
    m.major = 1
    assert np.asarray(hurray.from_dlpack(capsule)).tolist() == [0.0, 0.0]
