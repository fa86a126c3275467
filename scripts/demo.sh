#!/usr/bin/env bash
# Sets up the machine, builds libhurray (GCC Release, build/gcc) and runs the demo
# program hurray_demo (examples/demo.cpp). Arguments are passed to the demo.
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
if [[ ! -f examples/demo.cpp ]]; then
    echo "examples/demo.cpp does not exist yet: there is no demo to run" >&2
    exit 1
fi
cmake -S . -B build/gcc "${HURRAY_GCC_RELEASE_ARGS[@]}"
cmake --build build/gcc -j "$HURRAY_JOBS" --target hurray_demo

banner "run: build/gcc/examples/hurray_demo $*"
exec ./build/gcc/examples/hurray_demo "$@"
