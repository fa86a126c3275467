#!/usr/bin/env bash
# Issue 28's peer figure: gguflib's open + list against libhurray's BM_List, in
# one run, interleaved (README.md). Usage:
#   GGUF_TOOLS=/path/to/gguf-tools tools/gguflib-listing/run.sh [N] [ROUNDS]
# from the repository root, after a release build in build/gcc.
set -euo pipefail
n=${1:-100000}
rounds=${2:-3}
: "${GGUF_TOOLS:?set GGUF_TOOLS to a checkout of antirez/gguf-tools (8fa6eb6 measured)}"
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/gguflib-listing
mkdir -p "$out"
gcc -O2 -std=c11 -w -I"$GGUF_TOOLS" "$here/list_gguf.c" "$GGUF_TOOLS/gguflib.c" "$GGUF_TOOLS/sds.c" \
    "$GGUF_TOOLS/fp16.c" -lm -o "$out/list_gguf"
# libhurray timed the same way (list_hurray.cpp), against the release build.
g++ -O2 -std=c++20 -Iinclude -Ibuild/gcc/include "$here/list_hurray.cpp" -Lbuild/gcc -lhurray_io -lhurray \
    -Wl,-rpath,"$PWD/build/gcc" -o "$out/list_hurray"
for r in $(seq 1 "$rounds"); do
    echo "== round $r"
    "$out/list_gguf" "$out/peer.gguf" "$n" 20
    "$out/list_hurray" "$out/peer.hrry" "$n" 20
    build/gcc/bench/hurray_bench --benchmark_filter="BM_List/$n/1" 2>/dev/null | grep -E "^BM_List"
done
