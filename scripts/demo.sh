#!/usr/bin/env bash
# Sets up the machine, builds libhurray and the `hurray` tool (GCC Release, build/gcc) and
# runs `hurray demo [DIR]`: it writes a small model-like file, lists (ls, info) and verifies
# it, streams it through a pipe into a second file and checks both hold the same tensors.
# Arguments are passed to `hurray demo` (DIR defaults to a new temporary directory).
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HURRAY_ROOT"

banner "bootstrap (Debian packages)"
if [[ "${HURRAY_SKIP_BOOTSTRAP:-0}" == 1 ]]; then
    echo "HURRAY_SKIP_BOOTSTRAP=1: not checking packages"
else
    bash scripts/bootstrap.sh
fi

banner "build (GCC Release, build/gcc)"
cmake -S . -B build/gcc "${HURRAY_GCC_RELEASE_ARGS[@]}"
cmake --build build/gcc -j "$HURRAY_JOBS" --target hurray

banner "run: build/gcc/tools/hurray demo $*"
exec ./build/gcc/tools/hurray demo "$@"
