# SPDX-License-Identifier: Apache-2.0
"""hurray.Tensor: construction, properties, NumPy interop, the wire contract, files."""

import gc
import json
import struct
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import hurray
from conftest import DTYPES, sample


def test_construction_and_properties():
    buf = struct.pack("6f", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    t = hurray.Tensor(buf, hurray.float32, [2, 3])
    assert isinstance(t, hurray.Tensor)
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6 and len(t) == 2
    assert t.dtype is hurray.float32
    assert t.device == hurray.device.cpu and t.device.kind == "cpu" and t.device_id == 0
    assert t.buffer_count == 1 and t.nbytes == 24 and not t.readonly  # bytes are copied: see below
    assert not hasattr(t, "__array_namespace__")
    assert repr(t) == "hurray.Tensor([[1. 2. 3.]\n [4. 5. 6.]], dtype=float32)"
    gpu = hurray.Tensor(buf, hurray.float32, [2, 3], hurray.Device("cuda", 1))
    assert gpu.device == hurray.Device("cuda", 1) and gpu.device_id == 1
    assert repr(gpu).startswith("hurray.Tensor(shape=(2, 3), dtype=float32, device=hurray.Device(kind='cuda'")
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        np.asarray(gpu)


def test_construction_errors():
    buf = bytes(24)
    with pytest.raises(hurray.BufferError, match="needs 24"):
        hurray.Tensor(buf[:8], hurray.float32, [2, 3])
    with pytest.raises(TypeError, match="buffer protocol"):
        hurray.Tensor([1.0, 2.0], hurray.float32, [2])
    with pytest.raises(TypeError, match="hurray.Dtype"):
        hurray.Tensor(buf, np.float32, [6])
    with pytest.raises(hurray.InvalidDescriptorError, match="non-negative"):
        hurray.Tensor(buf, hurray.float32, [-1])
    with pytest.raises(hurray.BufferError, match="C-contiguous"):
        hurray.Tensor(np.zeros((4, 4), np.float32)[:, ::2], hurray.float32, [8])
    with pytest.raises(hurray.InvalidDescriptorError, match="aux_buffers"):
        hurray.Tensor(buf, hurray.float32, [6], aux_buffers=[b"x"])
    with pytest.raises(TypeError, match="hurray.Device"):
        hurray.Tensor(buf, hurray.float32, [6], "cpu")
    with pytest.raises(TypeError, match="sequence of ints"):
        hurray.Tensor(buf, hurray.float32, [2, None])
    with pytest.raises(TypeError, match="sequence of ints"):
        hurray.Tensor(buf, hurray.float32, 6)
    assert hurray.Tensor(buf, hurray.float32, (np.int64(2), 3)).shape == (2, 3)
    # A larger buffer is fine: the tensor views its first bytes.
    assert hurray.Tensor(bytes(100), hurray.float32, [6]).buffer(0).nbytes == 24


def test_buffers_are_zero_copy_views():
    raw = bytearray(struct.pack("4i", 1, 2, 3, 4))
    t = hurray.Tensor(raw, hurray.int32, [4])
    assert not t.readonly
    b = t.buffer(0)
    assert b.dtype == np.uint8 and b.shape == (16,) and b.flags.writeable
    a = np.asarray(t)
    raw[0] = 9  # the tensor and its views see the change: no copy anywhere
    assert a[0] == 9 and b[0] == 9
    with pytest.raises(IndexError):
        t.buffer(1)
    with pytest.raises(IndexError):
        t.buffer(-1)
    ro = hurray.Tensor(memoryview(bytes(16)), hurray.int32, [4])
    assert not ro.buffer(0).flags.writeable and not np.asarray(ro).flags.writeable


def test_bytes_are_copied_into_writable_aligned_memory_as_the_reference_does():
    raw = struct.pack("4i", 1, 2, 3, 4)
    t = hurray.Tensor(raw, hurray.int32, [4])
    assert not t.readonly
    a = np.asarray(t)
    assert a.flags.writeable and a.ctypes.data % 64 == 0
    a[0] = 9  # the tensor's own memory: the bytes object is untouched
    assert np.asarray(t)[0] == 9 and raw == struct.pack("4i", 1, 2, 3, 4)
    assert t.buffer(0).ctypes.data == a.ctypes.data  # one copy, shared by the views
    # aux_buffers too; a memoryview of bytes is viewed, read-only, with no copy.
    csr = hurray.Tensor(struct.pack("<2f", 5, 7), hurray.float32, [2, 2], layout=hurray.CsrLayout(nnz=2),
                        aux_buffers=[struct.pack("<2Q", 0, 1), struct.pack("<3Q", 0, 1, 2)])
    assert not csr.readonly and all(csr.buffer(k).flags.writeable for k in range(3))
    big = bytes(range(256)) * 4096
    view = hurray.Tensor(memoryview(big), hurray.uint8, [len(big)])
    assert view.readonly and np.asarray(view).ctypes.data == np.frombuffer(big, np.uint8).ctypes.data
    assert hurray.Tensor(b"", hurray.float32, [0]).shape == (0,)


def test_zero_d_and_empty_tensors():
    t = hurray.Tensor(struct.pack("d", 2.5), hurray.float64, [])
    assert t.shape == () and t.ndim == 0 and t.size == 1
    assert np.asarray(t).shape == () and float(np.asarray(t)) == 2.5
    with pytest.raises(TypeError):
        len(t)
    e = hurray.Tensor(b"", hurray.float32, [0, 4])
    assert e.shape == (0, 4) and e.size == 0 and e.nbytes == 0
    assert np.asarray(e).shape == (0, 4) and e.buffer(0).shape == (0,)
    assert hurray.from_numpy(np.zeros((3, 0), np.int16)).size == 0


def test_tier2_and_bfloat16_have_no_array_form():
    t = hurray.Tensor(bytes([0xAB, 0xCD]), hurray.dtype.int4, [4])
    assert t.size == 4 and t.dtype.bit_width == 4 and t.nbytes == 2
    assert repr(t) == ("hurray.Tensor(shape=(4,), dtype=int4, device=hurray.Device(kind='cpu', device_id=0, "
                       "memory_class='standard'))")
    with pytest.raises(hurray.UnsupportedError, match="int4"):
        np.asarray(t)
    with pytest.raises(hurray.UnsupportedError, match="bfloat16"):
        hurray.Tensor(bytes(4), hurray.bfloat16, [2]).__array__()
    assert hurray.Tensor(bytes(3), hurray.dtype.float6_e2m3, [4]).nbytes == 3
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(bytes(2), hurray.dtype.float6_e2m3, [4])


def _address(array):
    return array.__array_interface__["data"][0]


def test_transpose_is_a_view_of_the_same_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = hurray.from_numpy(a)
    tt = t.T
    assert tt.shape == (4, 3) and tt.dtype is hurray.float32 and tt.layout.name == "col_major"
    # Zero-copy: the transpose's buffer is the array's memory, and so is NumPy's view of it.
    assert _address(tt.buffer(0)) == _address(a) and tt.buffer(0).nbytes == a.nbytes
    n = np.asarray(tt)
    assert _address(n) == _address(a) and n.strides == (4, 16) and np.array_equal(n, a.T)
    assert _address(tt.__array__(copy=False)) == _address(a)  # no copy needed, so copy=False is fine
    n[0, 1] = 100.0  # writes reach the original, as with numpy's .T
    assert a[1, 0] == 100.0
    back = tt.T
    assert back.layout.name == "row_major" and back.shape == (3, 4) and _address(np.asarray(back)) == _address(a)
    # The view keeps the memory alive on its own.
    del t, n, back
    gc.collect()
    assert np.array_equal(np.asarray(tt), a.T)
    # Read-only memory stays read-only.
    ro = hurray.Tensor(memoryview(a.tobytes()), hurray.float32, [3, 4]).T
    assert ro.readonly and not np.asarray(ro).flags.writeable
    # Bools (packed) and int64: the view is exact; NumPy gets a copy of the bools.
    b = np.arange(6).reshape(2, 3) % 2 == 0
    assert np.array_equal(np.asarray(hurray.from_numpy(b).T), b.T)
    i = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert np.array_equal(np.asarray(hurray.from_numpy(i).T), i.T)


def test_transpose_of_a_loaded_tensor_views_the_mapping(tmp_path):
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    hurray.save(tmp_path / "t.hrry", {"a": a})
    t = hurray.load(tmp_path / "t.hrry")["a"]
    tt = t.T
    assert _address(tt.buffer(0)) == _address(t.buffer(0)) and _address(np.asarray(tt)) == _address(np.asarray(t))
    assert np.array_equal(np.asarray(tt), a.T) and tt.readonly
    # Saved as it is (a column-major descriptor over the same bytes) and read back as a view.
    hurray.save(tmp_path / "tt.hrry", {"t": tt})
    u = hurray.load(tmp_path / "tt.hrry")["t"]
    assert u.layout.name == "col_major" and np.array_equal(np.asarray(u), a.T)
    assert bytes(u.buffer(0)) == a.tobytes()


def test_transpose_of_strided_and_sparse_layouts():
    strided = hurray.Tensor(struct.pack("6f", 1, 2, 3, 4, 5, 6), hurray.float32, [2, 3],
                            layout=hurray.StridedLayout([1, 2]))
    st = strided.T
    assert st.layout.strides == (2, 1) and st.shape == (3, 2)
    assert np.asarray(st).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert _address(np.asarray(st)) == _address(strided.buffer(0))
    # Negative strides, from byte_offset: the view starts where element [0, 0] is.
    base = hurray.Tensor(struct.pack("4f", 1, 2, 3, 4), hurray.float32, [2, 2], layout=hurray.StridedLayout([2, 1]))
    wire = bytearray(base._wire()[0])
    at = wire.find(struct.pack("<2Q3q", 2, 2, 0, 2, 1))  # shape, byte_offset, strides
    struct.pack_into("<Q2q", wire, at + 16, 8, -2, 1)
    rev = hurray.Tensor._from_wire(bytes(wire), [struct.pack("4f", 1, 2, 3, 4)])
    assert np.asarray(rev).tolist() == [[3, 4], [1, 2]] and np.asarray(rev.T).tolist() == [[3, 1], [4, 2]]
    csr = hurray.Tensor(struct.pack("2f", 5.0, 7.0), hurray.float32, [2, 3],
                        aux_buffers=[struct.pack("2Q", 2, 0), struct.pack("3Q", 0, 1, 2)],
                        layout=hurray.CsrLayout(nnz=2))
    csc = csr.T
    assert isinstance(csc.layout, hurray.CscLayout) and csc.shape == (3, 2)
    assert csc.to_dense().tolist() == np.asarray(csr.to_dense()).T.tolist()
    assert all(_address(csc.buffer(k)) == _address(csr.buffer(k)) for k in range(3))
    assert isinstance(csc.T.layout, hurray.CsrLayout) and csc.T.to_dense().tolist() == csr.to_dense().tolist()


def test_transpose_refusals(conformance_dir):
    with pytest.raises(ValueError, match="rank-2"):
        _ = hurray.zeros((2, 3, 4)).T
    with pytest.raises(ValueError, match="rank-2"):
        _ = hurray.zeros(3).T
    descriptor = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    q = hurray.Tensor._from_wire(descriptor, [bytes([0x21]) * 8192, bytes([0x00, 0x3C]) * 128])
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        _ = q.T
    morton = hurray.Tensor._from_wire((conformance_dir / "descriptors" / "morton_f32_4x4.bin").read_bytes(),
                                      [bytes(64)])
    with pytest.raises(hurray.UnsupportedError, match="morton"):
        _ = morton.T


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_from_numpy_shares_memory_both_ways(dtype):
    a = sample(dtype, (3, 4))
    t = hurray.from_numpy(a)
    assert t.dtype.name == dtype and t.shape == (3, 4)
    back = np.asarray(t)
    assert np.shares_memory(back, a) and back.dtype == a.dtype
    assert back.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    np.testing.assert_array_equal(back, a)
    assert np.shares_memory(t.buffer(0), a)


def test_bools_are_packed_and_unpacked():
    a = np.array([[True, False, True], [False, False, True]])
    t = hurray.from_numpy(a)
    assert t.dtype is hurray.bool and t.nbytes == 1
    assert t.buffer(0)[0] == 0b100101  # 8 per byte, LSB first
    np.testing.assert_array_equal(np.asarray(t), a)
    with pytest.raises(hurray.CopyRequiredError, match="copy"):
        t.__array__(copy=False)


def test_array_keyword_arguments():
    a = np.arange(6, dtype=np.float32)
    t = hurray.from_numpy(a)
    assert t.__array__(dtype=np.float64).dtype == np.float64
    c = t.__array__(copy=True)
    assert not np.shares_memory(c, a) and c.flags.writeable
    assert np.shares_memory(t.__array__(copy=False), a)
    assert np.shares_memory(t.__array__(dtype=np.float32, copy=False), a)
    with pytest.raises(hurray.CopyRequiredError, match="float64"):
        t.__array__(dtype=np.float64, copy=False)
    assert issubclass(hurray.CopyRequiredError, ValueError)


def test_from_numpy_refuses_what_it_cannot_share():
    with pytest.raises(hurray.UnsupportedError, match="C-contiguous"):
        hurray.from_numpy(np.zeros((4, 4))[:, ::2])
    with pytest.raises(hurray.UnsupportedError, match="big-endian"):
        hurray.from_numpy(np.zeros(3, ">f4"))
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError):
        hurray.from_numpy([1, 2])


def test_lifetimes():
    a = np.arange(1000, dtype=np.int64)
    ref = weakref.ref(a)
    t = hurray.from_numpy(a)
    del a
    gc.collect()
    assert ref() is not None  # the Tensor keeps the array alive
    view = np.asarray(t)
    assert isinstance(view.base, hurray.Tensor)
    tref = weakref.ref(t)
    del t
    gc.collect()
    assert tref() is not None and ref() is not None  # the view keeps the Tensor (and the array) alive
    assert view[999] == 999
    del view
    gc.collect()
    assert tref() is None and ref() is None


def test_asarray():
    t = hurray.asarray([[1, 2], [3, 4]], dtype=hurray.int32)
    assert t.dtype is hurray.int32 and t.shape == (2, 2)
    assert hurray.asarray([1.0, 2.0]).dtype is hurray.float64
    a = np.arange(3, dtype=np.float32)
    assert np.shares_memory(np.asarray(hurray.asarray(a)), a)
    assert hurray.asarray(t) is t
    assert hurray.asarray(t, dtype=hurray.float32).dtype is hurray.float32
    with pytest.raises(hurray.UnsupportedError):
        hurray.asarray([1], dtype=hurray.dtype.int4)


def test_creation_functions():
    z = hurray.zeros((4, 4), dtype=hurray.float32)
    assert z.shape == (4, 4) and z.dtype is hurray.float32 and not np.asarray(z).any()
    assert hurray.zeros(3).dtype is hurray.float64 and hurray.zeros(3).shape == (3,)
    assert np.asarray(hurray.ones((2,), dtype=hurray.int8)).tolist() == [1, 1]
    assert np.asarray(hurray.full([2], 7.0, dtype=hurray.float32)).tolist() == [7.0, 7.0]
    assert hurray.empty([5, 5], dtype=hurray.int32).shape == (5, 5)
    assert np.asarray(hurray.arange(5)).tolist() == [0, 1, 2, 3, 4] and hurray.arange(5).dtype is hurray.int64
    assert np.asarray(hurray.arange(0.0, 1.0, 0.25)).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert hurray.arange(4, dtype=hurray.int32).dtype is hurray.int32
    assert np.asarray(hurray.linspace(0.0, 1.0, 4, endpoint=False))[-1] == 0.75
    np.testing.assert_array_equal(np.asarray(hurray.eye(2, 3, k=1)), np.eye(2, 3, k=1))
    src = hurray.ones([3, 3], dtype=hurray.float32)
    for like in (hurray.zeros_like(src), hurray.ones_like(src), hurray.empty_like(src),
                 hurray.full_like(src, -1.0)):
        assert like.shape == (3, 3) and like.dtype is hurray.float32
    assert np.asarray(hurray.zeros([2], dtype=hurray.bool)).tolist() == [False, False]
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros([4], dtype=hurray.dtype.int4)
    with pytest.raises(TypeError):
        hurray.zeros([4], dtype="float32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)], ids=str)
def test_every_tier1_dtype_round_trips_through_a_file(tmp_path, dtype, shape):
    a = sample(dtype, shape)
    path = tmp_path / "t.hrry"
    hurray.save(path, {"t": hurray.from_numpy(a)})
    t = hurray.load(path)["t"]
    assert isinstance(t, hurray.Tensor) and t.dtype.name == dtype and t.shape == shape
    got = np.asarray(t)
    assert got.dtype == a.dtype and not got.flags.writeable
    np.testing.assert_array_equal(got, a)


def _mapped_ranges(path):
    """The address ranges at which `path` is mapped into this process."""
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith(str(path)):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                ranges.append((lo, hi))
    return ranges


def test_load_is_zero_copy_over_the_mapping(tmp_path):
    path = tmp_path / "z.hrry"
    a = np.arange(4096, dtype=np.float32).reshape(64, 64)
    hurray.save(path, {"a": a, "i": np.arange(7, dtype=np.int16)})
    with hurray.open(path) as f:
        assert f.mapped
        for name in f.keys():
            t = f.tensor(name)
            assert isinstance(t, hurray.Tensor)
            address, nbytes = f._data_range(name)
            view = np.asarray(t)
            assert view.__array_interface__["data"][0] == address and view.nbytes == nbytes
            assert t.buffer(0).__array_interface__["data"][0] == address
    tensors = hurray.load(path)
    ranges = _mapped_ranges(path.resolve())
    assert ranges
    for name, t in tensors.items():
        view = np.asarray(t)
        address = view.__array_interface__["data"][0]
        assert any(lo <= address and address + view.nbytes <= hi for lo, hi in ranges), name
        assert isinstance(view.base, hurray.Tensor) and view.base is t
    # The mapping lives while a view of it does, after the file is gone.
    view = np.asarray(tensors["a"])
    del tensors, t
    path.unlink()
    gc.collect()
    np.testing.assert_array_equal(view, a)
    assert _mapped_ranges(str(path.resolve()) + " (deleted)")
    del view
    gc.collect()
    assert not _mapped_ranges(str(path.resolve()) + " (deleted)")


def test_loaded_tensors_of_any_type_round_trip_byte_identically(tmp_path):
    packed = bytes([0x21, 0x43, 0x65, 0x07])
    tensors = {"i4": hurray.Tensor(packed, hurray.dtype.int4, [7]),
               "bf": hurray.Tensor(struct.pack("<3H", 0x3F80, 0x4000, 0xC040), hurray.bfloat16, [3]),
               "f8": hurray.Tensor(bytes([1, 2, 3]), hurray.dtype.float8_e4m3, [3]),
               "np": np.arange(3, dtype=np.uint16)}
    hurray.save(tmp_path / "a.hrry", tensors)
    first = hurray.load(tmp_path / "a.hrry")
    hurray.save(tmp_path / "b.hrry", first)
    second = hurray.load(tmp_path / "b.hrry")
    assert (tmp_path / "a.hrry").read_bytes() == (tmp_path / "b.hrry").read_bytes()
    for name in tensors:
        d1, b1 = first[name]._wire()
        d2, b2 = second[name]._wire()
        assert d1 == d2 and [bytes(b) for b in b1] == [bytes(b) for b in b2]
    assert bytes(second["i4"].buffer(0)) == packed
    assert second["i4"].dtype is hurray.dtype.int4 and second["i4"].shape == (7,)


def test_wire_contract():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = hurray.from_numpy(a)
    descriptor, buffers = t._wire()
    assert isinstance(descriptor, bytes) and descriptor[:4] == b"HRRY"
    assert len(buffers) == 1 and np.shares_memory(buffers[0], a)

    class Owner:
        pass

    owner = Owner()
    ref = weakref.ref(owner)
    u = hurray.Tensor._from_wire(descriptor, [memoryview(a).cast("B")], owner=owner, device_id=3)
    assert u.shape == (3, 4) and u.dtype is hurray.float32 and u.device_id == 3
    assert np.shares_memory(np.asarray(u), a)
    del owner
    gc.collect()
    assert ref() is not None  # kept with the tensor ...
    view = np.asarray(u)
    del u
    gc.collect()
    assert ref() is not None  # ... and with anything viewing its memory
    del view
    gc.collect()
    assert ref() is None
    # Every kind of buffer object is accepted.
    for buf in (a.tobytes(), bytearray(a.tobytes()), a.view(np.uint8).reshape(-1), memoryview(a.tobytes())):
        np.testing.assert_array_equal(np.asarray(hurray.Tensor._from_wire(descriptor, [buf])), a)


def test_wire_errors():
    descriptor, _ = hurray.zeros((3, 4), dtype=hurray.float32)._wire()
    with pytest.raises(hurray.BufferError, match="declares 48"):
        hurray.Tensor._from_wire(descriptor, [bytes(47)])
    with pytest.raises(hurray.BufferError, match="2 buffers given"):
        hurray.Tensor._from_wire(descriptor, [bytes(48), bytes(1)])
    with pytest.raises(hurray.BufferError, match="0 buffers given"):
        hurray.Tensor._from_wire(descriptor, [])
    with pytest.raises(hurray.UnsupportedError, match="version") as info:
        hurray.Tensor._from_wire(b"HRRY" + bytes(20), [bytes(48)])
    assert info.value.code is not None
    broken = bytearray(descriptor)
    broken[0] = ord("X")
    with pytest.raises(hurray.InvalidDescriptorError, match="magic"):
        hurray.Tensor._from_wire(bytes(broken), [bytes(48)])
    with pytest.raises(TypeError):
        hurray.Tensor._from_wire("not bytes", [bytes(48)])
    with pytest.raises(TypeError):
        hurray.Tensor._from_wire(descriptor, [object()])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor._from_wire(descriptor, [bytes(48)], device_id=-1)
    for cut in range(0, len(descriptor), 7):  # truncations never crash
        with pytest.raises(hurray.HurrayError):
            hurray.Tensor._from_wire(descriptor[:cut], [bytes(48)])


def _buffers_for(entry):
    sizes = entry["expect"]["buffer_byte_sizes"]
    name = entry["file"]
    if "csr" in name:  # [3, 3], nnz 2: values, col_indices, row_ptr
        return [struct.pack("<2f", 5.0, 7.0), struct.pack("<2Q", 0, 1), struct.pack("<4Q", 0, 1, 2, 2)]
    if "quant" in name:  # codes, then non-zero finite scales
        return [bytes(sizes[0]), bytes([0x00, 0x3C]) * (sizes[1] // 2)]
    return [bytes(n) for n in sizes]


def test_conformance_descriptors_round_trip_through_files(conformance_dir, tmp_path):
    manifest = json.loads((conformance_dir / "manifest.json").read_text())
    tensors = {}
    for entry in manifest["descriptors"]:
        descriptor = (conformance_dir / entry["file"]).read_bytes()
        if entry["expect"]["layout_tag"] == 11:
            continue  # a composite head: its members are separate tensors
        t = hurray.Tensor._from_wire(descriptor, _buffers_for(entry))
        assert t.shape == tuple(entry["expect"]["shape"]) and t.dtype.name == entry["expect"]["element_type"]
        assert t.buffer_count == len(entry["expect"]["buffer_byte_sizes"])
        assert t._wire()[0] == descriptor  # re-encoding is lossless
        tensors[entry["file"]] = t
    hurray.save(tmp_path / "c.hrry", tensors)
    loaded = hurray.load(tmp_path / "c.hrry")
    for name, t in tensors.items():
        d1, b1 = t._wire()
        d2, b2 = loaded[name]._wire()
        assert d1 == d2, name
        assert [bytes(b) for b in b1] == [bytes(b) for b in b2], name
    csr = loaded["descriptors/csr_f32_3x3.bin"]
    assert csr.buffer_count == 3 and csr.nbytes == 56
    with pytest.raises(hurray.UnsupportedError, match="csr"):
        np.asarray(csr)  # no silent densified copy of a sparse tensor ...
    np.testing.assert_array_equal(csr.to_dense(), [[5, 0, 0], [0, 7, 0], [0, 0, 0]])  # ... unless asked
    morton = loaded["descriptors/morton_f32_4x4.bin"]
    assert np.asarray(morton).shape == (4, 4)  # dense layouts are copied into row-major order
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        np.asarray(loaded["descriptors/quant_per_block_int4_128x128.bin"])


def test_invalid_data_is_refused(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "csr_f32_3x3.bin").read_bytes()
    bad_ptr = struct.pack("<4Q", 0, 1, 5, 2)
    with pytest.raises(hurray.HurrayError, match="row_ptr"):
        hurray.Tensor._from_wire(descriptor, [bytes(8), struct.pack("<2Q", 0, 1), bad_ptr])


def test_save_mixes_tensors_and_arrays_and_refuses_other_objects(tmp_path):
    hurray.save(tmp_path / "m.hrry", {"t": hurray.arange(3), "a": np.ones(2), "l": [1, 2]}, kv={"k": 1})
    got = hurray.load(tmp_path / "m.hrry")
    assert [np.asarray(got[n]).tolist() for n in ("t", "a", "l")] == [[0, 1, 2], [1.0, 1.0], [1, 2]]
    dynamic = hurray.Tensor._from_wire(*hurray.zeros((2,))._wire())  # fine
    assert dynamic.shape == (2,)


def test_conversions_release_the_gil():
    # Unpacking 64 Mi bools takes a while in C++; another thread keeps running meanwhile.
    t = hurray.from_numpy(np.ones(1 << 26, dtype=bool))
    counter = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            counter[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    worker = threading.Thread(target=spin)
    worker.start()
    try:
        time.sleep(0.01)
        before = counter[0]
        start = time.perf_counter()
        a = np.asarray(t)
        elapsed = time.perf_counter() - start
        during = counter[0] - before
    finally:
        done.set()
        worker.join()
        sys.setswitchinterval(old)
    assert a.all() and a.size == 1 << 26
    assert during > 1000, f"the other thread ran {during} iterations in {elapsed:.3f}s"


def _csr(conformance_dir):
    descriptor = (conformance_dir / "descriptors" / "csr_f32_3x3.bin").read_bytes()
    return hurray.Tensor._from_wire(descriptor, [struct.pack("<2f", 5.0, 7.0), struct.pack("<2Q", 0, 1),
                                                 struct.pack("<4Q", 0, 1, 2, 2)])


def test_layout_and_quantization_inspection(conformance_dir):
    dense = hurray.zeros((2, 2), dtype=hurray.float32)
    assert isinstance(dense.layout, hurray.Layout)
    assert dense.layout.name == "row_major" and dense.layout.tag == 0x01
    assert dense.layout.buffer_count == 1 and dense.layout.is_dense and not dense.layout.is_virtual
    assert repr(dense.layout) == "RowMajorLayout()"
    assert dense.layout == hurray.zeros(3).layout and len({dense.layout, hurray.zeros(3).layout}) == 1
    assert dense.quantization is None
    csr = _csr(conformance_dir)
    assert csr.layout.name == "csr" and csr.layout.nnz == 2 and csr.layout.buffer_count == 3
    assert not csr.layout.is_dense and csr.layout != dense.layout
    with pytest.raises(AttributeError):
        _ = dense.layout.nnz
    with pytest.raises(AttributeError):
        dense.layout.name = "x"
    descriptor = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    q = hurray.Tensor._from_wire(descriptor, [bytes([0x21]) * 8192, bytes([0x00, 0x3C]) * 128])
    assert isinstance(q.quantization, hurray.Quantization)
    assert q.quantization.scheme == "per_block_affine" and q.buffer_count == 2
    morton = hurray.Tensor._from_wire((conformance_dir / "descriptors" / "morton_f32_4x4.bin").read_bytes(),
                                      [bytes(64)])
    assert morton.layout.name == "morton" and morton.layout.is_dense


def test_to_dense_and_dequantize(conformance_dir):
    csr = _csr(conformance_dir)
    dense = csr.to_dense()
    assert dense.dtype == np.float32 and dense.tolist() == [[5, 0, 0], [0, 7, 0], [0, 0, 0]]
    i4 = hurray.Tensor(bytes([0x21, 0xF3]), hurray.dtype.int4, [4])
    assert i4.to_dense().tolist() == [1.0, 2.0, 3.0, -1.0]
    bf = hurray.Tensor(struct.pack("<2H", 0x3F80, 0xC040), hurray.bfloat16, [2])
    assert bf.dequantize().tolist() == [1.0, -3.0]
    descriptor = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    q = hurray.Tensor._from_wire(descriptor, [bytes([0x21]) * 8192, bytes([0x00, 0x3C]) * 128])
    values = q.dequantize()
    assert values.shape == (128, 128) and values.dtype == np.float32
    assert values[0, :4].tolist() == [1.0, 2.0, 1.0, 2.0]  # codes 1, 2 with scale 1.0 (float16 0x3C00)
    assert hurray.zeros((0, 3)).to_dense().shape == (0, 3)


def test_sparse_components(conformance_dir):
    csr = _csr(conformance_dir)
    assert csr.nnz == 2
    values = csr.values
    assert isinstance(values, hurray.Tensor) and values.shape == (2,) and np.asarray(values).tolist() == [5, 7]
    assert np.shares_memory(np.asarray(values), csr.buffer(0))
    parent = weakref.ref(csr)
    del csr
    gc.collect()
    assert parent() is not None  # the values view keeps its tensor alive
    dense = hurray.zeros(3)
    assert not hasattr(dense, "nnz") and not hasattr(dense, "values")
    with pytest.raises(AttributeError, match="not sparse"):
        _ = dense.nnz


def test_str_and_composite_heads(conformance_dir):
    t = hurray.arange(3, dtype=hurray.int32)
    assert str(t) == "[0 1 2]" and repr(t) == "hurray.Tensor([0 1 2], dtype=int32)"
    i4 = hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    assert str(i4) == repr(i4)
    head = hurray.Tensor._from_wire((conformance_dir / "descriptors" / "composite_head_partition.bin").read_bytes(), [])
    assert head.buffer_count == 0 and head.layout.is_virtual and head.layout.buffer_count == 0
    assert head.shape == (8, 8) and head.nbytes == 0
    with pytest.raises(hurray.UnsupportedError, match="composite"):
        np.asarray(head)
    with pytest.raises(hurray.UnsupportedError, match="composite head"):
        hurray.save(conformance_dir / "never-written.hrry", {"c": head})


def test_device_tags_are_written_as_they_are(tmp_path):
    t = hurray.Tensor(bytes(16), hurray.float32, [4], hurray.Device("cuda", 1))
    hurray.save(tmp_path / "d.hrry", {"t": t})
    u = hurray.load(tmp_path / "d.hrry")["t"]
    assert u.device.kind == "cuda" and u.device_id == 0  # the index is runtime metadata, not stored


def test_authoring_sparse_and_strided_layouts(tmp_path):
    csr = hurray.Tensor(struct.pack("2f", 5.0, 7.0), hurray.float32, [2, 2],
                        aux_buffers=[struct.pack("2Q", 0, 1), struct.pack("3Q", 0, 1, 2)],
                        layout=hurray.CsrLayout(nnz=2))
    assert isinstance(csr.layout, hurray.CsrLayout) and csr.layout == hurray.CsrLayout(nnz=2)
    assert csr.layout != hurray.CsrLayout(nnz=3) and csr.buffer_count == 3 and csr.nnz == 2
    assert np.asarray(csr.col_indices).tolist() == [0, 1] and np.asarray(csr.row_ptr).tolist() == [0, 1, 2]
    assert csr.to_dense().tolist() == [[5, 0], [0, 7]]
    csc = hurray.Tensor(struct.pack("2f", 5.0, 7.0), hurray.float32, [2, 2],
                        aux_buffers=[struct.pack("2Q", 1, 0), struct.pack("3Q", 0, 1, 2)],
                        layout=hurray.CscLayout(nnz=2))
    assert csc.to_dense().tolist() == [[0, 7], [5, 0]] and np.asarray(csc.col_ptr).shape == (3,)
    assert np.asarray(csc.row_indices).tolist() == [1, 0]
    coo = hurray.Tensor(struct.pack("2f", 1.0, 2.0), hurray.float32, [3, 3],
                        aux_buffers=[struct.pack("4Q", 0, 2, 2, 1)], layout=hurray.CooLayout(nnz=2))
    assert np.asarray(coo.indices).tolist() == [[0, 2], [2, 1]] and coo.layout.is_sorted is False
    assert coo.to_dense()[2, 1] == 2.0 and not hasattr(coo, "row_ptr")
    assert repr(coo) == "hurray.Tensor(layout='coo', shape=(3, 3), nnz=2, dtype=float32)" == str(coo)
    same = hurray.sparse_coo(np.array([1.0, 2.0], np.float32), np.array([[0, 2], [2, 1]], np.uint64), [3, 3])
    assert same._wire()[0] == coo._wire()[0] and same.nnz == 2
    with pytest.raises(TypeError, match="uint64"):
        hurray.sparse_coo(np.array([1.0]), np.array([[0, 0]]), [2, 2])
    with pytest.raises(hurray.InvalidArgumentError, match="need"):
        hurray.sparse_coo(np.array([1.0]), np.array([[0, 0, 0]], np.uint64), [2, 2])
    with pytest.raises(hurray.HurrayError):  # out of range
        hurray.sparse_coo(np.array([1.0]), np.array([[0, 5]], np.uint64), [2, 2])
    col = hurray.Tensor(struct.pack("4f", 1, 2, 3, 4), hurray.float32, [2, 2], layout=hurray.ColMajorLayout())
    assert np.asarray(col).tolist() == [[1, 3], [2, 4]]  # a view with column-major strides
    strided = hurray.Tensor(struct.pack("4f", 1, 2, 3, 4), hurray.float32, [2, 2],
                            layout=hurray.StridedLayout([1, 2]))
    assert strided.layout.strides == (1, 2) and strided.to_dense().tolist() == [[1, 3], [2, 4]]
    assert repr(hurray.StridedLayout([4, 1])) == "StridedLayout(strides=(4, 1))"
    csf = hurray.Tensor(struct.pack("4f", 1.0, 2.0, 3.0, 4.0), hurray.float32, [2, 3, 4], aux_buffers=[
        struct.pack("2Q", 0, 2), struct.pack("2Q", 0, 1), struct.pack("3Q", 0, 2, 3), struct.pack("3Q", 0, 2, 1),
        struct.pack("4Q", 0, 1, 2, 4), struct.pack("4Q", 1, 3, 0, 2)], layout=hurray.CsfLayout(4, [0, 1, 2]))
    assert csf.buffer_count == 7 and csf.to_dense()[1, 1, 2] == 4.0
    explicit = hurray.Tensor(bytes(16), hurray.float32, [4], layout=hurray.RowMajorLayout())
    assert isinstance(explicit.layout, hurray.RowMajorLayout)
    # Every layout round-trips through a file byte for byte.
    tensors = {"csr": csr, "csc": csc, "coo": coo, "col": col, "strided": strided, "csf": csf}
    hurray.save(tmp_path / "l.hrry", tensors)
    loaded = hurray.load(tmp_path / "l.hrry")
    for name, t in tensors.items():
        assert loaded[name].layout == t.layout, name
        d1, b1 = t._wire()
        d2, b2 = loaded[name]._wire()
        assert d1 == d2 and [bytes(b) for b in b1] == [bytes(b) for b in b2], name


def test_authoring_errors():
    values = struct.pack("2f", 5.0, 7.0)
    with pytest.raises(TypeError, match="hurray.Layout"):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout="csr")
    with pytest.raises(hurray.BufferError, match="coo layout needs 16"):
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[struct.pack("8Q", *range(8))],
                      layout=hurray.CooLayout(nnz=4))
    with pytest.raises(hurray.InvalidDescriptorError, match="3 buffers; 2 given"):
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[bytes(16)], layout=hurray.CsrLayout(nnz=2))
    with pytest.raises(hurray.BufferError, match="aux_buffers\\[1\\]"):
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[bytes(16), bytes(8)],
                      layout=hurray.CsrLayout(nnz=2))
    with pytest.raises(hurray.HurrayError, match="row_ptr"):  # the data rules are checked
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[struct.pack("2Q", 0, 1),
                                                                   struct.pack("3Q", 0, 2, 1)],
                      layout=hurray.CsrLayout(nnz=2))
    with pytest.raises(hurray.InvalidDescriptorError, match="aux_buffers"):
        hurray.Tensor(bytes(16), hurray.float32, [4], aux_buffers=[b"x"])
    with pytest.raises(TypeError, match="cannot be constructed"):
        hurray.Layout(0x04, "tiled", 1)
    with pytest.raises(hurray.InvalidDescriptorError, match="nnz"):
        hurray.CsrLayout(nnz=-1)
