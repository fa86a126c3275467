# SPDX-License-Identifier: Apache-2.0
"""hurray.convert, hurray.detect_format and hurray.open_source over libhurray's converters.

Inputs come from writers independent of libhurray: numpy itself (np.save, np.savez,
np.savez_compressed), tests/convert/writers/safetensors_writer.py and
tests/convert/writers/gguf_writer.py (struct + numpy, from the format descriptions).
Every direction the C++ tests of hurray::convert cover: .npy / .npz / SafeTensors / GGUF
to HRRYFILE and back, GGUF and HRRYFILE to .npz dequantized, verification, progress;
values compared with numpy; corrupted inputs raise, never crash.
"""

import importlib.util
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import hurray

from conftest import REPO

WRITERS = REPO / "tests" / "convert" / "writers"
# The interpreter running the tests (in a venv: the one the package is installed in).
PYTHON = sys.executable


def _load_module(name):
    spec = importlib.util.spec_from_file_location(name, WRITERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def safetensors_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("st")
    subprocess.run([PYTHON, str(WRITERS / "safetensors_writer.py"), "write", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("gguf")
    subprocess.run([PYTHON, str(WRITERS / "gguf_writer.py"), str(out)], check=True)
    return out


def _arrays():
    rng = np.random.default_rng(7)
    return {
        "f32": rng.standard_normal((3, 4)).astype(np.float32),
        "f64": np.array([[0.0, -0.0], [np.inf, np.pi]]),
        "f16": np.arange(10, dtype=np.float16) / 3,
        "i8": np.array([-128, 0, 127], dtype=np.int8),
        "u16": np.array([0, 1, 65535], dtype=np.uint16),
        "i64": np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        "u64": np.array([2**64 - 1, 0, 5], dtype=np.uint64),
        "mask": rng.integers(0, 2, 11).astype(bool),
        "c64": (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64),
        "scalar": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.int32),
    }


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


# --------------------------------------------------------------------------- detect


def test_detect_format(tmp_path, safetensors_dir, gguf_dir):
    np.save(tmp_path / "a.npy", np.ones(3))
    np.savez(tmp_path / "a.npz", x=np.ones(3))
    hurray.save(tmp_path / "a.hrry", {"x": np.ones(3)})
    (tmp_path / "a.txt").write_bytes(b"not a tensor file at all")
    assert hurray.detect_format(tmp_path / "a.npy") == "npy"
    assert hurray.detect_format(tmp_path / "a.npz") == "npz"
    assert hurray.detect_format(tmp_path / "a.hrry") == "hrryfile"
    assert hurray.detect_format(safetensors_dir / "all.safetensors") == "safetensors"
    assert hurray.detect_format(gguf_dir / "all.gguf") == "gguf"
    assert hurray.detect_format(str(tmp_path / "a.txt")) == "unknown"
    with pytest.raises(hurray.FileError):
        hurray.detect_format(tmp_path / "missing.npy")


# --------------------------------------------------------------------------- NumPy


def test_npy_written_by_numpy_to_hrry_and_back(tmp_path):
    for name, array in _arrays().items():
        npy = tmp_path / f"{name}.npy"
        np.save(npy, array)
        report = hurray.convert(npy, tmp_path / f"{name}.hrry", verify=True)
        assert report.tensors == 1 and report.bytes >= 0 and report.verified
        assert report.format == "hrryfile" and report.source_format == "npy"
        with hurray.open(tmp_path / f"{name}.hrry") as f:
            assert len(f) == 1
            _same(f.get_tensor(f.keys()[0]), array)
        hurray.convert(tmp_path / f"{name}.hrry", tmp_path / f"back_{name}.npy")
        _same(np.load(tmp_path / f"back_{name}.npy"), array)


def test_npy_fortran_and_big_endian(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.save(tmp_path / "f.npy", a)
    hurray.convert(tmp_path / "f.npy", tmp_path / "f.hrry", verify=True)
    hurray.convert(tmp_path / "f.hrry", tmp_path / "f_back.npy", dequantize=True)
    np.testing.assert_array_equal(np.load(tmp_path / "f_back.npy"), a)
    b = np.arange(5, dtype=">i4")
    np.save(tmp_path / "b.npy", b)
    hurray.convert(tmp_path / "b.npy", tmp_path / "b.hrry")
    with hurray.open(tmp_path / "b.hrry") as f:
        np.testing.assert_array_equal(f.get_tensor(f.keys()[0]), b.astype("<i4"))


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_written_by_numpy_to_hrry_and_back(tmp_path, compressed):
    arrays = _arrays()
    npz = tmp_path / "in.npz"
    (np.savez_compressed if compressed else np.savez)(npz, **arrays)
    report = hurray.convert(npz, tmp_path / "mid.hrry", verify=True)
    assert report.tensors == len(arrays) and report.source_format == "npz"
    assert report.bytes == sum(a.nbytes if a.dtype != bool else a.size for a in arrays.values()) or report.bytes > 0
    loaded = hurray.load(tmp_path / "mid.hrry")
    for name, array in arrays.items():
        _same(np.asarray(loaded[name]), array)
    report = hurray.convert(tmp_path / "mid.hrry", tmp_path / "out.npz", verify=True)
    assert report.format == "npz"
    with np.load(tmp_path / "out.npz") as back:
        assert sorted(back.files) == sorted(arrays)
        for name, array in arrays.items():
            _same(back[name], array)


def test_open_source_npz_without_converting(tmp_path):
    arrays = _arrays()
    np.savez(tmp_path / "a.npz", **arrays)
    with hurray.open_source(tmp_path / "a.npz") as src:
        assert isinstance(src, hurray.Source)
        assert src.format == "npz"
        assert sorted(src.keys()) == sorted(arrays) and len(src) == len(arrays)
        assert "f32" in src and "nope" not in src
        info = src.info("f32")
        assert info["dtype"] == "float32" and info["shape"] == (3, 4) and info["nbytes"] == 48
        for name, array in arrays.items():
            _same(src.get_tensor(name), array)
        t = src.tensor("f32")
        assert isinstance(t, hurray.Tensor)
        with pytest.raises(KeyError):
            src.info("nope")
    with pytest.raises(ValueError):
        src.keys()
    _same(np.asarray(t), arrays["f32"])  # a tensor outlives its source


# --------------------------------------------------------------------------- SafeTensors


def _bits(array):
    a = np.ascontiguousarray(array)
    if a.dtype == bool:
        return [int(x) for x in a.reshape(-1).astype(np.uint8)]
    return [int(x) for x in a.reshape(-1).view(f"<u{a.dtype.itemsize}")]


def test_safetensors_values_through_open_source(safetensors_dir):
    manifest = json.loads((safetensors_dir / "manifest.json").read_text())["all"]
    with hurray.open_source(safetensors_dir / "all.safetensors") as src:
        assert src.format == "safetensors"
        assert src.keys() == [t["name"] for t in manifest["tensors"]]
        assert src.metadata() == manifest["metadata"]
        checked = 0
        for t in manifest["tensors"]:
            info = src.info(t["name"])
            assert list(info["shape"]) == t["shape"]
            if info["numpy_dtype"] is None:
                continue  # bfloat16, float8, float4, float6: compared through the round trip below
            want = np.fromfile(safetensors_dir / t["expect"], dtype="<u8").tolist()
            assert _bits(src.get_tensor(t["name"])) == want, t["name"]
            checked += 1
        assert checked >= 14


def test_safetensors_to_hrry_and_back(safetensors_dir, tmp_path):
    report = hurray.convert(safetensors_dir / "all.safetensors", tmp_path / "all.hrry", verify=True)
    assert report.verified and report.source_format == "safetensors"
    with hurray.open(tmp_path / "all.hrry") as f, hurray.open_source(safetensors_dir / "all.safetensors") as src:
        assert sorted(f.keys()) == sorted(src.keys())
        assert f.metadata() == src.metadata()
        for name in ("f32", "i64", "mask"):
            np.testing.assert_array_equal(f.get_tensor(name), src.get_tensor(name))
    out = tmp_path / "back.safetensors"
    report = hurray.convert(tmp_path / "all.hrry", out, verify=True)
    assert report.format == "safetensors"
    # The independent checker parses the output and compares every element, every dtype.
    subprocess.run([PYTHON, str(WRITERS / "safetensors_writer.py"), "verify", str(out),
                    str(safetensors_dir / "manifest.json"), "all"], check=True)


def test_safetensors_to_npz(safetensors_dir, tmp_path):
    manifest = json.loads((safetensors_dir / "manifest.json").read_text())["all"]
    report = hurray.convert(safetensors_dir / "all.safetensors", tmp_path / "all.npz", verify=True)
    assert report.format == "npz" and report.tensors == len(manifest["tensors"])
    with np.load(tmp_path / "all.npz") as z:
        for t in manifest["tensors"]:
            want = np.fromfile(safetensors_dir / t["expect"], dtype="<u8").tolist()
            got = z[t["name"]]
            assert list(got.shape) == t["shape"], t["name"]
            if t["dtype"] == "BF16":  # widened exactly: the bfloat16 bits are float32's upper half
                assert _bits(got) == [p << 16 for p in want]
            elif t["dtype"] in ("F64", "F32", "F16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8",
                                "BOOL", "C64"):
                assert _bits(got) == want, t["name"]


# --------------------------------------------------------------------------- GGUF


def test_gguf_open_source(gguf_dir):
    with hurray.open_source(gguf_dir / "all.gguf") as src:
        assert src.format == "gguf"
        meta = src.metadata()
        assert meta["general.architecture"] == "llama"
        assert meta["t.arr.str"] == ["<s>", "", "\u2581the", "tok\u00e9n"]
        assert meta["t.arr.i32"] == [1, -2, 2147483647, -2147483648]
        for name, dtype, shape in (("dense_f32", "<f4", (3, 4)), ("dense_f16", "<f2", (2, 3, 4)),
                                   ("dense_i16", "<i2", (2, 3)), ("dense_i64", "<i8", (3,))):
            raw = np.frombuffer((gguf_dir / f"{name}.raw").read_bytes(), dtype=dtype).reshape(shape)
            _same(src.get_tensor(name), raw.astype(raw.dtype.newbyteorder("=")))
        q = src.info("q8_0")
        assert q["quantization"] is not None and q["shape"] == (4, 64)


def _kv_equal(a, b):
    # KV dicts compared with every NaN equal to every NaN (t.f32.snan is a signalling NaN).
    def norm(v):
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    return {k: norm(v) for k, v in a.items()} == {k: norm(v) for k, v in b.items()}


def test_gguf_to_hrry_and_back(gguf_dir, tmp_path):
    report = hurray.convert(gguf_dir / "all.gguf", tmp_path / "all.hrry", verify=True)
    assert report.verified and report.source_format == "gguf"
    report = hurray.convert(tmp_path / "all.hrry", tmp_path / "back.gguf", verify=True)
    assert report.format == "gguf"
    with hurray.open_source(gguf_dir / "all.gguf") as a, hurray.open_source(tmp_path / "back.gguf") as b:
        assert a.keys() == b.keys()
        assert _kv_equal(a.metadata(), b.metadata())
        for name in a.keys():
            raw = (gguf_dir / f"{name}.raw").read_bytes()
            tb = b.tensor(name)
            got = b"".join(bytes(memoryview(tb.buffer(i))) for i in range(b.info(name)["buffer_count"]))
            if b.info(name)["buffer_count"] == 1:
                assert got == raw, name


@pytest.mark.parametrize("name", ["all", "k32", "legacy64", "many"])
def test_converted_gguf_loads_dequantizes_and_comes_back_byte_for_byte(gguf_dir, tmp_path, name):
    """A llama.cpp user's round trip: GGUF -> HRRYFILE opens with hurray.open / hurray.load
    (libhurray's GGML blocks scheme understood), every quantized tensor dequantizes to
    ggml's values, and HRRYFILE -> GGUF gives the original file byte for byte."""
    src = gguf_dir / f"{name}.gguf"
    hrry = tmp_path / f"{name}.hrry"
    hurray.convert(src, hrry)
    with hurray.open(hrry) as f:
        keys = f.keys()
        for k in keys:
            f.info(k)
    loaded = hurray.load(hrry)
    assert list(loaded) == keys
    checked = 0
    for k, t in loaded.items():
        ref = gguf_dir / f"{k}.ref"
        if ref.exists():
            want = np.frombuffer(ref.read_bytes(), dtype="<f4")
            got = np.asarray(t.dequantize(), dtype=np.float32).reshape(-1)
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=k)
            checked += 1
    assert checked > 0
    hurray.convert(hrry, tmp_path / f"{name}.back.gguf")
    assert (tmp_path / f"{name}.back.gguf").read_bytes() == src.read_bytes()


def test_converted_gguf_spec_only_refuses_the_private_scheme(gguf_dir, tmp_path):
    hrry = tmp_path / "k32.hrry"
    hurray.convert(gguf_dir / "k32.gguf", hrry)
    with hurray.open(hrry) as f:
        assert "quantization" in f.info("k32.q4_k")
    # Descriptors are decoded on first use: the file opens, the tensor is refused.
    with hurray.open(hrry, spec_only=True) as f:
        assert "k32.q4_k" in f.keys()
        calls = [lambda: f.info("k32.q4_k"), lambda: f.tensor("k32.q4_k"), lambda: hurray.load(hrry, spec_only=True)]
        for call in calls:
            with pytest.raises(hurray.UnsupportedError) as e:
                call()
            assert "0xF0 is a private scheme this reader does not know" in str(e.value)
    # Files without private schemes read the same either way.
    plain = tmp_path / "v2.hrry"
    hurray.convert(gguf_dir / "v2.gguf", plain)
    assert list(hurray.load(plain, spec_only=True)) == ["a", "b"]


def test_gguf_dequantized_to_npz_matches_reference(gguf_dir, tmp_path):
    writer = _load_module("gguf_writer")
    report = hurray.convert(gguf_dir / "v2.gguf", tmp_path / "v2.npz", dequantize=True, verify=True)
    assert report.tensors == 2 and report.verified
    want = writer.deq_q8_0(writer.quant_q8_0(np.linspace(-1, 1, 32, dtype=np.float32)))
    with np.load(tmp_path / "v2.npz") as z:
        np.testing.assert_array_equal(z["a"], np.array([[1, 2], [3, 4]], dtype=np.float32))
        assert z["b"].dtype == np.float32
        np.testing.assert_array_equal(z["b"].reshape(-1), np.asarray(want, dtype=np.float32).reshape(-1))
    hurray.convert(gguf_dir / "v2.gguf", tmp_path / "v2h.npz", dequantize=True, dtype=np.float16)
    with np.load(tmp_path / "v2h.npz") as z:
        assert z["b"].dtype == np.float16
        np.testing.assert_array_equal(z["b"].reshape(-1), np.asarray(want, dtype=np.float32).astype(np.float16))


def test_gguf_quantized_to_safetensors_needs_dequantize(gguf_dir, tmp_path):
    with pytest.raises(hurray.HurrayError) as e:
        hurray.convert(gguf_dir / "v2.gguf", tmp_path / "v2.safetensors")
    assert "'b'" in str(e.value) or '"b"' in str(e.value) or " b" in str(e.value)
    report = hurray.convert(gguf_dir / "v2.gguf", tmp_path / "v2.safetensors", dequantize=True, dtype="bfloat16")
    assert report.tensors == 2
    with hurray.open_source(tmp_path / "v2.safetensors") as src:
        assert src.info("b")["dtype"] == "bfloat16"


# --------------------------------------------------------------------------- options


def test_options_and_progress(tmp_path):
    a = np.arange(1 << 16, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    calls = []
    report = hurray.convert(tmp_path / "a.npy", tmp_path / "a.out", to="hrryfile", durable=False,
                            progress=lambda done, total: calls.append((done, total)))
    assert hurray.detect_format(tmp_path / "a.out") == "hrryfile"
    assert calls and calls[-1] == (a.nbytes, a.nbytes) and report.bytes == a.nbytes
    assert all(d1 <= d2 for (d1, _), (d2, _) in zip(calls, calls[1:]))

    def boom(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        hurray.convert(tmp_path / "a.npy", tmp_path / "b.hrry", progress=boom)
    assert not (tmp_path / "b.hrry").exists()  # the exception cancelled it: no output
    with pytest.raises(TypeError):
        hurray.convert(tmp_path / "a.npy", tmp_path / "c.hrry", progress=42)
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.convert(tmp_path / "a.npy", tmp_path / "c.hrry", to="tiff")
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.convert(tmp_path / "a.npy", tmp_path / "c.unknown")
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.convert(tmp_path / "a.npy", tmp_path / "c.hrry", dequantize=True, dtype="int8")
    with pytest.raises(hurray.UnsupportedError):
        hurray.convert(tmp_path / "a.npy", tmp_path / "c.hrrys")
    assert not (tmp_path / "c.hrry").exists()


def test_threads_convert_at_once(tmp_path):
    # The GIL is released during conversion: several threads convert at once.
    a = np.arange(1 << 18, dtype=np.float64)
    np.save(tmp_path / "a.npy", a)
    errors = []

    def work(i):
        try:
            hurray.convert(tmp_path / "a.npy", tmp_path / f"t{i}.npz", durable=False)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        with np.load(tmp_path / f"t{i}.npz") as z:
            np.testing.assert_array_equal(z["a"], a)


# --------------------------------------------------------------------------- corrupted input


def _no_leftovers(directory, allowed):
    assert sorted(p.name for p in directory.iterdir()) == sorted(allowed)


def test_corrupted_safetensors_raise(safetensors_dir, tmp_path):
    data = (safetensors_dir / "all.safetensors").read_bytes()
    bad = tmp_path / "bad.safetensors"
    for cut in list(range(1, 64, 7)) + [len(data) // 2, len(data) - 1]:
        bad.write_bytes(data[:-cut] if cut < len(data) else b"")
        with pytest.raises(hurray.HurrayError) as e:
            hurray.convert(bad, tmp_path / "out.hrry")
        assert "bad.safetensors" in str(e.value)
        with pytest.raises(hurray.HurrayError):
            hurray.open_source(bad)
    _no_leftovers(tmp_path, ["bad.safetensors"])
    # A header whose JSON is broken: the message names the field and the byte offset.
    mutated = bytearray(data)
    mutated[10] = ord("!")
    bad.write_bytes(bytes(mutated))
    with pytest.raises(hurray.FileError) as e:
        hurray.open_source(bad)
    assert e.value.offset is not None or "byte" in str(e.value)


def test_corrupted_numpy_and_gguf_raise(gguf_dir, tmp_path):
    np.save(tmp_path / "a.npy", np.arange(8, dtype=np.float32))
    good = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(good[:60])
    with pytest.raises(hurray.FileError) as e:
        hurray.convert(tmp_path / "cut.npy", tmp_path / "x.hrry")
    assert "cut.npy" in str(e.value) and e.value.offset is not None
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(hurray.HurrayError):
        hurray.open_source(tmp_path / "bad.npz")
    gguf = bytearray((gguf_dir / "v2.gguf").read_bytes())
    rng = np.random.default_rng(3)
    for _ in range(40):
        mutated = bytearray(gguf)
        for at in rng.integers(4, min(len(mutated), 200), 3):
            mutated[int(at)] = int(rng.integers(0, 256))
        (tmp_path / "m.gguf").write_bytes(bytes(mutated))
        try:
            with hurray.open_source(tmp_path / "m.gguf") as src:
                for name in src.keys():
                    src.info(name)
            hurray.convert(tmp_path / "m.gguf", tmp_path / "m.hrry", durable=False)
        except hurray.HurrayError as e:
            assert str(e)  # an error with a message (non-UTF-8 bytes escaped), never a crash
    (tmp_path / "text.bin").write_bytes(b"hello")
    with pytest.raises(hurray.HurrayError):
        hurray.open_source(tmp_path / "text.bin")
    with pytest.raises(hurray.FileError):
        hurray.open_source(tmp_path / "missing.gguf")
    assert not (tmp_path / "x.hrry").exists()


def test_ctrl_c_cancels_a_conversion_and_leaves_no_output(tmp_path):
    # SIGINT as Ctrl-C delivers it (_thread.interrupt_main) during a conversion:
    # KeyboardInterrupt comes out of hurray.convert, which cancelled at the chunk
    # it was on; nothing is left at the output path, an existing file is kept.
    import _thread

    a = np.zeros(3 << 20, dtype=np.float32)  # 12 MiB: two chunks of 8 MiB
    np.save(tmp_path / "a.npy", a)
    seen = []

    def interrupt(done, total):
        seen.append(done)
        _thread.interrupt_main()

    with pytest.raises(KeyboardInterrupt):
        hurray.convert(tmp_path / "a.npy", tmp_path / "b.hrry", progress=interrupt)
    assert seen == [seen[0]] and seen[0] < a.nbytes
    assert not (tmp_path / "b.hrry").exists()
    (tmp_path / "keep.safetensors").write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        hurray.convert(tmp_path / "a.npy", tmp_path / "keep.safetensors", progress=interrupt)
    assert (tmp_path / "keep.safetensors").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "keep.safetensors"]
