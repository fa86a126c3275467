#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Would ggml's own GGUF reader load this file? An independent re-statement of the rules
of ggml's gguf_init_from_file (ggml/src/gguf.cpp), written from that reader's documented
behaviour with struct only: it shares no code with ggml or libhurray.

Usage: gguf_ggml_check.py FILE...  Prints one line per file:
  FILE: ok (no_alloc=true, no_alloc=false)
  FILE: no_alloc=true: ok; no_alloc=false: REASON
  FILE: REASON
and exits 0 when every file loads in both modes, 1 otherwise.

The rules, as ggml applies them:
  - magic "GGUF"; version 2 or 3 (1 is refused, newer ones too);
  - tensor and KV counts that the file can hold; KV keys unique; value types 0..12;
    arrays of any type but arrays of arrays are read the same way;
  - general.alignment, when present, is a UINT32, non-zero power of two (default 32);
  - tensor infos: names shorter than 64 bytes (GGML_MAX_NAME) and unique; 1..4 dimensions
    (GGML_MAX_DIMS), each >= 0, their product fitting int64; a known type; ne[0] a
    multiple of the type's block size;
  - the data section starts at the end of the tensor infos rounded up to the alignment;
  - tensor i's offset is exactly the sum of the sizes of tensors 0..i-1, each rounded up
    to the alignment (so offsets are increasing, aligned and leave no gap);
  - no_alloc=false reads the whole data section, that sum of padded sizes, in one read:
    a file shorter than data start + the sum fails. no_alloc=true reads no tensor data.
"""
import struct
import sys

MAX_NAME = 64
MAX_DIMS = 4
# ggml type id -> (values per block, bytes per block): ggml's type traits
TYPES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
         9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
         15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
         21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8),
         28: (1, 8), 29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17)}
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY, UINT32 = 8, 9, 4


class Refused(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.data):
            raise Refused("%s: %d bytes at byte %d run past the end of the file" % (what, n, self.pos))
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self, what):
        return struct.unpack("<I", self.take(4, what))[0]

    def i64(self, what):
        return struct.unpack("<q", self.take(8, what))[0]

    def u64(self, what):
        return struct.unpack("<Q", self.take(8, what))[0]

    def string(self, what):
        return self.take(self.u64(what + " length"), what)


def read_value(r, vtype, key):
    if vtype in SCALAR:
        return r.take(SCALAR[vtype], key)
    if vtype == STRING:
        return r.string(key)
    if vtype == ARRAY:
        etype = r.u32(key + " array type")
        n = r.u64(key + " array length")
        if etype == ARRAY:
            raise Refused("%s: arrays of arrays are not read by ggml" % key)
        if etype not in SCALAR and etype != STRING:
            raise Refused("%s: array element type %d is invalid" % (key, etype))
        return [read_value(r, etype, key) for _ in range(n)]
    raise Refused("%s: value type %d is invalid" % (key, vtype))


def pad(x, n):
    return (x + n - 1) // n * n


def check(data):
    """None when ggml loads `data` with no_alloc=true; raises Refused otherwise. Returns the
    number of bytes a no_alloc=false load reads after the data section's start and where
    that section starts."""
    r = Reader(data)
    if r.take(4, "magic") != b"GGUF":
        raise Refused("magic is not GGUF")
    version = r.u32("version")
    if version not in (2, 3):
        raise Refused("version %d is not read by ggml" % version)
    n_tensors = r.i64("n_tensors")
    n_kv = r.i64("n_kv")
    if n_tensors < 0 or n_kv < 0:
        raise Refused("negative counts")
    keys = set()
    alignment = 32
    for _ in range(n_kv):
        key = r.string("key")
        if key in keys:
            raise Refused("duplicate key %r" % key)
        keys.add(key)
        vtype = r.u32("value type")
        value = read_value(r, vtype, key.decode("utf-8", "replace"))
        if key == b"general.alignment":
            if vtype != UINT32:
                raise Refused("general.alignment has type %d, not UINT32" % vtype)
            alignment = struct.unpack("<I", value)[0]
            if alignment == 0 or alignment & (alignment - 1):
                raise Refused("alignment %d is not a power of 2" % alignment)
    names = set()
    infos = []
    for i in range(n_tensors):
        name = r.string("tensor name")
        if len(name) >= MAX_NAME:
            raise Refused("tensor name %r is %d bytes, ggml takes fewer than %d" % (name, len(name), MAX_NAME))
        if name in names:
            raise Refused("duplicate tensor name %r" % name)
        names.add(name)
        n_dims = r.u32("n_dims")
        if n_dims > MAX_DIMS:
            raise Refused("%r: %d dimensions" % (name, n_dims))
        ne = [r.i64("ne") for _ in range(n_dims)]
        if any(n < 0 for n in ne):
            raise Refused("%r: negative dimension" % name)
        count = 1
        for n in ne:
            count *= n
        if count >= 2**63:
            raise Refused("%r: element count overflows int64" % name)
        gtype = r.u32("type")
        if gtype not in TYPES:
            raise Refused("%r: type %d is not a ggml type" % (name, gtype))
        per, size = TYPES[gtype]
        if ne and ne[0] % per:
            raise Refused("%r: ne[0] = %d is not a multiple of the block size %d" % (name, ne[0], per))
        offset = r.u64("offset")
        infos.append((name, count // per * size, offset))
    data_start = pad(r.pos, alignment) if n_tensors > 0 else r.pos
    if n_tensors > 0 and data_start > len(data):
        raise Refused("the data section's start, byte %d, is past the end of the file" % data_start)
    total = 0
    for name, nbytes, offset in infos:
        if offset != total:
            raise Refused("tensor %r has offset %d, expected %d" % (name, offset, total))
        total += pad(nbytes, alignment)
    return data_start, total


def main():
    ok = True
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            data = f.read()
        try:
            start, total = check(data)
        except Refused as e:
            print("%s: %s" % (path, e))
            ok = False
            continue
        if start + total > len(data):
            print("%s: no_alloc=true: ok; no_alloc=false: the data section is %d bytes (padded sizes) from "
                  "byte %d, the file ends %d bytes short" % (path, total, start, start + total - len(data)))
            ok = False
            continue
        print("%s: ok (no_alloc=true, no_alloc=false)" % path)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
