# SPDX-License-Identifier: Apache-2.0
"""hurray.StreamReader / StreamWriter / Composite: the streaming format from Python.

What matters beyond a round trip: items arrive one at a time (the first
before the writer has finished), file descriptors are duplicated, the GIL is
released while a reader waits, composites come back with their members, and
each failure has its class (StreamError, InvalidDescriptorError, FileError)
and its byte offset.
"""

import io
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hurray
from hurray import _hurray

from conftest import DTYPES, sample

# The interpreter running the tests (in a venv: the one the package is installed in).
PYTHON = sys.executable
EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"

# Every Tier 1 element type (element-types.md): NumPy's and bfloat16.
TIER1 = DTYPES + ["bfloat16"]
ITEMSIZE = {"bool": None, "bfloat16": 2}


def wire(item):
    """(descriptor bytes, [buffer bytes]) of a tensor read from a stream."""
    descriptor, buffers = item._wire()
    return bytes(descriptor), [bytes(memoryview(b).cast("B")) for b in buffers]


def tensor_of(descriptor, *buffers):
    return hurray.Tensor._from_wire(descriptor, [np.frombuffer(b, np.uint8) if isinstance(b, bytes) else b
                                                 for b in buffers])


def dense(dtype, shape, seed=0):
    """(descriptor, raw bytes) of a dense tensor of any element type."""
    descriptor = _hurray._wire_dense(dtype, list(shape))
    rng = np.random.default_rng(seed)
    if dtype == "bool":  # packed LSB first; the padding bits must be zero
        count = int(np.prod(shape, dtype=np.int64))
        return descriptor, np.packbits(rng.integers(0, 2, count).astype(bool), bitorder="little").tobytes()
    size = _hurray._wire_info(descriptor)["buffer_sizes"][0]
    return descriptor, rng.integers(0, 256, size, dtype=np.uint8).tobytes()


def encoded(count):
    with hurray.StreamWriter() as w:
        for i in range(count):
            w.write(np.full((4,), i, np.float32))
    return w.getvalue()


def child(code, **kwargs):
    """A Python child process (PYTHONPATH inherited) running `code`."""
    return subprocess.Popen([PYTHON, "-c", code], env=dict(os.environ), **kwargs)


# -- round trips ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", TIER1)
def test_every_tier1_dtype_round_trips_in_memory(dtype):
    items = [dense(dtype, shape, seed) for seed, shape in enumerate([(3, 5), (0,), (), (2, 1, 7)])]
    with hurray.StreamWriter() as w:
        for descriptor, data in items:
            w.write(tensor_of(descriptor, data))
    back = list(hurray.StreamReader(w.getvalue()))
    assert [wire(t) for t in back] == [(d, [b]) for d, b in items]
    assert all(isinstance(t, hurray.Tensor) and t.dtype == hurray.Dtype.from_name(dtype) for t in back)
    assert [t.shape for t in back] == [(3, 5), (0,), (), (2, 1, 7)]
    if dtype in DTYPES:  # the values, through NumPy
        arrays = [sample(dtype, shape, seed) for seed, shape in enumerate([(3, 5), (0,), (), (2, 1, 7)])]
        with hurray.StreamWriter() as w:
            for a in arrays:
                w.write(hurray.from_numpy(a))
        for a, t in zip(arrays, hurray.StreamReader(w.getvalue())):
            np.testing.assert_array_equal(np.asarray(t), a)
            assert np.asarray(t).dtype == a.dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_arrays_are_written_as_dense_tensors(dtype):
    array = sample(dtype, (3, 4), seed=3)
    with hurray.StreamWriter() as w:
        w.write(array)
        w.write(np.asfortranarray(array))  # written from a contiguous copy
    a, b = list(hurray.StreamReader(w.getvalue()))
    descriptor, (data,) = wire(a)
    assert descriptor == _hurray._wire_dense(dtype, [3, 4])
    if dtype == "bool":
        expected = np.packbits(array.reshape(-1), bitorder="little").tobytes()
    else:
        expected = array.astype(array.dtype.newbyteorder("<")).tobytes()
    assert data == expected
    assert wire(b) == wire(a)
    np.testing.assert_array_equal(np.asarray(a), array)
    assert a.shape == (3, 4) and a.dtype.name == dtype


def test_big_endian_arrays_are_written_little_endian():
    array = np.arange(5, dtype=">i4")
    with hurray.StreamWriter() as w:
        w.write(array)
    (t,) = hurray.StreamReader(w.getvalue())
    assert wire(t)[1] == [np.arange(5, dtype="<i4").tobytes()]


def test_an_empty_stream_yields_nothing():
    with hurray.StreamWriter() as w:
        pass
    assert w.getvalue() == b""
    assert list(hurray.StreamReader(b"")) == []


def test_reader_yields_one_item_per_next_and_stops():
    reader = hurray.StreamReader(encoded(4))
    assert iter(reader) is reader
    first = next(reader)
    assert wire(first)[1] == [np.zeros(4, np.float32).tobytes()]
    assert len(list(reader)) == 3
    with pytest.raises(StopIteration):
        next(reader)


def test_bytes_sources_are_viewed_in_place():
    data = bytearray(encoded(2))
    reader = hurray.StreamReader(data)
    descriptor, buffers, members = reader._reader.next()
    assert members is None
    (buf,) = buffers
    base = np.frombuffer(data, np.uint8).ctypes.data
    assert base <= buf.ctypes.data < base + len(data)
    assert not buf.flags.writeable
    with pytest.raises(BufferError):
        data.extend(b"x")  # exported: the bytearray cannot move under the view
    del reader, buf, buffers
    data.extend(b"x")


def test_buffers_read_from_a_descriptor_are_owned_and_aligned(tmp_path):
    path = tmp_path / "s.hrrs"
    with hurray.StreamWriter(path) as w:
        w.write(np.arange(3, dtype=np.uint8))
        w.write(np.arange(5, dtype=np.float64))
    with hurray.StreamReader(str(path)) as r:
        items = [r._reader.next() for _ in range(2)]
        assert r._reader.next() is None
    for _, (buf,), _ in items:
        assert buf.flags.writeable and buf.flags.owndata is False
        assert buf.ctypes.data % 64 == 0
    assert items[1][1][0].view(np.float64).tolist() == [0, 1, 2, 3, 4]


def test_a_multi_buffer_csr_tensor_crosses_whole():
    descriptor = _hurray._wire_csr("float32", 3, 3, 2)
    assert _hurray._wire_info(descriptor)["buffer_sizes"] == [8, 16, 32]
    buffers = [np.array([5, 7], np.float32), np.array([0, 2], np.int64), np.array([0, 1, 1, 2], np.int64)]
    with hurray.StreamWriter() as w:
        w.write(hurray.Tensor._from_wire(descriptor, buffers))
        w.write(np.ones(2, np.int8))
    csr, after = list(hurray.StreamReader(w.getvalue()))
    assert wire(csr) == (descriptor, [b.tobytes() for b in buffers])
    assert _hurray._wire_info(wire(csr)[0])["layout"] == "csr"
    assert csr.layout.name == "csr" and csr.buffer_count == 3 and csr.layout.nnz == 2
    assert wire(after)[1] == [b"\x01\x01"]


def test_round_trip_through_a_path(tmp_path):
    path = tmp_path / "tensors.hrrs"
    with hurray.StreamWriter(path) as w:  # os.PathLike
        w.write(np.ones(3, np.float32))
        w.write(np.zeros(2, np.int16))
    assert path.read_bytes()[:4] == b"HRRY"
    assert len(list(hurray.StreamReader(str(path)))) == 2
    assert len(list(hurray.StreamReader(path.read_bytes()))) == 2


# -- transports ----------------------------------------------------------------

PRODUCER = """
import os, socket, sys
import numpy as np
import hurray
dest = {dest}
with hurray.StreamWriter(dest) as w:
    for i in range({count}):
        w.write(np.full(({size},), i, np.int32))
"""


def test_a_pipe_between_two_processes():
    proc = child(PRODUCER.format(dest="sys.stdout", count=20, size=50_000), stdout=subprocess.PIPE)
    try:
        values = [np.frombuffer(wire(t)[1][0], np.int32) for t in hurray.StreamReader(proc.stdout)]
    finally:
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
    assert len(values) == 20
    assert all((v == i).all() and v.size == 50_000 for i, v in enumerate(values))


def test_a_socketpair_between_two_processes():
    ours, theirs = socket.socketpair()
    code = PRODUCER.format(dest="socket.socket(fileno=int(sys.argv[1]))", count=5, size=100_000)
    proc = subprocess.Popen([PYTHON, "-c", code, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                            env=dict(os.environ))
    theirs.close()  # the child holds the only write side: its exit ends the stream
    try:
        with hurray.StreamReader(ours) as reader:
            values = [np.frombuffer(wire(t)[1][0], np.int32) for t in reader]
    finally:
        assert proc.wait(timeout=60) == 0
    assert [int(v[0]) for v in values] == list(range(5))
    os.fstat(ours.fileno())  # the reader closed its duplicate only: ours is still open
    ours.close()


def test_a_socketpair_between_threads():
    producer, consumer = socket.socketpair()

    def produce():
        with hurray.StreamWriter(producer) as w:
            for i in range(6):
                w.write(np.full((300_000,), i, np.float32))  # larger than a socket buffer
        producer.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=produce)
    thread.start()
    got = [float(np.frombuffer(wire(t)[1][0], np.float32)[-1]) for t in hurray.StreamReader(consumer)]
    thread.join(timeout=60)
    assert got == [0, 1, 2, 3, 4, 5]
    producer.close()
    consumer.close()


def test_the_first_tensor_is_readable_before_the_writer_finishes():
    producer, consumer = socket.socketpair()
    first_read = threading.Event()
    writer_state = {}

    def produce():
        with hurray.StreamWriter(producer) as w:
            w.write(np.array([1, 2, 3], np.int64))
            writer_state["waited"] = first_read.wait(timeout=30)
            writer_state["finished_before_first_read"] = w.finished
            w.write(np.array([4], np.int64))
        producer.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=produce)
    thread.start()
    reader = hurray.StreamReader(consumer)
    first = next(reader)  # would block forever if the reader waited for the end
    first_read.set()
    assert np.frombuffer(wire(first)[1][0], np.int64).tolist() == [1, 2, 3]
    assert len(list(reader)) == 1
    thread.join(timeout=30)
    assert writer_state == {"waited": True, "finished_before_first_read": False}
    producer.close()
    consumer.close()


def test_the_callers_descriptor_stays_open():
    mine, theirs = socket.socketpair()
    with hurray.StreamWriter(mine) as w:
        w.write(np.ones(2, np.uint8))
    mine.send(b"still mine")  # would raise if the writer had closed our fd
    mine.shutdown(socket.SHUT_WR)
    reader = hurray.StreamReader(theirs)
    assert wire(next(reader))[1] == [b"\x01\x01"]
    reader.close()
    assert theirs.recv(100) == b"still mine"  # reader closed its duplicate only, and read no further
    mine.close()
    theirs.close()


def test_read_file_objects_and_pipes_by_fileno(tmp_path):
    path = tmp_path / "s.hrrs"
    path.write_bytes(encoded(3))
    with open(path, "rb") as f:
        assert len(list(hurray.StreamReader(f))) == 3
        assert not f.closed
    r, w = os.pipe()
    with os.fdopen(w, "wb") as wf, hurray.StreamWriter(wf) as sw:
        sw.write(np.zeros(1, np.float64))
    with os.fdopen(r, "rb") as rf:
        assert len(list(hurray.StreamReader(rf))) == 1


def test_unsupported_sources_and_destinations_are_type_errors():
    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamReader(io.BytesIO(b""))
    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamWriter(io.BytesIO())
    with pytest.raises(TypeError, match="path, bytes or an object with fileno"):
        hurray.StreamReader(12.5)
    with pytest.raises(TypeError):
        hurray.StreamWriter(object())
    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamReader(io.StringIO("x"))
    sock, other = socket.socketpair()
    sock.settimeout(1.0)
    with pytest.raises(ValueError, match="settimeout"):
        hurray.StreamReader(sock)
    sock.close()
    other.close()
    with pytest.raises(TypeError, match="expected a hurray.Tensor"):
        hurray.StreamWriter().write([1, 2, 3])


def test_the_gil_is_released_while_a_reader_waits():
    r, w = os.pipe()
    reader = hurray.StreamReader(os.fdopen(r, "rb"))
    ticks = []
    stop = threading.Event()
    result = {}

    def read():
        result["items"] = list(reader)

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t_read = threading.Thread(target=read)
    t_tick = threading.Thread(target=tick)
    t_read.start()
    t_tick.start()
    time.sleep(0.3)  # the reader blocks on an empty pipe all this time
    blocked_ticks = len(ticks)
    with os.fdopen(w, "wb") as wf:
        wf.write(encoded(2))
    t_read.join(timeout=30)
    stop.set()
    t_tick.join()
    assert blocked_ticks > 50
    assert len(result["items"]) == 2


def test_path_errors_are_file_errors(tmp_path):
    with pytest.raises(hurray.FileError, match="No such file"):
        hurray.StreamReader(tmp_path / "missing.hrrs")
    with pytest.raises(hurray.FileError):
        hurray.StreamWriter(tmp_path / "no" / "such" / "dir.hrrs")


def test_a_closed_peer_is_a_file_error():
    r, w = os.pipe()
    os.close(r)
    writer = hurray.StreamWriter(os.fdopen(w, "wb"))
    with pytest.raises(hurray.FileError, match="pipe") as exc:
        writer.write(np.ones(10, np.float32))
    assert exc.value.code == "io_error"


# -- writer lifecycle ----------------------------------------------------------


def test_finish_is_idempotent_and_writing_after_it_is_a_stream_error():
    w = hurray.StreamWriter()
    w.write(np.ones(1, np.int8))
    w.finish()
    w.finish()
    assert w.finished
    with pytest.raises(hurray.StreamError, match="finish"):
        w.write(np.ones(1, np.int8))
    assert len(list(hurray.StreamReader(w.getvalue()))) == 1


def test_the_context_manager_finishes_and_keeps_exceptions():
    with hurray.StreamWriter() as w:
        w.write(np.ones(1, np.int8))
    with pytest.raises(hurray.StreamError):
        w.write(np.ones(1, np.int8))
    with pytest.raises(ValueError, match="boom"):
        with hurray.StreamWriter() as w2:
            w2.write(np.ones(1, np.int8))
            raise ValueError("boom")
    assert w2.finished


def test_getvalue_needs_a_writer_without_destination(tmp_path):
    with hurray.StreamWriter(tmp_path / "s.hrrs") as w:
        w.write(np.ones(1, np.int8))
    with pytest.raises(hurray.StreamError, match="destination"):
        w.getvalue()
    mem = hurray.StreamWriter()
    mem.write(np.ones(1, np.int8))
    assert len(mem.getvalue()) == mem.offset > 0  # readable before finish too
    assert len(list(hurray.StreamReader(mem.getvalue()))) == 1


def test_buffers_must_match_the_descriptor():
    descriptor = _hurray._wire_dense("float32", [4])
    w = hurray.StreamWriter()
    with pytest.raises(hurray.BufferError, match="0 buffers given"):
        w._writer.write(descriptor, [])
    with pytest.raises(hurray.BufferError, match="size_mismatch"):
        w._writer.write(descriptor, [b"\x00" * 15])
    with pytest.raises(hurray.InvalidDescriptorError):
        w._writer.write(descriptor[:13] + bytes([descriptor[13] | 0x80]) + descriptor[14:], [b"\x00" * 16])
    with pytest.raises(hurray.UnsupportedError, match="version_major"):
        w._writer.write(b"HRRY" + b"\x00" * 40, [])
    w.write(hurray.Tensor._from_wire(descriptor, [np.zeros(4, np.float32)]))  # still usable
    w.finish()
    assert len(list(hurray.StreamReader(w.getvalue()))) == 1


# -- reading errors ------------------------------------------------------------


def test_a_cut_inside_a_frame_is_a_stream_error():
    data = encoded(2)
    with pytest.raises(hurray.StreamError, match="truncated") as exc:
        list(hurray.StreamReader(data[:-10]))
    assert exc.value.offset == len(data) - 10
    assert f"byte {len(data) - 10}" in str(exc.value)
    with pytest.raises(hurray.StreamError):
        list(hurray.StreamReader(data[:5]))  # inside the first descriptor's prefix


def test_a_cut_on_a_frame_boundary_is_a_shorter_stream():
    one, two = encoded(1), encoded(2)
    assert two[: len(one)] == one
    assert len(list(hurray.StreamReader(two[: len(one)]))) == 1


def test_garbage_is_not_a_hurray_stream():
    with pytest.raises(hurray.StreamError, match="not a Hurray stream") as exc:
        list(hurray.StreamReader(b"not a hurray stream at all, not even close"))
    assert exc.value.offset == 0
    # Garbage after a good tensor: the first one still arrives.
    reader = hurray.StreamReader(encoded(1) + b"PK\x03\x04 zip file")
    next(reader)
    with pytest.raises(hurray.StreamError):
        next(reader)
    assert list(reader) == []  # reported once, then exhausted


def test_a_descriptor_that_does_not_validate_is_an_invalid_descriptor_error():
    data = bytearray(encoded(1))
    data[13] |= 0x80  # a reserved bit of the flags field
    with pytest.raises(hurray.InvalidDescriptorError) as exc:
        list(hurray.StreamReader(bytes(data)))
    assert not isinstance(exc.value, hurray.StreamError)
    assert exc.value.code == "reserved_flag_bits" and exc.value.offset is not None


def test_a_tensor_over_max_tensor_bytes_is_refused(tmp_path):
    path = tmp_path / "big.hrrs"
    with hurray.StreamWriter(path) as w:
        w.write(np.zeros(1000, np.uint8))
        w.write(np.zeros(10, np.uint8))
    with pytest.raises(hurray.StreamError, match="max_tensor_bytes"):
        list(hurray.StreamReader(path, max_tensor_bytes=999))
    assert len(list(hurray.StreamReader(path, max_tensor_bytes=1000))) == 2


def test_a_closed_reader_is_exhausted():
    reader = hurray.StreamReader(encoded(2))
    reader.close()
    assert reader.closed
    assert list(reader) == []
    with hurray.StreamReader(encoded(2)) as r:
        next(r)
    assert r.closed and list(r) == []


# -- composites ----------------------------------------------------------------


def partition_members():
    """Two [2, 4] float32 shards tiling a [4, 4] head."""
    m0 = _hurray._wire_dense("float32", [2, 4], [4, 4], [0, 0])
    m1 = _hurray._wire_dense("float32", [2, 4], [4, 4], [2, 0])
    return [tensor_of(m0, np.zeros(8, np.float32)), tensor_of(m1, np.arange(8, dtype=np.float32))]


def test_a_composite_is_read_with_its_members():
    tiles = partition_members()
    part = hurray.Composite("partition", [4, 4], "float32", tiles)
    assert part.member_count == 2 and len(part) == 2 and part.shape == (4, 4)
    assert part.composition_rule == "partition" and part.combine_op is None
    assert part.layout.composition_rule == "partition" and part.layout.member_count == 2
    with hurray.StreamWriter() as w:
        w.write(np.ones(2, np.int8))
        w.write(part)
        w.write(np.ones(3, np.int8))
    before, back, after = list(hurray.StreamReader(w.getvalue()))
    assert isinstance(back, hurray.Composite)
    assert back == part
    assert [wire(m) for m in back.members] == [wire(m) for m in tiles]
    assert [wire(m) for m in back] == [wire(m) for m in tiles]
    assert wire(before)[1] == [b"\x01\x01"] and wire(after)[1] == [b"\x01\x01\x01"]
    assert "partition" in repr(back)


def test_nested_composites_are_assembled_recursively():
    inner = hurray.Composite("partition", [4, 4], "float32", partition_members())
    loose = tensor_of(*dense("int16", [3]))
    outer = hurray.Composite("group", [2], "float32", [loose, inner])
    with hurray.StreamWriter() as w:
        w.write(outer)
    (back,) = list(hurray.StreamReader(w.getvalue()))
    assert back == outer
    assert isinstance(back.members[1], hurray.Composite)
    assert back.members[1].members[1] is not None
    assert wire(back.members[0]) == wire(loose)
    assert "group" in repr(back) and repr(back).count("Composite(") == 2


def test_a_composite_from_the_conformance_head(conformance_dir):
    head = (conformance_dir / "descriptors" / "composite_head_partition.bin").read_bytes()
    info = _hurray._wire_info(head)
    assert info["composition_rule"] == "partition" and info["member_count"] == 2 and info["shape"] == (8, 8)
    members = [
        (_hurray._wire_dense("float32", [8, 4], [8, 8], [0, 0]), [np.zeros(32, np.float32)]),
        (_hurray._wire_dense("float32", [8, 4], [8, 8], [0, 4]), [np.ones(32, np.float32)]),
    ]
    w = _hurray._StreamWriter.to_memory()
    w.write_composite(head, members)
    (back,) = list(hurray.StreamReader(w.getvalue()))
    assert back.descriptor == head
    assert [wire(m)[1] for m in back.members] == [[b.tobytes()] for _, (b,) in members]


def test_composite_rules_are_checked_by_the_core():
    m0, m1 = partition_members()
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("partition", [4, 4], "float32", [m0])  # does not cover the head
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("partition", [4, 4], "float32", [m0, m0])  # overlap
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("partition", [4, 4], "float64", [m0, m1])  # type differs
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.Composite("mosaic", [4, 4], "float32", [m0, m1])
    with pytest.raises(TypeError, match="composite members"):
        hurray.Composite("group", [2], "float32", [object()])
    group = hurray.Composite("group", [2], "float32", [np.ones(2, np.float16), np.arange(3)])  # numpy: dense
    assert group.members[0].dtype == np.float16


def test_a_torn_composite_is_a_stream_error():
    head = _hurray._wire_composite_head("float32", [2], "group", 3)
    w = _hurray._StreamWriter.to_memory()
    w.write(head, [])  # a head, then fewer members than it declares
    descriptor, data = dense("int8", [2])
    w.write(descriptor, [data])
    with pytest.raises(hurray.StreamError, match="composite"):
        w.finish()
    data = w.getvalue()
    with pytest.raises(hurray.StreamError, match="composite"):
        list(hurray.StreamReader(data))


def test_composites_cross_a_pipe_between_processes():
    code = """
import sys
import numpy as np
from hurray import _hurray as H
m = [H._wire_dense("float32", [2, 4], [4, 4], [r, 0]) for r in (0, 2)]
w = H._StreamWriter.to_fd(sys.stdout.fileno())
w.write_composite(H._wire_composite_head("float32", [4, 4], "partition", 2),
                  [(d, [np.full(8, i, np.float32)]) for i, d in enumerate(m)])
w.write(H._wire_dense("uint8", [1]), [b"\\x07"])
w.finish()
"""
    proc = child(code, stdout=subprocess.PIPE)
    try:
        items = list(hurray.StreamReader(proc.stdout))
    finally:
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
    comp, last = items
    assert isinstance(comp, hurray.Composite) and comp.shape == (4, 4)
    assert [np.frombuffer(wire(m)[1][0], np.float32)[0] for m in comp.members] == [0, 1]
    assert wire(last)[1] == [b"\x07"]


# -- examples ------------------------------------------------------------------


def test_producer_consumer_examples_through_a_real_pipe():
    producer = [PYTHON, str(EXAMPLES / "stream_producer.py")]
    consumer = [PYTHON, str(EXAMPLES / "stream_consumer.py")]
    p1 = subprocess.Popen(producer, stdout=subprocess.PIPE, env=dict(os.environ))
    p2 = subprocess.Popen(consumer, stdin=p1.stdout, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    p1.stdout.close()  # the consumer holds the only read side
    out, _ = p2.communicate(timeout=60)
    assert p1.wait(timeout=60) == 0 and p2.returncode == 0
    lines = out.splitlines()
    assert lines[0].startswith("0: Tensor")
    assert lines[-1] == "4 items, 1 composite"


def test_data_that_does_not_match_its_descriptor_names_the_item_and_the_stream_goes_on():
    descriptor = _hurray._wire_dense("bool", [3])
    w = _hurray._StreamWriter.to_memory()
    w.write(descriptor, [b"\xff"])  # padding bits set: the framing is fine, the data is not
    w.write(_hurray._wire_dense("uint8", [1]), [b"\x05"])
    reader = hurray.StreamReader(w.getvalue())
    with pytest.raises(hurray.InvalidDescriptorError, match=r"stream <bytes>: item 0 \(ending at byte \d+\)"):
        next(reader)
    assert wire(next(reader))[1] == [b"\x05"]


def test_close_from_another_thread_waits_for_the_read_in_progress():
    r, w = os.pipe()
    reader = hurray.StreamReader(os.fdopen(r, "rb"))
    got = {}
    thread = threading.Thread(target=lambda: got.setdefault("item", next(reader, None)))
    thread.start()
    time.sleep(0.2)  # blocked on the empty pipe, GIL released
    reader.close()  # deferred: the blocked call owns the transport until it returns
    with os.fdopen(w, "wb") as wf:
        wf.write(encoded(2))
    thread.join(timeout=30)
    assert got["item"] is not None
    assert reader.closed and list(reader) == []


def test_a_second_thread_cannot_write_while_one_is_blocked():
    producer, consumer = socket.socketpair()
    writer = hurray.StreamWriter(producer)
    big = np.zeros(8 << 20, np.uint8)  # far more than the socket buffers: the write blocks
    thread = threading.Thread(target=writer.write, args=(big,))
    thread.start()
    time.sleep(0.2)
    with pytest.raises(RuntimeError, match="another thread"):
        writer.write(np.ones(1, np.uint8))
    reader = hurray.StreamReader(consumer)
    assert wire(next(reader))[1][0] == big.tobytes()
    thread.join(timeout=30)
    writer.finish()
    producer.shutdown(socket.SHUT_WR)
    assert list(reader) == []
    producer.close()
    consumer.close()


def test_file_objects_are_read_from_their_position_and_flushed_before_writing(tmp_path):
    path = tmp_path / "s.hrrs"
    with open(path, "wb") as f:
        f.write(b"preamble")  # buffered in the file object, not yet in the file
        with hurray.StreamWriter(f) as w:
            w.write(np.arange(3, dtype=np.uint8))
    assert path.read_bytes().startswith(b"preambleHRRY")
    with open(path, "rb") as f:
        assert f.read(8) == b"preamble"  # the object read ahead of this (its whole buffer)
        (t,) = hurray.StreamReader(f)
    assert wire(t)[1] == [b"\x00\x01\x02"]
    with pytest.raises(TypeError, match="C-contiguous"):
        hurray.StreamReader(memoryview(encoded(1))[::2])


@pytest.mark.parametrize("side", ["reader", "writer"])
def test_ctrl_c_interrupts_a_blocked_stream(side):
    import signal

    if side == "reader":  # waits on an empty pipe
        code = ("import sys, hurray\nr = hurray.StreamReader(sys.stdin.buffer)\nprint('ready', flush=True)\n"
                "next(r, None)\nprint('not interrupted', flush=True)\n")
    else:  # waits on a full pipe nobody reads
        code = ("import sys, numpy as np, hurray\nw = hurray.StreamWriter(sys.stdin.buffer)\n"
                "print('ready', flush=True)\nw.write(np.zeros(64 << 20, np.uint8))\nprint('not interrupted', flush=True)\n")
    r, w = os.pipe()
    proc = child(code, stdin=r if side == "reader" else w, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(0.3)  # blocked in read(2) / write(2) by now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(r)
        os.close(w)
    assert "KeyboardInterrupt" in err and "not interrupted" not in out
    assert proc.returncode != 0


def test_an_overlay_composite_crosses_with_its_combine_op():
    base = _hurray._wire_dense("float32", [4, 4], [4, 4], [0, 0], member_role="base")
    fix = _hurray._wire_dense("float32", [1, 2], [4, 4], [3, 2], member_role="correction")
    members = [tensor_of(base, np.zeros(16, np.float32)), tensor_of(fix, np.ones(2, np.float32))]
    overlay = hurray.Composite("overlay", [4, 4], hurray.float32, members, combine_op="add")
    assert overlay.combine_op == "add" and overlay.layout.combine_op == "add"
    assert overlay.dtype == hurray.float32
    with hurray.StreamWriter() as w:
        w.write(overlay)
    (back,) = hurray.StreamReader(w.getvalue())
    assert back == overlay and back.combine_op == "add" and back.composition_rule == "overlay"
    np.testing.assert_array_equal(np.asarray(back.members[1]), np.ones((1, 2), np.float32))
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("overlay", [4, 4], "float32", members[::-1], combine_op="add")  # the base comes first


def test_a_composite_layout_is_a_virtual_hurray_layout():
    group = hurray.Composite("group", [2], "int8", [np.ones(2, np.int8)])
    layout = group.layout
    assert layout.name == "composite" and layout.is_virtual and layout.buffer_count == 0
    assert (layout.composition_rule, layout.member_count, layout.combine_op) == ("group", 1, None)
    assert layout == hurray.Composite("group", [3], "int8", [np.ones(2, np.int8)]).layout


@pytest.mark.parametrize("transport", ["bytes", "path"])
def test_mutated_streams_raise_hurray_errors_only(transport, tmp_path):
    w = _hurray._StreamWriter.to_memory()
    tiles = [_hurray._wire_dense("float32", [2, 4], [4, 4], [r, 0]) for r in (0, 2)]
    w.write_composite(_hurray._wire_composite_head("float32", [4, 4], "partition", 2),
                      [(d, [np.full(8, i, np.float32)]) for i, d in enumerate(tiles)])
    w.write(_hurray._wire_csr("float32", 3, 3, 2),
            [np.array([5, 7], np.float32), np.array([0, 2], np.int64), np.array([0, 1, 1, 2], np.int64)])
    w.write(_hurray._wire_dense("bool", [5]), [b"\x15"])
    w.finish()
    base = w.getvalue()
    rng = np.random.default_rng(13)
    path = tmp_path / "m.hrrs"
    outcomes = set()
    for _ in range(400):
        data = bytearray(base)
        for _ in range(int(rng.integers(1, 4))):
            if not data:
                break
            at = int(rng.integers(0, len(data)))
            op = int(rng.integers(0, 3))
            if op == 0:
                data[at] = int(rng.integers(0, 256))
            elif op == 1:
                del data[at:]
            else:
                data[at] ^= 1 << int(rng.integers(0, 8))
        if transport == "path":
            path.write_bytes(data)
        try:
            list(hurray.StreamReader(path if transport == "path" else bytes(data)))
            outcomes.add("ok")
        except hurray.HurrayError as exc:
            assert exc.code is not None
            outcomes.add(type(exc).__name__)
    assert {"StreamError", "InvalidDescriptorError"} <= outcomes


def test_large_buffers_reuse_memory_only_when_nothing_holds_it(tmp_path):
    path = tmp_path / "big.hrrs"
    with hurray.StreamWriter(path) as w:
        for i in range(6):
            w.write(np.full(1 << 18, i, np.float32))  # 1 MiB each
    held = list(hurray.StreamReader(path))  # every item kept: each has its own memory
    assert [float(np.asarray(t)[-1]) for t in held] == [0, 1, 2, 3, 4, 5]
    assert len({t.buffer(0).ctypes.data for t in held}) == 6
    addresses = []
    for t in hurray.StreamReader(path):  # each dropped before the next: one block, read into again
        a = np.asarray(t)
        assert (a == a[0]).all()
        addresses.append(a.ctypes.data)
        del t, a
    assert len(set(addresses)) == 1
    view = None
    reader = hurray.StreamReader(path)
    for i, t in enumerate(reader):  # a view of the first outlives it: the block is not reused
        if view is None:
            view = np.asarray(t)[:4]
        del t
    assert view.tolist() == [0, 0, 0, 0]
