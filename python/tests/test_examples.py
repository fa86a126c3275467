# SPDX-License-Identifier: Apache-2.0
"""The example scripts in python/examples run and print what they should.
(The stream producer/consumer pair runs through a real pipe in test_stream.py.)"""

import os
import pathlib
import subprocess
import sys

import pytest

import hurray

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run_example(script, *args, timeout=60):
    """The lines the example prints, after checking that it succeeded."""
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], capture_output=True,
                            text=True, timeout=timeout, env=dict(os.environ), check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_save_load_example(tmp_path):
    assert run_example("save_load.py", tmp_path / "model.hrry") == [
        "['w', 'b'] (2, 3) {'arch': 'demo', 'layers': 2}",
        "15.0 int8",
        "['b', 'w'] {'format': 'np'} (2, 3)",
    ]


def test_safetensors_style_example(tmp_path):
    pytest.importorskip("torch", reason="python3-torch is not installed")
    path = tmp_path / "model.hrry"
    assert run_example("safetensors_style.py", path, timeout=120) == [
        "['embed.weight', 'norm.weight'] torch.bfloat16 True",
        "{'format': 'pt'}",
        "[4, 3] [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]",
        "embed.weight (4, 3)",
        "norm.weight (3,)",
        "SharedTensorsError names True",
    ]
    # The refused save left the file it would have replaced whole.
    assert sorted(hurray.load(path)) == ["embed.weight", "norm.weight"]


def test_quantized_weights_example(tmp_path):
    assert run_example("quantized_weights.py", tmp_path / "q.hrry") == [
        "PerChannelAffine.symmetric(axis=0, scale_buffer_index=1) 2",
        "Shard(parent_shape=[8, 16], shard_offset=[4, 0])",
        "value_mean claimed: None",
        "max error within half a step: True",
    ]
