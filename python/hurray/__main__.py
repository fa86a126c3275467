# SPDX-License-Identifier: Apache-2.0
"""``python3 -m hurray ARGS...`` (and the ``hurray`` console script a pip install makes):
runs the ``hurray`` command-line tool with ARGS.

The tool is the one the wheel carries (``hurray/bin/hurray``, built with the package),
else the one named by the ``HURRAY_CLI`` environment variable. Without either, prints
how to get it and what the package itself offers, and exits with status 2.
"""

import os
import pathlib
import sys

_USAGE = """\
usage: python3 -m hurray COMMAND [ARGS...]

Runs the `hurray` command-line tool: ls, info, verify, cat, convert, get, ...
(`python3 -m hurray --help` lists them).

The tool is not in this installation of the package ({where}): it comes with a
package installed by `pip install .` or from a wheel, or set HURRAY_CLI to the
path of a `hurray` executable (a CMake build puts it in build/<dir>/tools/hurray).

From Python:
    import hurray
    with hurray.open("model.hrry") as f:
        print(f.keys(), f.metadata())
"""


def tool_path():
    """The `hurray` executable this package runs, or None."""
    bundled = pathlib.Path(__file__).resolve().parent / "bin" / "hurray"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    named = os.environ.get("HURRAY_CLI")
    if named and os.path.isfile(named) and os.access(named, os.X_OK):
        return named
    return None


def main(argv=None):
    """Replaces this process with the tool (its exit status is the command's)."""
    args = sys.argv[1:] if argv is None else list(argv)
    tool = tool_path()
    if tool is None:
        sys.stderr.write(_USAGE.format(where=pathlib.Path(__file__).resolve().parent))
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(tool, ["hurray", *args])
    return 0  # not reached: execv returns only by raising OSError


if __name__ == "__main__":
    sys.exit(main())
