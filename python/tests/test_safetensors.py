# SPDX-License-Identifier: Apache-2.0
"""The safetensors-style calls: hurray.numpy.save_file / load_file, hurray.safe_open."""

import ctypes
import mmap
import os

import numpy as np
import pytest

import hurray
from hurray.numpy import load_file, save_file


def test_save_file_load_file(tmp_path):
    tensors = {"embedding": np.arange(12, dtype=np.float32).reshape(3, 4), "ids": np.array([3, 1, 2], np.int64)}
    path = str(tmp_path / "model.hrry")
    save_file(tensors, path, metadata={"format": "np", "note": "ü"})
    loaded = load_file(path)
    assert list(loaded) == list(tensors)
    for name, a in tensors.items():
        np.testing.assert_array_equal(loaded[name], a)
    # safetensors metadata is stored as string KV entries.
    assert hurray.open(path).metadata() == {"format": "np", "note": "ü"}


def test_safe_open(tmp_path):
    path = tmp_path / "model.hrry"
    save_file({"a": np.ones((2, 2), np.float16), "b": np.zeros(3, np.uint8)}, path, metadata={"k": "v"})
    with hurray.safe_open(path, framework="np") as f:
        assert f.keys() == ["a", "b"]
        np.testing.assert_array_equal(f.get_tensor("a"), np.ones((2, 2), np.float16))
        assert f.metadata() == {"k": "v"}
    with hurray.safe_open(path, framework="numpy", device="cpu") as f:
        assert f.get_tensor("b").dtype == np.uint8


def test_metadata_is_none_without_kv_and_strings_otherwise(tmp_path):
    save_file({"a": np.ones(1)}, tmp_path / "n.hrry")
    with hurray.safe_open(tmp_path / "n.hrry", framework="np") as f:
        assert f.metadata() is None
    hurray.save(tmp_path / "t.hrry", {"a": np.ones(1)}, kv={"n": 3, "s": "x"})
    with hurray.safe_open(tmp_path / "t.hrry", framework="np") as f:
        assert f.metadata() == {"n": "3", "s": "x"}


def test_metadata_must_be_str_to_str(tmp_path):
    with pytest.raises(TypeError):
        save_file({"a": np.ones(1)}, tmp_path / "m.hrry", metadata={"n": 3})
    with pytest.raises(TypeError):
        save_file({"a": np.ones(1)}, tmp_path / "m.hrry", metadata=[("a", "b")])
    assert not (tmp_path / "m.hrry").exists()


def test_unsupported_framework_and_device(tmp_path):
    save_file({"a": np.ones(1)}, tmp_path / "m.hrry")
    with pytest.raises(hurray.UnsupportedError):
        hurray.safe_open(tmp_path / "m.hrry", framework="tf")
    with pytest.raises(hurray.UnsupportedError):
        hurray.safe_open(tmp_path / "m.hrry", framework="np", device="cuda")


def test_load_file_of_a_missing_file(tmp_path):
    with pytest.raises(hurray.FileError) as info:
        load_file(tmp_path / "missing.hrry")
    assert isinstance(info.value, OSError)


def test_save_and_load_bytes(tmp_path):
    from hurray.numpy import load, save
    tensors = {"a": np.arange(6, dtype=np.int16).reshape(2, 3), "m": np.array([True, False])}
    data = save(tensors, metadata={"k": "v"})
    assert isinstance(data, bytes) and data[:8] == b"HRRYFILE"
    # The same bytes as save_file writes.
    save_file(tensors, tmp_path / "same.hrry", metadata={"k": "v"})
    assert (tmp_path / "same.hrry").read_bytes() == data
    for source in (data, bytearray(data), memoryview(data)):
        loaded = load(source)
        assert list(loaded) == ["a", "m"]
        np.testing.assert_array_equal(loaded["a"], tensors["a"])
        np.testing.assert_array_equal(loaded["m"], tensors["m"])
        # Writable, as safetensors' load returns them (arrays over bytearrays);
        # the writes reach neither `data` nor another load.
        assert loaded["a"].flags.writeable
        loaded["a"] *= 2
        np.testing.assert_array_equal(loaded["a"], tensors["a"] * 2)
        np.testing.assert_array_equal(load(source)["a"], tensors["a"])
    with pytest.raises(hurray.FileError):
        load(data[:100])
    with pytest.raises(TypeError):
        load("not bytes")


def test_get_slice(tmp_path):
    w = np.arange(24, dtype=np.float32).reshape(4, 6)
    save_file({"w": w, "flags": np.array([True, False, True])}, tmp_path / "s.hrry")
    with hurray.safe_open(tmp_path / "s.hrry", framework="np") as f:
        s = f.get_slice("w")
        assert s.get_shape() == [4, 6] and s.get_dtype() == "F32"
        part = s[1:3, ::2]
        np.testing.assert_array_equal(part, w[1:3, ::2])
        assert part.flags.writeable and part.base is None  # a copy of just the slice
        np.testing.assert_array_equal(s[-1], w[-1])
        assert f.get_slice("flags").get_dtype() == "BOOL"
        np.testing.assert_array_equal(f.get_slice("flags")[1:], [False, True])
        with pytest.raises(KeyError):
            f.get_slice("missing")


def test_dtype_names_are_the_cpp_table():
    """get_slice(...).get_dtype() names come from the C++ table, every one of them:
    the MX and sub-byte floats included (they were missing from a Python copy)."""
    from hurray import _safetensors
    names = _safetensors._SAFETENSORS_DTYPES
    assert names["float32"] == "F32" and names["bfloat16"] == "BF16" and names["bool"] == "BOOL"
    assert names["float8_e8m0"] == "F8_E8M0"
    assert names["float4_e2m1"] == "F4"
    assert names["float6_e2m3"] == "F6_E2M3" and names["float6_e3m2"] == "F6_E3M2"
    assert names["complex64"] == "C64"
    assert len(set(names.values())) == len(names)  # one name per type


ROW_BYTES = 2 << 20  # one row of the sliced tensor: 2 MiB of float32
ROWS = 64


def _evict(path):
    """Writes the file back and drops it from the page cache; False where the
    file system keeps it (tmpfs)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return not _resident(path).any()


def _resident(path):
    """One bool per page of the file: in the page cache (mincore)."""
    size = os.path.getsize(path)
    page = mmap.PAGESIZE
    vec = (ctypes.c_ubyte * ((size + page - 1) // page))()
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
    try:
        view = np.frombuffer(m, np.uint8)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
        rc = libc.mincore(ctypes.c_void_p(view.ctypes.data), ctypes.c_size_t(size), vec)
        del view
    finally:
        m.close()
    assert rc == 0, os.strerror(ctypes.get_errno())
    return np.frombuffer(vec, np.uint8) & 1 == 1


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory):
    """A 128 MiB tensor of 64 rows of 2 MiB, written back and out of the page
    cache; (path, data offset, the array)."""
    path = tmp_path_factory.mktemp("slice") / "wide.hrry"
    w = np.arange(ROWS * ROW_BYTES // 4, dtype=np.float32).reshape(ROWS, -1)
    save_file({"w": w}, path)
    if not _evict(path):
        pytest.skip(f"{path.parent} is on a file system that keeps files in memory (tmpfs): "
                    "no page cache to drop, so reads cannot be observed")
    with hurray.open(path) as f:
        offset = f.info("w")["data_offset"]
    return path, offset, w


def _rows_read(path, offset):
    """Of the tensor's 64 rows, those with any page in the page cache."""
    data = _resident(path)[offset // mmap.PAGESIZE:][:ROWS * ROW_BYTES // mmap.PAGESIZE]
    return {i for i, row in enumerate(data.reshape(ROWS, -1)) if row.any()}


@pytest.mark.parametrize("framework", ["np", "pt"])
def test_get_slice_reads_only_the_pages_of_the_slice(wide_file, framework):
    if framework == "pt":
        pytest.importorskip("torch", reason="python3-torch is not installed")
    path, offset, w = wide_file
    assert _evict(path)
    # The kernel reads ahead of every read (read_ahead_kb: 128 KiB by default, 8 MiB
    # on this VM): opening reads the header and the index at the two ends of the file,
    # and with them the first and last rows, 2 MiB each. Rows 8-55 lie beyond any
    # read-ahead of those reads, or of the slice's, below.
    far = set(range(8, 28)) | set(range(38, 56))
    with hurray.safe_open(path, framework=framework) as f:
        assert not _rows_read(path, offset) & set(range(8, 56))  # opening read no row
        rows = f.get_slice("w")[32:34]
    np.testing.assert_array_equal(np.asarray(rows), w[32:34])
    read = _rows_read(path, offset)
    assert {32, 33} <= read  # the slice's 4 MiB came from the file
    assert not read & far, sorted(read)  # and the other rows did not
