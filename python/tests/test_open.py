# SPDX-License-Identifier: Apache-2.0
"""hurray.open: the lazy handle, zero-copy arrays and their lifetime, threads."""

import concurrent.futures
import gc
import os

import numpy as np
import pytest

import hurray
from conftest import DTYPES, sample


@pytest.fixture()
def model(tmp_path):
    tensors = {d: sample(d, (5, 3), seed=i) for i, d in enumerate(DTYPES)}
    tensors["big"] = sample("float32", (256, 1024))
    path = tmp_path / "model.hrry"
    hurray.save(path, tensors, kv={"arch": "demo"})
    return path, tensors


def test_keys_info_metadata_without_data(model):
    path, tensors = model
    with hurray.open(path) as f:
        assert f.keys() == list(tensors)
        assert len(f) == len(tensors) and "big" in f and "nope" not in f
        assert list(f) == list(tensors)
        info = f.info("big")
        assert info["dtype"] == "float32" and info["numpy_dtype"] == "float32"
        assert info["shape"] == (256, 1024)
        assert info["layout"] == "row_major" and info["quantization"] is None
        assert info["nbytes"] == 256 * 1024 * 4 and info["buffer_count"] == 1
        assert info["data_offset"] % 64 == 0
        assert f.info("bool")["nbytes"] == 2  # 15 bools, bit-packed
        assert f.metadata() == {"arch": "demo"}
        with pytest.raises(KeyError):
            f.info("nope")
        with pytest.raises(KeyError):
            f.get_tensor("nope")
    assert f.closed
    with pytest.raises(ValueError, match="closed"):
        f.keys()


def test_dense_tensors_view_the_mapping(model):
    path, tensors = model
    f = hurray.open(path)
    assert f.mapped
    for name in tensors:
        a = f.get_tensor(name)
        np.testing.assert_array_equal(a, tensors[name])
        where = f._data_range(name)
        if name == "bool":
            assert where is None  # bit-packed: unpacked into a copy
            continue
        address, nbytes = where
        assert a.__array_interface__["data"][0] == address
        assert a.nbytes == nbytes
        assert a.base is not None
    # Two arrays of one tensor share its memory.
    assert np.shares_memory(f.get_tensor("big"), f.get_tensor("big"))
    f.close()


def test_arrays_outlive_the_handle_and_the_file(model):
    path, tensors = model
    f = hurray.open(path)
    big = f.get_tensor("big")
    view = big[10:20, ::7]
    f.close()
    del f
    loaded = hurray.load(path)
    os.remove(path)
    gc.collect()
    np.testing.assert_array_equal(big, tensors["big"])
    np.testing.assert_array_equal(view, tensors["big"][10:20, ::7])
    for name, a in loaded.items():
        np.testing.assert_array_equal(a, tensors[name])
    del big
    gc.collect()
    np.testing.assert_array_equal(view, tensors["big"][10:20, ::7])


def test_eight_threads_load_one_file_at_once(model):
    path, tensors = model

    def load_all(_):
        for _ in range(10):
            got = hurray.load(path)
            for name, a in tensors.items():
                if not np.array_equal(got[name], a):
                    return name
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(load_all, range(8))) == [None] * 8


def test_eight_threads_share_one_handle(model):
    path, tensors = model
    f = hurray.open(path)
    names = list(tensors) * 8

    def get(name):
        return name, f.get_tensor(name), f.info(name)["dtype"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for name, a, dtype in pool.map(get, names):
            np.testing.assert_array_equal(a, tensors[name])
            assert dtype == ("float32" if name == "big" else name)
    f.close()


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_loading_does_not_read_the_data(tmp_path):
    # 64 MiB of tensors: loading maps them, so resident memory grows by far
    # less than the data until the arrays are read.
    path = tmp_path / "large.hrry"
    hurray.save(path, {f"t{i}": np.full((1024, 1024), i, np.float32) for i in range(16)})
    gc.collect()
    before = resident_bytes()
    tensors = hurray.load(path)
    grown = resident_bytes() - before
    assert grown < 8 * 1024 * 1024, f"resident memory grew by {grown} bytes"
    assert np.asarray(tensors["t7"])[512, 512] == 7.0
