# SPDX-License-Identifier: Apache-2.0
"""The example scripts in python/examples run and print what they should."""

import os
import pathlib
import subprocess
import sys

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
