# SPDX-License-Identifier: Apache-2.0
"""The native interchange protocol: ``Tensor.__hurray__`` and ``hurray.from_hurray``.

The capsule ("hurray_tensor") wraps C-ABI handles of libhurray_c: a
HurrayBufferList (every buffer, in descriptor order) and a HurrayTensorContext
(the encoded descriptor, the C ABI version, the producer as owner). These tests
cover round trips, zero-copy sharing, lifetimes, capsule ownership, malformed
capsules, interpreter shutdown, and the C side of the capsule through ctypes.
"""

import ctypes
import gc
import struct
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import hurray
from conftest import DTYPES, sample

# ctypes views of the CPython capsule API (the capsule name must outlive the capsule).
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetContext.restype = ctypes.c_void_p
_api.PyCapsule_GetContext.argtypes = [ctypes.py_object]
_api.PyCapsule_SetContext.restype = ctypes.c_int
_api.PyCapsule_SetContext.argtypes = [ctypes.py_object, ctypes.c_void_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_NAME = b"hurray_tensor"


def _aligned(dtype, shape, alignment=64):
    """A writable, zeroed numpy array whose data starts on an `alignment` boundary."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.zeros(n + alignment, np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start:start + n].view(dt).reshape(shape)


def _address(a):
    return a.__array_interface__["data"][0]


class _Producer:
    """A participant whose __hurray__ returns whatever it was given."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __hurray__(self, stream=None):
        return self.capsule


def _coo():
    values = np.array([5.0, 7.0, -1.5], dtype=np.float32)
    indices = np.array([[0, 1], [1, 0], [2, 2]], dtype=np.uint64)
    return hurray.sparse_coo(values, indices, [3, 3])


# ── Discovery and naming ──────────────────────────────────────────────────────


def test_the_protocol_is_discoverable_under_its_one_name():
    t = hurray.zeros((2,), dtype=hurray.float32)
    assert hasattr(t, "__hurray__") and callable(hurray.from_hurray)
    assert not hasattr(t, "__hurray_buffer__") and not hasattr(hurray, "from_hurray_buffer")
    assert "from_hurray" in hurray.__all__
    assert hurray.Tensor.__hurray__.__doc__ and hurray.from_hurray.__doc__


def test_each_call_gives_a_new_capsule_named_for_its_payload():
    t = hurray.zeros((3,), dtype=hurray.int32)
    first, second = t.__hurray__(), t.__hurray__()
    assert first is not second
    assert _api.PyCapsule_GetName(first) == _NAME and "hurray_tensor" in repr(first)
    assert hurray.from_hurray(_Producer(first)).shape == (3,)
    assert hurray.from_hurray(_Producer(second)).shape == (3,)  # the other one is untouched
    assert _api.PyCapsule_GetName(first) == b"used_hurray_tensor"


# ── Round trips ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_tier1_numpy_dtype_round_trips(dtype):
    a = sample(dtype, (3, 5), seed=7)
    t = hurray.from_numpy(a)
    back = hurray.from_hurray(t)
    assert back.dtype == t.dtype and back.shape == (3, 5) and back.layout == t.layout
    assert back.buffer_count == t.buffer_count == 1
    assert np.array_equal(np.asarray(back), a)
    assert bytes(back.buffer(0)) == bytes(t.buffer(0))


@pytest.mark.parametrize("dtype", [hurray.bfloat16, hurray.dtype.int4, hurray.dtype.uint4])
def test_types_numpy_lacks_travel_as_bytes(dtype):
    t = hurray.Tensor(bytes(range(64)), dtype, [64 * 8 // dtype.bit_width])
    back = hurray.from_hurray(t)
    assert back.dtype == dtype and back.shape == t.shape
    assert bytes(back.buffer(0)) == bytes(t.buffer(0))


def test_the_descriptor_travels_with_the_buffers():
    t = hurray.Tensor(bytearray(24), hurray.float32, [2, 3], hurray.Device("cuda", 1))
    back = hurray.from_hurray(t)
    assert back.device == t.device and back.device_id == 1
    assert back._wire()[0] == t._wire()[0]  # the same encoded descriptor
    tt = hurray.from_hurray(hurray.from_numpy(np.arange(6, dtype=np.int16).reshape(2, 3)).T)
    assert tt.layout.name == "col_major" and np.asarray(tt).tolist() == [[0, 3], [1, 4], [2, 5]]


def test_a_shard_section_travels(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "sharded_f32_8x4.bin").read_bytes()
    t = hurray.Tensor._from_wire(descriptor, [_aligned(np.float32, (32,))])
    back = hurray.from_hurray(_Producer(t.__hurray__()))
    assert back._wire()[0] == descriptor and np.shares_memory(np.asarray(back), np.asarray(t))


def test_a_sparse_tensor_travels_with_values_and_indices():
    t = _coo()
    back = hurray.from_hurray(t)
    assert back.layout.name == "coo" and back.nnz == 3 and back.buffer_count == 2
    for i in range(2):
        assert bytes(back.buffer(i)) == bytes(t.buffer(i))
    assert np.array_equal(back.to_dense(), t.to_dense())


def test_a_csr_tensor_travels_with_its_three_buffers(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "csr_f32_3x3.bin").read_bytes()
    csr = hurray.Tensor._from_wire(descriptor, [struct.pack("<2f", 5.0, 7.0), struct.pack("<2Q", 0, 1),
                                                struct.pack("<4Q", 0, 1, 2, 2)])
    back = hurray.from_hurray(csr)
    assert back.layout.name == "csr" and back.buffer_count == 3
    assert back.to_dense().tolist() == [[5, 0, 0], [0, 7, 0], [0, 0, 0]]


def test_a_quantized_tensor_travels_with_data_and_scales(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    q = hurray.Tensor._from_wire(descriptor, [bytes([0x21]) * 8192, bytes([0x00, 0x3C]) * 128])
    back = hurray.from_hurray(q)
    assert back.quantization is not None and back.quantization.scheme == "per_block_affine"
    assert back.buffer_count == 2
    assert np.array_equal(back.dequantize(), q.dequantize())


def test_empty_and_zero_d_tensors_round_trip():
    empty = hurray.from_hurray(hurray.zeros((0, 4), dtype=hurray.float64))
    assert empty.shape == (0, 4) and np.asarray(empty).shape == (0, 4)
    scalar = hurray.from_hurray(hurray.Tensor(struct.pack("<d", 2.5), hurray.float64, []))
    assert scalar.shape == () and float(np.asarray(scalar)) == 2.5


def test_a_file_tensor_travels_without_a_copy_and_stays_read_only(tmp_path):
    path = tmp_path / "w.hrry"
    hurray.save(path, {"w": np.arange(32, dtype=np.float32)})
    t = hurray.load(path)["w"]
    back = hurray.from_hurray(t)
    assert _address(np.asarray(back)) == _address(np.asarray(t))  # the mapping itself
    assert back.readonly and not np.asarray(back).flags.writeable
    del t
    gc.collect()
    assert np.asarray(back).tolist() == list(range(32))  # the mapping outlives the producer


# ── Zero copy and writability ─────────────────────────────────────────────────


def test_aligned_memory_is_shared_and_writes_go_through():
    a = _aligned(np.float32, (4, 4))
    t = hurray.Tensor(a, hurray.float32, [4, 4])
    back = hurray.from_hurray(t)
    view = np.asarray(back)
    assert np.shares_memory(view, a) and view.flags.writeable and not back.readonly
    view[1, 2] = 42.0
    assert a[1, 2] == 42.0 and np.asarray(t)[1, 2] == 42.0


def test_read_only_memory_stays_read_only():
    back = hurray.from_hurray(hurray.Tensor(memoryview(bytes(16)), hurray.int32, [4]))
    assert back.readonly and not np.asarray(back).flags.writeable


def _misaligned_f32(n):
    raw = np.zeros(n * 4 + 64, np.uint8)
    start = (-raw.ctypes.data) % 64 + 4  # 4 bytes past a 64-byte boundary
    a = raw[start:start + n * 4].view(np.float32)
    a[:] = np.arange(n)
    return a


def test_a_tensor_of_this_module_is_shared_at_any_address():
    a = _misaligned_f32(16)
    t = hurray.Tensor(a, hurray.float32, [16])
    back = hurray.from_hurray(t)
    assert back is not t and np.shares_memory(np.asarray(back), a) and not back.readonly
    np.asarray(back)[3] = -1.0
    assert a[3] == -1.0


def test_a_capsule_carries_memory_the_c_abi_cannot_take_in_place_as_an_aligned_copy():
    # The C ABI wants a buffer's address to honour its declared 64-byte alignment.
    a = _misaligned_f32(16)
    back = hurray.from_hurray(_Producer(hurray.Tensor(a, hurray.float32, [16]).__hurray__()))
    assert np.asarray(back).tolist() == list(range(16))
    assert np.asarray(back).ctypes.data % 64 == 0
    assert not np.shares_memory(np.asarray(back), a) and back.readonly  # a snapshot, not an alias


def test_a_subclass_goes_through_its_own_capsule():
    class Sub(hurray.Tensor):
        calls = 0

        def __hurray__(self, stream=None):
            Sub.calls += 1
            return super().__hurray__(stream)

    s = Sub(_aligned(np.int32, (4,)), hurray.int32, [4])
    assert hurray.from_hurray(s).shape == (4,) and Sub.calls == 1


# ── Lifetimes ─────────────────────────────────────────────────────────────────


def test_the_producers_memory_lives_as_long_as_the_consumer():
    a = _aligned(np.int64, (8,))
    a[:] = np.arange(8)
    source_memory = weakref.ref(a.base)
    t = hurray.Tensor(a, hurray.int64, [8])
    back = hurray.from_hurray(t)
    del a, t
    gc.collect()
    assert source_memory() is not None  # not freed early
    assert np.asarray(back).tolist() == list(range(8))
    view = np.asarray(back)
    del back
    gc.collect()
    assert source_memory() is not None  # the numpy view keeps the consumer alive
    assert view.tolist() == list(range(8))
    del view
    gc.collect()
    assert source_memory() is None  # and then everything lets go


def test_an_unconsumed_capsule_keeps_the_tensor_alive_until_dropped():
    t = hurray.zeros((4,), dtype=hurray.float32)
    alive = weakref.ref(t)
    capsule = t.__hurray__()
    del t
    gc.collect()
    assert alive() is not None
    del capsule
    gc.collect()
    assert alive() is None


def test_a_consumed_capsule_hands_its_reference_to_the_consumer():
    t = _coo()
    alive = weakref.ref(t)
    capsule = t.__hurray__()
    back = hurray.from_hurray(_Producer(capsule))
    del t
    del capsule  # renamed: its destructor leaves the payload to `back`
    gc.collect()
    assert alive() is not None and back.nnz == 3
    del back
    gc.collect()
    assert alive() is None


def test_a_chain_of_consumers_keeps_the_first_producer_alive():
    a = _aligned(np.float64, (3,))
    a[:] = [1.5, 2.5, 3.5]
    t = hurray.Tensor(a, hurray.float64, [3])
    alive = weakref.ref(t)
    last = t
    for _ in range(5):
        last = hurray.from_hurray(last)
    del t, a
    gc.collect()
    assert alive() is not None and np.asarray(last).tolist() == [1.5, 2.5, 3.5]
    del last
    gc.collect()
    assert alive() is None


def test_reference_counts_balance_over_many_capsules():
    t = _coo()
    before = sys.getrefcount(t)
    for _ in range(200):
        t.__hurray__()
    for _ in range(200):
        hurray.from_hurray(t)
    gc.collect()
    assert sys.getrefcount(t) == before


# ── stream ────────────────────────────────────────────────────────────────────


def test_stream_accepts_none_minus_one_and_a_handle():
    t = hurray.zeros((2,), dtype=hurray.float32)
    for stream in (None, -1, 1, 7):
        assert hurray.from_hurray(_Producer(t.__hurray__(stream=stream))).shape == (2,)
    with pytest.raises(TypeError):
        t.__hurray__(stream="default")
    with pytest.raises(TypeError):
        t.__hurray__(stream=1.0)


def test_a_buffer_that_is_not_producer_synced_needs_a_device_synchronisation():
    t = hurray.Tensor(bytearray(16), hurray.float32, [4], hurray.Device("cuda", 0))
    producer_synced = struct.pack("<QIBBB", 16, 64, 0x01, 0x00, 0x00)  # size, alignment, cuda, sync, class
    wire = t._wire()[0]
    assert wire.count(producer_synced) == 1
    event = hurray.Tensor._from_wire(wire.replace(producer_synced, struct.pack("<QIBBB", 16, 64, 0x01, 0x01, 0x00)),
                                     [bytearray(16)])
    for stream in (None, 3):
        with pytest.raises(BufferError, match="producer-synced"):
            event.__hurray__(stream=stream)
    with pytest.raises(BufferError):
        hurray.from_hurray(event)
    back = hurray.from_hurray(_Producer(event.__hurray__(stream=-1)))
    assert back._wire()[0] == event._wire()[0]  # the sync mode travels in the descriptor


# ── Rejections: TypeError, hurray.BufferError, never a crash ──────────────────


def test_a_composite_head_has_no_buffers_to_export(conformance_dir):
    head = hurray.Tensor._from_wire((conformance_dir / "descriptors" / "composite_head_partition.bin").read_bytes(),
                                    [])
    with pytest.raises(hurray.BufferError, match="no buffers"):
        head.__hurray__()
    with pytest.raises(hurray.BufferError, match="no buffers"):
        hurray.from_hurray(head)


@pytest.mark.parametrize("obj", [object(), 42, "text", np.zeros(3), None])
def test_non_participants_are_rejected_by_type(obj):
    with pytest.raises(TypeError, match="__hurray__"):
        hurray.from_hurray(obj)


def test_a_bare_capsule_is_not_a_participant():
    with pytest.raises(TypeError):
        hurray.from_hurray(hurray.zeros((2,)).__hurray__())  # the temporary capsule dies while raising
    capsule = hurray.zeros((2,)).__hurray__()
    with pytest.raises(TypeError):
        hurray.from_hurray(capsule)


def test_a_capsule_is_consumed_once():
    producer = _Producer(hurray.zeros((2,), dtype=hurray.float32).__hurray__())
    assert hurray.from_hurray(producer).shape == (2,)
    with pytest.raises(hurray.BufferError, match="consumed"):
        hurray.from_hurray(producer)


def test_capsules_of_other_protocols_are_rejected():
    t = hurray.zeros((2,), dtype=hurray.float32)
    dl = t.__dlpack__()
    with pytest.raises(hurray.BufferError, match="dltensor"):
        hurray.from_hurray(_Producer(dl))
    assert _api.PyCapsule_GetName(dl) == b"dltensor"  # left as it was
    with pytest.raises(hurray.BufferError, match="not a"):
        hurray.from_hurray(_Producer(42))


def test_a_capsule_without_a_context_is_rejected_and_left_unconsumed():
    dummy = ctypes.c_uint64(0)
    capsule = _api.PyCapsule_New(ctypes.addressof(dummy), _NAME, None)
    with pytest.raises(hurray.BufferError, match="context"):
        hurray.from_hurray(_Producer(capsule))
    assert _api.PyCapsule_GetName(capsule) == _NAME


def test_errors_raised_by_the_producer_propagate():
    class Broken:
        def __hurray__(self, stream=None):
            raise RuntimeError("producer failed")

    with pytest.raises(RuntimeError, match="producer failed"):
        hurray.from_hurray(Broken())


# ── The C side of the capsule ─────────────────────────────────────────────────


def _libhurray_c():
    """The libhurray_c the extension loaded (never another copy), through ctypes."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "libhurray_c.so" in line}
    except OSError:
        paths = set()
    if len(paths) != 1:
        pytest.skip("libhurray_c is not a shared library of this build (or /proc is missing)")
    lib = ctypes.CDLL(paths.pop())
    vp, u64, u32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32
    P = ctypes.POINTER
    sigs = {
        "hurray_buffer_list_len": [vp, P(u64)],
        "hurray_buffer_list_get": [vp, u64, P(vp)],
        "hurray_buffer_list_new": [u64, P(vp)],
        "hurray_buffer_list_push": [vp, vp],
        "hurray_buffer_data_ptr": [vp, P(vp)],
        "hurray_buffer_byte_size": [vp, P(u64)],
        "hurray_buffer_from_ptr": [vp, u64, u32, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint8, vp, vp, P(vp)],
        "hurray_tensor_context_abi_version": [vp, P(u32)],
        "hurray_tensor_context_descriptor": [vp, P(ctypes.POINTER(ctypes.c_uint8)), P(u64)],
        "hurray_tensor_context_new": [u32, ctypes.c_char_p, u64, vp, vp, P(vp)],
    }
    for name, args in sigs.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = ctypes.c_int32
    return lib


def test_a_c_consumer_reads_the_capsule():
    lib = _libhurray_c()
    t = _coo()
    capsule = t.__hurray__()
    blist = _api.PyCapsule_GetPointer(capsule, _NAME)
    ctx = _api.PyCapsule_GetContext(capsule)
    version = ctypes.c_uint32()
    assert lib.hurray_tensor_context_abi_version(ctx, ctypes.byref(version)) == 0 and version.value == 4
    data, size = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_uint64()
    assert lib.hurray_tensor_context_descriptor(ctx, ctypes.byref(data), ctypes.byref(size)) == 0
    assert ctypes.string_at(data, size.value) == t._wire()[0]
    n = ctypes.c_uint64()
    assert lib.hurray_buffer_list_len(blist, ctypes.byref(n)) == 0 and n.value == 2
    for i in range(2):
        handle, ptr, nbytes = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
        assert lib.hurray_buffer_list_get(blist, i, ctypes.byref(handle)) == 0
        assert lib.hurray_buffer_data_ptr(handle, ctypes.byref(ptr)) == 0
        assert lib.hurray_buffer_byte_size(handle, ctypes.byref(nbytes)) == 0
        assert ctypes.string_at(ptr.value, nbytes.value) == bytes(t.buffer(i))
    # Reading does not consume: the capsule still goes to a Python consumer.
    assert hurray.from_hurray(_Producer(capsule)).nnz == 3


def test_a_capsule_made_in_c_is_consumed_without_a_copy():
    lib = _libhurray_c()
    a = _aligned(np.float32, (2, 3))
    a[:] = [[1, 2, 3], [4, 5, 6]]
    descriptor = hurray.from_numpy(a)._wire()[0]
    handle, blist, ctx = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.hurray_buffer_from_ptr(a.ctypes.data, a.nbytes, 64, 0, 0, 0, None, None, ctypes.byref(handle)) == 0
    assert lib.hurray_buffer_list_new(1, ctypes.byref(blist)) == 0
    assert lib.hurray_buffer_list_push(blist, handle) == 0
    assert lib.hurray_tensor_context_new(4, descriptor, len(descriptor), None, None, ctypes.byref(ctx)) == 0
    capsule = _api.PyCapsule_New(blist.value, _NAME, None)  # no destructor: consumed right away
    assert _api.PyCapsule_SetContext(capsule, ctx.value) == 0
    back = hurray.from_hurray(_Producer(capsule))
    assert np.asarray(back).tolist() == [[1, 2, 3], [4, 5, 6]]
    assert np.shares_memory(np.asarray(back), a) and back.readonly  # a foreign producer: read-only
    del back  # destroys the list and the context (no owner, no release callback)
    gc.collect()


def _c_capsule(lib, a, device_tag, memory_class, descriptor):
    handle, blist, ctx = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.hurray_buffer_from_ptr(a.ctypes.data, a.nbytes, 64, device_tag, 0, memory_class, None, None,
                                      ctypes.byref(handle)) == 0
    assert lib.hurray_buffer_list_new(1, ctypes.byref(blist)) == 0
    assert lib.hurray_buffer_list_push(blist, handle) == 0
    assert lib.hurray_tensor_context_new(4, descriptor, len(descriptor), None, None, ctypes.byref(ctx)) == 0
    capsule = _api.PyCapsule_New(blist.value, _NAME, None)
    assert _api.PyCapsule_SetContext(capsule, ctx.value) == 0
    return capsule


def test_device_memory_from_another_producer_is_not_viewed_as_host_memory():
    lib = _libhurray_c()
    a = _aligned(np.float32, (4,))
    cuda = hurray.Tensor(bytearray(16), hurray.float32, [4], hurray.Device("cuda", 0))._wire()[0]
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        hurray.from_hurray(_Producer(_c_capsule(lib, a, 0x01, 0x00, cuda)))  # cuda, standard
    pinned = hurray.Tensor(bytearray(16), hurray.float32, [4], hurray.Device("cuda", 0, "host_pinned"))._wire()[0]
    back = hurray.from_hurray(_Producer(_c_capsule(lib, a, 0x01, 0x01, pinned)))  # cuda, host-pinned: readable
    assert np.shares_memory(back.buffer(0), a) and back.device.memory_class == "host_pinned"
    # This module's own capsule of a cuda-labelled tensor is host memory: accepted.
    assert hurray.from_hurray(_Producer(hurray.Tensor(a, hurray.float32, [4], hurray.Device("cuda", 0)).__hurray__()))


def test_another_abi_version_is_unsupported_and_the_capsule_is_left_alone():
    lib = _libhurray_c()
    descriptor = hurray.zeros((2,), dtype=hurray.float32)._wire()[0]
    blist, ctx = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.hurray_buffer_list_new(0, ctypes.byref(blist)) == 0
    assert lib.hurray_tensor_context_new(3, descriptor, len(descriptor), None, None, ctypes.byref(ctx)) == 0
    capsule = _api.PyCapsule_New(blist.value, _NAME, None)
    assert _api.PyCapsule_SetContext(capsule, ctx.value) == 0
    with pytest.raises(hurray.UnsupportedError, match="version 3"):
        hurray.from_hurray(_Producer(capsule))
    assert _api.PyCapsule_GetName(capsule) == _NAME  # still the producer's (leaked here: no destructor)


def test_a_capsule_whose_list_disagrees_with_its_descriptor_is_rejected():
    lib = _libhurray_c()
    descriptor = _coo()._wire()[0]  # declares two buffers
    blist, ctx = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.hurray_buffer_list_new(0, ctypes.byref(blist)) == 0
    assert lib.hurray_tensor_context_new(4, descriptor, len(descriptor), None, None, ctypes.byref(ctx)) == 0
    capsule = _api.PyCapsule_New(blist.value, _NAME, None)
    assert _api.PyCapsule_SetContext(capsule, ctx.value) == 0
    with pytest.raises(hurray.InvalidDescriptorError, match="0 buffers"):
        hurray.from_hurray(_Producer(capsule))


# ── Interpreter shutdown ──────────────────────────────────────────────────────


def _run(body):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("body", [
    # An unconsumed capsule alive at exit, dense and multi-buffer.
    "import hurray\nt = hurray.zeros((4,))\nkeep = t.__hurray__()\n",
    "import numpy as np, hurray\n"
    "t = hurray.sparse_coo(np.ones(2, np.float32), np.array([[0, 0], [1, 1]], np.uint64), [2, 2])\n"
    "keep = [t.__hurray__() for _ in range(3)]\n",
    # The producer dropped, only the capsule left.
    "import hurray\nkeep = hurray.zeros((4,)).__hurray__()\n",
    # A consumer alive at exit, and a capsule in a reference cycle.
    "import hurray\nback = hurray.from_hurray(hurray.zeros((4,)))\n"
    "class C: pass\nc = C(); c.self = c; c.cap = back.__hurray__()\n",
    # A consumer of a real (consumed) capsule alive at exit, and its renamed capsule.
    "import hurray\nt = hurray.zeros((4,))\ncap = t.__hurray__()\n"
    "class P:\n    def __hurray__(self, stream=None): return cap\n"
    "back = hurray.from_hurray(P())\ndel t\n",
    # Consumers of file tensors alive at exit.
    "import hurray, numpy as np, tempfile, os\n"
    "d = tempfile.mkdtemp(); p = os.path.join(d, 'f.hrry')\n"
    "hurray.save(p, {'a': np.ones(8)})\nback = hurray.from_hurray(hurray.load(p)['a'])\n"
    "cap = back.__hurray__()\n",
])
def test_live_capsules_and_consumers_at_exit_exit_cleanly(body):
    result = _run(body + "print('done')\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done" and result.stderr == ""
