#!/usr/bin/env python3
"""clang-tidy over a list of files, skipping those already found clean.

Usage: tidy_cached.py -p BUILD_DIR [-j JOBS] [--clang-tidy BIN] FILE...

A file's verdict depends only on what clang-tidy reads: the preprocessed translation
unit (the file and every header it includes), the compile flags, the .clang-tidy
configuration files and clang-tidy's own version. This script hashes exactly those
(the preprocessor output of the file's compile command from BUILD_DIR's
compile_commands.json, with the repository's path replaced by a placeholder so that
clones in other folders share the cache) and runs clang-tidy only when no earlier run
found that same input clean. Only clean verdicts are kept; a file with findings is
linted again each time. The cache lives in $HURRAY_TIDY_CACHE_DIR (default
/var/tmp/hurray-tidy-cache); HURRAY_TIDY_NO_CACHE=1 lints every file.

Exit status: 0 when every file is clean, 1 otherwise (clang-tidy's findings printed).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = b"@HURRAY_ROOT@"


def compile_arguments(entry):
    """The compile command of one compile_commands.json entry, as a list."""
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def preprocess_arguments(args):
    """The same command with -E instead of -c and without an output file."""
    out = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "-o":
            skip = True
            continue
        if arg.startswith("-o") and len(arg) > 2:
            continue
        if arg == "-c":
            out.append("-E")
            continue
        # Dependency files are not wanted from the preprocessing run.
        if arg in ("-MD", "-MMD"):
            continue
        if arg in ("-MF", "-MT", "-MQ"):
            skip = True
            continue
        out.append(arg)
    return out


def config_digest(tidy):
    """clang-tidy's version and every .clang-tidy file of the repository."""
    h = hashlib.sha256()
    version = subprocess.run([tidy, "--version"], capture_output=True, check=True).stdout
    h.update(version)
    for cfg in sorted(ROOT.rglob(".clang-tidy")):
        if "build" in cfg.relative_to(ROOT).parts:
            continue
        h.update(str(cfg.relative_to(ROOT)).encode())
        h.update(cfg.read_bytes())
    return h.hexdigest()


def file_digest(entry, config):
    """The hash of everything clang-tidy reads for one file, or None if unknown."""
    args = compile_arguments(entry)
    try:
        pre = subprocess.run(preprocess_arguments(args), cwd=entry["directory"],
                             capture_output=True, check=False)
    except OSError:
        return None
    if pre.returncode != 0:
        return None  # clang-tidy will report the error itself
    root = str(ROOT).encode()
    h = hashlib.sha256()
    h.update(config.encode())
    h.update(" ".join(args).encode().replace(root, PLACEHOLDER))
    h.update(entry["directory"].encode().replace(root, PLACEHOLDER))
    h.update(pre.stdout.replace(root, PLACEHOLDER))
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-p", dest="build_dir", required=True)
    parser.add_argument("-j", dest="jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--clang-tidy", dest="tidy", default="clang-tidy-14")
    parser.add_argument("files", nargs="+")
    opts = parser.parse_args()

    db_path = Path(opts.build_dir) / "compile_commands.json"
    entries = {}
    for entry in json.loads(db_path.read_text()):
        path = Path(entry["directory"], entry["file"]).resolve()
        entries[path] = entry

    use_cache = os.environ.get("HURRAY_TIDY_NO_CACHE", "0") != "1"
    cache_dir = Path(os.environ.get("HURRAY_TIDY_CACHE_DIR", "/var/tmp/hurray-tidy-cache"))
    if use_cache:
        cache_dir.mkdir(parents=True, exist_ok=True)
    config = config_digest(opts.tidy)

    def lint(name):
        path = Path(name).resolve()
        entry = entries.get(path)
        digest = file_digest(entry, config) if (use_cache and entry) else None
        if digest and (cache_dir / digest).exists():
            return name, True, True, b""
        run = subprocess.run([opts.tidy, "-p", opts.build_dir, "--quiet",
                              "--warnings-as-errors=*", name],
                             capture_output=True, check=False)
        clean = run.returncode == 0
        if clean and digest:
            (cache_dir / digest).write_text(name + "\n")
        return name, clean, False, run.stdout + run.stderr

    failed = []
    cached = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        for name, clean, from_cache, output in pool.map(lint, opts.files):
            if from_cache:
                cached += 1
            if not clean:
                failed.append(name)
                sys.stdout.buffer.write(output)
                sys.stdout.flush()
    print(f"clang-tidy: {len(opts.files)} file(s), {cached} unchanged since a clean run "
          f"(cache {cache_dir if use_cache else 'off'}), {len(failed)} with findings")
    for name in failed:
        print(f"  findings in {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
