# SPDX-License-Identifier: Apache-2.0
"""The example scripts in python/examples run and print what they should."""

import os
import pathlib
import subprocess
import sys

import pytest

import hurray

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def test_save_load_example(tmp_path):
    result = subprocess.run([sys.executable, str(EXAMPLES / "save_load.py"), str(tmp_path / "model.hrry")],
                            capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['w', 'b'] (2, 3) {'arch': 'demo', 'layers': 2}",
        "15.0 int8",
        "['b', 'w'] {'format': 'np'} (2, 3)",
    ]


def test_safetensors_style_example(tmp_path):
    pytest.importorskip("torch", reason="python3-torch is not installed")
    path = tmp_path / "model.hrry"
    result = subprocess.run([sys.executable, str(EXAMPLES / "safetensors_style.py"), str(path)],
                            capture_output=True, text=True, timeout=120, env=dict(os.environ), check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['embed.weight', 'norm.weight'] torch.bfloat16 True",
        "{'format': 'pt'}",
        "[4, 3] [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]",
        "embed.weight (4, 3)",
        "norm.weight (3,)",
        "SharedTensorsError names True",
    ]
    # The refused save left the file it would have replaced whole.
    assert sorted(hurray.load(path)) == ["embed.weight", "norm.weight"]
