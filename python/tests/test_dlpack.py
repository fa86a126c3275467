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


def test_other_layouts_are_exported_as_a_dense_copy(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "csr_f32_3x3.bin").read_bytes()
    t = hurray.Tensor._from_wire(descriptor, [struct.pack("<2f", 5, 7), struct.pack("<2Q", 0, 1),
                                              struct.pack("<4Q", 0, 1, 2, 2)])
    np.testing.assert_array_equal(np.from_dlpack(t), [[5, 0, 0], [0, 7, 0], [0, 0, 0]])
    with pytest.raises(builtins.BufferError, match="copy"):
        t.__dlpack__(copy=False)


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
