# SPDX-License-Identifier: Apache-2.0
"""The hurray package used the way a typed program uses it; checked by mypy
(python/typecheck/run_mypy.sh, against _hurray.pyi and py.typed) and run by it.

Writes into a temporary directory:

    PYTHONPATH=build/gcc/python /usr/bin/python3 python/typecheck/usage.py
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import hurray
from hurray.numpy import load_file, save_file


def weights() -> dict[str, npt.NDArray[Any]]:
    return {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": np.zeros(3, np.int8),
        "mask": np.array([True, False, True]),
    }


def describe(t: hurray.Tensor) -> str:
    """A line about a tensor, from its typed properties alone."""
    dims = ", ".join("?" if d is None else str(d) for d in t.shape)
    kind: str = t.device.kind
    return (f"{t.dtype.name}[{dims}] ndim={t.ndim} size={t.size} layout={t.layout.name} on {kind}:{t.device_id}, "
            f"{t.nbytes} bytes in {t.buffer_count} buffer(s), readonly={t.readonly}")


def save_and_load(root: Path) -> None:
    path = root / "model.hrry"
    hurray.save(path, weights(), kv={"arch": "demo", "layers": 2, "scales": [0.5, 0.25]})
    loaded: dict[str, hurray.Tensor | hurray.Composite] = hurray.load(path)
    for name, value in loaded.items():
        if isinstance(value, hurray.Tensor):
            print(name, describe(value))
    w = loaded["w"]
    assert isinstance(w, hurray.Tensor)
    view: npt.NDArray[Any] = np.asarray(w)  # zero-copy, read-only
    assert view.sum() == 15 and not view.flags.writeable
    first: npt.NDArray[np.uint8] = w.buffer(0)
    assert first.nbytes == w.nbytes
    assert w.T.shape == (3, 2)
    dense: npt.NDArray[np.float32] = w.to_dense()
    assert dense.dtype == np.float32


def read_lazily(path: Path) -> None:
    handle: hurray.File = hurray.open(path)
    with handle as f:
        names: list[str] = f.keys()
        assert names == ["w", "b", "mask"] and len(f) == 3 and "w" in f
        assert [name for name in f] == names
        info = f.info("w")
        shape: tuple[int | None, ...] = info["shape"]
        assert shape == (2, 3) and info["dtype"] == "float32" and info["quantization"] is None
        print("w at byte", info["data_offset"], "layout", info["layout"], "mapped", f.mapped)
        array: npt.NDArray[Any] = f.get_tensor("b")
        floats: npt.NDArray[np.float32] = f.to_float32("b")
        assert array.shape == floats.shape == (3,)
        meta: dict[str, Any] = f.metadata()
        assert meta["layers"] == 2 and meta["scales"] == [0.5, 0.25]
        item = f.tensor("mask")
        assert isinstance(item, hurray.Tensor) and item.dtype == hurray.bool
    assert handle.closed


def tensors_and_dtypes() -> None:
    codes = np.array([[-3, 0, 5], [127, -127, 1]], np.int8)
    scales = np.array([0.5, 0.25], np.float32)
    t = hurray.Tensor(
        codes, hurray.int8, codes.shape,
        aux_buffers=[scales],
        quantization=hurray.PerChannelAffine.symmetric(axis=0, scale_buffer_index=1),
        statistics=hurray.Statistics(value_min=-31.75, value_max=63.5, value_abs_max=63.5),
        shard=hurray.Shard(parent_shape=[4, 3], shard_offset=[2, 0]),
    )
    q = t.quantization
    assert q is not None and q.scheme == "per_channel_affine" and isinstance(q, hurray.PerChannelAffine)
    shard = t.shard
    assert shard is not None and shard.parent_shape == (4, 3) and shard.shard_offset == (2, 0)
    stats = t.statistics
    assert stats is not None and stats.value_max == 63.5
    real: npt.NDArray[np.float32] = t.dequantize()
    assert float(real[1, 0]) == 31.75

    dt = t.dtype  # its fields are typed (the stub declares what hurray.Dtype sets in __slots__)
    assert dt == hurray.int8 and dt.bit_width == 8 and dt.is_integer and dt.is_signed and dt.tier == 1
    as_dtype: hurray.Dtype = dt
    assert str(as_dtype) == "int8"
    assert hurray.Dtype.from_name("bfloat16").bit_width == 16
    assert np.dtype(hurray.float32) == np.float32

    x: hurray.Tensor = hurray.from_numpy(np.linspace(0, 1, 4, dtype=np.float32))
    shared = hurray.from_dlpack(np.arange(4, dtype=np.int32))  # from_dlpack and from_hurray are typed
    again = hurray.from_hurray(shared)
    assert again.shape == (4,) and shared.__dlpack_device__() == (1, 0)
    assert x.size == 4 and x.device == hurray.device.cpu

    sparse: hurray.Tensor = hurray.sparse_coo(np.array([1.0, 2.0], np.float32),
                                              np.array([[0, 1], [2, 2]], np.uint64), (3, 3))
    assert sparse.nnz == 2 and sparse.values.shape == (2,) and sparse.indices.shape == (2, 2)


def stream(root: Path) -> None:
    path = root / "tensors.stream"
    with hurray.StreamWriter(path) as writer:
        writer.write(np.arange(6, dtype=np.float32).reshape(2, 3))
        writer.write(hurray.Composite("group", [2], "float32", [np.ones(4, np.float32), np.full((2, 2), 7, np.int16)]))
    in_memory = hurray.StreamWriter()
    in_memory.write(np.array([1, 2, 3], np.int64))
    in_memory.finish()
    data: bytes = in_memory.getvalue()

    kinds: list[str] = []
    for source in (path, data):
        with hurray.StreamReader(source) as reader:
            for item in reader:
                if isinstance(item, hurray.Composite):
                    kinds.append(f"composite of {len(item.members)}")
                else:
                    assert isinstance(item, hurray.Tensor)
                    kinds.append(describe(item))
    print("stream items:", kinds)
    assert len(kinds) == 3


def safetensors_style(root: Path) -> None:
    path = os.fspath(root / "np.hrry")
    save_file(weights(), path, metadata={"format": "np"})
    arrays: dict[str, npt.NDArray[Any]] = load_file(path)
    assert sorted(arrays) == ["b", "mask", "w"]
    with hurray.safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "np"}
        rows: npt.NDArray[Any] = f.get_slice("w")[1:]
        assert rows.shape == (1, 3)


def with_torch(root: Path) -> None:
    import torch  # noqa: PLC0415 - optional

    import hurray.torch as ht  # noqa: PLC0415 - needs torch

    path = root / "pt.hrry"
    state: dict[str, torch.Tensor] = {"embed": torch.arange(12, dtype=torch.float32).reshape(4, 3)}
    ht.save_file(state, path, metadata={"format": "pt"})
    loaded: dict[str, torch.Tensor] = ht.load_file(path)
    assert torch.equal(loaded["embed"], state["embed"])
    back: torch.Tensor = hurray.from_torch(state["embed"]).to_torch()
    assert back.shape == (4, 3)
    print("torch:", sorted(loaded), back.dtype)


def errors(root: Path) -> None:
    try:
        hurray.open(root / "missing.hrry")
    except hurray.FileError as error:
        assert isinstance(error, OSError) and isinstance(error, hurray.HurrayError)
        print("FileError:", error.code, error.file)
    else:
        raise AssertionError("a missing file opened")
    (root / "bad.hrry").write_bytes(b"not an HRRYFILE")
    try:
        hurray.open(root / "bad.hrry")
    except hurray.HurrayError as error:
        offset: int | None = error.offset  # typed attributes (str | None, int | None)
        code: str | None = error.code
        print(type(error).__name__, code, offset)
    try:
        hurray.Tensor(np.zeros(2, np.float32), hurray.float32, (4,))
    except hurray.BufferError as error:
        assert isinstance(error, ValueError)
    else:
        raise AssertionError("a buffer smaller than its shape was accepted")


def dtype_fields() -> None:
    # The package's value classes declare their fields: Dtype, Device and the
    # module-level element types, Tier 2 ones included.
    int4: hurray.Dtype = hurray.dtype.int4
    bits: int = int4.bit_width
    sub_byte: bool = int4.is_sub_byte
    device = hurray.Device("cpu")
    kind: str = device.kind
    assert (bits, sub_byte, kind, hurray.float32.name) == (4, True, "cpu", "float32")


def main() -> None:
    print("hurray", hurray.__version__)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        save_and_load(root)
        read_lazily(root / "model.hrry")
        tensors_and_dtypes()
        stream(root)
        safetensors_style(root)
        if importlib.util.find_spec("torch") is not None:
            with_torch(root)
        errors(root)
        dtype_fields()
    print("usage.py: ok")


if __name__ == "__main__":
    main()
