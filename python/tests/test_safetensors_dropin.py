# SPDX-License-Identifier: Apache-2.0
"""hurray.numpy, hurray.torch and hurray.safe_open behave as safetensors'
``safetensors.numpy``, ``safetensors.torch`` and ``safe_open`` do: code
written for safetensors runs by changing its imports.

safetensors is not installed here; each test says which behaviour of
huggingface/safetensors (bindings/python: py_src/safetensors/{numpy,torch}.py,
src/lib.rs, tests/test_simple.py, test_pt_comparison.py, test_pt_model.py) it
checks. Where this package deliberately does better, the test says so and
docs/python.md lists the difference."""

import copy
import gc
import hashlib
import pickle

import numpy as np
import pytest

import hurray
import hurray.numpy as hnp


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mapping_of(address):
    """The /proc/self/maps path (or name) of the mapping holding `address`, None if none."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return fields[5].strip() if len(fields) == 6 else ""
    return None


def rss_anon():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    pytest.skip("/proc/self/status has no RssAnon")


# --- 1. Writable arrays, without a copy ------------------------------------------------------------


def test_numpy_load_file_returns_writable_views_of_a_copy_on_write_mapping(tmp_path):
    """safetensors.numpy.load_file returns writable arrays (np.frombuffer over a
    bytearray copy); these are writable too, but views of the file's
    copy-on-write mapping: no copy, and the file never changes."""
    path = tmp_path / "w.hrry"
    tensors = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.array([1, -2, 3], np.int64),
               "s": np.float64(2.5), "q": np.array([True, False])}
    hnp.save_file(tensors, path)
    before = digest(path)
    loaded = hnp.load_file(path)
    for name, array in loaded.items():
        assert array.flags.writeable, name
    w = loaded["w"]
    assert w.flags.owndata is False and w.base is not None  # a view: its memory is the mapping's
    assert mapping_of(w.ctypes.data) == str(path.resolve())
    w *= 2
    loaded["b"][0] = 42
    loaded["s"][()] = -1
    loaded["q"][:] = True  # bools are unpacked copies: writable as well
    np.testing.assert_array_equal(w, tensors["w"] * 2)
    assert loaded["b"][0] == 42 and loaded["s"] == -1 and loaded["q"].all()
    assert digest(path) == before
    for name, array in hnp.load_file(path).items():  # a new load sees the file, not the writes
        np.testing.assert_array_equal(array, tensors[name])
    with hurray.safe_open(path, framework="np") as f:
        a = f.get_tensor("w")
        assert a.flags.writeable and not a.flags.owndata
        a[0, 0] = 7
        assert f.get_tensor("w")[0, 0] == 7  # one handle, one mapping (as safetensors' torch storage)
    assert digest(path) == before
    with hurray.open(path) as f:  # the native API keeps its read-only arrays
        assert not f.get_tensor("w").flags.writeable


def test_numpy_load_file_of_a_big_tensor_costs_no_anonymous_memory(tmp_path):
    """Zero-copy: loading and reading 64 MiB adds (almost) no anonymous memory;
    a write makes private only the pages it touches."""
    path = tmp_path / "big.hrry"
    big = np.arange(16 << 20, dtype=np.float32)  # 64 MiB
    hnp.save_file({"big": big}, path)
    del big
    gc.collect()
    before = rss_anon()
    loaded = hnp.load_file(path)["big"]
    assert float(loaded[::1024].sum()) == float(np.arange(0, 16 << 20, 1024, dtype=np.float64).sum())
    assert rss_anon() - before < 8 << 20
    loaded[5 << 20] = -1.0  # one page becomes private
    assert loaded[5 << 20] == -1.0
    assert rss_anon() - before < 8 << 20


def test_load_of_bytes_gives_writable_arrays_without_another_copy(tmp_path):
    """safetensors' load(bytes) returns writable arrays (over bytearrays); these
    view one private copy of the bytes, mapped copy-on-write (a memfd)."""
    tensors = {"b": np.arange(6, dtype=np.int16).reshape(2, 3), "a": np.ones(1 << 16, np.float32)}
    data = hnp.save(tensors)
    loaded = hnp.load(data)
    assert list(loaded) == ["a", "b"]
    a = loaded["a"]
    assert a.flags.writeable and not a.flags.owndata
    where = mapping_of(a.ctypes.data)
    if where is not None and "memfd:" in where:  # Linux: an in-memory file, not a copy per array
        assert "hurray-bytes" in where
    a[:] = 3
    assert (hnp.load(data)["a"] == 1).all() and hnp.load(data).keys() == loaded.keys()
    with pytest.raises(hurray.FileError, match="<bytes>") as info:  # errors still name <bytes>
        hnp.load(data[:100])
    assert isinstance(info.value, hurray.SafetensorError)
    with pytest.raises(TypeError):
        hnp.load("not bytes")


# --- 2. Views of one storage: disjoint ones are saved, overlapping ones refused ------------------------


def test_numpy_views_of_one_buffer_are_saved(tmp_path):
    """safetensors.numpy checks no sharing: views of one base, overlapping or
    not, are each saved (a non-contiguous one from a contiguous copy here,
    where safetensors would write the wrong bytes)."""
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    views = {"top": base[:2], "bottom": base[2:], "all": base, "col": base[:, 1]}
    hnp.save_file(views, tmp_path / "v.hrry")
    for name, array in hnp.load_file(tmp_path / "v.hrry").items():
        np.testing.assert_array_equal(array, views[name])


torch = None


@pytest.fixture
def pt():
    global torch
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    import hurray.torch as ht
    return ht


def test_disjoint_views_of_one_storage_are_saved(pt, tmp_path):
    """test_pt_comparison.py::test_disjoint_tensors_shared_storage: A[1:] and A[:1] are saved;
    so are the three chunks of a fused qkv."""
    A = torch.arange(100, dtype=torch.float32).reshape(10, 10)
    pt.save_file({"test": A[1:], "test2": A[:1]}, tmp_path / "d.hrry")
    got = pt.load_file(tmp_path / "d.hrry")
    assert torch.equal(got["test"], A[1:]) and torch.equal(got["test2"], A[:1])
    qkv = torch.randn(3 * 8, 4)
    q, k, v = qkv.chunk(3)
    data = pt.save({"q": q, "k": k, "v": v})
    got = pt.load(data)
    assert all(torch.equal(got[n], t) for n, t in (("q", q), ("k", k), ("v", v)))


def test_overlapping_views_are_refused_with_safetensors_error(pt, tmp_path):
    """test_pt_comparison.py::test_cannot_serialize_shared: A with A[:1], A with A[1:]:
    RuntimeError naming the tensors and pointing at save_model."""
    A = torch.arange(6, dtype=torch.float32).reshape((2, 3))
    for B in (A[:1], A[1:]):
        for call in (lambda: pt.save_file({"A": A, "B": B}, tmp_path / "o.hrry"), lambda: pt.save({"A": A, "B": B})):
            with pytest.raises(RuntimeError, match=r"share memory.*\{'A', 'B'\}.*save_model") as info:
                call()
            assert isinstance(info.value, pt.SharedTensorsError)
    assert not (tmp_path / "o.hrry").exists()


def test_find_shared_tensors_groups_as_safetensors(pt):
    """test_pt_model.py: test_find_shared_tensors, test_find_shared_non_shared_tensors,
    test_is_complete, test_end_ptr, test_remove_duplicate_names; test_simple.py::
    test_pt_sf_save_model_overlapping_storage (one address, two storage sizes: not shared)."""
    A = torch.zeros((3, 3))
    B = A[:1, :]
    assert pt._find_shared_tensors({"A": A, "B": B}) == [{"A", "B"}]
    assert pt._find_shared_tensors({"A": A}) == [{"A"}]
    C = torch.zeros((2, 2), device="meta")
    assert pt._find_shared_tensors({"C": C, "D": C[:1]}) == []
    A = torch.zeros((4,))
    assert pt._find_shared_tensors({"B": A[:2], "C": A[2:]}) == [{"B"}, {"C"}]
    assert pt._find_shared_tensors({"B": A[:2], "C": A[1:]}) == [{"B", "C"}]
    assert pt._find_shared_tensors({"B": A[:2], "C": A[2:], "D": A[:1]}) == [{"B", "D"}, {"C"}]
    # Better than safetensors, which compares with the last range's end only:
    # Z overlaps X although it starts past the end of Y.
    A = torch.zeros((16,))
    assert pt._find_shared_tensors({"X": A, "Y": A[4:8], "Z": A[10:12]}) == [{"X", "Y", "Z"}]
    A = torch.zeros((3, 3))
    assert pt._is_complete(A) and not pt._is_complete(A[:1, :]) and not pt._is_complete(A[::2, :])
    assert pt._is_complete(torch.zeros((2, 2), device="meta"))
    A = torch.zeros((16,))
    assert pt._end_ptr(A[::4]) - A.data_ptr() == 16 * 3 + 4
    H = torch.zeros((16,), dtype=torch.float16)
    assert pt._end_ptr(H[::4]) - H.data_ptr() == 8 * 3 + 2
    assert pt._end_ptr(A[:0]) == A[:0].data_ptr()  # empty: ends where it starts
    B = torch.zeros((3, 3))[:1, :]
    A = B._base
    assert pt._remove_duplicate_names({"A": A, "B": B}) == {"A": ["B"]}
    assert pt._remove_duplicate_names({"A": A, "B": B, "C": A}) == {"A": ["B", "C"]}
    with pytest.raises(RuntimeError, match="None is covering the entire storage"):
        pt._remove_duplicate_names({"B": B})
    m = torch.randn(10)
    n = torch.empty([], dtype=m.dtype)
    smaller = m.untyped_storage()[:16] if hasattr(m, "untyped_storage") else m.storage().untyped()[:16]
    n.set_(source=smaller)
    assert pt.storage_ptr(n) == pt.storage_ptr(m) and pt.storage_size(n) == 16 and pt.storage_size(m) == 40
    assert pt._find_shared_tensors({"m": m, "n": n}) == [{"m"}, {"n"}]


# --- 3, 4. Exception classes ---------------------------------------------------------------------


def test_missing_file_raises_file_not_found(pt, tmp_path):
    """test_simple.py::ErrorsTestCase::test_file_not_found: FileNotFoundError."""
    for call in (lambda p: hurray.safe_open(p, framework="pt"), pt.load_file, hnp.load_file,
                 lambda p: hurray.safe_open(p, framework="np"), hurray.load, hurray.open):
        with pytest.raises(FileNotFoundError):
            call(tmp_path / "notafile")


def test_safetensor_error_is_exported_and_raised_for_missing_names(pt, tmp_path):
    """safetensors exports SafetensorError and raises it for a name the file lacks
    ("File does not contain tensor x"); here it is a KeyError too."""
    assert hurray.SafetensorError is hnp.SafetensorError is pt.SafetensorError
    assert "SafetensorError" in hurray.__all__ and "SafetensorError" in pt.__all__
    hnp.save_file({"a": np.ones(2)}, tmp_path / "m.hrry")
    for framework in ("np", "pt"):
        with hurray.safe_open(tmp_path / "m.hrry", framework=framework) as f:
            for call in (f.get_tensor, f.get_slice):
                with pytest.raises(hurray.SafetensorError, match="^File does not contain tensor x$") as info:
                    call("x")
                assert isinstance(info.value, KeyError)


def test_save_of_no_dict_or_no_tensor_raises_value_error(pt, tmp_path):
    """test_pt_comparison.py::test_bogus: ValueError with safetensors' messages;
    a TypeError too (what these calls raised before)."""
    path = tmp_path / "b.hrry"
    cases = [(pt.save_file, {"test": {"some": "thing"}}, "Key `test` is invalid, expected torch.Tensor but received <class 'dict'>"),
             (pt.save_file, "notadict", "Expected a dict of [str, torch.Tensor] but received <class 'str'>"),
             (hnp.save_file, {"test": {"some": "thing"}}, "Key `test` is invalid, expected np.ndarray but received <class 'dict'>"),
             (hnp.save_file, "notadict", "Expected a dict of [str, np.ndarray] but received <class 'str'>")]
    for save_file, tensors, message in cases:
        with pytest.raises(ValueError) as info:
            save_file(tensors, path)
        assert str(info.value) == message and isinstance(info.value, TypeError)
        with pytest.raises(ValueError):
            (pt.save if save_file is pt.save_file else hnp.save)(tensors)
    assert not path.exists()


def test_sparse_non_contiguous_and_meta_tensors(pt, tmp_path):
    """test_pt_comparison.py: test_sparse (ValueError), test_cannot_serialize_a_non_contiguous_tensor
    (ValueError), test_meta_tensor (RuntimeError "Cannot copy out of meta tensor")."""
    path = tmp_path / "x.hrry"
    with pytest.raises(ValueError):
        pt.save_file({"test": torch.sparse_coo_tensor(size=(2, 3))}, path)
    with pytest.raises(ValueError):
        pt.save_file({"test": torch.arange(6.0).reshape((1, 2, 3))[:, :, 1]}, path)
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor"):
        pt.save_file({"test": torch.zeros((10, 10), device="meta")}, path)


def test_corrupt_files_raise_safetensor_error_and_file_error(pt, tmp_path):
    """safetensors raises SafetensorError ("Error while deserializing header") for a bad
    file; here the same error is also the FileError the native calls raise."""
    path = tmp_path / "bad.hrry"
    path.write_bytes(b"not a hurray file at all" * 10)
    for call in (hnp.load_file, pt.load_file, lambda p: hurray.safe_open(p, framework="np"),
                 lambda p: hnp.load(p.read_bytes()), lambda p: pt.load(p.read_bytes())):
        with pytest.raises(hurray.SafetensorError) as info:
            call(path)
        assert isinstance(info.value, hurray.FileError) and info.value.code is not None
        copy_ = pickle.loads(pickle.dumps(info.value))
        assert type(copy_) is type(info.value)
    with pytest.raises(hurray.FileError) as info:
        hurray.load(path)
    assert not isinstance(info.value, hurray.SafetensorError)  # the native API: its own classes


# --- 5. save_model / load_model, devices -------------------------------------------------------------


def _models():
    class OnesModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.a.weight = torch.nn.Parameter(torch.ones((4, 4)))
            self.a.bias = torch.nn.Parameter(torch.ones((4,)))
            self.b = self.a

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(100, 100)
            self.b = self.a

    class NonContiguousModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(100, 100)
            self.a.weight = torch.nn.Parameter(torch.zeros((100, 100)).transpose(0, 1))

    class CopyModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(100, 100)
            self.b = copy.deepcopy(self.a)

    class NoSharedModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(100, 100)
            self.b = torch.nn.Linear(100, 100)

    return OnesModel, Model, NonContiguousModel, CopyModel, NoSharedModel


def _assert_same_state(model, model2):
    state_dict = model.state_dict()
    for k, v in model2.state_dict().items():
        torch.testing.assert_close(v, state_dict[k])


def test_save_model_and_load_model_as_safetensors(pt, tmp_path):
    """test_pt_model.py: test_failure, test_save, test_workaround, test_workaround_copy,
    test_workaround_works_with_different_on_file_names, test_workaround_non_contiguous."""
    OnesModel, Model, NonContiguousModel, CopyModel, _ = _models()
    with pytest.raises(RuntimeError):
        pt.save_file(Model().state_dict(), tmp_path / "fail.hrry")

    model = OnesModel()
    user_metadata = {"format": "pt"}
    pt.save_model(model, tmp_path / "ones.hrry", metadata=user_metadata)
    assert user_metadata == {"format": "pt"}  # not changed (safetensors writes into it)
    with hurray.safe_open(tmp_path / "ones.hrry", framework="pt") as f:
        assert f.metadata() == {"format": "pt", "b.bias": "a.bias", "b.weight": "a.weight"}
        assert f.keys() == ["a.bias", "a.weight"]
    model2 = OnesModel()
    torch.nn.init.zeros_(model2.a.weight)
    assert pt.load_model(model2, tmp_path / "ones.hrry") == (set(), [])
    _assert_same_state(model, model2)
    assert model2.b.weight is model2.a.weight  # still tied

    model = Model()
    pt.save_model(model, tmp_path / "tied.hrry")
    with hurray.safe_open(tmp_path / "tied.hrry", framework="pt") as f:
        assert f.metadata() == {"b.bias": "a.bias", "b.weight": "a.weight"}
    model2 = Model()
    pt.load_model(model2, tmp_path / "tied.hrry")
    _assert_same_state(model, model2)

    model = CopyModel()
    assert pt._find_shared_tensors(model.state_dict()) == [{"a.weight"}, {"a.bias"}, {"b.weight"}, {"b.bias"}]
    pt.save_model(model, tmp_path / "copy.hrry")
    model2 = CopyModel()
    pt.load_model(model2, tmp_path / "copy.hrry")
    _assert_same_state(model, model2)

    model = Model()  # the file holds the tied names under b.*
    state_dict = model.state_dict()
    state_dict.pop("a.weight")
    state_dict.pop("a.bias")
    pt.save_file(state_dict, tmp_path / "b.hrry")
    model2 = Model()
    pt.load_model(model2, tmp_path / "b.hrry")
    _assert_same_state(model, model2)

    model = NonContiguousModel()
    with pytest.raises(ValueError, match=r"use save_model\(\.\.\., force_contiguous=True\)"):
        pt.save_model(model, tmp_path / "nc.hrry", force_contiguous=False)
    pt.save_model(model, tmp_path / "nc.hrry")  # force_contiguous defaults to True, as in safetensors
    model2 = NonContiguousModel()
    pt.load_model(model2, tmp_path / "nc.hrry")
    _assert_same_state(model, model2)


def test_load_model_reports_missing_and_unexpected(pt, tmp_path):
    """test_pt_model.py: test_difference_with_torch (missing tied names of an untied
    model) and test_difference_torch_odd (unexpected); strict=False returns them."""
    _, Model, _, _, NoSharedModel = _models()
    pt.save_model(Model(), tmp_path / "tied.hrry")
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "b.bias", "b.weight"'):
        pt.load_model(NoSharedModel(), tmp_path / "tied.hrry")
    missing, unexpected = pt.load_model(NoSharedModel(), tmp_path / "tied.hrry", strict=False)
    assert missing == {"b.bias", "b.weight"} and unexpected == []

    pt.save_model(NoSharedModel(), tmp_path / "untied.hrry")
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "b.bias", "b.weight"') as info:
        pt.load_model(Model(), tmp_path / "untied.hrry")
    assert str(info.value).startswith("Error(s) in loading state_dict for Model:")
    missing, unexpected = pt.load_model(Model(), tmp_path / "untied.hrry", strict=False)
    assert missing == set() and sorted(unexpected) == ["b.bias", "b.weight"]


def test_devices_as_safetensors_takes_them(pt, tmp_path):
    """safe_open(..., device=...) and load_file(..., device=...): "cpu" (the default),
    a device string or an int; other devices get .to(device), failing as torch
    fails where the device is absent; an unknown name is a SafetensorError; numpy
    arrays live on the cpu only (SafetensorError "Device ... is not supported")."""
    path = tmp_path / "d.hrry"
    pt.save_file({"w": torch.arange(4.0)}, path)
    with hurray.safe_open(path, framework="pt") as f:
        assert f.get_tensor("w").device.type == "cpu"
    with hurray.safe_open(path, framework="pt", device=torch.device("cpu")) as f:
        assert f.get_slice("w")[1:].device.type == "cpu"
    for bad in ("nowhere", "cuda:x", 1.5):
        with pytest.raises(hurray.SafetensorError, match="is invalid") as info:
            hurray.safe_open(path, framework="pt", device=bad)
        assert isinstance(info.value, ValueError)
        with pytest.raises(hurray.SafetensorError):
            pt.load_file(path, device=bad)
    with pytest.raises(hurray.SafetensorError, match="Device cuda is not supported for framework numpy"):
        hurray.safe_open(path, framework="np", device="cuda")
    if not torch.cuda.is_available():
        try:
            torch.zeros(1).to("cuda:0")
        except Exception as e:  # noqa: BLE001 - whatever torch raises, we raise
            absent = type(e)
        for device in ("cuda:0", 0):
            with hurray.safe_open(path, framework="pt", device=device) as f:  # opens, as safetensors does
                with pytest.raises(absent):
                    f.get_tensor("w")
                with pytest.raises(absent):
                    f.get_slice("w")[:1]
            with pytest.raises(absent):
                pt.load_file(path, device=device)


# --- 6. Indexing -------------------------------------------------------------------------------------


def test_numpy_get_slice_indexing_as_safetensors_and_numpy(tmp_path):
    """test_simple.py::test_numpy_slice: the shapes safetensors gives; an all-int index
    gives a 0-d array (safetensors' shape []), not a numpy scalar; out of range:
    SafetensorError (an IndexError too). Beyond safetensors: steps, negative
    slice bounds, ellipsis, None and index lists, as numpy has them."""
    A = np.random.default_rng(0).random((10, 5))
    hnp.save_file({"a": A}, tmp_path / "s.hrry")
    with hurray.safe_open(tmp_path / "s.hrry", framework="np", device="cpu") as f:
        s = f.get_slice("a")
        for index, shape in (((slice(None),), [10, 5]), ((), [10, 5]), (slice(None, 2), [2, 5]),
                             ((slice(None), slice(None, 2)), [10, 2]), ((0, slice(None, 2)), [2]),
                             ((slice(2, None), 0), [8]), ((slice(2, None), -1), [8]), ((slice(2, None), -5), [8]),
                             ([], [0, 5]), ((3, 4), []), (-1, [5])):
            got = s[index]
            assert isinstance(got, np.ndarray) and list(got.shape) == shape, index
            np.testing.assert_array_equal(got, A[index])
            assert got.flags.writeable and got.flags.owndata  # a copy of just the slice
        scalar = s[3, 4]
        assert scalar.ndim == 0 and scalar == A[3, 4] and scalar.dtype == A.dtype
        for index in ((slice(2, None), -6), (slice(2, None), 20), 10):
            with pytest.raises(hurray.SafetensorError) as info:
                s[index]
            assert isinstance(info.value, IndexError)
        for index in ((slice(None, None, 2), slice(None, None, -1)), (Ellipsis, 1), (slice(-3, None), None),
                      [0, 2], (slice(None), [4, 0])):
            np.testing.assert_array_equal(s[index], A[index])


def test_torch_get_slice_indexing(pt, tmp_path):
    """test_simple.py::test_torch_slice and test_pt_comparison.py::test_deserialization_slice;
    an all-int index gives a 0-d tensor, as torch indexing does."""
    A = torch.randn((10, 5))
    pt.save_file({"a": A}, tmp_path / "t.hrry")
    with hurray.safe_open(tmp_path / "t.hrry", framework="pt", device="cpu") as f:
        s = f.get_slice("a")
        assert s.get_shape() == [10, 5] and s.get_dtype() == "F32"
        for index, shape in ((slice(None), [10, 5]), ((), [10, 5]), (slice(None, 2), [2, 5]),
                             ((slice(None), slice(None, 2)), [10, 2]), ((0, slice(None, 2)), [2]),
                             ((slice(2, None), -1), [8]), ([], [0, 5]), ((3, 4), [])):
            got = s[index]
            assert list(got.shape) == shape, index
            torch.testing.assert_close(got, A[index])
        with pytest.raises(hurray.SafetensorError) as info:
            s[2:, 20]
        assert isinstance(info.value, IndexError)


# --- 7. Key order ---------------------------------------------------------------------------------


def test_keys_are_sorted_in_the_drop_ins_only(pt, tmp_path):
    """safetensors' safe_open.keys() is sorted (lib.rs: keys.sort()); offset_keys()
    follows the data in the file, get_tensors() too; load_file's dict is sorted.
    The native hurray.open(...).keys() and hurray.load keep write order."""
    order = ["zeta", "alpha", "mid.10", "mid.2", "Beta"]
    arrays = {name: np.full(3, i, np.float32) for i, name in enumerate(order)}
    path = tmp_path / "k.hrry"
    hnp.save_file(arrays, path)
    for framework in ("np", "pt"):
        with hurray.safe_open(path, framework=framework) as f:
            assert f.keys() == sorted(order)
            assert f.offset_keys() == order  # written in this order
            assert list(f.get_tensors()) == order
    assert list(hnp.load_file(path)) == sorted(order)
    assert list(hnp.load(path.read_bytes())) == sorted(order)
    assert list(pt.load_file(path)) == sorted(order)
    assert list(pt.load(path.read_bytes())) == sorted(order)
    with hurray.open(path) as f:
        assert f.keys() == order
    assert list(hurray.load(path)) == order


# --- 8. The rest of safe_open's API ------------------------------------------------------------------


def test_safe_open_api(pt, tmp_path):
    """safe_open as test_simple.py and lib.rs have it: a context manager; metadata()
    None without metadata; keys(), offset_keys(), get_tensor(s), get_slice;
    a closed handle raises SafetensorError ("File is closed"), slices taken
    before keep working; framework names and the keyword backend."""
    path = tmp_path / "api.hrry"
    pt.save_file({"a": torch.zeros((2, 2)), "b": torch.zeros((2, 3), dtype=torch.uint8)}, path)
    with hurray.safe_open(path, framework="pt") as f:
        pass
    with pytest.raises(hurray.SafetensorError, match="File is closed"):
        f.keys()
    for call in (f.metadata, f.offset_keys, f.get_tensors, lambda: f.get_tensor("a"), lambda: f.get_slice("a")):
        with pytest.raises(hurray.SafetensorError):
            call()
    with hurray.safe_open(path, framework="np") as f:
        s = f.get_slice("b")
        assert f.metadata() is None
    assert s[1:].shape == (1, 3) and s.get_dtype() == "U8"  # after __exit__, as safetensors' slices
    f = hurray.safe_open(path, "np")  # without a `with`, framework positional
    assert isinstance(f.get_tensor("a"), np.ndarray)
    for backend in ("mmap", "pread"):
        with hurray.safe_open(path, framework="np", backend=backend) as f:
            assert f.keys() == ["a", "b"]
        assert list(hnp.load_file(path, backend=backend)) == ["a", "b"]
        assert list(pt.load_file(path, backend=backend)) == ["a", "b"]
    with pytest.raises(hurray.SafetensorError, match="backend"):
        hurray.safe_open(path, framework="np", backend="io_uring")
    for framework in ("tf", "tensorflow", "flax", "jax", "mlx", "paddle"):
        with pytest.raises(hurray.SafetensorError) as info:
            hurray.safe_open(path, framework=framework)
        assert isinstance(info.value, hurray.UnsupportedError)


def test_readme_examples(pt, tmp_path):
    """test_simple.py::ReadmeTestCase: numpy and torch examples, 0-d bool, zero-sized tensors,
    os.PathLike paths; and test_pt_comparison.py::test_odd_dtype."""
    tensors = {"a": np.zeros((2, 2)), "b": np.zeros((2, 3), dtype=np.uint8)}
    hnp.save_file(tensors, tmp_path / "np.hrry")
    for loaded in (hnp.load_file(tmp_path / "np.hrry"), hnp.load(hnp.save(tensors))):
        assert loaded.keys() == tensors.keys()
        assert all(np.allclose(tensors[k], loaded[k]) for k in tensors)
    b = {"a": np.asarray(False)}
    hnp.save_file(b, tmp_path / "bool.hrry")
    for loaded in (hnp.load_file(str(tmp_path / "bool.hrry")), hnp.load(hnp.save(b))):
        assert loaded["a"].shape == () and not loaded["a"]
    data = {"test": torch.randn((2, 2), dtype=torch.bfloat16), "test2": torch.randn((2, 2), dtype=torch.float16),
            "test3": torch.zeros((2, 2), dtype=torch.bool), "test4": torch.zeros((2, 2), dtype=torch.complex64),
            "z": torch.zeros((2, 0)), "z2": torch.zeros((2, 0))}
    data["test3"][0, 0] = True
    pt.save_file(data, tmp_path / "odd.hrry")
    for reloaded in (pt.load_file(tmp_path / "odd.hrry"), pt.load((tmp_path / "odd.hrry").read_bytes())):
        for k, v in data.items():
            assert torch.equal(v, reloaded[k]), k
