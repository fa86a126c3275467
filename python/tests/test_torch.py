# SPDX-License-Identifier: Apache-2.0
"""hurray.torch (safetensors.torch's calls) and safe_open(framework="pt")."""

import hashlib

import numpy as np
import pytest

import hurray
import hurray.numpy
from conftest import sample

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
import hurray.torch as ht  # noqa: E402

# torch dtype name -> Hurray element type; float8 only where this torch has it.
DTYPES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128",
}
for _attr, _name in (("float8_e4m3fn", "float8_e4m3"), ("float8_e5m2", "float8_e5m2")):
    if isinstance(getattr(torch, _attr, None), torch.dtype):
        DTYPES[_attr] = _name

SHAPES = [(), (0,), (1,), (7,), (2, 3), (3, 0, 2), (2, 3, 4, 5)]
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def make(dtype_name, shape, seed=0):
    """Deterministic values; for types numpy lacks (bfloat16, float8) random bit patterns."""
    dtype = getattr(torch, dtype_name)
    if dtype_name in ("bfloat16",) or dtype_name.startswith("float8"):
        size = torch.empty((), dtype=dtype).element_size()
        bits = sample({1: "uint8", 2: "int16"}[size], shape, seed)
        return torch.from_numpy(np.ascontiguousarray(bits)).view(dtype)
    return torch.from_numpy(np.ascontiguousarray(sample(dtype_name, shape, seed)))


def bits(t):
    """The tensor's bits, comparable with torch.equal even for NaNs."""
    if t.dtype == torch.bool:
        return t
    if t.is_complex():
        t = torch.view_as_real(t)
    return t.view(_INT_OF_SIZE[t.element_size()])


def assert_same(got, want):
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert torch.equal(bits(got), bits(want))


def file_mappings(path):
    """(start, end) of every mapping of `path` in this process."""
    real = str(path.resolve())
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == real:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((start, end))
    return ranges


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(tmp_path, dtype, shape):
    t = make(dtype, shape)
    path = tmp_path / "t.hrry"
    ht.save_file({"t": t}, path)
    with hurray.open(path) as f:
        assert f.info("t")["dtype"] == DTYPES[dtype]
    assert_same(ht.load_file(path)["t"], t)
    assert_same(ht.load(ht.save({"t": t}))["t"], t)


def test_bfloat16_bits_are_exact(tmp_path):
    every = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    t = every.view(torch.bfloat16)  # every pattern: NaN payloads, -0, subnormals, inf
    ht.save_file({"b": t}, tmp_path / "b.hrry")
    got = ht.load_file(tmp_path / "b.hrry")["b"]
    assert got.dtype == torch.bfloat16
    assert torch.equal(got.view(torch.int16), every)
    # The file holds them as Hurray bfloat16, which converts to the same floats.
    with hurray.open(tmp_path / "b.hrry") as f:
        finite = ~torch.isnan(t.float())
        np.testing.assert_array_equal(f.to_float32("b")[finite.numpy()], t.float()[finite].numpy())


def test_many_tensors_keep_names_and_order(tmp_path):
    tensors = {f"layer.{i}.{d}": make(d, (i % 3 + 1, 2), seed=i) for i, d in enumerate(DTYPES)}
    ht.save_file(tensors, tmp_path / "m.hrry")
    got = ht.load_file(tmp_path / "m.hrry")
    # Sorted, as safetensors' load_file returns them ("layer.10..." before "layer.2...").
    assert list(got) == sorted(tensors)
    for name, t in tensors.items():
        assert_same(got[name], t)


def test_load_file_is_zero_copy_over_the_mapping(tmp_path):
    path = tmp_path / "z.hrry"
    tensors = {"w": make("float32", (64, 64)), "b": make("bfloat16", (100,)), "s": make("int64", ())}
    ht.save_file(tensors, path)
    got = ht.load_file(path)
    ranges = file_mappings(path)
    assert ranges, "the file is not mapped"
    for name, t in got.items():
        ptr = t.data_ptr()
        assert any(start <= ptr and ptr + t.numel() * t.element_size() <= end for start, end in ranges), name
    with hurray.safe_open(path, framework="pt") as f:
        t = f.get_tensor("w")
        assert (t.data_ptr(), t.numel() * t.element_size()) == f._file._data_range("w")


def test_writing_into_a_loaded_tensor_changes_it_but_not_the_file(tmp_path):
    path = tmp_path / "w.hrry"
    tensors = {"f": make("float32", (3, 5)), "b": make("bfloat16", (4,)), "z": make("int32", ()),
               "q": torch.tensor([True, False])}
    ht.save_file(tensors, path)
    before = digest(path)
    got = ht.load_file(path)
    got["f"] += 1
    got["f"][0, 0] = 42
    got["b"].zero_()
    got["z"].fill_(-7)
    got["q"][0] = False
    assert got["f"][0, 0] == 42 and torch.equal(got["f"][1], tensors["f"][1] + 1)
    assert torch.equal(got["b"], torch.zeros(4, dtype=torch.bfloat16))
    assert got["z"] == -7 and not got["q"][0]
    assert digest(path) == before
    for name, t in ht.load_file(path).items():  # a new load sees the file, not the writes
        assert_same(t, tensors[name])
    with hurray.safe_open(path, framework="pt") as f:
        t = f.get_tensor("f")
        t.zero_()
        assert torch.equal(f.get_tensor("f"), torch.zeros(3, 5))  # one handle, one mapping
        assert_same(f.get_slice("f")[1:], torch.zeros(2, 5))
    assert digest(path) == before


def test_writable_numpy_arrays_over_a_copy_on_write_mapping(tmp_path):
    path = tmp_path / "n.hrry"
    hurray.numpy.save_file({"a": np.arange(5, dtype=np.int16)}, path)
    before = digest(path)
    with hurray.open(path, writable=True) as f:
        assert f.writable and f.mapped
        a = f.get_tensor("a")
        assert a.flags.writeable
        a[:] = 9
        assert (f.get_tensor("a") == 9).all()
    with hurray.open(path) as f:
        assert not f.writable and not f.get_tensor("a").flags.writeable
    assert digest(path) == before


def test_non_contiguous_tensors_are_refused(tmp_path):
    base = make("float32", (4, 6))
    for bad in (base.T, base[:, ::2], base[:, 1:]):
        with pytest.raises(hurray.InvalidArgumentError, match="tensor 'x': not contiguous") as info:
            ht.save_file({"ok": make("int8", (2,)), "x": bad}, tmp_path / "nc.hrry")
        assert isinstance(info.value, ValueError)
    assert not (tmp_path / "nc.hrry").exists()
    ht.save_file({"x": base.T.contiguous()}, tmp_path / "nc.hrry")
    assert_same(ht.load_file(tmp_path / "nc.hrry")["x"], base.T.contiguous())


def test_tensors_sharing_storage_are_refused(tmp_path):
    base = make("float32", (4, 6))
    # Tensors whose bytes overlap. (Disjoint views of one storage, such as
    # base[0] and base[2:], are saved, as safetensors saves them:
    # test_safetensors_dropin.py.)
    cases = [{"a": base, "b": base}, {"a": base, "b": base[1]}, {"a": base[1:3], "c": make("int8", (1,)), "b": base[2:]},
             {"a": base, "b": base.view(torch.int32)}]
    for tensors in cases:
        with pytest.raises(ht.SharedTensorsError, match="'a', 'b'") as info:
            ht.save_file(tensors, tmp_path / "s.hrry")
        assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
        with pytest.raises(ht.SharedTensorsError):
            ht.save(tensors)
    assert not (tmp_path / "s.hrry").exists()
    # Clones, and empty tensors (no storage bytes), are fine.
    ht.save_file({"a": base, "b": base[1].clone(), "e": torch.zeros(0), "f": torch.zeros(0)}, tmp_path / "s.hrry")
    assert_same(ht.load_file(tmp_path / "s.hrry")["b"], base[1])


def test_other_inputs_are_refused(tmp_path):
    path = tmp_path / "o.hrry"
    with pytest.raises(TypeError):
        ht.save_file([("a", torch.zeros(1))], path)
    # safetensors' ValueError and message; a TypeError too, as before.
    with pytest.raises(TypeError, match="Key `a` is invalid, expected torch.Tensor") as info:
        ht.save_file({"a": np.zeros(1)}, path)
    assert isinstance(info.value, ValueError)
    with pytest.raises(TypeError):
        ht.save_file({1: torch.zeros(1)}, path)
    with pytest.raises(hurray.InvalidArgumentError, match="tensor 's'"):
        ht.save_file({"s": torch.zeros(3, 3).to_sparse()}, path)
    with pytest.raises(TypeError):
        ht.save_file({"a": torch.zeros(1)}, path, metadata={"k": 1})
    assert not path.exists()


def test_grad_conj_and_other_devices_are_saved_from_the_cpu(tmp_path):
    path = tmp_path / "g.hrry"
    c = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    tensors = {"g": torch.ones(3, requires_grad=True), "c": c.conj(), "n": -torch.arange(3.0)}
    ht.save_file(tensors, path)
    got = ht.load_file(path)
    assert torch.equal(got["g"], torch.ones(3)) and not got["g"].requires_grad
    assert torch.equal(got["c"], torch.tensor([1 - 2j, 3 + 4j], dtype=torch.complex64))
    meta = ht.load_file(path, device="meta")
    assert {t.device.type for t in meta.values()} == {"meta"}
    assert meta["c"].shape == (2,) and meta["c"].dtype == torch.complex64
    assert ht.load_file(path, device=torch.device("cpu"))["n"].device.type == "cpu"


def test_metadata_and_bytes(tmp_path):
    path = tmp_path / "md.hrry"
    tensors = {"a": make("float16", (2, 2)), "b": make("bfloat16", (3,))}
    ht.save_file(tensors, path, metadata={"format": "pt", "note": "é"})
    with hurray.safe_open(path, framework="pt") as f:
        assert f.metadata() == {"format": "pt", "note": "é"}
    data = ht.save(tensors, metadata={"format": "pt", "note": "é"})
    assert isinstance(data, bytes) and data == path.read_bytes()
    got = ht.load(data)
    for name, t in tensors.items():
        assert_same(got[name], t)
    got["a"] += 1  # tensors from bytes are writable copies
    assert ht.load(bytearray(data))["a"].equal(tensors["a"])
    with pytest.raises(hurray.FileError):
        ht.load(b"not a hurray file")


def test_files_are_shared_with_hurray_numpy_and_hurray_save(tmp_path):
    arrays = {d: sample(d, (3, 2), seed=i) for i, d in enumerate(["bool", "int8", "int64", "float16", "float64",
                                                                   "complex128"])}
    hurray.numpy.save_file(arrays, tmp_path / "np.hrry", metadata={"k": "v"})
    hurray.save(tmp_path / "save.hrry", arrays, kv={"n": 3})
    for name in ("np.hrry", "save.hrry"):
        got = ht.load_file(tmp_path / name)
        for key, a in arrays.items():
            assert_same(got[key], torch.from_numpy(a))
    tensors = {key: torch.from_numpy(a) for key, a in arrays.items()}
    tensors["bf16"] = make("bfloat16", (5,))
    ht.save_file(tensors, tmp_path / "pt.hrry")
    with hurray.open(tmp_path / "pt.hrry") as f:
        for key, a in arrays.items():
            np.testing.assert_array_equal(f.get_tensor(key), a)
        assert f.info("bf16")["dtype"] == "bfloat16"
    del tensors["bf16"]
    ht.save_file(tensors, tmp_path / "pt2.hrry")
    got = hurray.numpy.load_file(tmp_path / "pt2.hrry")
    for key, a in arrays.items():
        np.testing.assert_array_equal(got[key], a)


def test_element_types_torch_lacks_are_refused_by_name(tmp_path):
    if isinstance(getattr(torch, "uint16", None), torch.dtype):
        pytest.skip("this torch has uint16")
    hurray.numpy.save_file({"u": np.arange(3, dtype=np.uint16)}, tmp_path / "u.hrry")
    with pytest.raises(hurray.UnsupportedError, match="tensor 'u': element type uint16"):
        ht.load_file(tmp_path / "u.hrry")


def test_safe_open_frameworks(tmp_path):
    path = tmp_path / "so.hrry"
    tensors = {"w": make("float32", (4, 3)), "b": make("bfloat16", (6,)), "q": torch.tensor([True, False, True])}
    ht.save_file(tensors, path)
    for framework in ("pt", "torch", "pytorch"):  # safetensors' three names
        with hurray.safe_open(path, framework=framework) as f:
            assert f.keys() == ["b", "q", "w"]  # sorted, as safetensors' keys()
            for name, t in tensors.items():
                assert_same(f.get_tensor(name), t)
            s = f.get_slice("w")
            assert s.get_shape() == [4, 3] and s.get_dtype() == "F32"
            assert_same(s[1:3, ::2], tensors["w"][1:3, ::2].contiguous())
            assert s[1:3, ::2].is_contiguous()
            assert f.get_slice("b").get_dtype() == "BF16"
            assert_same(f.get_slice("b")[2:], tensors["b"][2:])
            with pytest.raises(KeyError):
                f.get_tensor("missing")
            with pytest.raises(hurray.SafetensorError):
                f.get_tensor("missing")
    with hurray.safe_open(path, framework="pt", device="meta") as f:
        assert f.get_tensor("w").device.type == "meta"
    with hurray.safe_open(path, framework="np") as f:
        assert isinstance(f.get_tensor("w"), np.ndarray)
    with pytest.raises(hurray.UnsupportedError):
        hurray.safe_open(path, framework="tf")
    with pytest.raises(ValueError, match="framework caffe is invalid") as info:
        hurray.safe_open(path, framework="caffe")
    assert isinstance(info.value, hurray.SafetensorError)
