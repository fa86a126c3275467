# SPDX-License-Identifier: Apache-2.0
"""Loading maps the file: a 1 GiB checkpoint costs no anonymous memory, and the
load/save benchmark script still runs."""

import gc
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import hurray.numpy

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = REPO / "python" / "bench" / "bench_load_save.py"
sys.path.insert(0, str(BENCH.parent))
import bench_load_save  # noqa: E402

GIB = 2**30
TENSORS = 291
GROWTH_LIMIT = 32 * 2**20


def rss_anon():
    """Anonymous resident memory of this process in bytes (RssAnon: the mapping of a
    file is file-backed, so loading one should not add to it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    pytest.skip("/proc/self/status has no RssAnon")


@pytest.fixture(scope="module")
def checkpoint_1gib(tmp_path_factory):
    """A 1 GiB / 291-tensor float32 checkpoint, written once for this module and deleted after."""
    directory = tmp_path_factory.mktemp("memory")
    free = shutil.disk_usage(directory).free
    if free < 1.2 * GIB:
        pytest.skip(f"needs 1.2 GiB free in {directory}, has {free / GIB:.2f} GiB")
    path = directory / "checkpoint.hrry"
    arrays = bench_load_save.checkpoint(GIB, TENSORS)
    assert len(arrays) == TENSORS
    hurray.numpy.save_file(arrays, path)
    expected = {name: float(a.flat[0]) for name, a in arrays.items()}
    del arrays
    gc.collect()
    yield path, expected
    shutil.rmtree(directory, ignore_errors=True)


def check_load(load, path, expected, touch):
    gc.collect()
    before = rss_anon()
    tensors = load(path)
    assert len(tensors) == TENSORS
    for name, t in tensors.items():
        touch(t)  # reads a byte of every page: the data really comes through the mapping
        assert float(t.reshape(-1)[-1]) == expected[name], name
    growth = rss_anon() - before
    assert growth < GROWTH_LIMIT, f"anonymous memory grew by {growth / 2**20:.1f} MiB loading 1 GiB"
    del tensors
    gc.collect()


def test_memory_does_not_grow_when_loading_a_1_gib_file(checkpoint_1gib):
    path, expected = checkpoint_1gib
    assert path.stat().st_size >= GIB
    check_load(hurray.numpy.load_file, path, expected, lambda a: a.reshape(-1)[::1024].sum())


def test_memory_does_not_grow_when_loading_a_1_gib_file_with_torch(checkpoint_1gib):
    pytest.importorskip("torch", reason="python3-torch is not installed")
    import hurray.torch

    path, expected = checkpoint_1gib
    check_load(hurray.torch.load_file, path, expected, lambda t: t.reshape(-1)[::1024].sum())


def test_the_load_save_benchmark_runs(tmp_path):
    out = subprocess.run([sys.executable, str(BENCH), "--size-mib", "8", "--tensors", "20", "--runs", "1",
                          "--dir", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    for row in ("hurray.numpy.save_file", "hurray.numpy.load_file", "np.load mmap_mode='r'", "os.write (limit)"):
        assert row in out.stdout
    assert "20 float32 tensors" in out.stdout
    assert list(tmp_path.iterdir()) == []  # the benchmark cleans up


def test_checkpoint_shapes_look_like_a_transformer():
    shapes = bench_load_save.checkpoint_shapes(GIB, TENSORS)
    assert len(shapes) == TENSORS and len({name for name, _ in shapes}) == TENSORS
    total = sum(int(np.prod(s)) * 4 for _, s in shapes)
    assert 0.99 * GIB <= total <= GIB
    big = sorted((int(np.prod(s)) for _, s in shapes), reverse=True)
    assert big[0] > 10 * big[-1]
