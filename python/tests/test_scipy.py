# SPDX-License-Identifier: Apache-2.0
"""scipy.sparse interop: hurray.from_scipy, Tensor.to_scipy, the CSR/CSC component views."""

import gc
import subprocess
import sys

import numpy as np
import pytest

import hurray

sp = pytest.importorskip("scipy.sparse")

# Value dtypes SciPy keeps as they are (float16 it widens to float32).
SCIPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64", "complex64", "complex128"]
KINDS = {"csr": (sp.csr_matrix, "col_indices", "row_ptr"), "csc": (sp.csc_matrix, "row_indices", "col_ptr"),
         "csr_array": (sp.csr_array, "col_indices", "row_ptr"), "csc_array": (sp.csc_array, "row_indices", "col_ptr")}


def dense_sample(dtype, shape=(5, 7), seed=3):
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < 0.35
    if np.dtype(dtype).kind == "b":
        return mask
    values = rng.integers(1, 100, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-9, 9, shape).astype(dtype)
    return np.where(mask, values, 0).astype(dtype)


def as_uint64(m):
    """`m` with its index arrays cast to uint64, as from_scipy requires."""
    m.indices = m.indices.astype(np.uint64)
    m.indptr = m.indptr.astype(np.uint64)
    return m


def scipy_matrix(kind, dense):
    return as_uint64(KINDS[kind][0](dense))


# ── from_scipy ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dtype", SCIPY_DTYPES)
def test_every_format_and_dtype_round_trips(kind, dtype):
    dense = dense_sample(dtype)
    m = scipy_matrix(kind, dense)
    t = hurray.from_scipy(m)
    layout = kind[:3]
    assert t.layout == (hurray.CsrLayout(m.nnz) if layout == "csr" else hurray.CscLayout(m.nnz))
    assert t.shape == dense.shape and t.nnz == m.nnz and t.buffer_count == 3
    assert t.dtype == hurray.Dtype.from_name(dtype)
    if np.dtype(dtype).kind != "c":
        np.testing.assert_array_equal(t.to_dense(), dense.astype(np.float32))
    back = t.to_scipy()
    assert isinstance(back, sp.csr_matrix if layout == "csr" else sp.csc_matrix)
    assert back.dtype == np.dtype(dtype) and back.shape == dense.shape
    np.testing.assert_array_equal(back.toarray(), dense)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_components_view_the_matrix_arrays(kind):
    dense = dense_sample("float64", (6, 4))
    m = scipy_matrix(kind, dense)
    t = hurray.from_scipy(m)
    _, index_name, pointer_name = KINDS[kind]
    values, index, pointer = (np.asarray(t.values), np.asarray(getattr(t, index_name)),
                              np.asarray(getattr(t, pointer_name)))
    assert np.shares_memory(values, m.data)
    assert np.shares_memory(index, m.indices) and np.shares_memory(pointer, m.indptr)
    assert index.dtype == np.uint64 and pointer.dtype == np.uint64
    assert values.shape == (m.nnz,) and index.shape == (m.nnz,)
    assert pointer.shape == (dense.shape[0 if kind.startswith("csr") else 1] + 1,)
    m.data[0] = 123.0  # the tensor sees writes to the matrix
    assert np.asarray(t.values)[0] == 123.0


def test_hasattr_follows_the_layout():
    csr = hurray.from_scipy(scipy_matrix("csr", np.eye(3)))
    csc = hurray.from_scipy(scipy_matrix("csc", np.eye(3)))
    for present in ("nnz", "values", "col_indices", "row_ptr"):
        assert hasattr(csr, present)
    for absent in ("indices", "row_indices", "col_ptr"):
        assert not hasattr(csr, absent)
    for present in ("nnz", "values", "row_indices", "col_ptr"):
        assert hasattr(csc, present)
    for absent in ("indices", "col_indices", "row_ptr"):
        assert not hasattr(csc, absent)
    with pytest.raises(AttributeError, match="csr"):
        csr.row_indices


def test_the_tensor_keeps_the_arrays_alive():
    m = scipy_matrix("csr", np.diag([4.0, 5.0, 6.0]))
    t = hurray.from_scipy(m)
    values = t.values
    del m, t
    gc.collect()
    np.testing.assert_array_equal(np.asarray(values), [4.0, 5.0, 6.0])


def test_bool_values_are_packed_into_a_new_buffer():
    dense = dense_sample("bool", (4, 9))
    m = scipy_matrix("csr", dense)
    t = hurray.from_scipy(m)
    assert t.dtype == hurray.bool and t.buffer(0).nbytes == (m.nnz + 7) // 8
    np.testing.assert_array_equal(np.asarray(t.values), m.data)
    np.testing.assert_array_equal(t.to_scipy().toarray(), dense)


@pytest.mark.parametrize("shape", [(0, 5), (4, 0), (3, 3)])
def test_empty_matrices(shape):
    m = as_uint64(sp.csr_matrix(shape, dtype=np.float32))
    t = hurray.from_scipy(m)
    assert t.nnz == 0 and t.shape == shape
    assert np.asarray(t.row_ptr).tolist() == [0] * (shape[0] + 1)
    assert t.to_scipy().shape == shape and t.to_scipy().nnz == 0


def test_spare_capacity_past_nnz_is_allowed():
    m = scipy_matrix("csr", np.eye(3))
    m.data = np.concatenate([m.data, [99.0, 99.0]])
    m.indices = np.concatenate([m.indices, np.zeros(2, np.uint64)])
    t = hurray.from_scipy(m)
    assert t.nnz == 3 and np.asarray(t.values).tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_array_equal(t.to_dense(), np.eye(3))


def test_large_indices_round_trip():
    m = as_uint64(sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 3_000_000_000]), np.array([0, 1, 2])),
                                shape=(2, 3_000_000_001)))
    t = hurray.from_scipy(m)
    assert np.asarray(t.col_indices).tolist() == [0, 3_000_000_000]
    back = t.to_scipy()
    assert back.indices.dtype == np.int64 and back[1, 3_000_000_000] == 2.0


# ── from_scipy errors ─────────────────────────────────────────────────────────


@pytest.mark.parametrize("which", ["indices", "indptr"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint32])
def test_indices_must_be_uint64(which, index_dtype):
    m = scipy_matrix("csr", np.eye(3))
    setattr(m, which, getattr(m, which).astype(index_dtype))
    with pytest.raises(hurray.UnsupportedError, match=rf"{which}.*uint64"):
        hurray.from_scipy(m)


def test_scipy_default_int32_indices_are_refused():
    with pytest.raises(hurray.UnsupportedError, match="astype"):
        hurray.from_scipy(sp.csr_matrix(np.eye(2)))


def test_coo_is_refused_with_the_sparse_coo_recipe():
    m = sp.coo_matrix(np.eye(3, dtype=np.float32))
    with pytest.raises(hurray.UnsupportedError, match="sparse_coo"):
        hurray.from_scipy(m)
    t = hurray.sparse_coo(m.data, np.stack([m.row, m.col], axis=1).astype(np.uint64), m.shape)
    assert t.nnz == 3 and t.layout.name == "coo"


@pytest.mark.parametrize("convert", ["tolil", "todok", "tobsr", "todia"])
def test_other_formats_are_refused(convert):
    m = getattr(sp.csr_matrix(np.eye(3)), convert)()
    with pytest.raises(hurray.UnsupportedError, match=m.format.upper()):
        hurray.from_scipy(m)


@pytest.mark.parametrize("obj", [np.eye(2), [[1.0]], None, hurray.from_numpy(np.eye(2))])
def test_non_sparse_objects_raise_type_error(obj):
    with pytest.raises(TypeError, match="scipy.sparse"):
        hurray.from_scipy(obj)


def test_value_dtypes_without_a_hurray_type_are_refused():
    m = scipy_matrix("csr", np.eye(2))
    m.data = m.data.astype(np.longdouble)
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_scipy(m)
    m.data = np.eye(2).diagonal().astype(">f8")
    with pytest.raises(hurray.UnsupportedError, match="big-endian"):
        hurray.from_scipy(m)


def test_non_contiguous_index_arrays_raise_buffer_error():
    m = scipy_matrix("csr", np.eye(3))
    spaced = np.zeros(6, np.uint64)
    spaced[::2] = m.indices
    m.indices = spaced[::2]
    with pytest.raises(hurray.BufferError, match="contiguous"):
        hurray.from_scipy(m)


@pytest.mark.parametrize(("indices", "indptr", "message"), [
    ([2, 0], [0, 2, 2], "increasing.*sum_duplicates"),  # unsorted in a row
    ([1, 1], [0, 2, 2], "repeats.*sum_duplicates"),     # a duplicate
    ([0, 7], [0, 2, 2], "not below shape"),             # out of range
    ([0, 1], [0, 2, 1], "non-decreasing"),              # a pointer going back
])
def test_the_core_checks_the_data(indices, indptr, message):
    m = as_uint64(sp.csr_matrix((np.array([1.0, 2.0]), np.array(indices), np.array(indptr)), shape=(2, 3)))
    with pytest.raises(hurray.InvalidDescriptorError, match=message):
        hurray.from_scipy(m)


# ── to_scipy ──────────────────────────────────────────────────────────────────


def test_to_scipy_shares_the_values():
    t = hurray.from_scipy(scipy_matrix("csc", dense_sample("float32")))
    back = t.to_scipy()
    assert isinstance(back, sp.csc_matrix)
    assert np.shares_memory(back.data, np.asarray(t.values))


def test_to_scipy_of_a_hand_built_tensor():
    t = hurray.Tensor(np.array([5.0, 7.0], np.float32), hurray.float32, [2, 3],
                      aux_buffers=[np.array([2, 0], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2))
    np.testing.assert_array_equal(t.to_scipy().toarray(), [[0, 0, 5], [7, 0, 0]])
    np.testing.assert_array_equal(t.T.to_scipy().toarray(), [[0, 7], [0, 0], [5, 0]])


def test_to_scipy_refuses_other_layouts():
    coo = hurray.sparse_coo(np.array([1.0]), np.array([[0, 1]], np.uint64), [2, 2])
    with pytest.raises(hurray.UnsupportedError, match="COO"):
        coo.to_scipy()
    with pytest.raises(hurray.UnsupportedError, match="row_major"):
        hurray.from_numpy(np.eye(2)).to_scipy()


def test_to_scipy_refuses_types_numpy_lacks():
    t = hurray.Tensor(bytes(4), hurray.bfloat16, [2, 2],
                      aux_buffers=[np.array([0, 1], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2))
    with pytest.raises(hurray.UnsupportedError, match="bfloat16"):
        t.to_scipy()


# ── through files and streams ─────────────────────────────────────────────────


@pytest.mark.parametrize("kind", ["csr", "csc"])
@pytest.mark.parametrize("dtype", ["bool", "int16", "uint64", "float32", "float64", "complex128"])
def test_file_round_trip(tmp_path, kind, dtype):
    dense = dense_sample(dtype, (7, 5))
    path = tmp_path / "m.hrry"
    hurray.save(path, {"m": hurray.from_scipy(scipy_matrix(kind, dense)), "d": np.ones(3)})
    back = hurray.load(path)["m"]
    assert back.layout.name == kind and back.dtype == hurray.Dtype.from_name(dtype)
    np.testing.assert_array_equal(back.to_scipy().toarray(), dense)
    with hurray.open(path) as f:
        assert f.tensor("m").nnz == back.nnz


def test_stream_round_trip():
    parts = {"csr": scipy_matrix("csr", dense_sample("float64")), "csc": scipy_matrix("csc", dense_sample("int32"))}
    writer = hurray.StreamWriter()
    for m in parts.values():
        writer.write(hurray.from_scipy(m))
    got = list(hurray.StreamReader(writer.getvalue()))
    assert [t.layout.name for t in got] == ["csr", "csc"]
    for t, m in zip(got, parts.values()):
        np.testing.assert_array_equal(t.to_scipy().toarray(), m.astype(m.dtype).tocoo().toarray())


# ── SciPy is optional ─────────────────────────────────────────────────────────


def test_without_scipy_only_the_scipy_calls_fail():
    code = (
        "import sys\n"
        "sys.modules['scipy'] = None\n"
        "sys.modules['scipy.sparse'] = None\n"
        "import numpy as np, hurray\n"
        "t = hurray.Tensor(np.array([1.0], np.float32), hurray.float32, [1, 2],\n"
        "                  aux_buffers=[np.array([1], np.uint64), np.array([0, 1], np.uint64)],\n"
        "                  layout=hurray.CsrLayout(nnz=1))\n"
        "print(repr(t))\n"
        "for call in (lambda: hurray.from_scipy(object()), t.to_scipy):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        print('ImportError:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == "hurray.Tensor(layout='csr', shape=(1, 2), nnz=1, dtype=float32)"
    assert len(lines) == 3 and all(line.startswith("ImportError:") and "SciPy" in line for line in lines[1:])


def test_components_keep_the_device_label():
    t = hurray.Tensor(np.array([1.0, 2.0]), hurray.float64, [2, 3], device=hurray.Device("cuda", 0),
                      aux_buffers=[np.array([0, 1], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2))
    assert {str(c.device) for c in (t.values, t.col_indices, t.row_ptr)} == {"cuda"}
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        t.to_scipy()


def test_to_scipy_refuses_quantized_tensors():
    t = hurray.Tensor(np.array([3, 4], np.int8), hurray.int8, [2, 2],
                      aux_buffers=[np.array([0, 1], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2), quantization=hurray.PerTensorAffine(0.5, 0))
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        t.to_scipy()
