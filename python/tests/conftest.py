# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the hurray module's tests.

Run by ctest (``python.pytest``) with PYTHONPATH at the build tree's package
and HURRAY_CONFORMANCE_DIR at the conformance vectors; by hand:
``PYTHONPATH=build/gcc/python /usr/bin/python3 -m pytest -q python/tests``.
"""

import os
import pathlib
import shutil
import signal

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Ctrl-C as an interactive Python has it, whatever this process inherited: a shell
# starts background jobs (`cmd &`, as a CI script may) with SIGINT ignored, and a
# Python started so keeps it ignored, so that neither `_thread.interrupt_main` nor a
# SIGINT sent to the child processes the tests start would raise KeyboardInterrupt
# (a handled signal goes back to its default across exec, and the children then
# install Python's own handler).
if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def conformance_dir():
    path = pathlib.Path(os.environ.get("HURRAY_CONFORMANCE_DIR", REPO.parent / "shared" / "conformance"))
    if not (path / "manifest.json").is_file():
        pytest.fail(f"no conformance vectors at {path} (set HURRAY_CONFORMANCE_DIR)")
    return path


# Every numpy dtype with a Hurray element type.
DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def sample(dtype, shape, seed=0):
    """Deterministic values of `dtype` spanning its range (extremes included)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        values = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        if n >= 2:
            values[0], values[1] = info.min, info.max
    elif dt.kind == "f":
        values = (rng.standard_normal(n) * 1000).astype(dt)
        if n >= 3:
            values[0], values[1], values[2] = np.inf, -0.0, np.finfo(dt).max
    else:
        values = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    return values.reshape(shape)


def hurray_cli():
    """The `hurray` command-line tool: $HURRAY_CLI, else on PATH; skips the test without it."""
    path = os.environ.get("HURRAY_CLI") or shutil.which("hurray")
    if not path or not pathlib.Path(path).is_file():
        pytest.skip("the hurray tool is not built here (set HURRAY_CLI)")
    return path
