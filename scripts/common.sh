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
    -DBUILD_SHARED_LIBS=ON
    -DCMAKE_CXX_COMPILER=g++
    -DHURRAY_WERROR=ON
    -DHURRAY_BUILD_TESTS=ON
    -DHURRAY_BUILD_BENCH=ON
    -DHURRAY_BUILD_EXAMPLES=ON
    -DCMAKE_INSTALL_PREFIX="${HURRAY_ROOT}/build/install"
)

# ccache, when installed, for every build (the sanitizer + coverage one included:
# ccache supports --coverage and stores the .gcno notes with the objects). CCACHE_BASEDIR
# makes paths relative, so clones in other folders (CI's) share the cache.
HURRAY_LAUNCHER_ARGS=()
if command -v ccache >/dev/null 2>&1 && [[ "${HURRAY_NO_CCACHE:-0}" != 1 ]]; then
    export CCACHE_BASEDIR="$HURRAY_ROOT"
    # One cache per machine, wherever the clone is (CI clones into another folder than
    # the developer's checkout), with room for all five builds' objects (ccache's
    # default limit, 5 GB, could evict one build's objects while another compiles).
    export CCACHE_DIR="${CCACHE_DIR:-/var/tmp/hurray-ccache}"
    export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-24G}"
    # Objects with debug info are shared between clones in different folders: by
    # default ccache hashes the working directory for -g builds (every sanitizer and
    # Clang build here), so a clone elsewhere missed every one. The cost: a hit's
    # DW_AT_comp_dir names the folder that first compiled it (stack traces still name
    # the right files, relative to CCACHE_BASEDIR). Coverage objects (.gcno, which
    # record the working directory) are still hashed with it: no gcno_cwd sloppiness.
    export CCACHE_NOHASHDIR=1
    # The test programs use precompiled headers (tests/CMakeLists.txt, HURRAY_TEST_PCH):
    # ccache caches their objects only with these sloppiness settings.
    export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
    HURRAY_LAUNCHER_ARGS=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
HURRAY_GCC_RELEASE_ARGS+=("${HURRAY_LAUNCHER_ARGS[@]}")
