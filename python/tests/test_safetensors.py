# SPDX-License-Identifier: Apache-2.0
"""The safetensors-style calls: hurray.numpy.save_file / load_file, hurray.safe_open."""

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
        assert not loaded["a"].flags.writeable
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
