# SPDX-License-Identifier: Apache-2.0
"""hurray.save / hurray.load round trips of every supported dtype and shape."""

import os

import numpy as np
import pytest

import hurray
import hurray.numpy
from conftest import DTYPES, sample

SHAPES = [(), (0,), (1,), (7,), (2, 3), (3, 0, 2), (2, 3, 4, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(tmp_path, dtype, shape):
    a = sample(dtype, shape)
    path = tmp_path / "t.hrry"
    hurray.save(path, {"a": a})
    t = hurray.load(path)["a"]
    assert isinstance(t, hurray.Tensor) and t.dtype.name == dtype and t.shape == shape
    got = np.asarray(t)
    assert got.dtype == np.dtype(dtype)
    assert got.shape == shape
    np.testing.assert_array_equal(got, a)
    assert not got.flags.writeable


def test_many_tensors_keep_their_order_and_names(tmp_path):
    tensors = {f"layer.{i}.{d}": sample(d, (i + 1, 2), seed=i) for i, d in enumerate(DTYPES)}
    hurray.save(tmp_path / "m.hrry", tensors)
    got = hurray.load(tmp_path / "m.hrry")
    assert list(got) == list(tensors)
    for name, a in tensors.items():
        np.testing.assert_array_equal(got[name], a)


def test_nan_payloads_are_kept_bit_for_bit(tmp_path):
    a = np.array([np.nan, -np.nan, 1.0], np.float32)
    a.view(np.uint32)[1] = 0x7FC01234
    hurray.save(tmp_path / "n.hrry", {"a": a})
    got = np.asarray(hurray.load(tmp_path / "n.hrry")["a"])
    np.testing.assert_array_equal(got.view(np.uint32), a.view(np.uint32))


def test_bool_bytes_other_than_one_are_true(tmp_path):
    raw = np.array([0, 1, 2, 255, 0, 7, 0, 0, 9], np.uint8)
    hurray.save(tmp_path / "b.hrry", {"b": raw.view(np.bool_)})
    got = np.asarray(hurray.load(tmp_path / "b.hrry")["b"])
    np.testing.assert_array_equal(got.view(np.uint8), (raw != 0).astype(np.uint8))


def test_non_contiguous_arrays_are_saved_as_a_contiguous_copy(tmp_path):
    base = sample("float32", (6, 8))
    tensors = {"t": base.T, "s": base[::2, 1::3], "neg": base[::-1]}
    hurray.save(tmp_path / "nc.hrry", tensors)
    got = {name: np.asarray(t) for name, t in hurray.load(tmp_path / "nc.hrry").items()}
    for name, a in tensors.items():
        assert got[name].flags.c_contiguous
        np.testing.assert_array_equal(got[name], a)


def test_big_endian_arrays_are_converted(tmp_path):
    a = np.arange(10, dtype=">i4")
    hurray.save(tmp_path / "be.hrry", {"a": a, "c": np.arange(3, dtype=">c16")})
    got = {name: np.asarray(t) for name, t in hurray.load(tmp_path / "be.hrry").items()}
    assert got["a"].dtype == np.dtype("int32")
    np.testing.assert_array_equal(got["a"], np.arange(10))
    np.testing.assert_array_equal(got["c"], np.arange(3))


def test_array_likes_and_scalars_are_accepted(tmp_path):
    hurray.save(tmp_path / "l.hrry", {"list": [[1, 2], [3, 4]], "scalar": np.float32(2.5)})
    got = {name: np.asarray(t) for name, t in hurray.load(tmp_path / "l.hrry").items()}
    np.testing.assert_array_equal(got["list"], [[1, 2], [3, 4]])
    assert got["scalar"].shape == () and got["scalar"] == np.float32(2.5)


def test_loaded_arrays_are_read_only(tmp_path):
    hurray.save(tmp_path / "r.hrry", {"a": np.zeros(4, np.int32), "b": np.zeros(4, bool)})
    got = hurray.load(tmp_path / "r.hrry")
    for a in map(np.asarray, got.values()):
        with pytest.raises(ValueError):
            a[0] = 1


def test_names_filter(tmp_path):
    path = tmp_path / "f.hrry"
    hurray.save(path, {"a": np.zeros(1), "b": np.ones(2), "c": np.arange(3)})
    got = hurray.load(path, names=["c", "a"])
    assert list(got) == ["c", "a"]
    np.testing.assert_array_equal(got["c"], np.arange(3))
    assert hurray.load(path, names=[]) == {}
    assert list(hurray.load(path, names=(n for n in ["b"]))) == ["b"]
    with pytest.raises(TypeError):
        hurray.load(path, names="a")
    with pytest.raises(KeyError):
        hurray.load(path, names=["a", "missing"])


def test_save_replaces_a_file_atomically(tmp_path):
    path = tmp_path / "atomic.hrry"
    hurray.save(path, {"old": np.arange(4)})
    # A failing save (invalid KV key) leaves the existing file as it was.
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.save(path, {"new": np.arange(5)}, kv={"": 1})
    assert list(hurray.load(path)) == ["old"]
    assert sorted(os.listdir(tmp_path)) == ["atomic.hrry"]  # no temporary left behind
    hurray.save(path, {"new": np.arange(5)})
    assert list(hurray.load(path)) == ["new"]


def test_durable_and_non_durable_saves_write_the_same_file(tmp_path):
    tensors = {"w": np.arange(6000, dtype=np.float32).reshape(60, 100), "q": np.arange(4, dtype=np.int8)}
    hurray.save(tmp_path / "durable.hrry", tensors, kv={"a": "b"})
    hurray.save(tmp_path / "fast.hrry", tensors, kv={"a": "b"}, durable=False)
    assert (tmp_path / "durable.hrry").read_bytes() == (tmp_path / "fast.hrry").read_bytes()
    hurray.numpy.save_file(tensors, tmp_path / "st.hrry")  # safetensors' semantics: no fsync
    hurray.numpy.save_file(tensors, tmp_path / "st_durable.hrry", durable=True)
    assert (tmp_path / "st.hrry").read_bytes() == (tmp_path / "st_durable.hrry").read_bytes()
    loaded = hurray.numpy.load_file(tmp_path / "st.hrry")
    assert np.array_equal(loaded["w"], tensors["w"])
    assert sorted(os.listdir(tmp_path)) == ["durable.hrry", "fast.hrry", "st.hrry", "st_durable.hrry"]


@pytest.mark.parametrize("bad", [np.array(["text"]), np.array([object()]), np.array([1], "datetime64[s]"),
                                 np.array([1.0], np.longdouble), np.zeros(2, [("x", "i4")])],
                         ids=["str", "object", "datetime", "longdouble", "struct"])
def test_dtypes_without_a_hurray_type_are_refused(tmp_path, bad):
    with pytest.raises(hurray.UnsupportedError, match="tensor 'x'"):
        hurray.save(tmp_path / "u.hrry", {"x": bad})
    assert not (tmp_path / "u.hrry").exists()


def test_bad_tensor_names_and_arguments(tmp_path):
    path = tmp_path / "n.hrry"
    with pytest.raises(TypeError):
        hurray.save(path, {1: np.zeros(1)})
    with pytest.raises(TypeError):
        hurray.save(path, [("a", np.zeros(1))])
    with pytest.raises(hurray.InvalidArgumentError, match="name"):
        hurray.save(path, {"": np.zeros(1)})
    with pytest.raises(hurray.FileError):
        hurray.save(tmp_path / "no" / "such" / "dir.hrry", {"a": np.zeros(1)})
    hurray.save(path, {"é-ünïcødé/名前": np.zeros(1)})
    assert list(hurray.load(path)) == ["é-ünïcødé/名前"]


def test_empty_file_round_trips(tmp_path):
    hurray.save(tmp_path / "e.hrry", {})
    assert hurray.load(tmp_path / "e.hrry") == {}
