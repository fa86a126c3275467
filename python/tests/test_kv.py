# SPDX-License-Identifier: Apache-2.0
"""Typed KV metadata both ways."""

import numpy as np
import pytest

import hurray

KV = {
    "general.name": "demo ✓",
    "empty": "",
    "int": -(2**63),
    "int.max": 2**63 - 1,
    "uint": 2**64 - 1,
    "float": 0.1,
    "inf": float("inf"),
    "true": True,
    "false": False,
    "bytes": b"\x00\x01\xff",
    "empty.bytes": b"",
    "strings": ["a", "", "ü"],
    "ints": [1, -2, 3],
    "uints": [0, 2**64 - 1],
    "floats": [1.5, -2.0, 3],
    "bools": [True, False],
    "bytes.list": [b"a", b""],
    "empty.list": [],
    "tuple": (1, 2),
}


def test_kv_types_round_trip(tmp_path):
    path = tmp_path / "kv.hrry"
    hurray.save(path, {"a": np.zeros(1)}, kv=KV)
    with hurray.open(path) as f:
        got = f.metadata()
    assert list(got) == list(KV)
    expected = dict(KV, floats=[1.5, -2.0, 3.0], tuple=[1, 2])
    assert got == expected
    for key, value in got.items():
        original = expected[key]
        assert type(value) is type(original), key
        if isinstance(value, list):
            assert [type(v) for v in value] == [type(v) for v in original], key


def test_bytearray_and_memoryview_become_bytes(tmp_path):
    hurray.save(tmp_path / "b.hrry", {}, kv={"ba": bytearray(b"xy"), "mv": memoryview(b"zw")})
    assert hurray.open(tmp_path / "b.hrry").metadata() == {"ba": b"xy", "mv": b"zw"}


@pytest.mark.parametrize("value,error", [
    (2**64, OverflowError),
    (-(2**63) - 1, OverflowError),
    ([1, "a"], TypeError),
    ([1.5, "a"], TypeError),
    ([[1]], TypeError),
    ([-1, 2**64 - 1], ValueError),
    ({"nested": 1}, TypeError),
    (None, TypeError),
    (object(), TypeError),
], ids=["too-big", "too-small", "mixed", "mixed-float", "nested", "sign-mix", "dict", "none", "object"])
def test_values_that_cannot_be_stored(tmp_path, value, error):
    with pytest.raises(error, match="kv 'k'"):
        hurray.save(tmp_path / "x.hrry", {}, kv={"k": value})
    assert not (tmp_path / "x.hrry").exists()


def test_kv_must_be_a_dict_of_str(tmp_path):
    with pytest.raises(TypeError):
        hurray.save(tmp_path / "x.hrry", {}, kv=[("a", 1)])
    with pytest.raises(TypeError):
        hurray.save(tmp_path / "x.hrry", {}, kv={1: 1})
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.save(tmp_path / "x.hrry", {}, kv={"": 1})


def test_no_kv_gives_an_empty_dict(tmp_path):
    hurray.save(tmp_path / "x.hrry", {"a": np.zeros(1)})
    assert hurray.open(tmp_path / "x.hrry").metadata() == {}
