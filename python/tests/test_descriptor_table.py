# SPDX-License-Identifier: Apache-2.0
"""The descriptor table (docs/descriptor-table.md) through hurray.open, safe_open and load.

``hurray.save`` writes the KV entry ``hurray.descriptor_table`` (a copy of every
descriptor). The files here: with a table; without one (the entry cut out of the
KV section); with a table that is truncated, of another version or of another
entry count (read in place, as if absent); and with a well-formed table whose copy
of one tensor disagrees with its descriptor in place (that tensor never yields
data, the others read). The entry never shows in the metadata.
"""

import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import hurray

KEY = b"hurray.descriptor_table"
KV = {"arch": "demo"}
DIMS = {"w": (2, 3), "b": (4,), "c": (5,)}


def tensors(w_shape=(2, 3)):
    return {
        "w": np.arange(6, dtype=np.float32).reshape(w_shape) + 0.5,
        "b": np.array([-3, 7, 1000, -1000], dtype=np.int16),
        "c": np.arange(5, dtype=np.uint8) * 40,
    }


def trailer(data):
    """(index_offset, index_length, kv_offset, kv_length) of a file's trailer."""
    return struct.unpack_from("<QQQI", data, len(data) - 40)


def set_kv_length(data, kv_length):
    struct.pack_into("<I", data, len(data) - 40 + 24, kv_length)


def value_at(data):
    """Where the table's value starts (after its key, tag and uint32 length); -1 without one."""
    at = bytes(data).find(KEY)
    return -1 if at < 0 else at + len(KEY) + 1 + 4


def without_table(data):
    """The file with the table's KV entry (the section's last) cut out: the entry count
    and the section's length lowered, the freed bytes zeroed (a gap before the index)."""
    out = bytearray(data)
    _, _, kv_offset, kv_length = trailer(out)
    entry = value_at(out) - 5 - len(KEY) - 2  # its u16 key length
    (count,) = struct.unpack_from("<I", out, kv_offset)
    struct.pack_into("<I", out, kv_offset, count - 1)
    out[entry:kv_offset + kv_length] = bytes(kv_offset + kv_length - entry)
    set_kv_length(out, entry - kv_offset)
    return out


def truncated(data, cut=8):
    """The table's value `cut` bytes shorter (its length and the section's), the freed bytes zeroed."""
    out = bytearray(data)
    _, _, kv_offset, kv_length = trailer(out)
    at = value_at(out)
    (length,) = struct.unpack_from("<I", out, at - 4)
    assert at + length == kv_offset + kv_length, "the table is the KV section's last entry"
    struct.pack_into("<I", out, at - 4, length - cut)
    out[at + length - cut:at + length] = bytes(cut)
    set_kv_length(out, kv_length - cut)
    return out


def patched(data, offset, value):
    out = bytearray(data)
    out[offset] = value
    return out


@pytest.fixture()
def files(tmp_path):
    """name -> path of each file; "swap_copy" / "swap_place": the bytes where a file whose
    "w" is (3, 2) differs from the one whose "w" is (2, 3), in the table / in place."""
    hurray.save(tmp_path / "with.hrry", tensors(), kv=KV, durable=False)
    hurray.save(tmp_path / "other.hrry", tensors((3, 2)), kv=KV, durable=False)
    with_table = (tmp_path / "with.hrry").read_bytes()
    other = (tmp_path / "other.hrry").read_bytes()
    at = value_at(with_table)
    assert at > 0 and with_table[at:at + 4] == b"HRDT"
    assert struct.unpack_from("<HHQ", with_table, at + 4) == (2, 0, 3)
    assert len(other) == len(with_table)
    index_offset, index_length, _, _ = trailer(with_table)
    diff = [i for i in range(len(with_table)) if with_table[i] != other[i]]
    in_table = [i for i in diff if i >= at]
    in_place = [i for i in diff if i < at]
    assert in_table and in_place, "the shape is in the copy and in the descriptor in place"
    assert not [i for i in diff if index_offset <= i < index_offset + index_length], "the index is the same"

    def swap(data, where):
        out = bytearray(data)
        for i in where:
            out[i] = other[i]
        return out

    made = {
        "with": with_table,
        "without": without_table(with_table),
        "truncated": truncated(with_table),
        "version3": patched(with_table, at + 4, 3),
        "count": patched(with_table, at + 8, 4),
        "disagreeing_copy": swap(with_table, in_table),
        "disagreeing_in_place": swap(with_table, in_place),
    }
    # A table a reader must not use, with the copy of "w" changed too: read in
    # place, "w" is (2, 3) and reads, which shows the table unused.
    for name in ("truncated", "version3", "count"):
        made[name + "_swapped"] = swap(made[name], in_table)
    assert KEY not in made["without"]
    paths = {}
    for name, data in made.items():
        path = tmp_path / f"{name}.hrry"
        path.write_bytes(bytes(data))
        paths[name] = path
    return paths


READABLE = ["with", "without", "truncated", "version3", "count", "truncated_swapped", "version3_swapped",
            "count_swapped"]
DISAGREEING = ["disagreeing_copy", "disagreeing_in_place"]
REFUSED = r"tensor 'w' \(index entry 0\): the descriptor table's copy .* differs from the descriptor at \d+"


def check_readable(f):
    want = tensors()
    assert f.keys() == list(want)
    assert f.metadata() == KV
    for name, array in want.items():
        info = f.info(name)
        assert info["shape"] == array.shape and info["dtype"] == str(array.dtype)
        assert info["nbytes"] == array.nbytes
        np.testing.assert_array_equal(f.get_tensor(name), array)
        np.testing.assert_array_equal(np.asarray(f.tensor(name)), array)
        np.testing.assert_array_equal(f.to_float32(name), array.astype(np.float32))


@pytest.mark.parametrize("name", READABLE)
@pytest.mark.parametrize("writable", [False, True])
def test_open_lists_and_reads(files, name, writable):
    with hurray.open(files[name], writable=writable) as f:
        check_readable(f)


@pytest.mark.parametrize("name", READABLE)
def test_safe_open_and_load(files, name):
    want = tensors()
    with hurray.safe_open(files[name], framework="np") as f:
        assert f.keys() == sorted(want)  # safetensors' order: sorted by name
        assert f.metadata() == KV
        for key, array in want.items():
            np.testing.assert_array_equal(f.get_tensor(key), array)
            assert tuple(f.get_slice(key).get_shape()) == array.shape
    loaded = hurray.load(files[name])
    assert list(loaded) == list(want)
    for key, array in want.items():
        np.testing.assert_array_equal(np.asarray(loaded[key]), array)


def test_the_table_lies_after_the_data(files):
    # Without the table, every tensor's data is where it was: only the KV section changed.
    with hurray.open(files["with"]) as a, hurray.open(files["without"]) as b:
        for name in DIMS:
            assert a.info(name)["data_offset"] == b.info(name)["data_offset"]
    assert os.path.getsize(files["with"]) == os.path.getsize(files["without"])  # cut out, not shortened


@pytest.mark.parametrize("name", DISAGREEING)
@pytest.mark.parametrize("writable", [False, True])
def test_a_disagreeing_copy_never_yields_data(files, name, writable):
    with hurray.open(files[name], writable=writable) as f:
        assert f.keys() == list(DIMS)
        assert f.metadata() == KV
        # Listing reads the table: its shape, whichever side was changed.
        assert f.info("w")["shape"] == ((3, 2) if name == "disagreeing_copy" else (2, 3))
        for _ in range(2):  # refused every time, not only the first
            with pytest.raises(hurray.HurrayError, match=REFUSED):
                f.get_tensor("w")
            with pytest.raises(hurray.HurrayError, match=REFUSED):
                f.tensor("w")
            with pytest.raises(hurray.HurrayError, match=REFUSED):
                f.to_float32("w")
            with pytest.raises(hurray.HurrayError, match=REFUSED):
                f._get_bits("w")
        want = tensors()
        for key in ("b", "c"):
            np.testing.assert_array_equal(f.get_tensor(key), want[key])


@pytest.mark.parametrize("name", DISAGREEING)
def test_a_disagreeing_copy_through_safe_open_and_load(files, name):
    want = tensors()
    with hurray.safe_open(files[name], framework="np") as f:
        assert f.metadata() == KV
        with pytest.raises(hurray.HurrayError, match=REFUSED):
            f.get_tensor("w")
        with pytest.raises(hurray.HurrayError, match=REFUSED):
            f.get_slice("w")[0]
        np.testing.assert_array_equal(f.get_tensor("b"), want["b"])
    with pytest.raises(hurray.HurrayError, match=REFUSED):
        hurray.load(files[name])
    loaded = hurray.load(files[name], names=["b", "c"])
    np.testing.assert_array_equal(np.asarray(loaded["c"]), want["c"])
    with pytest.raises(hurray.HurrayError, match=REFUSED):
        hurray.load(files[name], names=["w"])


def test_the_key_is_reserved(tmp_path):
    # A user entry under the table's key is refused (the writer makes it).
    with pytest.raises(hurray.HurrayError, match="reserved"):
        hurray.save(tmp_path / "x.hrry", tensors(), kv={"hurray.descriptor_table": b"HRDT"})
    assert not (tmp_path / "x.hrry").exists()


def test_save_without_a_table(tmp_path):
    # descriptor_table=False writes the file as the reference writer does: the same
    # tensors, metadata and bytes up to the KV section, no table entry.
    hurray.save(tmp_path / "t.hrry", tensors(), kv=KV, durable=False)
    hurray.save(tmp_path / "n.hrry", tensors(), kv=KV, durable=False, descriptor_table=False)
    with_table = (tmp_path / "t.hrry").read_bytes()
    plain = (tmp_path / "n.hrry").read_bytes()
    assert KEY in with_table and KEY not in plain
    _, _, kv_offset, _ = trailer(plain)
    assert trailer(with_table)[2] == kv_offset
    assert with_table[64:kv_offset] == plain[64:kv_offset], "the tensors' bytes do not depend on the table"
    with hurray.open(tmp_path / "n.hrry") as f:
        check_readable(f)
    for name, array in tensors().items():
        np.testing.assert_array_equal(hurray.load(tmp_path / "n.hrry")[name], array)


def cli():
    path = os.environ.get("HURRAY_CLI") or shutil.which("hurray")
    if not path:
        pytest.skip("the hurray tool is not built here (set HURRAY_CLI)")
    return path


@pytest.mark.parametrize("name", READABLE + DISAGREEING)
def test_cli_ls_and_info_list_every_file(files, name):
    # `hurray ls` and `hurray info` list each file (the table's shape where it is
    # used) and never show the table's entry among the KV metadata.
    tool = cli()
    ls = subprocess.run([tool, "ls", "--json", str(files[name])], capture_output=True, text=True, check=True)
    listed = json.loads(ls.stdout)
    assert [t["name"] for t in listed["tensors"]] == list(DIMS)
    assert "hurray.descriptor_table" not in ls.stdout
    info = subprocess.run([tool, "info", "--json", str(files[name])], capture_output=True, text=True, check=True)
    assert "hurray.descriptor_table" not in info.stdout
    table = json.loads(info.stdout).get("descriptor_table_bytes")
    assert (table is not None) == (name in ("with", "disagreeing_copy", "disagreeing_in_place"))
