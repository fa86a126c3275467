# SPDX-License-Identifier: Apache-2.0
# Writes small .npz archives of every shape the .npz reader handles, for the fuzz seed
# corpus of fuzz/fuzz_convert_npz (scripts/test.sh stage 4c) and the reader's tests
# (tests/convert/npz_test.cpp): NumPy's own stored and deflated archives, one whose end
# records are zip64 (a zip64 end record and locator before the end record, whose fields
# hold the zip64 markers), and one written to a pipe-like stream (data descriptors after
# each member, sizes and CRC zero in the local headers).
# Every archive holds the same two arrays: a = [0.5, 1.5, 2.5] (<f4), m = [[1, 0], [0, 1]] (|b1).
# Usage: npz_seeds.py OUT_DIR
import io
import struct
import sys
import zipfile

import numpy as np

out = sys.argv[1]
arrays = {"a": np.array([0.5, 1.5, 2.5], dtype=np.float32), "m": np.eye(2, dtype=bool)}

np.savez(f"{out}/seed_stored.npz", **arrays)
np.savez_compressed(f"{out}/seed_deflated.npz", **arrays)


def npy_bytes(arr):
    b = io.BytesIO()
    np.lib.format.write_array(b, arr)
    return b.getvalue()


def to_zip64_end(data):
    """The same archive with a zip64 end record and locator; the classic end record's
    fields hold the zip64 markers."""
    e = data.rindex(b"PK\x05\x06")
    (_, disk, cd_disk, here, total, cd_size, cd_offset, comment) = struct.unpack("<IHHHHIIH", data[e:e + 22])
    z = e
    record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, here, total, cd_size, cd_offset)
    locator = struct.pack("<IIQI", 0x07064B50, 0, z, 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:e] + record + locator + end


with open(f"{out}/seed_stored.npz", "rb") as f:
    stored = f.read()
with open(f"{out}/seed_zip64_end.npz", "wb") as f:
    f.write(to_zip64_end(stored))


class Unseekable(io.RawIOBase):
    """A write-only stream that cannot seek: zipfile writes data descriptors."""

    def __init__(self):
        super().__init__()
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


for method, name in [(zipfile.ZIP_DEFLATED, "seed_descriptor_deflated.npz"),
                     (zipfile.ZIP_STORED, "seed_descriptor_stored.npz")]:
    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", compression=method) as z:
        for key, arr in arrays.items():
            with z.open(f"{key}.npy", "w") as m:
                m.write(npy_bytes(arr))
    with open(f"{out}/{name}", "wb") as f:
        f.write(bytes(sink.buf))
print("ok")
