#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An independent SafeTensors writer and checker for the converter's tests.

Written from the SafeTensors format description only (an 8-byte little-endian header
length N, N bytes of JSON header mapping each tensor name to {"dtype", "shape",
"data_offsets": [begin, end]} relative to the data area, an optional "__metadata__"
object of strings, then the data area; tensors little-endian, C order), with nothing but
struct, json and numpy: not the safetensors package, not libhurray.

    safetensors_writer.py write OUTDIR
        Writes OUTDIR/*.safetensors and OUTDIR/manifest.json: for every file its metadata
        and, per tensor, its dtype, shape and the expected value of every element as an
        unsigned bit pattern (OUTDIR/<file>.<index>.u64, little-endian uint64 each), which
        the C++ test compares element by element with what the reader presents.

    safetensors_writer.py verify FILE MANIFEST_JSON FILE_KEY
        Parses FILE (written by libhurray) with json + numpy, checks it against the format
        (length, JSON object, dtype names, shape * size == span, spans back to back and
        covering the whole data area, 8-byte aligned data start) and compares every element
        and the metadata with the manifest's entry FILE_KEY. Exit 0 when equal.

Sub-byte dtypes: SafeTensors stores their bytes without naming a bit order; this writer
uses the LSB-first order of the Hurray spec (F4: element 2k in the low nibble of byte k;
F6: four elements in three bytes, element 4k+0 in bits 0-5 of the first byte, ...), which
is what the converter documents. BOOL: one byte per element, 0 or 1.
"""

import json
import os
import struct
import sys

import numpy as np

# dtype -> bits per element in the file
BITS = {
    "F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "I32": 32, "I16": 16, "I8": 8,
    "U64": 64, "U32": 32, "U16": 16, "U8": 8, "BOOL": 8, "F8_E4M3": 8, "F8_E5M2": 8,
    "F8_E8M0": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "C64": 64,
}


def pack_bits(patterns, bits):
    """Element bit patterns -> bytes, LSB first (bits 4 or 6; whole groups only)."""
    acc = 0
    nbits = 0
    out = bytearray()
    for p in patterns:
        acc |= (int(p) & ((1 << bits) - 1)) << nbits
        nbits += bits
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    assert nbits == 0, "sub-byte tensor must fill whole bytes"
    return bytes(out)


def encode(dtype, patterns):
    """Element patterns (python ints) -> the tensor's bytes in the file."""
    bits = BITS[dtype]
    if bits < 8:
        return pack_bits(patterns, bits)
    fmt = {8: "B", 16: "H", 32: "I", 64: "Q"}[bits]
    return struct.pack("<%d%s" % (len(patterns), fmt), *patterns)


def decode(dtype, data, count):
    """The tensor's bytes -> element patterns (python ints)."""
    bits = BITS[dtype]
    if bits < 8:
        value = int.from_bytes(data, "little")
        mask = (1 << bits) - 1
        return [(value >> (bits * k)) & mask for k in range(count)]
    fmt = {8: "B", 16: "H", 32: "I", 64: "Q"}[bits]
    return list(struct.unpack("<%d%s" % (count, fmt), data))


def patterns_of(arr, unsigned):
    return [int(v) for v in np.ascontiguousarray(arr).reshape(-1).view(unsigned)]


def make_tensors(rng):
    """(name, dtype, shape, patterns) for every dtype, plus edge cases."""
    t = []

    def add(name, dtype, shape, pats):
        t.append((name, dtype, list(shape), [int(p) for p in pats]))

    add("f64", "F64", (2, 3), patterns_of(np.array(
        [[0.0, -0.0, 1.5], [np.inf, -np.pi, 1e300]], dtype="<f8"), "<u8"))
    add("f32", "F32", (4, 5), patterns_of(rng.standard_normal((4, 5)).astype("<f4"), "<u4"))
    f16 = rng.standard_normal(7).astype("<f2")
    f16[0] = np.float16("nan")
    add("f16", "F16", (7,), patterns_of(f16, "<u2"))
    # bfloat16: the upper 16 bits of float32 patterns (truncation), as raw patterns.
    f32 = rng.standard_normal((3, 3)).astype("<f4")
    add("bf16", "BF16", (3, 3), [p >> 16 for p in patterns_of(f32, "<u4")])
    for dt, np_t, un in (("I64", "<i8", "<u8"), ("I32", "<i4", "<u4"), ("I16", "<i2", "<u2"),
                         ("I8", "i1", "u1")):
        info = np.iinfo(np_t)
        vals = np.array([info.min, -1, 0, 1, info.max, 42], dtype=np_t)
        add(dt.lower(), dt, (2, 3), patterns_of(vals, un))
    for dt, np_t in (("U64", "<u8"), ("U32", "<u4"), ("U16", "<u2"), ("U8", "u1")):
        info = np.iinfo(np_t)
        vals = np.array([0, 1, info.max, 7, info.max // 3], dtype=np_t)
        add(dt.lower(), dt, (5,), patterns_of(vals, np_t))
    # BOOL: 11 elements (not a multiple of 8: the packed form has padding bits).
    add("mask", "BOOL", (11,), [int(b) for b in rng.integers(0, 2, 11)])
    add("f8_e4m3", "F8_E4M3", (4, 4), [int(b) for b in rng.integers(0, 256, 16)])
    add("f8_e5m2", "F8_E5M2", (16,), [int(b) for b in rng.integers(0, 256, 16)])
    add("f8_e8m0", "F8_E8M0", (2, 2), [0x7F, 0x80, 0x01, 0xFE])
    add("f4", "F4", (3, 4), [int(b) for b in rng.integers(0, 16, 12)])
    add("f6_e2m3", "F6_E2M3", (2, 4), [int(b) for b in rng.integers(0, 64, 8)])
    add("f6_e3m2", "F6_E3M2", (8,), [0b000001, 0b000010, 0b000100, 0b001000] +
        [int(b) for b in rng.integers(0, 64, 4)])
    c64 = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype("<c8")
    add("c64", "C64", (3,), patterns_of(c64, "<u8"))
    # Edge cases: scalars, zero-size tensors, a long name with non-ASCII characters.
    add("scalar_f32", "F32", (), patterns_of(np.array(3.25, dtype="<f4"), "<u4"))
    add("scalar_bool", "BOOL", (), [1])
    add("empty_f32", "F32", (0, 4), [])
    add("empty_bool", "BOOL", (3, 0), [])
    add("model.layers.0.self_attn.q_proj.weight/\u00e9\u4e2d", "F16", (2, 2),
        patterns_of(np.array([[1, 2], [3, 4]], dtype="<f2"), "<u2"))
    return t


def write_file(path, tensors, metadata, header_order, data_order):
    """Writes a SafeTensors file; header keys in header_order, data in data_order."""
    blobs = {name: encode(dtype, pats) for name, dtype, _shape, pats in tensors}
    info = {name: (dtype, shape) for name, dtype, shape, _pats in tensors}
    offsets = {}
    pos = 0
    for name in data_order:
        offsets[name] = (pos, pos + len(blobs[name]))
        pos += len(blobs[name])
    parts = []
    if metadata is not None:
        parts.append('"__metadata__":' + json.dumps(metadata))
    for name in header_order:
        dtype, shape = info[name]
        parts.append(json.dumps(name) + ":" + json.dumps(
            {"dtype": dtype, "shape": shape, "data_offsets": list(offsets[name])}))
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for name in data_order:
            f.write(blobs[name])


def cmd_write(outdir):
    rng = np.random.default_rng(1234)
    tensors = make_tensors(rng)
    names = [t[0] for t in tensors]
    manifest = {}

    def record(key, file_name, tensors_in_order, metadata):
        entries = []
        for i, (name, dtype, shape, pats) in enumerate(tensors_in_order):
            expect = "%s.%d.u64" % (file_name, i)
            with open(os.path.join(outdir, expect), "wb") as f:
                f.write(struct.pack("<%dQ" % len(pats), *pats))
            entries.append({"name": name, "dtype": dtype, "shape": shape, "count": len(pats),
                            "expect": expect})
        manifest[key] = {"file": file_name, "metadata": metadata or {}, "tensors": entries}

    # 1. Every dtype; header in a shuffled (not sorted) order, data in another order.
    meta = {"format": "pt", "note": "written by safetensors_writer.py", "empty": "",
            "unicode \u00e9": "\u4e2d\u6587 \"quoted\""}
    order = list(rng.permutation(len(tensors)))
    header_order = [names[i] for i in order]
    data_order = list(reversed(header_order))
    write_file(os.path.join(outdir, "all.safetensors"), tensors, meta, header_order, data_order)
    by_name = {t[0]: t for t in tensors}
    record("all", "all.safetensors", [by_name[n] for n in header_order], meta)

    # 2. No tensors, metadata only; 3. no tensors, no metadata ("{}").
    write_file(os.path.join(outdir, "meta_only.safetensors"), [], {"k": "v"}, [], [])
    record("meta_only", "meta_only.safetensors", [], {"k": "v"})
    write_file(os.path.join(outdir, "empty.safetensors"), [], None, [], [])
    record("empty", "empty.safetensors", [], None)

    with open(os.path.join(outdir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)


def fail(msg):
    print("verify: " + msg)
    sys.exit(1)


def cmd_verify(path, manifest_path, key):
    with open(manifest_path, encoding="utf-8") as f:
        expected = json.load(f)[key]
    data = open(path, "rb").read()
    if len(data) < 8:
        fail("shorter than 8 bytes")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        fail("header length past the end")
    if (8 + n) % 8 != 0:
        fail("data area not 8-byte aligned (header length %d)" % n)
    header_text = data[8:8 + n].decode("utf-8")
    if not header_text.startswith("{"):
        fail("header does not start with '{'")
    pairs = json.loads(header_text, object_pairs_hook=lambda p: p)
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        fail("duplicate keys")
    header = dict(pairs)
    body = data[8 + n:]
    metadata = dict(header.pop("__metadata__", []) or [])
    for k, v in metadata.items():
        if not isinstance(v, str):
            fail("metadata %r is not a string" % k)
    if metadata != expected["metadata"]:
        fail("metadata %r != expected %r" % (metadata, expected["metadata"]))
    names = [k for k in keys if k != "__metadata__"]
    if names != [t["name"] for t in expected["tensors"]]:
        fail("tensor order %r != expected %r" % (names, [t["name"] for t in expected["tensors"]]))
    spans = []
    for t in expected["tensors"]:
        info = dict(header[t["name"]])
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        if dtype != t["dtype"] or shape != t["shape"]:
            fail("%s: dtype/shape %s %s != %s %s" % (t["name"], dtype, shape, t["dtype"],
                                                      t["shape"]))
        count = int(np.prod(shape, dtype=np.uint64)) if shape else 1
        if count * BITS[dtype] % 8 != 0 or count * BITS[dtype] // 8 != end - begin:
            fail("%s: span %d..%d does not match shape and dtype" % (t["name"], begin, end))
        spans.append((begin, end))
        want = list(struct.unpack("<%dQ" % t["count"],
                                  open(os.path.join(os.path.dirname(manifest_path), t["expect"]),
                                       "rb").read()))
        got = decode(dtype, body[begin:end], count)
        if dtype == "BOOL" and any(b not in (0, 1) for b in got):
            fail("%s: BOOL byte not 0 or 1" % t["name"])
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                fail("%s: element %d is %#x, expected %#x" % (t["name"], i, g, w))
    pos = 0
    for begin, end in sorted(spans):
        if begin != pos:
            fail("data spans are not back to back (gap or overlap at %d)" % begin)
        pos = end
    if pos != len(body):
        fail("data spans end at %d, data area has %d bytes" % (pos, len(body)))
    print("ok")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        cmd_write(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "verify":
        cmd_verify(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
