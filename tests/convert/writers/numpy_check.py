# SPDX-License-Identifier: Apache-2.0
# Checks, with NumPy, the .npy / .npz files the converter wrote (numpy_test.cpp): loads
# each and compares it element by element with the arrays built here independently.
# Usage: numpy_check.py KIND PATH  (KIND: model_npz, one_npy, bool_npy, fortran_npy,
#                                    roundtrip_npz:ORIGINAL)
import sys

import numpy as np


def model():
    return {
        "dense.f32": (np.arange(12, dtype=np.float32) * 0.5 - 2.0).reshape(3, 4),
        "dense.i8": np.array([1, -1, 127, -128, 0, 5], dtype=np.int8).reshape(2, 3),
        "mask": np.array([1, 0, 1, 0, 1, 1, 0, 1, 0, 1], dtype=bool),
        "c128": np.array([1 + 2j, -3 - 4j, 0.5 + 0j], dtype=np.complex128),
        "u64": np.array([0, 1, 2**64 - 1], dtype=np.uint64),
        "f16": np.array([1.0, -2.5, 0.125, 65504.0, 0.0], dtype=np.float16),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }


def same(name, got, want):
    if got.dtype != want.dtype:
        sys.exit(f"{name}: dtype {got.dtype} != {want.dtype}")
    if got.shape != want.shape:
        sys.exit(f"{name}: shape {got.shape} != {want.shape}")
    g = got.reshape(-1)
    w = want.reshape(-1)
    for k in range(g.size):
        if not (g[k] == w[k] or (g[k] != g[k] and w[k] != w[k])):
            sys.exit(f"{name}: element {k}: {g[k]!r} != {w[k]!r}")


kind, path = sys.argv[1], sys.argv[2]
if kind == "model_npz":
    with np.load(path) as z:
        want = model()
        if sorted(z.files) != sorted(want):
            sys.exit(f"members {sorted(z.files)} != {sorted(want)}")
        for name, arr in want.items():
            same(name, z[name], arr)
elif kind == "one_npy":
    same("f32", np.load(path), model()["dense.f32"])
elif kind == "bool_npy":
    a = np.load(path)
    same("mask", a, model()["mask"])
elif kind == "fortran_npy":
    a = np.load(path)
    if not a.flags.f_contiguous or a.flags.c_contiguous:
        sys.exit("not written in Fortran order")
    same("fortran", a, np.asfortranarray((np.arange(24, dtype=np.float32) - 3).reshape(2, 3, 4)))
elif kind.startswith("roundtrip_npz:"):
    original = kind.split(":", 1)[1]
    with np.load(path) as z, np.load(original) as o:
        if list(z.files) != list(o.files):
            sys.exit(f"members {z.files} != {o.files}")
        for name in o.files:
            want = o[name]
            if want.dtype.byteorder == ">":
                want = want.astype(want.dtype.newbyteorder("<"))
            same(name, z[name], want)
else:
    sys.exit("unknown kind " + kind)
print("ok")
