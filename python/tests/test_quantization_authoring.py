# SPDX-License-Identifier: Apache-2.0
"""Quantization schemes, Statistics and Shard: construction, validation, value
semantics, attaching them to a hurray.Tensor and reading them back from
memory, a file and a stream."""

import math
import pickle

import numpy as np
import pytest

import hurray

F32 = hurray.float32


def f32(*values):
    return np.asarray(values, dtype="<f4").tobytes()


def i32(*values):
    return np.asarray(values, dtype="<i4").tobytes()


def per_channel_int8(values=range(8), scales=(0.5, 0.25), zero_points=None):
    """An int8 [2, 4] tensor quantized per row (axis 0)."""
    data = np.asarray(list(values), dtype=np.int8).tobytes()
    if zero_points is None:
        return hurray.Tensor(data, hurray.int8, [2, 4], aux_buffers=[f32(*scales)],
                             quantization=hurray.PerChannelAffine.symmetric(0, 1))
    return hurray.Tensor(data, hurray.int8, [2, 4], aux_buffers=[f32(*scales), i32(*zero_points)],
                         quantization=hurray.PerChannelAffine.asymmetric(0, 1, 2))


# ── scheme classes ────────────────────────────────────────────────────────────

ALL_SCHEMES = [
    hurray.PerTensorAffine(0.125, -3),
    hurray.PerChannelAffine.symmetric(1, 1),
    hurray.PerChannelAffine.asymmetric(0, 1, 2),
    hurray.PerBlockAffine.symmetric(1, 64, 1, hurray.bfloat16),
    hurray.PerBlockAffine.asymmetric(0, 16, 1, 2, hurray.float16),
    hurray.NF4(1, 64, 1),
    hurray.MXFP(0, 32, 1),
]


@pytest.mark.parametrize("scheme", ALL_SCHEMES, ids=repr)
def test_every_scheme_is_a_quantization_with_value_semantics(scheme):
    assert isinstance(scheme, hurray.Quantization)
    assert scheme.name == scheme.scheme and scheme.tag in range(1, 6)
    twin = eval(repr(scheme), {**vars(hurray), "hurray": hurray})  # the repr builds an equal object
    assert twin == scheme and hash(twin) == hash(scheme) and not (twin != scheme)
    assert pickle.loads(pickle.dumps(scheme)) == scheme
    assert len({scheme, twin}) == 1
    with pytest.raises(AttributeError):
        scheme.axis = 3


def test_schemes_of_different_classes_or_fields_differ():
    assert hurray.NF4(1, 64, 1) != hurray.MXFP(1, 64, 1)
    assert hurray.PerChannelAffine.symmetric(0, 1) != hurray.PerChannelAffine.symmetric(1, 1)
    assert hurray.PerBlockAffine.symmetric(0, 32, 1, F32) != hurray.PerBlockAffine.symmetric(0, 32, 1, hurray.float16)
    assert hurray.NF4(1, 64, 1) != "nf4"


def test_tags_and_names():
    names = {type(s): (s.tag, s.scheme) for s in ALL_SCHEMES}
    assert names == {
        hurray.PerTensorAffine: (1, "per_tensor_affine"),
        hurray.PerChannelAffine: (2, "per_channel_affine"),
        hurray.PerBlockAffine: (3, "per_block_affine"),
        hurray.NF4: (4, "nf4"),
        hurray.MXFP: (5, "mxfp"),
    }


def test_per_tensor_affine_stores_a_float32_scale():
    q = hurray.PerTensorAffine(0.1, 7)
    assert q.scale == float(np.float32(0.1)) and q.zero_point == 7
    assert repr(q) == "PerTensorAffine(scale=0.1, zero_point=7)"
    assert hurray.PerTensorAffine(2, 0).scale == 2.0  # an int scale is a number too


@pytest.mark.parametrize("scale", [0.0, -0.0, math.nan, math.inf, -math.inf, 1e39, 1e-50])
def test_per_tensor_affine_rejects_scales_that_are_not_finite_nonzero_float32(scale):
    with pytest.raises(hurray.InvalidDescriptorError, match="scale"):
        hurray.PerTensorAffine(scale, 0)


def test_per_tensor_affine_argument_types_and_ranges():
    with pytest.raises(TypeError):
        hurray.PerTensorAffine("0.5", 0)
    with pytest.raises(TypeError):
        hurray.PerTensorAffine(0.5, 1.5)
    with pytest.raises(OverflowError):
        hurray.PerTensorAffine(0.5, 1 << 31)
    assert hurray.PerTensorAffine(0.5, -(1 << 31)).zero_point == -(1 << 31)


def test_per_channel_forms():
    sym = hurray.PerChannelAffine.symmetric(axis=2, scale_buffer_index=1)
    asym = hurray.PerChannelAffine.asymmetric(axis=0, scale_buffer_index=1, zero_point_buffer_index=2)
    assert (sym.axis, sym.scale_buffer_index, sym.zero_point_buffer_index, sym.is_symmetric) == (2, 1, None, True)
    assert (asym.zero_point_buffer_index, asym.is_symmetric, asym.buffer_indices) == (2, False, (1, 2))
    assert sym.scale_type == F32
    assert hurray.PerChannelAffine(0, 1) == hurray.PerChannelAffine.symmetric(0, 1)
    assert hurray.PerChannelAffine(0, 1, 2) == asym


def test_per_block_forms():
    q = hurray.PerBlockAffine.asymmetric(1, 128, 1, 2, hurray.bfloat16)
    assert (q.axis, q.block_size, q.scale_buffer_index, q.zero_point_buffer_index) == (1, 128, 1, 2)
    assert q.scale_type == hurray.bfloat16 and not q.is_symmetric
    assert hurray.PerBlockAffine(1, 128, 1, hurray.bfloat16, 2) == q


@pytest.mark.parametrize("make", [
    lambda: hurray.PerBlockAffine.symmetric(0, 1, 1, F32),      # below 2
    lambda: hurray.PerBlockAffine.symmetric(0, 48, 1, F32),     # not a power of two
    lambda: hurray.PerBlockAffine.symmetric(0, 0, 1, F32),
    lambda: hurray.PerBlockAffine.symmetric(0, 32, 1, hurray.int8),   # scale type
    lambda: hurray.PerBlockAffine.symmetric(0, 32, 1, hurray.float64),
    lambda: hurray.NF4(0, 4, 1),                                # below 8
    lambda: hurray.NF4(0, 96, 1),
    lambda: hurray.MXFP(0, 8, 1),                               # below 16
    lambda: hurray.MXFP(0, 4096, 1),                            # above 2048
    lambda: hurray.MXFP(0, 48, 1),
    lambda: hurray.PerChannelAffine.symmetric(0, 0xFFFFFFFF),   # the "no buffer" marker
    lambda: hurray.PerChannelAffine.asymmetric(0, 1, 0xFFFFFFFF),
    lambda: hurray.NF4(0, 64, 0xFFFFFFFF),
])
def test_scheme_parameter_rules(make):
    with pytest.raises(hurray.InvalidDescriptorError):
        make()


def test_scheme_argument_types():
    with pytest.raises(TypeError):
        hurray.PerBlockAffine.symmetric(0, 32, 1, "float32")  # a Dtype, not its name
    with pytest.raises(TypeError):
        hurray.NF4(True, 64, 1)
    with pytest.raises(TypeError):
        hurray.MXFP(0, 32.0, 1)
    with pytest.raises(OverflowError):
        hurray.PerChannelAffine.symmetric(-1, 1)
    with pytest.raises(OverflowError):
        hurray.NF4(0, 64, 1 << 32)


# ── Statistics ────────────────────────────────────────────────────────────────

def test_statistics_mask_bits_follow_the_groups_given():
    cases = [
        (dict(nnz=5), 0x01),
        (dict(sparsity_ratio=0.5), 0x02),
        (dict(value_min=-2.0, value_max=3.0, value_abs_max=3.0), 0x04),
        (dict(value_mean=0.5, value_stddev=1.5), 0x08),
        (dict(nm_n=2, nm_m=4), 0x10),
        (dict(has_nan=True, has_inf=False), 0x20),
    ]
    everything = {}
    for kwargs, bit in cases:
        s = hurray.Statistics(**kwargs)
        assert s.computed_mask == bit
        for key, value in kwargs.items():
            assert getattr(s, key) == value
        everything.update(kwargs)
    full = hurray.Statistics(**everything)
    assert full.computed_mask == 0x3F
    assert hurray.Statistics().computed_mask == 0


def test_statistics_fields_not_given_read_none():
    s = hurray.Statistics(nm_n=1, nm_m=2)
    for name in ("nnz", "sparsity_ratio", "value_min", "value_max", "value_abs_max", "value_mean", "value_stddev",
                 "has_nan", "has_inf"):
        assert getattr(s, name) is None, name


@pytest.mark.parametrize("kwargs", [
    dict(value_max=1.0), dict(value_min=0.0, value_max=1.0), dict(value_abs_max=1.0),
    dict(value_stddev=1.0), dict(nm_m=4), dict(has_inf=False),
])
def test_statistics_partial_groups_are_rejected(kwargs):
    with pytest.raises(hurray.InvalidDescriptorError, match="share one validity bit"):
        hurray.Statistics(**kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(sparsity_ratio=1.5), dict(sparsity_ratio=-0.1), dict(sparsity_ratio=math.nan),
    dict(value_mean=0.0, value_stddev=-1.0), dict(nm_n=4, nm_m=2),
])
def test_statistics_value_rules(kwargs):
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Statistics(**kwargs)


def test_statistics_argument_types():
    with pytest.raises(TypeError):
        hurray.Statistics(5)  # keyword-only
    with pytest.raises(TypeError):
        hurray.Statistics(has_nan=0, has_inf=0)
    with pytest.raises(TypeError):
        hurray.Statistics(nnz=2.0)
    with pytest.raises(OverflowError):
        hurray.Statistics(nm_n=1, nm_m=256)
    with pytest.raises(OverflowError):
        hurray.Statistics(nnz=-1)


def test_statistics_value_semantics():
    a = hurray.Statistics(nnz=4, value_mean=math.nan, value_stddev=0.0)
    b = hurray.Statistics(nnz=4, value_mean=math.nan, value_stddev=0.0)
    assert a == b and hash(a) == hash(b)  # NaN statistics compare by their bits
    assert a != hurray.Statistics(nnz=5, value_mean=math.nan, value_stddev=0.0)
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(hurray.Statistics(nnz=4, sparsity_ratio=0.25)) == "Statistics(nnz=4, sparsity_ratio=0.25)"
    with pytest.raises(AttributeError):
        a.nnz = 3


# ── Shard ─────────────────────────────────────────────────────────────────────

def test_shard_fields_and_value_semantics():
    s = hurray.Shard([8, 6], (4, 0))
    assert s.parent_shape == (8, 6) and s.shard_offset == (4, 0) and s.rank == 2
    assert repr(s) == "Shard(parent_shape=[8, 6], shard_offset=[4, 0])"
    assert eval(repr(s), vars(hurray)) == s
    assert hash(s) == hash(hurray.Shard((8, 6), [4, 0])) and s != hurray.Shard([8, 6], [0, 0])
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(AttributeError):
        s.parent_shape = (1,)


def test_shard_rules():
    with pytest.raises(hurray.InvalidDescriptorError, match="entries"):
        hurray.Shard([8, 8], [0])
    with pytest.raises(hurray.InvalidDescriptorError, match="past"):
        hurray.Shard([8, 8], [9, 0])
    with pytest.raises(hurray.InvalidDescriptorError, match="dynamic"):
        hurray.Shard([2**64 - 1], [0])
    with pytest.raises(OverflowError):
        hurray.Shard([8], [-1])
    with pytest.raises(TypeError):
        hurray.Shard("88", "00")
    with pytest.raises(TypeError):
        hurray.Shard([8.0], [0])


# ── authoring tensors ─────────────────────────────────────────────────────────

def test_per_channel_tensor_dequantizes_with_its_scales():
    t = per_channel_int8()
    assert t.buffer_count == 2 and t.quantization == hurray.PerChannelAffine.symmetric(0, 1)
    expected = np.arange(8, dtype=np.float32).reshape(2, 4) * np.array([[0.5], [0.25]], dtype=np.float32)
    np.testing.assert_array_equal(t.dequantize(), expected)


def test_asymmetric_per_channel_uses_its_zero_points():
    t = per_channel_int8(scales=(1.0, 2.0), zero_points=(1, -1))
    assert t.buffer_count == 3
    np.testing.assert_array_equal(t.dequantize(), [[-1, 0, 1, 2], [10, 12, 14, 16]])


def test_per_tensor_affine_tensor_has_one_buffer():
    t = hurray.Tensor(np.array([0, 10, 20, 30], np.uint8), hurray.uint8, [4],
                      quantization=hurray.PerTensorAffine(0.5, 10))
    assert t.buffer_count == 1
    np.testing.assert_array_equal(t.dequantize(), [-5, 0, 5, 10])
    with pytest.raises(hurray.InvalidDescriptorError):  # no parameter buffer to give it
        hurray.Tensor(bytes(4), hurray.uint8, [4], aux_buffers=[f32(1.0)],
                      quantization=hurray.PerTensorAffine(0.5, 10))


def test_per_block_affine_with_float16_scales():
    data = np.ones((2, 64), np.int8)
    scales = np.array([1, 2, 3, 4], np.float16).tobytes()  # 2 rows x 2 blocks of 32
    t = hurray.Tensor(data, hurray.int8, [2, 64], aux_buffers=[scales],
                      quantization=hurray.PerBlockAffine.symmetric(1, 32, 1, hurray.float16))
    out = t.dequantize()
    assert out[0, 0] == 1 and out[0, 40] == 2 and out[1, 0] == 3 and out[1, 63] == 4


def test_nf4_and_mxfp_tensors():
    codes = bytes([0xFF]) * 32  # uint4 code 15 (level 1.0) everywhere, [2, 32]
    nf4 = hurray.Tensor(codes, hurray.dtype.uint4, [2, 32], aux_buffers=[f32(2.0, 3.0)],
                        quantization=hurray.NF4(1, 32, 1))
    np.testing.assert_array_equal(nf4.dequantize()[:, 0], [2.0, 3.0])
    e4m3_one = bytes([0x38]) * 64  # float8_e4m3 1.0, [2, 32]
    mx = hurray.Tensor(e4m3_one, hurray.dtype.float8_e4m3, [2, 32], aux_buffers=[bytes([128, 126])],
                       quantization=hurray.MXFP(1, 32, 1))  # e8m0: 2^1 and 2^-1
    np.testing.assert_array_equal(mx.dequantize()[:, 5], [2.0, 0.5])


def test_parameter_buffers_follow_a_sparse_layouts_own():
    values = np.array([4, 8], np.int8)
    coo_indices = np.array([[0, 1], [1, 0]], np.uint64)
    t = hurray.Tensor(values, hurray.int8, [2, 2], layout=hurray.CooLayout(2), aux_buffers=[coo_indices],
                      quantization=hurray.PerTensorAffine(0.25, 0))
    np.testing.assert_array_equal(t.dequantize(), [[0, 1], [2, 0]])
    with pytest.raises(hurray.InvalidDescriptorError, match="layout's own buffers"):
        hurray.Tensor(values, hurray.int8, [2, 2], layout=hurray.CooLayout(2), aux_buffers=[coo_indices, f32(1, 1)],
                      quantization=hurray.PerChannelAffine.symmetric(0, 1))


@pytest.mark.parametrize("aux, scheme, match", [
    ([], hurray.PerChannelAffine.symmetric(0, 1), "refers to no buffer"),
    ([f32(1, 1)], hurray.PerChannelAffine.asymmetric(0, 1, 2), "refers to no buffer"),
    ([f32(1, 1)], hurray.PerChannelAffine.symmetric(0, 0), "own buffers"),
    ([f32(1, 1), f32(1, 1)], hurray.PerChannelAffine.symmetric(0, 1), "buffers"),   # one left unreferenced
    ([f32(1, 1), f32(1, 1)], hurray.PerChannelAffine.symmetric(0, 2), "buffers"),   # buffer 1 unreferenced
])
def test_parameter_buffer_indices_must_resolve(aux, scheme, match):
    with pytest.raises(hurray.InvalidDescriptorError, match=match):
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], aux_buffers=aux, quantization=scheme)


def test_what_is_not_a_scheme_is_rejected():
    with pytest.raises(hurray.InvalidDescriptorError, match="quantization must be"):
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], quantization={"scale": 1.0})
    with pytest.raises(hurray.UnsupportedError):  # names a scheme without its parameters
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], quantization=hurray.Quantization(0xF0, "private"))
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], statistics={"nnz": 1})
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], shard=([4, 4], [0, 0]))


def test_statistics_and_shard_are_checked_against_the_tensor():
    with pytest.raises(hurray.InvalidDescriptorError):  # rank 1 shard, rank 2 tensor
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], shard=hurray.Shard([8], [0]))
    with pytest.raises(hurray.InvalidDescriptorError):  # 3 + 2 rows > 4
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], shard=hurray.Shard([4, 4], [3, 0]))
    with pytest.raises(hurray.InvalidDescriptorError):  # nnz disagrees with the COO layout's
        hurray.Tensor(np.ones(2, np.float32), F32, [2, 2], layout=hurray.CooLayout(2),
                      aux_buffers=[np.array([[0, 0], [1, 1]], np.uint64)], statistics=hurray.Statistics(nnz=3))


def test_scale_values_are_validated_when_the_scheme_fits():
    with pytest.raises(hurray.InvalidDescriptorError):
        per_channel_int8(scales=(0.5, 0.0))


def test_a_scheme_that_does_not_fit_builds_but_is_never_written(tmp_path):
    # NF4 needs uint4 storage: the tensor can be built and inspected (as with
    # the reference module), but writing or dequantizing it is refused.
    t = hurray.Tensor(bytes(64), hurray.int8, [2, 32], aux_buffers=[f32(1, 1)], quantization=hurray.NF4(1, 32, 1))
    assert t.quantization == hurray.NF4(1, 32, 1) and t.buffer_count == 2
    path = tmp_path / "bad.hrry"
    with pytest.raises(hurray.InvalidDescriptorError, match="storage type"):
        hurray.save(path, {"t": t})
    assert not path.exists()
    with pytest.raises(hurray.InvalidDescriptorError):
        t.dequantize()
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.StreamWriter().write(t)
    # A zero point outside the storage range, and a scale buffer of the wrong size, likewise.
    zp = hurray.Tensor(bytes(4), hurray.int8, [4], quantization=hurray.PerTensorAffine(0.5, 128))
    with pytest.raises(hurray.InvalidDescriptorError, match="zero_point"):
        hurray.save(path, {"t": zp})
    short = hurray.Tensor(bytes(8), hurray.int8, [2, 4], aux_buffers=[f32(1.0)],
                          quantization=hurray.PerChannelAffine.symmetric(0, 1))
    assert short.buffer(1).nbytes == 4  # kept as given, not padded or trimmed
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.save(path, {"t": short})


# ── reading back ──────────────────────────────────────────────────────────────

def test_plain_tensor_has_no_sections():
    t = hurray.Tensor(bytes(16), F32, [4])
    assert (t.quantization, t.statistics, t.shard, t.buffer_count) == (None, None, None, 1)


def test_an_inspected_scheme_builds_another_tensor():
    scheme = per_channel_int8().quantization
    again = hurray.Tensor(bytes(8), hurray.int8, [2, 4], aux_buffers=[f32(1, 1)], quantization=scheme)
    assert again.quantization == scheme


def _sectioned():
    return hurray.Tensor(
        np.arange(8, dtype=np.int8), hurray.int8, [2, 4], aux_buffers=[f32(0.5, 0.25), i32(1, 2)],
        quantization=hurray.PerChannelAffine.asymmetric(0, 1, 2),
        statistics=hurray.Statistics(nnz=7, value_min=-0.5, value_max=1.25, value_abs_max=1.25,
                                     has_nan=False, has_inf=False),
        shard=hurray.Shard([6, 4], [2, 0]))


def _same_sections(a, b):
    assert a.quantization == b.quantization and type(a.quantization) is type(b.quantization)
    assert a.statistics == b.statistics and a.shard == b.shard and a.buffer_count == b.buffer_count
    np.testing.assert_array_equal(a.dequantize(), b.dequantize())


def test_sections_survive_a_file(tmp_path):
    t = _sectioned()
    hurray.save(tmp_path / "s.hrry", {"w": t, "p": hurray.Tensor(bytes(4), hurray.uint8, [4],
                                                                 quantization=hurray.PerTensorAffine(0.1, 3))})
    back = hurray.load(tmp_path / "s.hrry")
    _same_sections(back["w"], t)
    assert back["p"].quantization == hurray.PerTensorAffine(0.1, 3)
    assert back["w"].statistics.value_mean is None and back["w"].statistics.computed_mask == 0x25


def test_sections_survive_a_stream():
    t = _sectioned()
    w = hurray.StreamWriter()
    w.write(t)
    w.finish()
    (back,) = list(hurray.StreamReader(w.getvalue()))
    _same_sections(back, t)


def test_every_scheme_survives_a_file(tmp_path):
    tensors = {
        "pbt": hurray.Tensor(bytes(4 * 32), hurray.int8, [4, 32], aux_buffers=[f32(*[1.0] * 8), i32(*[0] * 8)],
                             quantization=hurray.PerBlockAffine.asymmetric(1, 16, 1, 2, F32)),
        "nf4": hurray.Tensor(bytes(32), hurray.dtype.uint4, [2, 32], aux_buffers=[f32(1, 1)],
                             quantization=hurray.NF4(1, 32, 1)),
        "mx": hurray.Tensor(bytes([0x38]) * 64, hurray.dtype.float8_e4m3, [2, 32], aux_buffers=[bytes([127, 127])],
                            quantization=hurray.MXFP(1, 32, 1)),
    }
    hurray.save(tmp_path / "all.hrry", tensors)
    back = hurray.load(tmp_path / "all.hrry")
    for name, t in tensors.items():
        _same_sections(back[name], t)


def _rebuilt(t):
    """A new Tensor from another's buffers, layout and sections."""
    return hurray.Tensor(t.buffer(0), t.dtype, t.shape, layout=t.layout, quantization=t.quantization,
                         statistics=t.statistics, shard=t.shard,
                         aux_buffers=[t.buffer(i) for i in range(1, t.buffer_count)])


def test_rebuilding_from_the_getters_gives_the_same_descriptor(tmp_path):
    t = _sectioned()
    assert _rebuilt(t)._wire()[0] == t._wire()[0]
    hurray.save(tmp_path / "r.hrry", {"t": t})
    loaded = hurray.load(tmp_path / "r.hrry")["t"]
    assert _rebuilt(loaded)._wire()[0] == t._wire()[0]


def test_conformance_descriptors_decode_into_the_classes(conformance_dir):
    encoded = (conformance_dir / "descriptors" / "quant_per_block_int4_128x128.bin").read_bytes()
    q = hurray.Tensor._from_wire(encoded, [bytes([0x21]) * 8192, np.full(128, 1.0, np.float16)])
    scheme = q.quantization
    assert scheme == hurray.PerBlockAffine.symmetric(1, 128, 1, hurray.float16)
    assert _rebuilt(q)._wire()[0] == encoded  # authored again from the getters: the same bytes
    encoded = (conformance_dir / "descriptors" / "sharded_f32_8x4.bin").read_bytes()
    s = hurray.Tensor._from_wire(encoded, [bytes(128)])
    assert s.shard == hurray.Shard([8, 8], [0, 4]) and s.statistics is None and s.quantization is None
    assert _rebuilt(s)._wire()[0] == encoded
