# SPDX-License-Identifier: Apache-2.0
"""The conformance files read as manifest.json describes them."""

import json

import numpy as np
import pytest

import hurray


def manifest_files(conformance_dir):
    return json.loads((conformance_dir / "manifest.json").read_text())["files"]


def test_conformance_files_match_the_manifest(conformance_dir):
    files = manifest_files(conformance_dir)
    assert any(entry["file"].endswith("basic.hrry") for entry in files)
    for entry in files:
        path = conformance_dir / entry["file"]
        raw = path.read_bytes()
        loaded = hurray.load(path)
        with hurray.open(path) as f:
            assert f.keys() == [t["name"] for t in entry["tensors"]]
            for t in entry["tensors"]:
                info = f.info(t["name"])
                assert info["dtype"] == t["element_type"]
                assert list(info["shape"]) == t["shape"]
                assert info["nbytes"] == t["data_bytes"]
                a = np.asarray(loaded[t["name"]])
                assert a.dtype == np.dtype(t["element_type"])
                assert list(a.shape) == t["shape"]
                # The array holds exactly the file's data bytes.
                start = info["data_offset"]
                assert a.tobytes() == raw[start:start + t["data_bytes"]]
            kv = f.metadata()
        expected = {}
        for item in entry["kv"]:
            value = item["value_string"] if item["kind"] == "string" else item["value_int"]
            expected[item["key"]] = value
        assert kv == expected


def test_basic_hrry(conformance_dir):
    path = conformance_dir / "files" / "basic.hrry"
    tensors = hurray.load(path)
    assert list(tensors) == ["weights", "bias"]
    assert tensors["weights"].dtype == hurray.float32 and tensors["weights"].shape == (2, 2)
    assert tensors["bias"].dtype == hurray.int8 and tensors["bias"].shape == (3,)
    assert np.asarray(tensors["weights"]).dtype == np.float32 and np.asarray(tensors["bias"]).dtype == np.int8
    assert hurray.open(path).metadata() == {"producer": "hurray-conformance", "tensor_count": 2}


@pytest.mark.parametrize("names", [["bias"], ["weights"]])
def test_basic_hrry_names_filter(conformance_dir, names):
    assert list(hurray.load(conformance_dir / "files" / "basic.hrry", names=names)) == names
