# SPDX-License-Identifier: Apache-2.0
"""hurray.Composite in HRRYFILE files: hurray.save writes composites (head,
then members, each an index entry), hurray.load / File.tensor read them back as
hurray.Composite, round trips with streams keep them, and the safetensors-style
readers keep handing out arrays."""

import os
import subprocess

import numpy as np
import pytest

import hurray
import hurray.numpy as hnp
from hurray import _hurray

from conftest import hurray_cli, sample
from hurray._composite import _wire_of_tensor


# -- building blocks ------------------------------------------------------------


def shard(array, parent, offset, role=None):
    """A dense hurray.Tensor of `array` placed at `offset` inside `parent`."""
    array = np.ascontiguousarray(array)
    descriptor = _hurray._wire_dense(array.dtype.name, list(array.shape), list(parent), list(offset),
                                     member_role=role)
    data = (np.packbits(array.reshape(-1), bitorder="little") if array.dtype == bool
            else array.reshape(-1).view(np.uint8))
    return hurray.Tensor._from_wire(descriptor, [data])


def row_partition(full, rows):
    """A partition of `full` (2-D) into horizontal bands of `rows` rows."""
    members = [shard(full[r:r + rows], full.shape, (r, 0)) for r in range(0, full.shape[0], rows)]
    return hurray.Composite("partition", full.shape, full.dtype.name, members)


def overlay(base, fixes, combine_op):
    """An overlay of `base` with corrections `fixes`: [(array, offset)]."""
    members = [shard(base, base.shape, (0,) * base.ndim, role="base")]
    members += [shard(a, base.shape, off, role="correction") for a, off in fixes]
    return hurray.Composite("overlay", base.shape, base.dtype.name, members, combine_op=combine_op)


def wire(item):
    """Everything a composite or tensor is on the wire: descriptors and bytes, pre-order."""
    if isinstance(item, hurray.Composite):
        return [item.descriptor] + [w for m in item.members for w in wire(m)]
    descriptor, buffers = _wire_of_tensor(item)  # a hurray.Tensor, or a numpy array given as a member
    return [(bytes(descriptor), [bytes(memoryview(b).cast("B")) for b in buffers])]


def stream_of(items):
    with hurray.StreamWriter() as w:
        for item in items:
            w.write(item)
    return w.getvalue()


FULL = np.arange(48, dtype=np.float32).reshape(6, 8)


def every_rule():
    """One composite per composition rule (overlay with both combine ops)."""
    base = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    fixes = [(np.full((1, 2), 5, np.float32), (3, 2)), (np.ones((2, 1), np.float32), (0, 0))]
    return {
        "partition": row_partition(FULL, 2),
        "overlay_replace": overlay(base, fixes, "replace"),
        "overlay_add": overlay(base, fixes, "add"),
        "group": hurray.Composite("group", [3], "float32",
                                  [np.arange(3, dtype=np.int64), np.ones((2, 2), np.float16),
                                   hurray.asarray(np.array([True, False, True]))]),
    }


# -- save and load --------------------------------------------------------------


@pytest.mark.parametrize("rule", ["partition", "overlay_replace", "overlay_add", "group"])
def test_each_rule_round_trips_through_a_file(rule, tmp_path):
    composite = every_rule()[rule]
    path = tmp_path / "c.hrry"
    hurray.save(path, {"before": np.arange(4, dtype=np.int16), "c": composite, "after": np.ones(2)},
                kv={"rule": rule, "epoch": 3})
    loaded = hurray.load(path)
    assert list(loaded) == ["before", "c", "after"]  # members are reached through the composite
    back = loaded["c"]
    assert isinstance(back, hurray.Composite)
    assert back == composite and wire(back) == wire(composite)
    assert back.composition_rule == composite.composition_rule and back.combine_op == composite.combine_op
    assert back.shape == composite.shape and back.dtype == composite.dtype
    assert all(isinstance(m, hurray.Tensor) for m in back.members)
    with hurray.open(path) as f:
        assert f.metadata() == {"rule": rule, "epoch": 3}
        names = [f"c.{i}" for i in range(len(composite.members))]
        assert f.keys() == ["before", "c", *names, "after"]  # every member has its own index entry
        assert f.info("c")["layout"] == "composite" and f.info("c")["nbytes"] == 0
        assert f._member_names("c") == names and f._member_names("before") is None
        assert f.tensor("c") == composite
        for name, member in zip(names, composite.members):
            assert wire(f.tensor(name)) == wire(member)


def test_loaded_members_view_the_mapping_and_outlive_the_handle(tmp_path):
    path = tmp_path / "p.hrry"
    hurray.save(path, {"p": row_partition(FULL, 3)})
    with hurray.open(path) as f:
        part = f.tensor("p")
        lo, hi = f._data_range("p.1")
    data = np.asarray(part.members[1])
    assert data.__array_interface__["data"][0] == lo and data.nbytes == hi  # zero-copy
    np.testing.assert_array_equal(data, FULL[3:])
    np.testing.assert_array_equal(np.asarray(part), FULL)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float16", "float64", "complex64"])
def test_partitions_of_many_element_types_assemble(dtype, tmp_path):
    full = sample(dtype, (4, 6), seed=3)
    part = row_partition(full, 1)
    hurray.save(tmp_path / "t.hrry", {"p": part})
    back = hurray.load(tmp_path / "t.hrry")["p"]
    assert back == part
    dense = back.to_dense()
    assert isinstance(dense, hurray.Tensor) and dense.shape == (4, 6) and dense.layout.name == "row_major"
    np.testing.assert_array_equal(np.asarray(dense), full)
    np.testing.assert_array_equal(np.asarray(back), full)
    with hurray.open(tmp_path / "t.hrry") as f:
        np.testing.assert_array_equal(f.get_tensor("p"), full)  # the C++ reader assembles the same


def test_overlay_merged_views():
    c = every_rule()
    base = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    replaced = base.copy()
    replaced[3, 2:4] = 5
    replaced[0:2, 0] = 1
    added = base.copy()
    added[3, 2:4] += 5
    added[0:2, 0] += 1
    np.testing.assert_array_equal(np.asarray(c["overlay_replace"]), replaced)
    np.testing.assert_array_equal(np.asarray(c["overlay_add"]), added)
    assert np.asarray(c["overlay_add"], dtype=np.float64).dtype == np.float64


def test_groups_and_nested_composites_have_no_merged_view():
    inner = row_partition(FULL, 3)
    outer = hurray.Composite("group", [2], "float32", [np.zeros(2, np.float32), inner])
    with pytest.raises(hurray.UnsupportedError, match="partition and overlay"):
        every_rule()["group"].to_dense()
    with pytest.raises(hurray.UnsupportedError, match="partition and overlay"):
        outer.to_dense()
    with pytest.raises(hurray.UnsupportedError):
        np.asarray(outer)


def test_nested_composites_round_trip_with_their_names(tmp_path):
    inner = row_partition(FULL, 2)
    fix = overlay(np.zeros((2, 2), np.float32), [(np.ones((1, 1), np.float32), (1, 1))], "add")
    outer = hurray.Composite("group", [3], "float32", [np.arange(5, dtype=np.uint8), inner, fix])
    path = tmp_path / "n.hrry"
    hurray.save(path, {"tree": outer, "plain": FULL})
    with hurray.open(path) as f:
        assert f.keys() == ["tree", "tree.0", "tree.1", "tree.1.0", "tree.1.1", "tree.1.2",
                            "tree.2", "tree.2.0", "tree.2.1", "plain"]
        assert isinstance(f.tensor("tree.1"), hurray.Composite)  # a nested head on its own
        assert f.tensor("tree.1") == inner
    loaded = hurray.load(path)
    assert list(loaded) == ["tree", "plain"]
    back = loaded["tree"]
    assert back == outer and isinstance(back.members[1], hurray.Composite)
    np.testing.assert_array_equal(np.asarray(back.members[1]), FULL)
    assert repr(back).count("Composite(") == 3
    # Only what was asked for, members included.
    some = hurray.load(path, names=["tree.2", "tree.1.1"])
    assert some["tree.2"] == fix and wire(some["tree.1.1"]) == wire(inner.members[1])


def test_save_load_save_is_byte_identical(tmp_path):
    items = dict(every_rule())
    items["nested"] = hurray.Composite("group", [1], "float32", [row_partition(FULL, 3)])
    items["dense"] = np.arange(10, dtype=np.int32)
    kv = {"k": "v", "n": 7}
    hurray.save(tmp_path / "a.hrry", items, kv=kv)
    hurray.save(tmp_path / "b.hrry", hurray.load(tmp_path / "a.hrry"), kv=kv)
    assert (tmp_path / "a.hrry").read_bytes() == (tmp_path / "b.hrry").read_bytes()
    # save_bytes (safetensors' save) takes composites too.
    assert hnp.save(items, metadata={"k": "v"})[:8] == (tmp_path / "a.hrry").read_bytes()[:8]


def test_member_names_read_from_a_file_are_kept_only_under_the_same_head_name(tmp_path):
    hurray.save(tmp_path / "a.hrry", {"p": row_partition(FULL, 3)})
    part = hurray.load(tmp_path / "a.hrry")["p"]
    hurray.save(tmp_path / "b.hrry", {"q": part, "p": part.members[0]})
    with hurray.open(tmp_path / "b.hrry") as f:
        assert f.keys() == ["q", "q.0", "q.1", "p"]
        assert f.tensor("q") == part


# -- streams --------------------------------------------------------------------


def test_stream_to_file_to_stream_keeps_composites(tmp_path):
    rules = every_rule()
    items = [np.arange(3, dtype=np.int8), rules["partition"], rules["overlay_add"],
             hurray.Composite("group", [2], "float32", [rules["overlay_replace"], np.ones(1, np.float64)]),
             rules["group"]]
    first = stream_of(items)
    read = list(hurray.StreamReader(first))
    names = [f"item{i}" for i in range(len(read))]
    hurray.save(tmp_path / "s.hrry", dict(zip(names, read)))
    loaded = hurray.load(tmp_path / "s.hrry")
    assert list(loaded) == names
    assert stream_of(loaded.values()) == first
    for a, b in zip(read, loaded.values()):
        assert type(a) is type(b) and wire(a) == wire(b)


def test_file_to_stream_to_file_keeps_composites(tmp_path):
    items = {"w": FULL, **every_rule(), "tail": np.ones(3, np.uint32)}
    hurray.save(tmp_path / "a.hrry", items)
    loaded = hurray.load(tmp_path / "a.hrry")
    streamed = list(hurray.StreamReader(stream_of(loaded.values())))
    assert [type(x).__name__ for x in streamed] == ["Tensor", "Composite", "Composite", "Composite", "Composite",
                                                    "Tensor"]
    hurray.save(tmp_path / "b.hrry", dict(zip(loaded, streamed)))
    assert (tmp_path / "a.hrry").read_bytes() == (tmp_path / "b.hrry").read_bytes()


# -- safetensors-style readers --------------------------------------------------


def test_array_readers_assemble_composites_and_skip_heads_without_a_view(tmp_path):
    rules = every_rule()
    path = tmp_path / "c.hrry"
    hurray.save(path, {"x": np.ones(2), **rules})
    arrays = hnp.load_file(path)
    assert "group" not in arrays  # no merged view: its data is in its members
    assert {"group.0", "group.1", "group.2", "partition", "partition.0", "overlay_add"} <= set(arrays)
    np.testing.assert_array_equal(arrays["partition"], FULL)
    np.testing.assert_array_equal(arrays["group.1"], np.ones((2, 2), np.float16))
    np.testing.assert_array_equal(arrays["overlay_add"], np.asarray(rules["overlay_add"]))
    from_bytes = hnp.load(path.read_bytes())
    assert from_bytes.keys() == arrays.keys()
    with hurray.safe_open(path, framework="np") as f:
        np.testing.assert_array_equal(f.get_tensor("partition"), FULL)
        assert "group" in f.keys()  # the index lists it; its array does not exist
        with pytest.raises(hurray.UnsupportedError):
            f.get_tensor("group")


def test_torch_load_file_assembles_composites(tmp_path):
    torch = pytest.importorskip("torch")
    import hurray.torch as ht

    hurray.save(tmp_path / "c.hrry", every_rule())
    loaded = ht.load_file(tmp_path / "c.hrry")
    assert "group" not in loaded and "group.0" in loaded
    assert torch.equal(loaded["partition"], torch.from_numpy(FULL))


# -- errors ---------------------------------------------------------------------


def test_a_member_name_that_is_taken_is_refused_and_nothing_is_written(tmp_path):
    path = tmp_path / "x.hrry"
    path.write_bytes(b"old")
    with pytest.raises(hurray.InvalidArgumentError, match="p.1"):
        hurray.save(path, {"p": row_partition(FULL, 3), "p.1": np.ones(2)})
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.save(path, {"p.0": np.ones(2), "p": row_partition(FULL, 3)})
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.save(path, {"": row_partition(FULL, 3)})  # names are 1 .. 65,535 bytes
    with pytest.raises(TypeError):
        hurray.save(path, {1: row_partition(FULL, 3)})
    assert path.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["x.hrry"]


def test_a_composite_whose_members_break_its_rule_is_refused(tmp_path):
    good = row_partition(FULL, 3)
    # Built around the constructor's check: a partition missing a band.
    torn = hurray.Composite._from_wire(good.descriptor, good.members[:1] + good.members[:1])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.save(tmp_path / "x.hrry", {"p": torn})
    short = hurray.Composite._from_wire(good.descriptor, good.members[:1])
    with pytest.raises(hurray.HurrayError):
        hurray.save(tmp_path / "x.hrry", {"p": short})
    with pytest.raises(hurray.HurrayError):
        short.to_dense()
    junk = hurray.Composite._from_wire(good.descriptor, [object(), object()])
    with pytest.raises(TypeError):
        hurray.save(tmp_path / "x.hrry", {"p": junk})
    assert not (tmp_path / "x.hrry").exists()
    head = hurray.Tensor._from_wire(good.descriptor, [])
    with pytest.raises(hurray.UnsupportedError, match="hurray.Composite"):
        hurray.save(tmp_path / "x.hrry", {"p": head})


def test_mutated_composite_files_raise_hurray_errors_only(tmp_path):
    items = {"a": np.arange(4, dtype=np.int32), **every_rule(),
             "nested": hurray.Composite("group", [1], "float32", [row_partition(FULL, 3)])}
    hurray.save(tmp_path / "c.hrry", items)
    base = (tmp_path / "c.hrry").read_bytes()
    rng = np.random.default_rng(36)
    for _ in range(300):
        data = bytearray(base)
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        try:
            f = _hurray.open_bytes(bytes(data))
        except hurray.HurrayError:
            continue
        with f:
            for name in f.keys():
                for read in (f.tensor, f.get_tensor, f._member_names):
                    try:
                        item = read(name)
                    except (hurray.HurrayError, KeyError):
                        continue
                    if isinstance(item, hurray.Composite):
                        try:
                            item.to_dense()
                        except hurray.HurrayError:
                            pass


# -- the C++ tool ---------------------------------------------------------------


def _run(*args):
    return subprocess.run([hurray_cli(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def test_the_cpp_tool_verifies_python_written_composites(tmp_path):
    path = tmp_path / "c.hrry"
    hurray.save(path, {**every_rule(), "nested": hurray.Composite("group", [1], "float32", [row_partition(FULL, 3)])})
    done = _run("verify", path)
    assert done.returncode == 0, done.stderr
    assert "6 composites" in done.stdout


def test_a_stream_converted_by_the_cpp_tool_reads_back_as_composites(tmp_path):
    rules = every_rule()
    items = [np.arange(3, dtype=np.int8), rules["partition"], rules["overlay_add"], rules["group"]]
    (tmp_path / "in.hrrs").write_bytes(stream_of(items))
    done = _run("convert", tmp_path / "in.hrrs", tmp_path / "out.hrry", "--to", "file")
    assert done.returncode == 0, done.stderr
    loaded = hurray.load(tmp_path / "out.hrry")
    # The tool numbers every tensor: the partition's 3 members are tensor_2 .. tensor_4.
    assert list(loaded) == ["tensor_0", "tensor_1", "tensor_5", "tensor_9"]
    assert loaded["tensor_1"] == rules["partition"] and loaded["tensor_5"] == rules["overlay_add"]
    assert loaded["tensor_9"] == rules["group"]
    # Saved again, the members keep the tool's names; the tool streams it as Python does.
    hurray.save(tmp_path / "again.hrry", loaded)
    with hurray.open(tmp_path / "again.hrry") as f, hurray.open(tmp_path / "out.hrry") as g:
        assert f.keys() == g.keys()
    done = subprocess.run([hurray_cli(), "convert", str(tmp_path / "again.hrry"), "-", "--to", "stream"],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == stream_of(items)


def test_the_cpp_demo_file_reads_with_its_composite(tmp_path):
    done = _run("demo", tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "model.hrry"
    loaded = hurray.load(path)
    heads = [name for name, item in loaded.items() if isinstance(item, hurray.Composite)]
    assert len(heads) == 1
    head = loaded[heads[0]]
    with hurray.open(path) as f:
        np.testing.assert_array_equal(np.asarray(head), f.get_tensor(heads[0]))
        member_names = f._member_names(heads[0])
    assert not set(member_names) & set(loaded)
    hurray.save(tmp_path / "again.hrry", loaded)
    with hurray.open(tmp_path / "again.hrry") as f:
        assert f._member_names(heads[0]) == member_names
    assert hurray.load(tmp_path / "again.hrry")[heads[0]] == head
    done = _run("verify", tmp_path / "again.hrry")
    assert done.returncode == 0, done.stderr
