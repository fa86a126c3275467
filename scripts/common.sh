# Sourced by scripts/test.sh and scripts/demo.sh.
# shellcheck shell=bash

HURRAY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HURRAY_JOBS="${HURRAY_JOBS:-2}"

banner() {
    printf '\n==================================================================\n'
    printf '== %s\n' "$*"
    printf '==================================================================\n'
}

# Configure arguments of the main GCC Release build (build/gcc), shared by test.sh
# and demo.sh so that both reuse the same build tree.
# shellcheck disable=SC2034  # used by the scripts that source this file
HURRAY_GCC_RELEASE_ARGS=(
    -G Ninja
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=g++
    -DHURRAY_WERROR=ON
    -DHURRAY_BUILD_TESTS=ON
    -DHURRAY_BUILD_BENCH=ON
    -DHURRAY_BUILD_EXAMPLES=ON
    -DCMAKE_INSTALL_PREFIX="${HURRAY_ROOT}/build/install"
)
