# SPDX-License-Identifier: Apache-2.0
# Writes .npy / .npz files with NumPy itself for the converter tests (numpy_test.cpp),
# and, beside each array, its expected values: `<name>.c` holds the array's elements
# little-endian in C order, `<name>.f` in Fortran order (bool: one byte 0/1 per element).
# Usage: numpy_arrays.py OUT_DIR
import sys

import numpy as np

out = sys.argv[1]


def arrays():
    a = {}
    a["b1"] = (np.arange(21) % 3 == 1).reshape(3, 7)
    for t in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(t)
        v = np.linspace(info.min, info.max, num=24, dtype=np.float64)
        a[t] = np.array([int(x) for x in v[:-1]] + [info.max], dtype=object).astype(t).reshape(2, 3, 4)
    a["float16"] = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8, np.inf, -np.inf, np.nan], dtype=np.float16)
    a["float32"] = (np.arange(12, dtype=np.float32) * 0.25 - 1.0).reshape(3, 4)
    a["float64"] = np.array([np.pi, -np.e, 1e300, 5e-324, np.nan], dtype=np.float64)
    a["complex64"] = (np.arange(6, dtype=np.float32) + 1j * np.arange(6, 12, dtype=np.float32)).astype(np.complex64).reshape(2, 3)
    a["complex128"] = np.array([1 + 2j, -3.5 - 0.25j, np.nan + 1j], dtype=np.complex128)
    a["scalar"] = np.array(7.5, dtype=np.float64)
    a["empty"] = np.zeros((0, 3), dtype=np.float32)
    a["fortran"] = np.asfortranarray((np.arange(24, dtype=np.float32) - 3).reshape(2, 3, 4))
    a["fortran_b1"] = np.asfortranarray(np.arange(15).reshape(3, 5) % 2 == 0)
    a["big_f4"] = (np.arange(10, dtype=np.float32) * 1.5).astype(">f4")
    a["big_i8"] = (np.arange(6, dtype=np.int64) * -123456789).astype(">i8").reshape(3, 2)
    a["big_c16"] = np.array([1 + 2j, 3 - 4j], dtype=">c16")
    a["big_fortran_u2"] = np.asfortranarray(np.arange(12, dtype=np.uint16).reshape(3, 4) * 1000).astype(">u2", order="F")
    return a


def expect(name, arr):
    le = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.byteorder == ">" else arr
    if le.dtype == np.bool_:
        le = le.astype(np.uint8)
    with open(f"{out}/{name}.c", "wb") as f:
        f.write(le.tobytes(order="C"))
    with open(f"{out}/{name}.f", "wb") as f:
        f.write(le.tobytes(order="F"))


all_arrays = arrays()
for name, arr in all_arrays.items():
    np.save(f"{out}/{name}.npy", arr)
    expect(name, arr)

# Header versions 2.0 and 3.0 (NumPy picks 1.0 when the header fits).
for version in [(2, 0), (3, 0)]:
    name = f"v{version[0]}"
    arr = (np.arange(5, dtype=np.int32) - 2)
    with open(f"{out}/{name}.npy", "wb") as f:
        np.lib.format.write_array(f, arr, version=version)
    expect(name, arr)

np.savez(f"{out}/stored.npz", w=all_arrays["float32"], mask=all_arrays["b1"], f=all_arrays["fortran"],
         big=all_arrays["big_i8"], c=all_arrays["complex128"])
np.savez_compressed(f"{out}/deflated.npz", w=all_arrays["float32"], mask=all_arrays["b1"],
                    f=all_arrays["fortran"], big=all_arrays["big_i8"], c=all_arrays["complex128"],
                    large=np.arange(300000, dtype=np.float64))
expect("large", np.arange(300000, dtype=np.float64))

# Refused dtypes.
np.save(f"{out}/object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
np.save(f"{out}/unicode.npy", np.array(["ab", "c"]))
np.save(f"{out}/bytes.npy", np.array([b"ab", b"c"]))
np.save(f"{out}/structured.npy", np.zeros(3, dtype=[("x", "<f4"), ("y", "<i4")]))
np.save(f"{out}/datetime.npy", np.array(["2024-01-01"], dtype="datetime64[D]"))
np.save(f"{out}/longdouble.npy", np.zeros(2, dtype=np.longdouble))
np.savez(f"{out}/with_object.npz", ok=np.zeros(2), bad=np.array(["x"]))
print("ok")
