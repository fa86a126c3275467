# SPDX-License-Identifier: Apache-2.0
"""The package as installed: its version, its type hints, `python3 -m hurray`.

scripts/test.sh runs the whole suite twice: against the build tree (PYTHONPATH) and
against a wheel installed into a fresh venv, from outside the source tree, with
HURRAY_EXPECT_PACKAGE_DIR set to where that install must be found.
"""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

import hurray
from hurray import __main__ as hurray_main

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(hurray.__file__).resolve().parent


def cmake_version():
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(\s*hurray\s+VERSION\s+([0-9.]+)", text).group(1)


def test_the_version_is_the_cpp_librarys():
    assert hurray.__version__ == cmake_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", hurray.__version__)


def test_the_distribution_has_the_same_version():
    try:
        version = importlib.metadata.version("hurray")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("hurray is imported from a build tree (PYTHONPATH), not installed as a distribution")
    assert version == hurray.__version__


def test_the_package_is_the_one_expected():
    expected = os.environ.get("HURRAY_EXPECT_PACKAGE_DIR")
    if not expected:
        pytest.skip("HURRAY_EXPECT_PACKAGE_DIR is not set (only the installed-wheel run sets it)")
    assert PACKAGE == pathlib.Path(expected).resolve() / "hurray"
    # Imported from the install, not from the sources (python/hurray).
    assert REPO / "python" not in PACKAGE.parents


def test_type_hints_are_shipped():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_hurray.pyi").is_file()


def test_module_main_runs_the_tool(conformance_dir):
    if hurray_main.tool_path() is None:
        pytest.skip("no hurray tool: neither bundled (hurray/bin/hurray) nor named by HURRAY_CLI")
    out = subprocess.run([sys.executable, "-m", "hurray", "ls", str(conformance_dir / "files" / "basic.hrry")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert "weights" in out.stdout and "bias" in out.stdout
    # The tool's own exit status comes back: 2 for a usage error.
    bad = subprocess.run([sys.executable, "-m", "hurray", "no-such-command"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert bad.returncode == 2


def test_the_wheel_bundles_the_tool():
    if os.environ.get("HURRAY_EXPECT_PACKAGE_DIR") is None:
        pytest.skip("a build tree has no bundled tool; the installed-wheel run checks it")
    tool = PACKAGE / "bin" / "hurray"
    assert tool.is_file() and os.access(tool, os.X_OK)
    assert hurray_main.tool_path() == str(tool)


def test_module_main_without_a_tool_says_how(monkeypatch, capsys):
    monkeypatch.setattr(hurray_main, "tool_path", lambda: None)
    assert hurray_main.main(["ls", "x.hrry"]) == 2
    err = capsys.readouterr().err
    assert "usage: python3 -m hurray" in err and "HURRAY_CLI" in err
