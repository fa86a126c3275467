#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every README code block marked `<!-- readme-example: PATH -->` is the
file PATH (minus its leading `//` comment lines, the blank line after them and any
region marker lines), and
every block marked `<!-- readme-example: PATH#NAME -->` the lines of PATH between
`// readme:begin NAME` and `// readme:end NAME` (`# readme:begin NAME` and `# readme:end
NAME` in Python files; their common indentation removed), so
the README's code cannot drift from the examples the test command builds and runs.

Usage: check_readme_examples.py README.md   (paths are relative to the README's folder)
Exit status 0 when every marked block matches, 1 otherwise (with a diff)."""
import difflib
import pathlib
import re
import sys


def body_of(path: pathlib.Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines) and lines[i].startswith("//"):
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    # Region markers are for the blocks that show a part; a whole file is shown without them.
    return [l for l in lines[i:] if not re.match(r"\s*(//|#) readme:(begin|end) ", l)]


def region_of(path: pathlib.Path, name: str) -> list[str] | None:
    lines = path.read_text(encoding="utf-8").splitlines()
    begin = [i for i, l in enumerate(lines) if l.strip() in (f"// readme:begin {name}", f"# readme:begin {name}")]
    end = [i for i, l in enumerate(lines) if l.strip() in (f"// readme:end {name}", f"# readme:end {name}")]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        return None
    body = lines[begin[0] + 1:end[0]]
    indents = [len(l) - len(l.lstrip(" ")) for l in body if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in body]


def main() -> int:
    readme = pathlib.Path(sys.argv[1])
    text = readme.read_text(encoding="utf-8").splitlines()
    marker = re.compile(r"<!--\s*readme-example:\s*(\S+)\s*-->")
    checked = 0
    failed = 0
    for n, line in enumerate(text):
        m = marker.search(line)
        if not m:
            continue
        if n + 1 >= len(text) or not text[n + 1].startswith("```"):
            print(f"{readme}:{n + 1}: the marker must be followed by a fenced code block")
            failed += 1
            continue
        end = n + 2
        while end < len(text) and not text[end].startswith("```"):
            end += 1
        block = text[n + 2:end]
        file_name, _, region = m.group(1).partition("#")
        path = readme.parent / file_name
        if not path.is_file():
            print(f"{readme}:{n + 1}: {file_name} does not exist")
            failed += 1
            continue
        want = region_of(path, region) if region else body_of(path)
        if want is None:
            print(f"{readme}:{n + 1}: {file_name} has no single region '{region}'")
            failed += 1
            continue
        checked += 1
        if block != want:
            failed += 1
            print(f"{readme}:{n + 1}: the block differs from {m.group(1)}:")
            sys.stdout.writelines(d + "\n" for d in difflib.unified_diff(want, block, m.group(1), "README", lineterm=""))
    if checked == 0:
        print(f"{readme}: no readme-example block found")
        return 1
    print(f"{checked} README example block(s) checked, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
