# SPDX-License-Identifier: Apache-2.0
"""0-d tensors (rank 0, one element) keep shape () on every path of the package.

``numpy.ascontiguousarray`` (and ``asfortranarray``) return arrays of at least
one dimension, so a helper that normalises its input with them turns a 0-d
array or a numpy scalar into shape (1,): the element survives, the rank does
not. These tests send 0-d arrays, numpy scalars and 0-d torch tensors of
every Tier 1 element type through streams (bytes, paths, file objects, pipes,
a child process), composites (in files and streams), ``hurray.save`` /
``load``, ``hurray.numpy``, ``hurray.torch``, ``from_numpy``, ``asarray`` and
``hurray.Tensor``, and check that the descriptor says rank 0 on the wire, as
the C++ library (the ``hurray`` tool) writes and reads it.
"""

import os
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest

import hurray
import hurray.numpy as hnp
from hurray import _hurray

from conftest import DTYPES, hurray_cli, sample

# The interpreter running the tests (in a venv: the one the package is installed in).
PYTHON = sys.executable

# A dense descriptor's fixed part: magic 4, versions 2, length 4, flags 4,
# type tag 1, layout tag 1, then the rank (u32 little-endian) at offset 16.
RANK_OFFSET = 16

# bfloat16 has no numpy dtype: its 0-d tensors carry the bits of 3.140625.
BF16_BITS = 0x4049


def value(dtype, seed=0):
    """A deterministic 0-d array of `dtype` (NumPy's)."""
    array = sample(dtype, (), seed)
    assert array.shape == () and array.dtype == np.dtype(dtype)
    return array


def as_input(array, kind):
    """`array` (0-d) as the caller would give it: a 0-d ndarray or a numpy scalar."""
    if kind == "scalar":
        scalar = array[()]
        assert isinstance(scalar, np.generic)
        return scalar
    return array


def check(got, expected):
    """`got` (a hurray.Tensor, a numpy array or scalar) is 0-d with `expected`'s value and dtype."""
    if isinstance(got, hurray.Tensor):
        assert got.shape == () and got.ndim == 0 and got.size == 1
        assert got.dtype == hurray.Dtype.from_name(expected.dtype.name)
    array = np.asarray(got)
    assert array.shape == ()
    assert array.dtype == expected.dtype
    np.testing.assert_array_equal(array, expected)


def rank_of(descriptor):
    """The rank field of an encoded descriptor."""
    descriptor = bytes(descriptor)
    assert descriptor[:4] == b"HRRY"
    return struct.unpack_from("<I", descriptor, RANK_OFFSET)[0]


def bf16_tensor():
    return hurray.Tensor(np.array(BF16_BITS, dtype=np.uint16), hurray.bfloat16, ())


def wire_bytes(tensor):
    descriptor, buffers = tensor._wire()
    return bytes(descriptor), [bytes(memoryview(b).cast("B")) for b in buffers]


def stream_of(*items):
    with hurray.StreamWriter() as w:
        for item in items:
            w.write(item)
    return w.getvalue()


def read_all(source):
    with hurray.StreamReader(source) as r:
        return list(r)


def scalar_shard(array, role=None):
    """A 0-d member of a rank-0 partition or overlay (parent shape (), offset ())."""
    array = np.asarray(array, order="C")
    descriptor = _hurray._wire_dense(array.dtype.name, [], [], [], member_role=role)
    data = (np.packbits(array.reshape(-1), bitorder="little") if array.dtype == bool
            else array.reshape(-1).view(np.uint8))
    return hurray.Tensor._from_wire(descriptor, [data])


# -- streams --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["array", "scalar"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_0d_array_or_scalar_crosses_a_stream_in_memory(dtype, kind):
    expected = value(dtype)
    (t,) = read_all(stream_of(as_input(expected, kind)))
    check(t, expected)
    descriptor, buffers = wire_bytes(t)
    assert rank_of(descriptor) == 0
    assert descriptor == _hurray._wire_dense(dtype, [])
    assert _hurray._wire_info(descriptor)["shape"] == ()
    assert len(buffers[0]) == (1 if dtype == "bool" else expected.dtype.itemsize)


@pytest.mark.parametrize("flag", [False, True])
def test_0d_bools_keep_their_value(flag):
    for item in (np.array(flag), np.bool_(flag), hurray.from_numpy(np.array(flag))):
        (t,) = read_all(stream_of(item))
        check(t, np.array(flag))
        assert wire_bytes(t)[1] == [bytes([int(flag)])]  # one byte, the padding bits zero


def test_0d_big_endian_arrays_and_scalars_are_written_little_endian():
    for item in (np.array(7, dtype=">i4"), np.array(7, dtype=">i4")[()], np.array(1.5, dtype=">f8")):
        (t,) = read_all(stream_of(item))
        check(t, np.asarray(item).astype(np.asarray(item).dtype.newbyteorder("=")))


def test_0d_and_other_ranks_interleave_in_one_stream():
    items = [np.float32(1), np.arange(3, dtype=np.int16), np.array(2 + 3j), np.zeros((0,)), np.array(False)]
    back = read_all(stream_of(*items))
    assert [t.shape for t in back] == [(), (3,), (), (0,), ()]
    for t, item in zip(back, items):
        np.testing.assert_array_equal(np.asarray(t), np.asarray(item))
        assert np.asarray(t).dtype == np.asarray(item).dtype


def test_a_0d_bfloat16_tensor_crosses_a_stream():
    tensor = bf16_tensor()
    assert tensor.shape == ()
    (t,) = read_all(stream_of(tensor))
    assert t.shape == () and t.dtype == hurray.bfloat16
    assert wire_bytes(t) == wire_bytes(tensor)
    assert rank_of(wire_bytes(t)[0]) == 0
    assert wire_bytes(t)[1] == [struct.pack("<H", BF16_BITS)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_0d_tensor_crosses_a_stream_file(dtype, tmp_path):
    expected = value(dtype, seed=1)
    path = tmp_path / "s.hrrs"
    with hurray.StreamWriter(path) as w:
        w.write(expected[()])
        w.write(hurray.from_numpy(expected))
    for source in (path, str(path), path.read_bytes()):
        back = read_all(source)
        assert len(back) == 2
        for t in back:
            check(t, expected)
    with open(path, "rb") as f:  # a file object, by its descriptor
        for t in read_all(f):
            check(t, expected)


@pytest.mark.parametrize("dtype", ["bool", "float16", "complex128"])
def test_a_0d_tensor_crosses_a_pipe(dtype):
    expected = value(dtype, seed=2)
    r, w = os.pipe()
    with os.fdopen(r, "rb") as rf, os.fdopen(w, "wb") as wf:
        def produce():
            with wf, hurray.StreamWriter(wf) as sw:
                sw.write(expected)
                sw.write(expected[()])

        producer = threading.Thread(target=produce)
        producer.start()
        try:
            back = read_all(rf)
        finally:
            producer.join(timeout=60)
    assert len(back) == 2
    for t in back:
        check(t, expected)


def test_0d_tensors_cross_a_pipe_from_another_process():
    code = ("import sys, numpy as np, hurray\n"
            "with hurray.StreamWriter(sys.stdout) as w:\n"
            "    w.write(np.float32(2.5)); w.write(np.array(True)); w.write(np.complex64(1 - 2j))\n")
    proc = subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.PIPE, env=dict(os.environ))
    try:
        back = read_all(proc.stdout)
    finally:
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
    assert len(back) == 3
    check(back[0], np.array(2.5, np.float32))
    check(back[1], np.array(True))
    check(back[2], np.array(1 - 2j, np.complex64))


# -- torch ----------------------------------------------------------------------


TORCH_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128", "bool"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_a_0d_torch_tensor_crosses_a_stream(dtype):
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    source = torch.tensor(True if dtype == "bool" else 3, dtype=getattr(torch, dtype))
    assert source.dim() == 0
    try:
        tensor = hurray.from_torch(source)
    except (RuntimeError, BufferError, TypeError, hurray.HurrayError) as exc:  # e.g. bool, before torch 2.x's DLPack
        pytest.skip(f"this torch cannot export a {dtype} tensor through DLPack: {exc}")
    assert tensor.shape == ()
    (t,) = read_all(stream_of(tensor))
    assert t.shape == () and t.dtype == hurray.Dtype.from_name(dtype)
    assert rank_of(wire_bytes(t)[0]) == 0
    back = t.to_torch()
    assert back.shape == torch.Size([]) and back.dtype == source.dtype
    assert torch.equal(back, source)


def test_0d_torch_tensors_round_trip_through_hurray_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    import hurray.torch as ht  # noqa: PLC0415 - needs torch

    tensors = {"f": torch.tensor(2.5), "h": torch.tensor(-1.0, dtype=torch.bfloat16),
               "b": torch.tensor(True), "c": torch.tensor(1 + 2j, dtype=torch.complex64),
               "i": torch.tensor(-7, dtype=torch.int64)}
    path = tmp_path / "t.hrry"
    ht.save_file(tensors, path)
    for loaded in (ht.load_file(path), ht.load(ht.save(tensors))):
        assert set(loaded) == set(tensors)
        for name, source in tensors.items():
            assert loaded[name].shape == torch.Size([]) and loaded[name].dtype == source.dtype
            assert torch.equal(loaded[name], source)
    with hurray.open(path) as f:
        assert all(f.info(name)["shape"] == () for name in tensors)


# -- files ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["array", "scalar"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_0d_values_round_trip_through_save_and_load(dtype, kind, tmp_path):
    expected = value(dtype, seed=3)
    path = tmp_path / "a.hrry"
    hurray.save(path, {"x": as_input(expected, kind), "t": hurray.from_numpy(expected)})
    loaded = hurray.load(path)
    check(loaded["x"], expected)
    check(loaded["t"], expected)
    with hurray.open(path) as f:
        for name in ("x", "t"):
            info = f.info(name)
            assert info["shape"] == ()
            assert info["dtype"] == dtype
            check(f.get_tensor(name), expected)
            tensor = f.tensor(name)
            check(tensor, expected)
            assert rank_of(tensor._wire()[0]) == 0


def test_a_0d_bfloat16_tensor_round_trips_through_save_and_load(tmp_path):
    path = tmp_path / "b.hrry"
    hurray.save(path, {"h": bf16_tensor()})
    t = hurray.load(path)["h"]
    assert t.shape == () and t.dtype == hurray.bfloat16
    assert wire_bytes(t)[1] == [struct.pack("<H", BF16_BITS)]
    with hurray.open(path) as f:
        assert f.info("h")["shape"] == ()


@pytest.mark.parametrize("kind", ["array", "scalar"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_0d_arrays_round_trip_through_hurray_numpy(dtype, kind, tmp_path):
    expected = value(dtype, seed=4)
    path = tmp_path / "n.hrry"
    hnp.save_file({"x": as_input(expected, kind)}, path)
    check(hnp.load_file(path)["x"], expected)
    check(hnp.load(hnp.save({"x": as_input(expected, kind)}))["x"], expected)


# -- building tensors -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_0d_tensors_are_built_with_shape_0d(dtype):
    expected = value(dtype, seed=5)
    check(hurray.from_numpy(expected), expected)
    check(hurray.asarray(expected), expected)
    check(hurray.asarray(expected[()]), expected)
    check(hurray.asarray(hurray.from_numpy(expected), copy=True), expected)
    if dtype != "bool":  # Tensor(buffer, ...) takes storage bytes; bools are packed
        check(hurray.Tensor(expected, hurray.Dtype.from_name(dtype), ()), expected)
        check(hurray.Tensor(expected[()], hurray.Dtype.from_name(dtype), ()), expected)
    for t in (hurray.from_numpy(expected), hurray.asarray(expected[()])):
        assert rank_of(t._wire()[0]) == 0


def test_python_scalars_and_dtype_conversions_stay_0d():
    check(hurray.asarray(3.5), np.array(3.5))
    check(hurray.asarray(7, dtype=hurray.int16), np.array(7, np.int16))
    check(hurray.asarray(np.float64(2), dtype=hurray.float32), np.array(2, np.float32))
    check(hurray.asarray(True), np.array(True))
    check(hurray.full((), 4, dtype=hurray.int32), np.array(4, np.int32))
    check(hurray.zeros((), dtype=hurray.float16), np.array(0, np.float16))


# -- composites -----------------------------------------------------------------


def zero_d_group():
    members = [np.float32(1.5), np.array(True), np.array(3 - 1j, np.complex128),
               hurray.from_numpy(np.array(9, np.int8)), bf16_tensor(), np.arange(2, dtype=np.uint16)]
    return hurray.Composite("group", (), "float32", members)


GROUP_EXPECTED = [np.array(1.5, np.float32), np.array(True), np.array(3 - 1j, np.complex128), np.array(9, np.int8)]


def check_group(composite):
    assert isinstance(composite, hurray.Composite)
    assert composite.shape == () and composite.ndim == 0
    members = composite.members
    assert [m.shape for m in members] == [(), (), (), (), (), (2,)]
    for m, expected in zip(members, GROUP_EXPECTED):
        check(m, expected)
    assert members[4].dtype == hurray.bfloat16 and wire_bytes(members[4])[1] == [struct.pack("<H", BF16_BITS)]
    np.testing.assert_array_equal(np.asarray(members[5]), np.arange(2, dtype=np.uint16))


def rank0_partition(dtype):
    expected = value(dtype, seed=6)
    return hurray.Composite("partition", (), dtype, [scalar_shard(expected)]), expected


def rank0_overlay(combine_op):
    members = [scalar_shard(np.float32(4), "base"), scalar_shard(np.float32(2.5), "correction")]
    expected = np.array(6.5 if combine_op == "add" else 2.5, np.float32)
    return hurray.Composite("overlay", (), "float32", members, combine_op=combine_op), expected


def test_0d_members_of_a_group_keep_their_shape():
    composite = zero_d_group()
    check_group(composite)
    (back,) = read_all(stream_of(composite))
    check_group(back)
    assert back == composite


def test_0d_members_of_a_group_keep_their_shape_in_files(tmp_path):
    path = tmp_path / "g.hrry"
    hurray.save(path, {"g": zero_d_group()})
    loaded = hurray.load(path)
    assert set(loaded) == {"g"}
    check_group(loaded["g"])
    with hurray.open(path) as f:
        assert f.info("g")["shape"] == ()
        assert [f.info(f"g.{i}")["shape"] for i in range(6)] == [(), (), (), (), (), (2,)]
        check_group(f.tensor("g"))
    # and on to a stream, and back into a file
    (streamed,) = read_all(stream_of(loaded["g"]))
    check_group(streamed)
    hurray.save(tmp_path / "again.hrry", {"g": streamed})
    check_group(hurray.load(tmp_path / "again.hrry")["g"])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_rank0_partition_assembles_to_a_0d_tensor(dtype, tmp_path):
    composite, expected = rank0_partition(dtype)
    check(composite.to_dense(), expected)
    check(np.asarray(composite), expected)
    (streamed,) = read_all(stream_of(composite))
    assert streamed.shape == () and streamed.members[0].shape == ()
    check(streamed.to_dense(), expected)
    path = tmp_path / "p.hrry"
    hurray.save(path, {"p": composite})
    loaded = hurray.load(path)["p"]
    assert loaded.shape == () and loaded.members[0].shape == ()
    check(loaded.to_dense(), expected)
    with hurray.open(path) as f:
        check(f.get_tensor("p"), expected)


@pytest.mark.parametrize("combine_op", ["replace", "add"])
def test_a_rank0_overlay_assembles_to_a_0d_tensor(combine_op, tmp_path):
    composite, expected = rank0_overlay(combine_op)
    check(composite.to_dense(), expected)
    (streamed,) = read_all(stream_of(composite))
    check(streamed.to_dense(), expected)
    assert [m.shape for m in streamed.members] == [(), ()]
    hurray.save(tmp_path / "o.hrry", {"o": composite})
    loaded = hurray.load(tmp_path / "o.hrry")["o"]
    assert loaded.combine_op == combine_op
    check(loaded.to_dense(), expected)


def test_0d_composites_cross_a_stream_file(tmp_path):
    path = tmp_path / "c.hrrs"
    partition, expected = rank0_partition("int32")
    with hurray.StreamWriter(path) as w:
        w.write(zero_d_group())
        w.write(partition)
    group, back = read_all(path)
    check_group(group)
    check(back.to_dense(), expected)


# -- the C++ library: the hurray tool -------------------------------------------


def _run(*args):
    done = subprocess.run([hurray_cli(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _shapes(listing):
    """NAME -> SHAPE column of `hurray ls`."""
    rows = [line.split() for line in listing.splitlines()[1:] if line.strip()]
    return {row[0]: row[2] for row in rows}


ARRAYS = {"f32": np.array(2.5, np.float32), "b": np.array(True), "c64": np.array(1 - 1j, np.complex64),
          "f16": np.array(-0.5, np.float16), "u64": np.array(2**64 - 1, np.uint64)}


def test_the_cpp_tool_reads_a_python_stream_of_0d_tensors_as_rank_0(tmp_path):
    stream = tmp_path / "s.hrrs"
    stream.write_bytes(stream_of(*(a[()] for a in ARRAYS.values()), bf16_tensor()))
    assert "6 tensors" in _run("verify", stream)
    assert set(_shapes(_run("ls", stream)).values()) == {"[]"}
    assert "rank = 0" in _run("inspect", stream)
    # the tool's file from that stream reads back 0-d
    out = tmp_path / "f.hrry"
    _run("convert", stream, out, "--to", "file", "--names", ",".join([*ARRAYS, "h"]))
    loaded = hurray.load(out)
    for name, expected in ARRAYS.items():
        check(loaded[name], expected)
    assert loaded["h"].shape == () and loaded["h"].dtype == hurray.bfloat16


def test_python_stream_bytes_of_0d_tensors_match_the_cpp_writer(tmp_path):
    # The C++ library writes the file (hurray.save) and then the stream (the
    # tool's convert); the Python StreamWriter writes the same tensors.
    path = tmp_path / "f.hrry"
    hurray.save(path, {**ARRAYS, "h": bf16_tensor()}, descriptor_table=False)
    assert set(_shapes(_run("ls", path)).values()) == {"[]"}
    cpp_stream = tmp_path / "cpp.hrrs"
    _run("convert", path, cpp_stream, "--to", "stream")
    python_stream = stream_of(*(a[()] for a in ARRAYS.values()), bf16_tensor())
    assert cpp_stream.read_bytes() == python_stream
    for t in read_all(python_stream):
        assert rank_of(t._wire()[0]) == 0
