#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An independent GGUF writer for the tests of hurray::convert's GGUF reader.

Written from the GGUF specification (ggml's docs/gguf.md) and the GGML block layouts with
struct and numpy only: it shares no code with libhurray and does not use the `gguf`
package. Usage: gguf_writer.py OUTDIR. Writes into OUTDIR:

  all.gguf      GGUF v3, general.alignment = 64: a KV of every value type (arrays of
                strings, ints, floats, bools, an array of arrays, a non-UTF-8 string),
                dense tensors of every plain type, Q8_0 / Q4_0 / Q4_K / Q6_K tensors
                quantized here from known float arrays, Q8_0 / Q4_0 tensors of random
                blocks (random finite non-zero scales), Q8_0 / Q4_0 tensors with zero,
                infinite and NaN scales, and raw random blocks of other types.
  v2.gguf       GGUF v2, default alignment (32), a few tensors.
  k32.gguf      GGUF v3, default alignment (32, no general.alignment key): every K-quant
                (Q2_K..Q6_K, Q8_K) and F32 / F16 tensors, as a llama.cpp model has them.
  legacy64.gguf GGUF v3, general.alignment = 64: the legacy quants (Q4_0, Q4_1, Q5_0,
                Q5_1, Q8_0), BF16 / F16 / F32 and the integer types, no K-quant.
  many.gguf     GGUF v3, default alignment: 300 small tensors (F32, F16, Q8_0).

Every file is laid out as ggml's own writer (gguf_write_to_file) lays it out: KV pairs,
tensor infos, zeros to the alignment, then each tensor's data followed by zeros to the
alignment, the last tensor's included.
  NAME.raw      the bytes of tensor NAME as stored in all.gguf.
  NAME.ref      for quantized tensors: float32 values of ggml's reference dequantization,
                computed here with numpy in float32 (little-endian, row-major).
"""
import os
import struct
import sys

import numpy as np

# GGUF value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
SCALAR_FMT = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
              FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}

# ggml types: (id, values per block, bytes per block)
F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 0, 1, 2, 3, 6, 7, 8
Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ2_XXS = 10, 11, 12, 13, 14, 15, 16
I8, I16, I32, I64, F64, BF16 = 24, 25, 26, 27, 28, 30
BLOCK = {F32: (1, 4), F16: (1, 2), BF16: (1, 2), F64: (1, 8), I8: (1, 1), I16: (1, 2),
         I32: (1, 4), I64: (1, 8), Q4_0: (32, 18), Q8_0: (32, 34), Q4_1: (32, 20), Q5_0: (32, 22),
         Q5_1: (32, 24), Q2_K: (256, 84), Q3_K: (256, 110), Q4_K: (256, 144), Q5_K: (256, 176),
         Q6_K: (256, 210), Q8_K: (256, 292), IQ2_XXS: (256, 66)}


def gstr(s):
    b = s if isinstance(s, bytes) else s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def value_bytes(vtype, v):
    """The encoding of one value of GGUF type vtype (no type field)."""
    if vtype == STRING:
        return gstr(v)
    if vtype == ARRAY:
        etype, items = v
        out = struct.pack("<IQ", etype, len(items))
        for it in items:
            out += value_bytes(etype, it)
        return out
    if vtype == FLOAT32 and isinstance(v, int):  # raw bits (NaN payloads)
        return struct.pack("<I", v)
    return struct.pack(SCALAR_FMT[vtype], v)


def gguf_file(version, kvs, tensors, alignment):
    """kvs: [(key, type, value)]; tensors: [(name, ggml type, shape (numpy order), bytes)]."""
    head = b"GGUF" + struct.pack("<I", version) + struct.pack("<QQ", len(tensors), len(kvs))
    for key, vtype, v in kvs:
        head += gstr(key) + struct.pack("<I", vtype) + value_bytes(vtype, v)
    offset = 0
    offsets = []
    for name, gtype, shape, data in tensors:
        offsets.append(offset)
        offset += len(data)
        offset = (offset + alignment - 1) // alignment * alignment
    for (name, gtype, shape, data), off in zip(tensors, offsets):
        ne = list(reversed(shape))  # ne[0] is the fastest-varying dimension
        head += gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        head += struct.pack("<IQ", gtype, off)
    head += b"\0" * ((-len(head)) % alignment)
    body = b""
    for (name, gtype, shape, data), off in zip(tensors, offsets):
        body += b"\0" * (off - len(body)) + data
    body += b"\0" * ((-len(body)) % alignment)  # ggml pads the last tensor too
    return head + body


def f16_bits(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


def f16_value(bits):
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float32)


# ---- quantizers (any valid quantization will do) and ggml's reference dequantization ----

def quant_q8_0(x):
    x = x.reshape(-1, 32).astype(np.float32)
    amax = np.abs(x).max(axis=1)
    d = (amax / 127).astype(np.float32)
    inv = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0).astype(np.float32)
    q = np.clip(np.round(x * inv[:, None]), -128, 127).astype(np.int8)
    return blocks_q8_0(f16_bits(d), q)


def blocks_q8_0(dbits, q):
    out = bytearray()
    for b in range(q.shape[0]):
        out += struct.pack("<H", int(dbits[b])) + q[b].tobytes()
    return bytes(out)


def deq_q8_0(raw):
    a = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
    d = f16_value(a[:, 0:2].copy().view(np.uint16)[:, 0])
    q = a[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d[:, None]).astype(np.float32).reshape(-1)


def quant_q4_0(x):
    x = x.reshape(-1, 32).astype(np.float32)
    idx = np.abs(x).argmax(axis=1)
    mx = x[np.arange(x.shape[0]), idx]
    d = (mx / -8).astype(np.float32)
    inv = np.where(d != 0, 1 / np.where(d != 0, d, 1), 0).astype(np.float32)
    q = np.minimum(15, np.trunc(x * inv[:, None] + np.float32(8.5))).astype(np.uint8)
    return blocks_q4_0(f16_bits(d), q)


def blocks_q4_0(dbits, q):
    out = bytearray()
    for b in range(q.shape[0]):
        out += struct.pack("<H", int(dbits[b]))
        out += bytes(int(q[b, j]) | (int(q[b, j + 16]) << 4) for j in range(16))
    return bytes(out)


def deq_q4_0(raw):
    a = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    d = f16_value(a[:, 0:2].copy().view(np.uint16)[:, 0])
    qs = a[:, 2:]
    lo = (qs & 0x0F).astype(np.int32) - 8
    hi = (qs >> 4).astype(np.int32) - 8
    q = np.concatenate([lo, hi], axis=1).astype(np.float32)
    return (q * d[:, None]).astype(np.float32).reshape(-1)


def quant_q4_k(x):
    out = bytearray()
    for blk in x.reshape(-1, 256).astype(np.float32):
        sub = blk.reshape(8, 32)
        mn = np.minimum(sub.min(axis=1), 0)
        scale = (sub.max(axis=1) - mn) / 15
        mins = -mn
        d = np.float32(scale.max() / 63)
        dmin = np.float32(mins.max() / 63)
        dh, dminh = f16_value(f16_bits(d)), f16_value(f16_bits(dmin))
        sc = np.clip(np.round(scale / dh if dh else 0 * scale), 0, 63).astype(np.int32)
        m = np.clip(np.round(mins / dminh if dminh else 0 * mins), 0, 63).astype(np.int32)
        q = np.zeros((8, 32), dtype=np.int32)
        for j in range(8):
            step = dh * sc[j]
            if step:
                q[j] = np.clip(np.round((sub[j] + dminh * m[j]) / step), 0, 15)
        scales = [0] * 12
        for j in range(4):
            scales[j] = (sc[j] & 63) | ((sc[j + 4] >> 4) << 6)
            scales[j + 4] = (m[j] & 63) | ((m[j + 4] >> 4) << 6)
            scales[j + 8] = (sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4)
        qs = bytearray(128)
        for j in range(4):
            for l in range(32):
                qs[32 * j + l] = int(q[2 * j, l]) | (int(q[2 * j + 1, l]) << 4)
        out += struct.pack("<HH", int(f16_bits(d)), int(f16_bits(dmin))) + bytes(scales) + bytes(qs)
    return bytes(out)


def scale_min_k4(j, s):
    if j < 4:
        return s[j] & 63, s[j + 4] & 63
    return (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)


def deq_q4_k(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 144):
        d = f16_value(a[0:2].copy().view(np.uint16))[0]
        dmin = f16_value(a[2:4].copy().view(np.uint16))[0]
        s = [int(v) for v in a[4:16]]
        qs = a[16:]
        for j in range(4):
            q = qs[32 * j: 32 * j + 32]
            sc, m = scale_min_k4(2 * j, s)
            d1, m1 = np.float32(d * np.float32(sc)), np.float32(dmin * np.float32(m))
            ys.append(np.float32(d1) * (q & 0xF).astype(np.float32) - m1)
            sc, m = scale_min_k4(2 * j + 1, s)
            d2, m2 = np.float32(d * np.float32(sc)), np.float32(dmin * np.float32(m))
            ys.append(np.float32(d2) * (q >> 4).astype(np.float32) - m2)
    return np.concatenate(ys).astype(np.float32)


def quant_q6_k(x):
    out = bytearray()
    for blk in x.reshape(-1, 256).astype(np.float32):
        sub = blk.reshape(16, 16)
        amax = np.abs(sub).max(axis=1)
        s = amax / 31
        d = np.float32(np.abs(s).max() / 127)
        dh = f16_value(f16_bits(d))
        sc = np.clip(np.round(s / dh if dh else 0 * s), -128, 127).astype(np.int32)
        L = np.full((16, 16), 32, dtype=np.int32)
        for k in range(16):
            step = np.float32(dh * np.float32(sc[k]))
            if step:
                L[k] = np.clip(np.round(sub[k] / step), -32, 31) + 32
        L = L.reshape(256)
        ql = bytearray(128)
        qh = bytearray(64)
        for n in range(2):
            h = L[128 * n: 128 * n + 128]
            for l in range(32):
                q1, q2, q3, q4 = int(h[l]), int(h[l + 32]), int(h[l + 64]), int(h[l + 96])
                ql[64 * n + l] = (q1 & 0xF) | ((q3 & 0xF) << 4)
                ql[64 * n + l + 32] = (q2 & 0xF) | ((q4 & 0xF) << 4)
                qh[32 * n + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
        out += bytes(ql) + bytes(qh) + sc.astype(np.int8).tobytes() + struct.pack("<H", int(f16_bits(d)))
    return bytes(out)


def deq_q6_k(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 210):
        ql, qh = a[0:128].astype(np.int32), a[128:192].astype(np.int32)
        sc = a[192:208].copy().view(np.int8).astype(np.float32)
        d = f16_value(a[208:210].copy().view(np.uint16))[0]
        y = np.zeros(256, dtype=np.float32)
        for n in range(2):
            l = np.arange(32)
            lq, hq = ql[64 * n:], qh[32 * n:]
            q1 = ((lq[l] & 0xF) | (((hq[l] >> 0) & 3) << 4)) - 32
            q2 = ((lq[l + 32] & 0xF) | (((hq[l] >> 2) & 3) << 4)) - 32
            q3 = ((lq[l] >> 4) | (((hq[l] >> 4) & 3) << 4)) - 32
            q4 = ((lq[l + 32] >> 4) | (((hq[l] >> 6) & 3) << 4)) - 32
            s = sc[8 * n:]
            isx = l // 16
            for k, q in enumerate((q1, q2, q3, q4)):
                y[128 * n + 32 * k + l] = (d * s[isx + 2 * k]).astype(np.float32) * q.astype(np.float32)
        ys.append(y)
    return np.concatenate(ys).astype(np.float32)


def f16_at(a, at):
    return f16_value(a[at:at + 2].copy().view(np.uint16))[0]


def deq_q4_1(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 20):
        d, m, qs = f16_at(a, 0), f16_at(a, 2), a[4:20]
        ys.append(np.concatenate([(qs & 0xF).astype(np.float32) * d + m, (qs >> 4).astype(np.float32) * d + m]))
    return np.concatenate(ys).astype(np.float32)


def q5_values(qh, qs):
    j = np.arange(16)
    h0 = ((qh >> j) << 4) & 0x10
    h1 = (qh >> (j + 12)) & 0x10
    return (qs & 0xF).astype(np.int64) | h0, (qs >> 4).astype(np.int64) | h1


def deq_q5_0(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 22):
        d = f16_at(a, 0)
        x0, x1 = q5_values(int(a[2:6].copy().view("<u4")[0]), a[6:22])
        ys.append(np.concatenate([(x0 - 16).astype(np.float32) * d, (x1 - 16).astype(np.float32) * d]))
    return np.concatenate(ys).astype(np.float32)


def deq_q5_1(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 24):
        d, m = f16_at(a, 0), f16_at(a, 2)
        x0, x1 = q5_values(int(a[4:8].copy().view("<u4")[0]), a[8:24])
        ys.append(np.concatenate([x0.astype(np.float32) * d + m, x1.astype(np.float32) * d + m]))
    return np.concatenate(ys).astype(np.float32)


def deq_q2_k(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 84):
        scales, qs, d, dmin = a[0:16], a[16:80], f16_at(a, 80), f16_at(a, 82)
        for n in range(2):
            q = qs[32 * n: 32 * n + 32]
            for j in range(4):
                for half in range(2):
                    sc = int(scales[8 * n + 2 * j + half])
                    dl, ml = d * np.float32(sc & 0xF), dmin * np.float32(sc >> 4)
                    v = ((q[16 * half: 16 * half + 16] >> (2 * j)) & 3).astype(np.float32)
                    ys.append(np.float32(dl) * v - np.float32(ml))
    return np.concatenate(ys).astype(np.float32)


def deq_q3_k(raw):
    ys = []
    k1, k2 = 0x03030303, 0x0F0F0F0F
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 110):
        hm, qs, d = a[0:32], a[32:96], f16_at(a, 108)
        aux = [int(x) for x in a[96:108].copy().view("<u4")]
        tmp = aux[2]
        words = [(aux[0] & k2) | (((tmp >> 0) & k1) << 4), (aux[1] & k2) | (((tmp >> 2) & k1) << 4),
                 ((aux[0] >> 4) & k2) | (((tmp >> 4) & k1) << 4), ((aux[1] >> 4) & k2) | (((tmp >> 6) & k1) << 4)]
        sc = np.array(words, dtype="<u4").view(np.int8).astype(np.int64)
        m = 1
        for n in range(2):
            q = qs[32 * n: 32 * n + 32]
            for j in range(4):
                for half in range(2):
                    dl = d * np.float32(sc[8 * n + 2 * j + half] - 32)
                    sl = slice(16 * half, 16 * half + 16)
                    v = ((q[sl] >> (2 * j)) & 3).astype(np.int64) - np.where(hm[sl] & m, 0, 4)
                    ys.append(np.float32(dl) * v.astype(np.float32))
                m <<= 1
    return np.concatenate(ys).astype(np.float32)


def deq_q5_k(raw):
    ys = []
    for a in np.frombuffer(raw, dtype=np.uint8).reshape(-1, 176):
        d, dmin = f16_at(a, 0), f16_at(a, 2)
        s = [int(v) for v in a[4:16]]
        qh, qs = a[16:48], a[48:176]
        u1, u2 = 1, 2
        for j in range(4):
            ql = qs[32 * j: 32 * j + 32]
            for half, u in ((0, u1), (1, u2)):
                sc, m = scale_min_k4(2 * j + half, s)
                d1, m1 = np.float32(d * np.float32(sc)), np.float32(dmin * np.float32(m))
                low = (ql & 0xF) if half == 0 else (ql >> 4)
                v = (low.astype(np.int64) + np.where(qh & u, 16, 0)).astype(np.float32)
                ys.append(d1 * v - m1)
            u1, u2 = u1 << 2, u2 << 2
    return np.concatenate(ys).astype(np.float32)


def blocks_q8_k(rng, nblocks):
    """Random Q8_K blocks: float32 d (finite, non-zero), 256 int8 quants, and the 16 int16
    sums of 16 quants each that ggml keeps beside them (bsums)."""
    out = bytearray()
    for _ in range(nblocks):
        d = np.float32(rng.uniform(-2, 2) or 1.0)
        q = rng.integers(-128, 128, size=256).astype(np.int8)
        bsums = q.astype(np.int32).reshape(16, 16).sum(axis=1).astype("<i2")
        out += struct.pack("<f", d) + q.tobytes() + bsums.tobytes()
    return bytes(out)


def deq_q8_k(raw):
    a = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 292)
    d = a[:, 0:4].copy().view("<f4")[:, 0]
    q = a[:, 4:260].copy().view(np.int8).astype(np.float32)
    return (d[:, None] * q).astype(np.float32).reshape(-1)


def random_blocks(rng, nblocks, block_bytes, f16_fields):
    """Random blocks whose float16 fields (byte offsets) hold random finite non-zero values."""
    a = rng.integers(0, 256, size=(nblocks, block_bytes), dtype=np.uint8)
    for at in f16_fields:
        a[:, at:at + 2] = random_f16_scales(rng, nblocks).view(np.uint8).reshape(nblocks, 2)
    return a.tobytes()


def random_f16_scales(rng, n):
    """Random finite, non-zero float16 bit patterns of both signs (subnormals included)."""
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint32)
    bad = ((bits & 0x7C00) == 0x7C00) | ((bits & 0x7FFF) == 0)
    bits[bad] = 0x3C00 | (bits[bad] & 0x8000)
    return bits.astype(np.uint16)


def main():
    np.seterr(all="ignore")  # inf and NaN scales are meant
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261201)

    kvs = [
        ("general.architecture", STRING, "llama"),
        ("general.alignment", UINT32, 64),
        ("t.u8", UINT8, 200), ("t.i8", INT8, -100), ("t.u16", UINT16, 65535), ("t.i16", INT16, -32768),
        ("t.u32", UINT32, 4000000000), ("t.i32", INT32, -2000000000), ("t.f32", FLOAT32, 0.1),
        ("t.f32.snan", FLOAT32, 0x7F800001), ("t.bool", BOOL, True), ("t.str", STRING, "h\u00e9llo \u2713"),
        ("t.str.bad", STRING, b"\xff\xfeok"), ("t.u64", UINT64, 2**64 - 1), ("t.i64", INT64, -2**63),
        ("t.f64", FLOAT64, -0.0),
        ("t.arr.str", ARRAY, (STRING, ["<s>", "", "\u2581the", "tok\u00e9n"])),
        ("t.arr.i32", ARRAY, (INT32, [1, -2, 2147483647, -2147483648])),
        ("t.arr.u8", ARRAY, (UINT8, [0, 1, 255])),
        ("t.arr.f32", ARRAY, (FLOAT32, [1.5, -0.0, 3.25])),
        ("t.arr.bool", ARRAY, (BOOL, [True, False, True])),
        ("t.arr.u64", ARRAY, (UINT64, [2**64 - 1, 0])),
        ("t.arr.f64", ARRAY, (FLOAT64, [2.5, -1e300])),
        ("t.arr.empty", ARRAY, (INT16, [])),
        ("t.arr.nested", ARRAY, (ARRAY, [(INT16, [1, -2]), (INT16, []), (INT16, [3])])),
    ]

    tensors = []
    refs = {}

    def add(name, gtype, shape, data, ref=None):
        assert len(data) == int(np.prod(shape)) // BLOCK[gtype][0] * BLOCK[gtype][1], name
        tensors.append((name, gtype, shape, data))
        if ref is not None:
            refs[name] = np.asarray(ref, dtype=np.float32)

    x = (np.arange(12, dtype=np.float32) - 5.5) / 3
    add("dense_f32", F32, (3, 4), x.tobytes())
    add("dense_f16", F16, (2, 3, 4), (np.arange(24, dtype=np.float16) / 7).tobytes())
    bf = (np.array([1.0, -2.5, 3.14159, 0.0, -0.0], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    add("dense_bf16", BF16, (5,), bf.tobytes())
    add("dense_f64", F64, (2, 2), np.array([[1e300, -0.0], [np.pi, -7]], dtype=np.float64).tobytes())
    add("dense_i8", I8, (7,), np.array([-128, -1, 0, 1, 2, 3, 127], dtype=np.int8).tobytes())
    add("dense_i16", I16, (2, 3), np.array([[-32768, 0, 1], [2, 3, 32767]], dtype=np.int16).tobytes())
    add("dense_i32", I32, (2, 2, 2, 2), np.arange(-8, 8, dtype=np.int32).tobytes())
    add("dense_i64", I64, (3,), np.array([-2**63, 0, 2**63 - 1], dtype=np.int64).tobytes())

    w = np.sin(np.arange(4 * 64, dtype=np.float32) * 0.37).astype(np.float32) * 3
    raw = quant_q8_0(w)
    add("q8_0", Q8_0, (4, 64), raw, deq_q8_0(raw))
    w = np.cos(np.arange(3 * 96, dtype=np.float32) * 0.11).astype(np.float32) - 0.25
    raw = quant_q4_0(w)
    add("q4_0", Q4_0, (3, 96), raw, deq_q4_0(raw))

    nb = 2048
    raw = blocks_q8_0(random_f16_scales(rng, nb), rng.integers(-128, 128, size=(nb, 32)).astype(np.int8))
    add("q8_0_rand", Q8_0, (nb // 8, 256), raw, deq_q8_0(raw))
    raw = blocks_q4_0(random_f16_scales(rng, nb), rng.integers(0, 16, size=(nb, 32)).astype(np.uint8))
    add("q4_0_rand", Q4_0, (nb // 4, 128), raw, deq_q4_0(raw))

    # Zero and non-finite scales: the reader keeps these tensors as GGML blocks.
    d = np.array([0x0000, 0x8000, 0x3C00, 0xBC00], dtype=np.uint16)
    raw = blocks_q8_0(d, rng.integers(-128, 128, size=(4, 32)).astype(np.int8))
    add("q8_0_zero", Q8_0, (2, 64), raw, deq_q8_0(raw))
    d = np.array([0x7C00, 0xFC00, 0x7E00, 0x8000], dtype=np.uint16)
    raw = blocks_q4_0(d, rng.integers(0, 16, size=(4, 32)).astype(np.uint8))
    add("q4_0_inf", Q4_0, (4, 32), raw, deq_q4_0(raw))

    w = (np.sin(np.arange(2 * 512, dtype=np.float32) * 0.05) * 2 + 0.3).astype(np.float32)
    raw = quant_q4_k(w)
    add("q4_k", Q4_K, (2, 512), raw, deq_q4_k(raw))
    w = (np.cos(np.arange(3 * 256, dtype=np.float32) * 0.07) * 1.5).astype(np.float32)
    raw = quant_q6_k(w)
    add("q6_k", Q6_K, (3, 256), raw, deq_q6_k(raw))

    # Random blocks of the other types dequantize_ggml supports, with numpy references.
    for name, gtype, nb_, fields, deq in (("q4_1_rand", Q4_1, 64, (0, 2), deq_q4_1),
                                          ("q5_0_rand", Q5_0, 64, (0,), deq_q5_0),
                                          ("q5_1_rand", Q5_1, 64, (0, 2), deq_q5_1),
                                          ("q2_k_rand", Q2_K, 8, (80, 82), deq_q2_k),
                                          ("q3_k_rand", Q3_K, 8, (108,), deq_q3_k),
                                          ("q5_k_rand", Q5_K, 8, (0, 2), deq_q5_k)):
        per = BLOCK[gtype][0]
        raw = random_blocks(rng, nb_, BLOCK[gtype][1], fields)
        add(name, gtype, (2, nb_ * per // 2), raw, deq(raw))
    add("iq2_xxs_raw", IQ2_XXS, (1, 256), rng.integers(0, 256, size=66, dtype=np.uint8).tobytes())

    def write_set(filename, version, file_kvs, file_tensors, alignment):
        """The GGUF file, and NAME.raw / NAME.ref of each of its tensors."""
        with open(os.path.join(out, filename), "wb") as f:
            f.write(gguf_file(version, file_kvs, file_tensors, alignment))
        for name, _, _, data in file_tensors:
            with open(os.path.join(out, name + ".raw"), "wb") as f:
                f.write(data)
            if name in refs:
                with open(os.path.join(out, name + ".ref"), "wb") as f:
                    f.write(refs[name].astype("<f4").tobytes())

    write_set("all.gguf", 3, kvs, tensors, 64)

    llama_kvs = [("general.architecture", STRING, "llama"), ("general.name", STRING, "tiny"),
                 ("llama.context_length", UINT32, 2048), ("llama.rope.freq_base", FLOAT32, 10000.0),
                 ("tokenizer.ggml.tokens", ARRAY, (STRING, ["<unk>", "<s>", "</s>", "\u2581a"])),
                 ("tokenizer.ggml.scores", ARRAY, (FLOAT32, [0.0, 0.0, 0.0, -1.5])),
                 ("general.file_type", UINT32, 15)]

    # K-quants at the default alignment.
    tensors = []
    w = (np.sin(np.arange(2 * 512, dtype=np.float32) * 0.031) * 2 + 0.1).astype(np.float32)
    raw = quant_q4_k(w)
    add("k32.q4_k", Q4_K, (2, 512), raw, deq_q4_k(raw))
    raw = quant_q6_k(w)
    add("k32.q6_k", Q6_K, (4, 256), raw, deq_q6_k(raw))
    for name, gtype, nb_, fields, deq in (("k32.q2_k", Q2_K, 6, (80, 82), deq_q2_k),
                                          ("k32.q3_k", Q3_K, 6, (108,), deq_q3_k),
                                          ("k32.q5_k", Q5_K, 6, (0, 2), deq_q5_k)):
        raw = random_blocks(rng, nb_, BLOCK[gtype][1], fields)
        add(name, gtype, (3, nb_ * 256 // 3), raw, deq(raw))
    raw = blocks_q8_k(rng, 4)
    add("k32.q8_k", Q8_K, (2, 512), raw, deq_q8_k(raw))
    add("k32.norm", F32, (7,), np.linspace(-1, 1, 7, dtype=np.float32).tobytes())
    add("k32.f16", F16, (3, 5), (np.arange(15, dtype=np.float16) / 3).tobytes())
    write_set("k32.gguf", 3, llama_kvs, tensors, 32)

    # Legacy quants and plain types at alignment 64.
    tensors = []
    w = np.cos(np.arange(4 * 64, dtype=np.float32) * 0.21).astype(np.float32)
    raw = quant_q8_0(w)
    add("l64.q8_0", Q8_0, (4, 64), raw, deq_q8_0(raw))
    raw = quant_q4_0(w)
    add("l64.q4_0", Q4_0, (8, 32), raw, deq_q4_0(raw))
    for name, gtype, fields, deq in (("l64.q4_1", Q4_1, (0, 2), deq_q4_1), ("l64.q5_0", Q5_0, (0,), deq_q5_0),
                                     ("l64.q5_1", Q5_1, (0, 2), deq_q5_1)):
        raw = random_blocks(rng, 6, BLOCK[gtype][1], fields)
        add(name, gtype, (3, 64), raw, deq(raw))
    bf = (np.array([0.5, -1.25, 3.0], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    add("l64.bf16", BF16, (3,), bf.tobytes())
    add("l64.f16", F16, (5,), (np.arange(5, dtype=np.float16) - 2).tobytes())
    add("l64.f32", F32, (1, 3), np.array([1.5, -2, 1e-3], dtype=np.float32).tobytes())
    add("l64.i8", I8, (3,), np.array([-7, 0, 9], dtype=np.int8).tobytes())
    add("l64.i16", I16, (2,), np.array([-300, 301], dtype=np.int16).tobytes())
    add("l64.i32", I32, (2,), np.array([-70000, 70001], dtype=np.int32).tobytes())
    write_set("legacy64.gguf", 3, [("general.alignment", UINT32, 64)] + llama_kvs, tensors, 64)

    # Many small tensors, as a model's norms and biases are.
    tensors = []
    for i in range(100):
        add("m.%03d.norm" % i, F32, (3,), (np.arange(3, dtype=np.float32) + i).tobytes())
        add("m.%03d.bias" % i, F16, (2,), (np.arange(2, dtype=np.float16) - i / 8).tobytes())
        raw = quant_q8_0(np.linspace(-i, i + 1, 32, dtype=np.float32))
        add("m.%03d.w" % i, Q8_0, (1, 32), raw, deq_q8_0(raw))
    write_set("many.gguf", 3, llama_kvs[:2], tensors, 32)

    small = [("a", F32, (2, 2), np.array([1, 2, 3, 4], dtype=np.float32).tobytes()),
             ("b", Q8_0, (1, 32), quant_q8_0(np.linspace(-1, 1, 32, dtype=np.float32)))]
    with open(os.path.join(out, "v2.gguf"), "wb") as f:
        f.write(gguf_file(2, [("general.name", STRING, "small")], small, 32))


if __name__ == "__main__":
    main()
