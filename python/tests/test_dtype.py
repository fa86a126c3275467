# SPDX-License-Identifier: Apache-2.0
"""hurray.Dtype, the Tier 1 constants, hurray.dtype, hurray.Device."""

import pickle

import pytest

import hurray

TIER1 = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
TIER2 = ["float8_e4m3", "float8_e5m2", "float8_e8m0", "float4_e2m1", "float6_e2m3", "float6_e3m2",
         "float128", "int4", "uint4", "int2", "uint2"]
WIDTHS = {"bool": 1, "int8": 8, "float16": 16, "bfloat16": 16, "float32": 32, "complex128": 128, "int4": 4,
          "uint2": 2, "float6_e2m3": 6, "float4_e2m1": 4, "float8_e4m3": 8, "float128": 128}


@pytest.mark.parametrize("name", TIER1)
def test_tier1_constants_are_one_object_on_both_namespaces(name):
    dt = getattr(hurray, name)
    assert dt is getattr(hurray.dtype, name)
    assert isinstance(dt, hurray.Dtype)
    assert dt.name == name and str(dt) == name and repr(dt) == f"hurray.Dtype('{name}')"
    # complex64/complex128 carry Tier 2 tags (0x50, 0x51; element-types.md's
    # table, as in the reference) but belong to the NumPy vocabulary, so they
    # are module attributes too.
    assert dt.tier == (2 if name.startswith("complex") else 1)
    assert dt.is_array_api == (dt.tier == 1)
    assert hurray.Dtype.from_name(name) is dt


@pytest.mark.parametrize("name", TIER2)
def test_tier2_types_live_on_hurray_dtype_only(name):
    dt = getattr(hurray.dtype, name)
    assert not hasattr(hurray, name)
    assert dt.tier == 2 and not dt.is_array_api
    assert hurray.Dtype.from_name(name) is dt


def test_every_core_element_type_is_present():
    names = {d.name for d in (getattr(hurray.dtype, n) for n in TIER1 + TIER2)}
    assert names == set(TIER1 + TIER2)
    assert len({getattr(hurray.dtype, n).tag for n in TIER1 + TIER2}) == len(TIER1 + TIER2)


@pytest.mark.parametrize("name,width", sorted(WIDTHS.items()))
def test_bit_widths(name, width):
    assert hurray.Dtype.from_name(name).bit_width == width


def test_properties():
    assert hurray.int8.is_integer and hurray.int8.is_signed and not hurray.int8.is_float
    assert hurray.uint16.is_integer and not hurray.uint16.is_signed
    assert hurray.float32.is_float and not hurray.float32.is_integer
    assert hurray.dtype.int4.is_sub_byte and not hurray.int8.is_sub_byte
    assert not hurray.bool.is_integer and not hurray.bool.is_float
    assert hurray.float32.tag == 0x03 and hurray.dtype.int4.tag == 0x48


def test_equality_hashing_immutability_pickle():
    assert hurray.float32 == hurray.dtype.float32 and hurray.float32 != hurray.float64
    assert hurray.float32 != "float32"
    d = {hurray.float32: "fp32", hurray.dtype.int4: "i4"}
    assert d[hurray.Dtype.from_name("float32")] == "fp32"
    with pytest.raises(AttributeError):
        hurray.float32.name = "x"
    assert pickle.loads(pickle.dumps(hurray.dtype.int4)) is hurray.dtype.int4


def test_unknown_name_raises():
    with pytest.raises(hurray.InvalidDescriptorError, match="not_a_type"):
        hurray.Dtype.from_name("not_a_type")


def test_devices():
    cpu = hurray.Device("cpu")
    assert cpu == hurray.device.cpu and cpu.kind == "cpu" and cpu.device_id == 0 and cpu.index == 0
    assert cpu.memory_class == "standard"
    gpu = hurray.Device("cuda", 1)
    assert gpu != cpu and gpu.kind == "cuda" and gpu.device_id == 1
    assert {hurray.device.cpu: 1}[hurray.Device("cpu")] == 1
    assert repr(gpu) == "hurray.Device(kind='cuda', device_id=1, memory_class='standard')"
    assert hurray.Device("cuda", 0, "unified").memory_class == "unified"
    for bad in [("tpu",), ("cuda", -1), ("cuda", 0, "weird")]:
        with pytest.raises(hurray.InvalidDescriptorError):
            hurray.Device(*bad)
    with pytest.raises(AttributeError):
        cpu.kind = "cuda"
    assert pickle.loads(pickle.dumps(gpu)) == gpu


def test_numpy_takes_a_hurray_dtype_where_it_takes_a_dtype():
    import numpy as np
    for name in ("bool", "int8", "uint8", "int64", "float16", "float32", "float64", "complex128"):
        dt = getattr(hurray, name)
        assert dt.dtype == np.dtype(name) and np.dtype(dt) == np.dtype(name)
        assert np.dtype(name) == dt and dt == np.dtype(name)  # numpy's comparison, reflected
        assert np.zeros(2, dtype=dt).dtype == np.dtype(name)
    assert np.dtype("float32") != hurray.float64 and hurray.uint8 != np.dtype("int8")
    for dt in (hurray.bfloat16, hurray.dtype.int4, hurray.dtype.float8_e4m3):
        assert not hasattr(dt, "dtype")
        with pytest.raises(TypeError):
            np.dtype(dt)
    # The buffers of a tensor are uint8 arrays: their dtype is hurray.uint8.
    t = hurray.Tensor(bytearray(8), hurray.float32, [2])
    assert t.buffer(0).dtype == hurray.uint8
