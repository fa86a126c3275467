#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Load and save times of the hurray module against numpy and torch.

    PYTHONPATH=build/gcc/python /usr/bin/python3 python/bench/bench_load_save.py \\
        --size-mib 1024 --tensors 291 --dir /tmp/bench

Builds float32 tensors shaped like a transformer checkpoint (an embedding and
an output head, then per layer four attention projections, three MLP
projections and two norm vectors: 291 tensors is a 32-layer model), of about
``--size-mib`` in all, writes them in every format once, then times each
operation ``--runs`` times with the page cache warm, after one untimed run:

- load: ``hurray.numpy.load_file``, ``np.load`` of one .npy per tensor
  (``mmap_mode=None`` reads the bytes, ``'r'`` maps them), ``torch.load`` of a
  ``torch.save`` file, ``hurray.torch.load_file``, against reading the raw
  bytes. Hurray's loads map the file and read no tensor bytes, so their time
  should grow with the tensor count, not the size: reported in µs and µs per
  tensor. The rows take turns in each run.
- save: like with like. Without fsync: ``hurray.numpy.save_file`` and
  ``hurray.torch.save_file`` (atomic rename, no fsync, as safetensors),
  ``hurray.save(..., durable=False)``, ``np.save`` per tensor and
  ``torch.save`` against the limit ``os.write`` of the same bytes to one file;
  with fsync: ``hurray.save`` (durable, the default: fsync of the file and its
  directory) and ``save_file(..., durable=True)`` against ``os.write`` plus a
  final fsync. Every save writes new files (what a call wrote before is
  removed first, untimed, so that no call pays for freeing the file it
  replaces) and starts after an ``os.sync()``.

A save's "x limit" is measured in pairs: in every run each row runs beside a
run of its limit, in a random order, and the pair gives one ratio, the
limit's time over the row's (1.0: as fast as writing the raw bytes; above 1,
faster). The table shows the median of those ratios and their quartiles. On a
shared VM one 1 GiB save of the same call ranges from 0.4 to 1.3 s between
runs on tmpfs (``--dir /dev/shm``), and from 0.3 to 7 s on a disk that
stalls, so ratios of medians taken minutes apart mean little; a slow spell
that lasts one pair slows both halves of it. Issue 13's goal: saves at least
0.9x. torch is optional.
"""

import argparse
import math
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time

import numpy as np

import hurray
import hurray.numpy

try:
    import torch
    import hurray.torch
except ImportError:  # the numpy rows still run
    torch = None


def checkpoint_shapes(total_bytes, count, itemsize=4):
    """(name, shape) of `count` tensors of about `total_bytes`, shaped like a
    decoder-only transformer's (llama-like ratios: vocab 7.8 x hidden, MLP 2.7 x)."""
    if count < 3:
        raise ValueError("at least 3 tensors (embedding, head, final norm)")
    layers = (count - 3) // 9
    extra = count - 3 - 9 * layers  # small bias vectors to reach the count

    def params(h):
        f, v = int(h * 2.6875), int(h * 7.8125)
        return 2 * v * h + layers * (4 * h * h + 3 * h * f + 2 * h) + h + extra * h

    target = max(total_bytes // itemsize, 1)
    h = 8
    while params(h * 2) <= target:
        h *= 2
    lo, hi = h, h * 2
    while hi - lo > 1:  # the largest hidden size that fits
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if params(mid) <= target else (lo, mid)
    h = lo
    f, v = int(h * 2.6875), int(h * 7.8125)
    shapes = [("model.embed_tokens.weight", (v, h))]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + "self_attn.q_proj.weight", (h, h)), (p + "self_attn.k_proj.weight", (h, h)),
                   (p + "self_attn.v_proj.weight", (h, h)), (p + "self_attn.o_proj.weight", (h, h)),
                   (p + "mlp.gate_proj.weight", (f, h)), (p + "mlp.up_proj.weight", (f, h)),
                   (p + "mlp.down_proj.weight", (h, f)), (p + "input_layernorm.weight", (h,)),
                   (p + "post_attention_layernorm.weight", (h,))]
    shapes += [(f"model.extra.{i}.bias", (h,)) for i in range(extra)]
    shapes += [("model.norm.weight", (h,)), ("lm_head.weight", (v, h))]
    # Top the last big tensor up so the total comes close to the target.
    used = sum(math.prod(s) for _, s in shapes)
    rows = (target - used) // h
    if rows > 0:
        name, (r, c) = shapes[-1]
        shapes[-1] = (name, (r + rows, c))
    return shapes


def checkpoint(total_bytes, count):
    """A dict of name to float32 array (cheap deterministic values)."""
    out = {}
    for i, (name, shape) in enumerate(checkpoint_shapes(total_bytes, count)):
        out[name] = np.full(shape, i * 0.25, np.float32)
    return out


def remove(paths):
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def timed(rows, runs):
    """Median and best time of each row's function (the loads). Rows take
    turns within each run, so that a slow spell of a shared machine hits them
    alike."""
    for _, fn in rows:
        fn()  # warm: page cache, lazy imports, the files the loads read
    times = [[] for _ in rows]
    for _ in range(runs):
        for i, (_, fn) in enumerate(rows):
            times[i].append(_time_one(fn, (), sync=False))
    return [(label, statistics.median(t), min(t)) for (label, _), t in zip(rows, times)]


def _time_one(fn, outputs, sync):
    """Seconds `fn` takes, after removing the files in `outputs` (a save then
    writes new files, the limits included, and none pays for freeing the file
    it would replace: O_TRUNC of a 1 GiB file frees its blocks inline, the
    hurray saves free it in the background)."""
    remove(outputs)
    if sync:
        os.sync()  # start with no dirty pages left by the call before
    t0 = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - t0
    del result
    return elapsed


def paired(rows, runs, outputs, seed=13):
    """Each row's time against its limit's, measured side by side: in every
    run, each row runs next to a fresh run of its limit (the last "os.write"
    row before it), in a random order, and the pair gives one ratio (limit
    time over row time). The median of those ratios is what a noisy machine
    disturbs least: a slow spell that lasts a pair hits both halves of it.
    Returns (label, median time, best time, median paired ratio, first and
    third quartiles of the paired ratios)."""
    rng = random.Random(seed)
    for _, fn in rows:
        fn()  # warm
    limit_of = []
    limit = 0
    for i, (label, _) in enumerate(rows):
        if label.startswith("os.write"):
            limit = i
        limit_of.append(limit)
    times = [[] for _ in rows]
    ratios = [[] for _ in rows]
    for _ in range(runs):
        for i, (_, fn) in enumerate(rows):
            j = limit_of[i]
            if i == j:
                continue
            pair = [j, i]
            rng.shuffle(pair)
            t = {k: _time_one(rows[k][1], outputs[k], True) for k in pair}
            times[i].append(t[i])
            times[j].append(t[j])
            ratios[i].append(t[j] / t[i])
    out = []
    for (label, _), t, r in zip(rows, times, ratios):
        r = r or [1.0]
        q1, q2, q3 = statistics.quantiles(r, n=4, method="inclusive") if len(r) > 1 else (r[0],) * 3
        out.append((label, statistics.median(t), min(t), q2, q1, q3))
    return out


def write_raw(path, arrays, fsync):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for a in arrays:
            view = memoryview(a).cast("B")
            while view:
                view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_raw(path):
    with open(path, "rb", buffering=0) as f:
        return f.readall()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=float, default=1024)
    ap.add_argument("--tensors", type=int, default=291)
    ap.add_argument("--dir", type=pathlib.Path, default=None, help="where the files go (default: a temporary dir)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per row (median)")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = pathlib.Path(tmp)
        arrays = checkpoint(int(args.size_mib * 2**20), args.tensors)
        nbytes = sum(a.nbytes for a in arrays.values())
        n = len(arrays)
        print(f"{n} float32 tensors, {nbytes / 2**20:.1f} MiB, {args.runs} timed runs, page cache warm, in {tmp.parent}"
              f" (torch {'absent' if torch is None else torch.__version__})")
        paths = {"hurray": tmp / "np.hrry", "hurray_pt": tmp / "pt.hrry", "npy": tmp / "npy",
                 "pt": tmp / "model.pt", "raw": tmp / "raw.bin"}
        paths["npy"].mkdir()
        npy = {name: paths["npy"] / f"{i}.npy" for i, name in enumerate(arrays)}
        tensors = None if torch is None else {name: torch.from_numpy(a) for name, a in arrays.items()}

        # Rows whose label starts with "os.write" are limits: the rows after one are
        # compared with it (no fsync first, then with fsync).
        saves = [
            ("os.write (limit)", lambda: write_raw(paths["raw"], arrays.values(), False)),
            ("hurray.numpy.save_file", lambda: hurray.numpy.save_file(arrays, paths["hurray"])),
            ("hurray.save durable=False", lambda: hurray.save(paths["hurray"], arrays, durable=False)),
            ("np.save (one .npy each)", lambda: [np.save(npy[k], a) for k, a in arrays.items()]),
        ]
        if torch is not None:
            saves += [("hurray.torch.save_file", lambda: hurray.torch.save_file(tensors, paths["hurray_pt"])),
                      ("torch.save", lambda: torch.save(tensors, paths["pt"]))]
        saves += [
            ("os.write + fsync (limit)", lambda: write_raw(paths["raw"], arrays.values(), True)),
            ("hurray.save (durable)", lambda: hurray.save(paths["hurray"], arrays)),
            ("numpy.save_file durable", lambda: hurray.numpy.save_file(arrays, paths["hurray"], durable=True)),
        ]
        loads = [
            ("read raw bytes (limit)", lambda: read_raw(paths["raw"])),
            ("hurray.numpy.load_file", lambda: hurray.numpy.load_file(paths["hurray"])),
            ("np.load mmap_mode=None", lambda: {k: np.load(p) for k, p in npy.items()}),
            ("np.load mmap_mode='r'", lambda: {k: np.load(p, mmap_mode="r") for k, p in npy.items()}),
        ]
        if torch is not None:
            loads += [("hurray.torch.load_file", lambda: hurray.torch.load_file(paths["hurray_pt"])),
                      ("torch.load", lambda: torch.load(paths["pt"]))]

        # The files each save row writes (removed before each of its timed runs).
        written = {"os.write": [paths["raw"]], "np.save": list(npy.values()), "hurray.torch": [paths["hurray_pt"]],
                   "torch.save": [paths["pt"]]}
        save_outputs = [next((v for k, v in written.items() if label.startswith(k)), [paths["hurray"]])
                        for label, _ in saves]

        def load_table(rows):
            results = timed(rows, args.runs)
            limit = results[0][1]
            print(f"\nload (median of {args.runs} runs)")
            print(f"{'':26} {'time':>12} {'best':>12} {'x limit':>8} {'µs/tensor':>10}")
            for label, t, best in results:
                print(f"{label:26} {t * 1e6:10.0f}µs {best * 1e6:10.0f}µs {limit / t:8.2f} {t * 1e6 / n:10.1f}")

        def save_table(rows):
            results = paired(rows, args.runs, save_outputs)
            print(f"\nsave ({args.runs} runs of each row beside its limit; x limit: median of the pairs' ratios,"
                  " then their quartiles)")
            print(f"{'':26} {'time':>12} {'GiB/s':>7} {'best':>12} {'x limit':>8} {'Q1-Q3':>11}")
            for label, t, best, ratio, low, high in results:
                if label.startswith("os.write"):
                    print(f"{label:26} {t * 1e6:10.0f}µs {nbytes / 2**30 / t:7.2f} {best * 1e6:10.0f}µs")
                else:
                    print(f"{label:26} {t * 1e6:10.0f}µs {nbytes / 2**30 / t:7.2f} {best * 1e6:10.0f}µs"
                          f" {ratio:8.2f} {low:5.2f}-{high:<5.2f}")

        save_table(saves)  # writes the files the loads read
        load_table(loads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
