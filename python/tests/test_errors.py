# SPDX-License-Identifier: Apache-2.0
"""Bad input raises the right exception class, with code and offset; never a crash."""

import numpy as np
import pytest

import hurray
import hurray.numpy


def test_hierarchy():
    assert issubclass(hurray.FileError, (hurray.HurrayError, OSError))
    assert issubclass(hurray.StreamError, (hurray.HurrayError, OSError))
    assert issubclass(hurray.InvalidDescriptorError, hurray.HurrayError)
    assert issubclass(hurray.InvalidDescriptorError, ValueError)
    assert issubclass(hurray.BufferError, ValueError)
    assert issubclass(hurray.UnsupportedError, NotImplementedError)
    assert issubclass(hurray.InvalidArgumentError, ValueError)
    assert issubclass(hurray.InternalError, RuntimeError)
    for cls in (hurray.FileError, hurray.StreamError, hurray.InvalidDescriptorError, hurray.BufferError,
                hurray.UnsupportedError, hurray.InvalidArgumentError, hurray.InternalError):
        assert issubclass(cls, hurray.HurrayError)


def load_everything(path):
    """Opens `path` and reads every tensor, its info and the KV."""
    with hurray.open(path) as f:
        f.metadata()
        for name in f.keys():
            f.info(name)
            f.get_tensor(name).sum()


def sample_file(tmp_path):
    path = tmp_path / "good.hrry"
    hurray.save(path, {"w": np.arange(24, dtype=np.float32).reshape(4, 6), "flags": np.ones(5, bool),
                       "c": np.arange(3, dtype=np.complex64)}, kv={"name": "x", "list": [1, 2]})
    return path


@pytest.mark.parametrize("content", [b"", b"garbage", b"HRRYFILE", b"\x00" * 4096, b"HRRYFILE" + b"\xff" * 200])
def test_garbage_files_raise_file_error(tmp_path, content):
    path = tmp_path / "bad.hrry"
    path.write_bytes(content)
    with pytest.raises(hurray.FileError) as info:
        hurray.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value.code, str)
    assert info.value.offset is None or isinstance(info.value.offset, int)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(hurray.FileError, match="io_error") as info:
        hurray.open(tmp_path / "missing.hrry")
    assert info.value.file == str(tmp_path / "missing.hrry")
    assert info.value.tensor is None
    with pytest.raises(hurray.FileError):
        hurray.open(tmp_path)


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    """ENOENT: a FileError that is also a FileNotFoundError, with errno and
    filename as OSError has them (what open() raises, and safetensors for a
    missing file); the message and attributes stay the library's."""
    import errno
    import pickle

    missing = tmp_path / "missing.hrry"
    for call in (hurray.open, hurray.load, lambda p: hurray.safe_open(p, framework="np"), hurray.numpy.load_file,
                 lambda p: hurray.open(tmp_path / "no-such-dir" / "x.hrry")):
        with pytest.raises(FileNotFoundError) as info:
            call(missing)
        e = info.value
        assert isinstance(e, hurray.FileError) and isinstance(e, OSError)
        assert e.errno == errno.ENOENT and e.strerror == "No such file or directory"
        assert e.filename == e.file and e.file.endswith("x.hrry" if "no-such-dir" in e.file else "missing.hrry")
        assert e.code == "io_error" and str(e).startswith("io_error: open ")  # not "[Errno 2] ..."
        assert not isinstance(e, hurray.SafetensorError)  # safetensors raises FileNotFoundError alone
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is type(e) and str(copy) == str(e)
    # Other failures to open are FileErrors, not FileNotFoundErrors.
    with pytest.raises(hurray.FileError) as info:
        hurray.open(tmp_path)  # a directory
    assert not isinstance(info.value, FileNotFoundError)
    (tmp_path / "garbage.hrry").write_bytes(b"garbage")
    with pytest.raises(hurray.FileError) as info:
        hurray.open(tmp_path / "garbage.hrry")
    assert not isinstance(info.value, FileNotFoundError)


def test_missing_file_needs_a_file_not_found_class():
    from hurray import _errors, _hurray
    with pytest.raises(TypeError, match="MissingFileError is not a FileNotFoundError class"):
        _hurray._set_error_classes({**_errors.ERROR_CLASSES, "MissingFileError": _errors.FileError})
    _hurray._set_error_classes(_errors.ERROR_CLASSES)


def test_safetensor_errors_are_both_classes():
    """safetensors' SafetensorError, exported where safetensors exports it; the
    drop-ins' errors are also the classes raised before (KeyError, ValueError, ...)."""
    import pickle

    from hurray import _errors
    assert issubclass(hurray.SafetensorError, hurray.HurrayError)
    assert hurray.numpy.SafetensorError is hurray.SafetensorError
    assert issubclass(_errors.TensorNotFoundError, (hurray.SafetensorError, KeyError))
    assert issubclass(_errors.SafetensorArgumentError, (hurray.SafetensorError, ValueError))
    assert issubclass(_errors.SafetensorUnsupportedError, (hurray.SafetensorError, hurray.UnsupportedError))
    assert issubclass(_errors.SliceIndexError, (hurray.SafetensorError, IndexError))
    assert issubclass(_errors.InvalidTensorsError, (ValueError, TypeError))
    e = _errors.as_safetensor_error(hurray.FileError("m.hrry: bad"))
    assert isinstance(e, hurray.FileError) and isinstance(e, hurray.SafetensorError) and str(e) == "m.hrry: bad"
    for error in (e, _errors.TensorNotFoundError("File does not contain tensor x")):
        copy = pickle.loads(pickle.dumps(error))  # safetensors tests that its error pickles
        assert type(copy) is type(error) and str(copy) == str(error)
    assert str(_errors.TensorNotFoundError("File does not contain tensor x")) == "File does not contain tensor x"


def interesting_positions(data):
    """Every position within 16 bytes of a non-zero byte (headers, descriptors,
    index, KV, trailer, data), and every 512th of the zero padding between."""
    nonzero = [i for i, b in enumerate(data) if b]
    near = set()
    for i in nonzero:
        near.update(range(max(0, i - 16), min(len(data), i + 17)))
    near.update(range(0, len(data), 512))
    return sorted(near)


def test_every_truncation_raises(tmp_path):
    data = sample_file(tmp_path).read_bytes()
    path = tmp_path / "cut.hrry"
    for size in interesting_positions(data):
        path.write_bytes(data[:size])
        with pytest.raises(hurray.HurrayError):
            load_everything(path)


def test_every_corrupted_byte_raises_or_reads(tmp_path):
    data = sample_file(tmp_path).read_bytes()
    path = tmp_path / "flip.hrry"
    seen = set()
    for pos in interesting_positions(data):
        corrupted = bytearray(data)
        corrupted[pos] ^= 0x5A
        path.write_bytes(bytes(corrupted))
        try:
            load_everything(path)
        except hurray.HurrayError as e:
            seen.add(type(e))
            assert e.code is not None, str(e)
            assert str(path) in str(e)
    assert hurray.FileError in seen
    assert hurray.InvalidDescriptorError in seen or hurray.BufferError in seen or hurray.UnsupportedError in seen


def test_descriptor_errors_name_the_tensor(tmp_path):
    data = sample_file(tmp_path).read_bytes()
    path = tmp_path / "desc.hrry"
    messages = []
    for pos in interesting_positions(data):
        corrupted = bytearray(data)
        corrupted[pos] ^= 0xFF
        path.write_bytes(bytes(corrupted))
        try:
            f = hurray.open(path)
        except hurray.HurrayError:
            continue  # the container itself is broken or unsupported: no tensor to name
        try:
            for name in f.keys():
                f.info(name)
        except (hurray.InvalidDescriptorError, hurray.BufferError, hurray.UnsupportedError) as e:
            messages.append(str(e))
            # The same parts as data: the tensor, the file, the code and the offset.
            assert e.tensor == name, str(e)
            assert e.file == str(path), str(e)
            assert isinstance(e.code, str)
            assert e.offset is None or isinstance(e.offset, int)
    assert messages
    assert all("tensor '" in m for m in messages)


def test_attributes_default_to_none():
    e = hurray.FileError("x")
    assert (e.code, e.offset, e.file, e.tensor, e.field) == (None, None, None, None, None)


def test_open_errors_name_the_file_once(tmp_path):
    path = tmp_path / "bad.hrry"
    path.write_bytes(b"HRRYFILE" + b"\xff" * 200)
    with pytest.raises(hurray.FileError) as info:
        hurray.open(path)
    assert info.value.file == str(path)
    assert str(info.value).count(str(path)) == 1, str(info.value)


def test_types_without_a_numpy_dtype_are_described_but_not_loaded(tmp_path):
    # float16 and int16 files differ in the descriptor's element type tag only (in
    # place, and in its copy in the descriptor table); setting both bytes to bfloat16's
    # tag (0x02) gives a valid bfloat16 tensor.
    a, b = tmp_path / "a.hrry", tmp_path / "b.hrry"
    bits = np.array([[0x3F80, 0xC000, 0x0000], [0x4049, 0x7F80, 0x3E00]], np.uint16)  # bfloat16 bit patterns
    hurray.save(a, {"x": bits.view(np.float16)})
    hurray.save(b, {"x": bits.view(np.int16)})
    da, db = a.read_bytes(), b.read_bytes()
    diff = [i for i in range(len(da)) if da[i] != db[i]]
    assert len(diff) == 2 and all(da[i] == 0x01 and db[i] == 0x12 for i in diff)
    patched = bytearray(da)
    for i in diff:
        patched[i] = 0x02
    path = tmp_path / "bf16.hrry"
    path.write_bytes(bytes(patched))
    with hurray.open(path) as f:
        info = f.info("x")
        assert info["dtype"] == "bfloat16" and info["numpy_dtype"] is None and info["shape"] == (2, 3)
        with pytest.raises(hurray.UnsupportedError, match="tensor 'x'.*bfloat16"):
            f.get_tensor("x")
        # to_float32 converts it: bfloat16 is the top half of a float32.
        values = f.to_float32("x")
        assert values.dtype == np.float32 and values.shape == (2, 3)
        np.testing.assert_array_equal(values.view(np.uint32), bits.astype(np.uint32) << 16)


def test_to_float32_of_ordinary_tensors(tmp_path):
    path = tmp_path / "f.hrry"
    hurray.save(path, {"i": np.arange(-3, 3, dtype=np.int8).reshape(2, 3), "b": np.array([True, False]),
                       "e": np.zeros((0, 2), np.float64)})
    with hurray.open(path) as f:
        np.testing.assert_array_equal(f.to_float32("i"), np.arange(-3, 3, dtype=np.float32).reshape(2, 3))
        np.testing.assert_array_equal(f.to_float32("b"), [1.0, 0.0])
        assert f.to_float32("e").shape == (0, 2)
        with pytest.raises(KeyError):
            f.to_float32("missing")
