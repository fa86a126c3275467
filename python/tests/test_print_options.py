# SPDX-License-Identifier: Apache-2.0
"""hurray.set_print_options / get_print_options / print_options and how sparse tensors print."""

import asyncio
import threading

import numpy as np
import pytest

import hurray


@pytest.fixture(autouse=True)
def _metadata_display():
    hurray.set_print_options(sparse_display="metadata")
    yield
    hurray.set_print_options(sparse_display="metadata")


def coo():
    return hurray.sparse_coo(np.array([2.5, -1.0], np.float32), np.array([[0, 1], [2, 0]], np.uint64), [3, 2])


def csr():
    return hurray.Tensor(np.array([1, 2, 3], np.int16), hurray.int16, [2, 4],
                         aux_buffers=[np.array([0, 3, 1], np.uint64), np.array([0, 2, 3], np.uint64)],
                         layout=hurray.CsrLayout(nnz=3))


def csc():
    return hurray.Tensor(np.array([4.0, 5.0], np.float64), hurray.float64, [3, 2],
                         aux_buffers=[np.array([2, 0], np.uint64), np.array([0, 1, 2], np.uint64)],
                         layout=hurray.CscLayout(nnz=2))


METADATA = {
    "coo": "hurray.Tensor(layout='coo', shape=(3, 2), nnz=2, dtype=float32)",
    "csr": "hurray.Tensor(layout='csr', shape=(2, 4), nnz=3, dtype=int16)",
    "csc": "hurray.Tensor(layout='csc', shape=(3, 2), nnz=2, dtype=float64)",
}
CONTENT = {
    "coo": "hurray.Tensor(layout='coo', shape=(3, 2), nnz=2, dtype=float32, indices=[[0 1]\n [2 0]], "
           "values=[ 2.5 -1. ])",
    "csr": "hurray.Tensor(layout='csr', shape=(2, 4), nnz=3, dtype=int16, values=[1 2 3], col_indices=[0 3 1], "
           "row_ptr=[0 2 3])",
    "csc": "hurray.Tensor(layout='csc', shape=(3, 2), nnz=2, dtype=float64, values=[4. 5.], row_indices=[2 0], "
           "col_ptr=[0 1 2])",
}
MAKERS = {"coo": coo, "csr": csr, "csc": csc}


def test_the_default_is_metadata():
    assert hurray.get_print_options() == {"sparse_display": "metadata"}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_metadata_form(name):
    t = MAKERS[name]()
    assert repr(t) == str(t) == METADATA[name]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_content_form(name):
    t = MAKERS[name]()
    hurray.set_print_options(sparse_display="content")
    assert hurray.get_print_options() == {"sparse_display": "content"}
    assert repr(t) == str(t) == CONTENT[name]


def test_content_form_follows_numpy_print_options():
    t = hurray.sparse_coo(np.arange(20, dtype=np.float64), np.stack([np.arange(20)] * 2, 1).astype(np.uint64),
                          [20, 20])
    hurray.set_print_options(sparse_display="content")
    with np.printoptions(threshold=5, edgeitems=1):
        assert "values=[ 0. ... 19.]" in repr(t)


def test_dense_tensors_ignore_the_option():
    t = hurray.from_numpy(np.array([1.0, 2.0], np.float32))
    before = repr(t), str(t)
    with hurray.print_options(sparse_display="content"):
        assert (repr(t), str(t)) == before == ("hurray.Tensor([1. 2.], dtype=float32)", "[1. 2.]")


def test_get_print_options_returns_a_new_dict():
    opts = hurray.get_print_options()
    opts["sparse_display"] = "content"
    assert hurray.get_print_options() == {"sparse_display": "metadata"}


def test_set_with_nothing_changes_nothing():
    hurray.set_print_options(sparse_display="content")
    hurray.set_print_options()
    hurray.set_print_options(sparse_display=None)
    assert hurray.get_print_options()["sparse_display"] == "content"


@pytest.mark.parametrize("bad", ["contents", "", "METADATA"])
def test_invalid_values_raise_value_error(bad):
    with pytest.raises(ValueError, match="'metadata' or 'content'"):
        hurray.set_print_options(sparse_display=bad)
    with pytest.raises(ValueError):
        hurray.print_options(sparse_display=bad)
    assert hurray.get_print_options()["sparse_display"] == "metadata"


@pytest.mark.parametrize("bad", [1, True, b"content"])
def test_non_strings_raise_type_error(bad):
    with pytest.raises(TypeError):
        hurray.set_print_options(sparse_display=bad)
    with pytest.raises(TypeError):
        hurray.print_options(sparse_display=bad)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        hurray.set_print_options("content")
    with pytest.raises(TypeError):
        hurray.print_options("content")


def test_context_manager_scopes_and_restores():
    t = csr()
    ctx = hurray.print_options(sparse_display="content")
    assert isinstance(ctx, hurray.PrintOptionsCtx)
    with ctx as entered:
        assert entered is None
        assert repr(t) == CONTENT["csr"]
    assert repr(t) == METADATA["csr"]


def test_context_manager_restores_on_exception():
    with pytest.raises(KeyError):
        with hurray.print_options(sparse_display="content"):
            assert hurray.get_print_options()["sparse_display"] == "content"
            raise KeyError("boom")
    assert hurray.get_print_options()["sparse_display"] == "metadata"


def test_context_managers_nest_and_restore_a_set_value():
    hurray.set_print_options(sparse_display="content")
    with hurray.print_options(sparse_display="metadata"):
        with hurray.print_options(sparse_display="content"):
            assert hurray.get_print_options()["sparse_display"] == "content"
        assert hurray.get_print_options()["sparse_display"] == "metadata"
        with hurray.print_options():  # no option: nothing changes
            assert hurray.get_print_options()["sparse_display"] == "metadata"
    assert hurray.get_print_options()["sparse_display"] == "content"


def test_the_class_can_be_used_directly():
    with hurray.PrintOptionsCtx(sparse_display="content"):
        assert repr(coo()) == CONTENT["coo"]
    assert repr(coo()) == METADATA["coo"]


def test_threads_have_their_own_setting():
    hurray.set_print_options(sparse_display="content")
    seen = []
    worker = threading.Thread(target=lambda: seen.append((hurray.get_print_options(), repr(csc()))))
    worker.start()
    worker.join()
    assert seen == [({"sparse_display": "metadata"}, METADATA["csc"])]
    assert hurray.get_print_options()["sparse_display"] == "content"


def test_asyncio_tasks_do_not_leak_their_setting():
    async def task():
        hurray.set_print_options(sparse_display="content")
        return repr(coo())

    async def main():
        shown = await asyncio.create_task(task())
        return shown, hurray.get_print_options()

    shown, after = asyncio.run(main())
    assert shown == CONTENT["coo"] and after == {"sparse_display": "metadata"}


def test_sparse_tensors_loaded_from_a_file_print_the_same(tmp_path):
    hurray.save(tmp_path / "s.hrry", {"c": csc()})
    loaded = hurray.load(tmp_path / "s.hrry")["c"]
    assert repr(loaded) == METADATA["csc"]
    with hurray.print_options(sparse_display="content"):
        assert str(loaded) == CONTENT["csc"]


def test_a_quantized_sparse_tensor_names_its_scheme():
    t = hurray.Tensor(np.array([3, 4], np.int8), hurray.int8, [2, 2],
                      aux_buffers=[np.array([0, 1], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2), quantization=hurray.PerTensorAffine(0.5, 0))
    head = "hurray.Tensor(layout='csr', shape=(2, 2), nnz=2, dtype=int8, quantization='per_tensor_affine'"
    assert repr(t) == head + ")"
    with hurray.print_options(sparse_display="content"):
        assert repr(t) == head + ", values=[3 4], col_indices=[0 1], row_ptr=[0 1 2])"
