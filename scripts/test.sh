#!/usr/bin/env bash
# The one test command: sets up the machine, builds libhurray several ways and runs
# every check. The last thing it prints is the ctest summary of the main GCC build.
#
# Stages (each can be skipped for local iteration; the default runs everything):
#   1. GCC Release, shared libraries, -Werror: all, tests, bench, examples; ctest (always)
#   2. install; consumers, quickstart, C example, CLI built against it   HURRAY_SKIP_INSTALL=1
#   2b. the Python wheel (pyproject.toml) and `pip install .`, each in a     HURRAY_SKIP_WHEEL=1
#      fresh venv; pytest, the examples and mypy against those installs
#   3. GCC ASan+UBSan+coverage Debug -O1 build of what ctest runs; ctest; HURRAY_SKIP_ASAN=1
#      gcovr line coverage of src/ >= 80% (the counts of that same run)
#      (HURRAY_SKIP_COV=1: no coverage instrumentation, no gcovr)
#   3b. GCC ThreadSanitizer build of the test programs that start      HURRAY_SKIP_TSAN=1
#      threads (io, net, C); their threaded tests, halt_on_error=1
#   4. Clang 14 -Werror core, io, json, convert + fuzz; clang-tidy (verdicts    HURRAY_SKIP_CLANG=1
#      cached by preprocessed input: scripts/tidy_cached.py); the fuzz
#      targets (FUZZ_TARGETS, HURRAY_JOBS at a time); the hurray CLI over their
#      corpora (parts: HURRAY_SKIP_TIDY=1, HURRAY_SKIP_FUZZ=1)
# ccache (scripts/common.sh): one cache per machine, shared by clones in any folder; its
# hits and misses over the run are printed at the end.
# The sanitizer builds use -g1 (line tables: symbolised stack traces, 25% less compile
# time than -g), the Clang one -gline-tables-only.
# Each stage's time and the total are printed at the end, then stage 1's ctest summary.
# Other knobs: HURRAY_UNITY (default 1: unity builds, cmake/HurrayUnity.cmake),
#   HURRAY_FUZZ_SECONDS (default 60), HURRAY_JOBS (default 2),
#   HURRAY_CLI_CORPUS_FILES (inputs per corpus for the CLI check, default 100),
#   HURRAY_SKIP_BOOTSTRAP=1, HURRAY_SHARED_DIR (default ../shared), HURRAY_MIN_LINE_COVERAGE,
#   HURRAY_FUZZ_UPDATE_CORPUS=1 (merge what each fuzz run found into fuzz/corpus/<target>).
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$HURRAY_ROOT"

FUZZ_SECONDS="${HURRAY_FUZZ_SECONDS:-60}"
SHARED_DIR="${HURRAY_SHARED_DIR:-$HURRAY_ROOT/../shared}"
MIN_LINE_COVERAGE="${HURRAY_MIN_LINE_COVERAGE:-80}"
CTEST_ARGS=(--output-on-failure --no-tests=error -j "$HURRAY_JOBS")
# Unity builds (HURRAY_UNITY, default 1): every GCC tree and the Clang build compile their
# sources 8 to a translation unit (CMAKE_UNITY_BUILD, with the relocatable unity files of
# cmake/HurrayUnity.cmake), so the headers and inline code they share are compiled once
# per batch: a third less compile time cold. The
# clang-tidy stage lints the sources one by one (its own configure-only tree), so a
# file that compiles only beside another one in its batch is still caught there.
UNITY_ARGS=(-DCMAKE_UNITY_BUILD=OFF)
[[ "${HURRAY_UNITY:-1}" == 1 ]] && UNITY_ARGS=(-DCMAKE_UNITY_BUILD=ON)

STAGE_TIMES=()
stage_start() {
    banner "$1"
    STAGE_NAME="$1"
    STAGE_T0=$SECONDS
}
stage_end() {
    STAGE_TIMES+=("$(printf '%-66s %4ds' "$STAGE_NAME" $((SECONDS - STAGE_T0)))")
}
stage_skip() {
    STAGE_TIMES+=("$(printf '%-66s %s' "$1" "skipped ($2)")")
    banner "$1: skipped ($2)"
}

# --------------------------------------------------------------------------
stage_start "0. bootstrap (Debian packages)"
if [[ "${HURRAY_SKIP_BOOTSTRAP:-0}" == 1 ]]; then
    echo "HURRAY_SKIP_BOOTSTRAP=1: not checking packages"
else
    bash scripts/bootstrap.sh
fi
# ccache's counters from here on: printed at the end (how much of this run's compiling
# the cache served).
if [[ ${#HURRAY_LAUNCHER_ARGS[@]} -gt 0 ]]; then
    ccache --zero-stats >/dev/null
fi
stage_end

# --------------------------------------------------------------------------
stage_start "1. GCC Release -Werror build, shared libraries + ctest (build/gcc)"
cmake -S . -B build/gcc "${HURRAY_GCC_RELEASE_ARGS[@]}" "${UNITY_ARGS[@]}"
cmake --build build/gcc -j "$HURRAY_JOBS"
# Its summary is printed again at the very end (the last lines CI reads).
ctest --test-dir build/gcc "${CTEST_ARGS[@]}" | tee build/gcc/ctest-summary.log
stage_end

# --------------------------------------------------------------------------
if [[ "${HURRAY_SKIP_INSTALL:-0}" == 1 ]]; then
    stage_skip "2. install + examples/consumer" "HURRAY_SKIP_INSTALL=1"
else
    stage_start "2. install the shared libraries (build/install); consumers and the CLI against them"
    rm -rf build/install build/consumer build/consumer-pc build/net-consumer build/cli-installed
    cmake --install build/gcc --prefix "$HURRAY_ROOT/build/install"
    echo "--- installed files:"
    (cd build/install && find . -type f | sort)
    lib_dir="$(dirname "$(find "$HURRAY_ROOT/build/install" -name 'libhurray.so' -print -quit)")"
    [[ -f "$lib_dir/libhurray.so" && -f "$lib_dir/libhurray_io.so" ]] ||
        { echo "shared libhurray.so / libhurray_io.so were not installed" >&2; exit 1; }
    # hurray::json keeps nlohmann/json private: no installed header may need it.
    if grep -rl "nlohmann" build/install/include; then
        echo "an installed header refers to nlohmann/json (see above)" >&2
        exit 1
    fi
    # Installed headers define only HURRAY_-prefixed macros (no internal helpers leak).
    if grep -rhoE '^\s*#\s*define\s+[A-Za-z_][A-Za-z0-9_]*' build/install/include |
        awk '{print $NF}' | grep -v '^HURRAY_'; then
        echo "an installed header defines a macro without the HURRAY_ prefix (see above)" >&2
        exit 1
    fi
    # The libraries export their API, not their internals (-fvisibility=hidden): e.g.
    # detail::paged_token_starts, declared in an internal header, is defined but hidden.
    exported="$(nm -DC --defined-only "$lib_dir/libhurray.so" | grep -c ' T hurray::' || true)"
    leaked="$(nm -DC --defined-only "$lib_dir/libhurray.so" | grep -c 'paged_token_starts' || true)"
    echo "libhurray.so exports $exported functions of namespace hurray"
    ((exported > 50 && leaked == 0)) || { echo "libhurray.so's exported symbols are wrong" >&2; exit 1; }
    # Every installed C++ library: no detail symbol, none that the installed headers do
    # not declare.
    /usr/bin/python3 scripts/check_exports.py --quiet --lib-dir "$lib_dir" --include-dir build/install/include

    echo "--- CMake consumer: find_package(hurray), shared libraries"
    cmake -S examples/consumer -B build/consumer -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_COMPILER=g++ -DCMAKE_PREFIX_PATH="$HURRAY_ROOT/build/install" \
        -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" "${HURRAY_LAUNCHER_ARGS[@]}"
    cmake --build build/consumer -j "$HURRAY_JOBS"
    ./build/consumer/hurray_consumer
    # ldd's output is captured first: `ldd | grep -q` fails under pipefail when grep
    # exits at its first match and ldd gets SIGPIPE.
    [[ "$(ldd build/consumer/hurray_consumer)" == *libhurray_io.so* ]] ||
        { echo "hurray_consumer is not linked to the shared libhurray_io.so" >&2; exit 1; }

    echo "--- pkg-config consumers: hurray-json.pc and hurray-io.pc (both require hurray.pc)"
    pc_dir="$lib_dir/pkgconfig"
    for pc in hurray hurray-json hurray-io; do
        [[ -f "$pc_dir/$pc.pc" ]] || { echo "$pc.pc was not installed" >&2; exit 1; }
    done
    mkdir -p build/consumer-pc
    pc_flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs hurray-json hurray-io)"
    echo "pkg-config --cflags --libs hurray-json hurray-io: $pc_flags"
    # shellcheck disable=SC2086  # the flags must be split
    g++ -Wall -Wextra -Wpedantic -Werror examples/consumer/main.cpp $pc_flags -Wl,-rpath,"$lib_dir" \
        -o build/consumer-pc/hurray_consumer
    ./build/consumer-pc/hurray_consumer
    # The README's quick start, built by hand against the install as a user would.
    # shellcheck disable=SC2086
    g++ -std=c++20 -Wall -Wextra -Wpedantic -Werror examples/quickstart.cpp $pc_flags \
        -Wl,-rpath,"$lib_dir" -o build/consumer-pc/quickstart
    (cd build/consumer-pc && ./quickstart)

    # The C ABI (hurray::c): <hurray.h> and libhurray_c.so, which exports hurray_* only.
    echo "--- C consumer: examples/c_list.c (C99) against hurray-c.pc and the shared libhurray_c"
    [[ -f "$pc_dir/hurray-c.pc" && -f build/install/include/hurray.h && -f "$lib_dir/libhurray_c.so" ]] ||
        { echo "hurray-c.pc, hurray.h or libhurray_c.so was not installed" >&2; exit 1; }
    if nm -D --defined-only "$lib_dir/libhurray_c.so" | awk '{print $NF}' | grep -v '^hurray_'; then
        echo "libhurray_c.so exports symbols outside the C ABI (see above)" >&2
        exit 1
    fi
    c_flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs hurray-c)"
    echo "pkg-config --cflags --libs hurray-c: $c_flags"
    # shellcheck disable=SC2086  # the flags must be split
    gcc -std=c99 -Wall -Wextra -pedantic -Werror examples/c_list.c $c_flags -Wl,-rpath,"$lib_dir" \
        -o build/consumer-pc/hurray_c_list
    ./build/consumer-pc/hurray_c_list "$SHARED_DIR/conformance/files/basic.hrry"
    [[ "$(ldd build/consumer-pc/hurray_c_list)" == *libhurray_c.so.4* ]] ||
        { echo "hurray_c_list is not linked to the shared libhurray_c.so.4" >&2; exit 1; }
    # The C test suite and the ABI tests, as a C user builds them: C99, GCC and Clang,
    # against the installed header and shared library (stage 1 wrote the test files
    # they read into build/gcc/tests).
    for cc in gcc clang-14; do
        echo "--- C test suite (tests/c/*.c) and ABI tests built with $cc against the install"
        # shellcheck disable=SC2086  # the flags must be split
        "$cc" -std=c99 -Wall -Wextra -pedantic -Werror tests/c/*.c $c_flags -pthread \
            -Wl,-rpath,"$lib_dir" -o "build/consumer-pc/hurray_c_tests_$cc"
        "build/consumer-pc/hurray_c_tests_$cc" "$SHARED_DIR/conformance" build/gcc/tests/c_api_kv.hrry \
            build/gcc/tests | tail -n 1
        for abi_dir in tests/c/abi/*/; do
            # shellcheck disable=SC2086
            "$cc" -std=c99 -Wall -Wextra -pedantic -Werror -I"$abi_dir" "$abi_dir/abi_test.c" $c_flags \
                -Wl,-rpath,"$lib_dir" -o "build/consumer-pc/hurray_c_abi_test_$cc"
            echo -n "ABI test $(basename "$abi_dir"): "
            "build/consumer-pc/hurray_c_abi_test_$cc" "$SHARED_DIR/conformance" build/consumer-pc | tail -n 1
        done
    done

    # hurray::net (async streams on Asio) exists in GCC builds only.
    if [[ -f "$pc_dir/hurray-net.pc" ]]; then
        echo "--- async consumer: find_package(hurray COMPONENTS net) and hurray-net.pc"
        cmake -S examples/net_consumer -B build/net-consumer -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CXX_COMPILER=g++ -DCMAKE_PREFIX_PATH="$HURRAY_ROOT/build/install" \
            -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" "${HURRAY_LAUNCHER_ARGS[@]}"
        cmake --build build/net-consumer -j "$HURRAY_JOBS"
        ./build/net-consumer/hurray_net_consumer
        net_flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs hurray-net)"
        echo "pkg-config --cflags --libs hurray-net: $net_flags"
        # shellcheck disable=SC2086  # the flags must be split
        g++ -std=c++20 -Wall -Wextra -Wpedantic -Werror examples/net_consumer/main.cpp $net_flags \
            -Wl,-rpath,"$lib_dir" -o build/consumer-pc/hurray_net_consumer
        ./build/consumer-pc/hurray_net_consumer
    else
        echo "--- hurray-net.pc not installed (hurray::net not built): async consumer skipped"
    fi

    # hurray::http (remote files over HTTP(S), libcurl): the CMake component and hurray-http.pc.
    if [[ -f "$pc_dir/hurray-http.pc" ]]; then
        echo "--- http consumer: hurray-http.pc (find_package(hurray COMPONENTS http): the tool below)"
        http_flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs hurray-http)"
        echo "pkg-config --cflags --libs hurray-http: $http_flags"
        printf '%s\n' '#include <hurray/http/http_range_source.hpp>' '#include <cstdio>' \
            'int main() { return hurray::HttpRangeSource::display_url("https://u:p@h/f?sig=1") == "https://h/f" ? 0 : 1; }' \
            > build/consumer-pc/http_consumer.cpp
        # shellcheck disable=SC2086  # the flags must be split
        g++ -std=c++20 -Wall -Wextra -Wpedantic -Werror build/consumer-pc/http_consumer.cpp $http_flags \
            -Wl,-rpath,"$lib_dir" -o build/consumer-pc/http_consumer
        # libhurray_http's own libhurray_io is found through the library path (an installed
        # library has no RUNPATH; the program's rpath covers only what it links directly).
        LD_LIBRARY_PATH="$lib_dir" ./build/consumer-pc/http_consumer
    else
        echo "--- hurray-http.pc not installed (hurray::http not built): http consumer skipped"
    fi

    # The Python package (python/), when stage 1 built it: importable from the
    # install with PYTHONPATH alone (the extension finds libhurray_io by RPATH).
    py_pkg="$(find build/install -path '*/hurray/_hurray*.so' -print -quit)"
    if [[ -n "$py_pkg" ]]; then
        py_dir="$(dirname "$(dirname "$py_pkg")")"
        echo "--- the installed Python package ($py_dir) loads the conformance file"
        PYTHONPATH="$py_dir" /usr/bin/python3 -c 'import sys, hurray
t = hurray.load(sys.argv[1])
assert list(t) == ["weights", "bias"], t
print("hurray", hurray.__version__, "from", hurray.__file__, {k: v.shape for k, v in t.items()})' \
            "$SHARED_DIR/conformance/files/basic.hrry"
    else
        echo "--- the Python package was not installed (HURRAY_BUILD_PYTHON is OFF): check skipped"
    fi

    echo "--- the hurray tool built on its own against the install (public API only)"
    cmake -S tools -B build/cli-installed -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_COMPILER=g++ -DCMAKE_PREFIX_PATH="$HURRAY_ROOT/build/install" \
        "${HURRAY_LAUNCHER_ARGS[@]}" "${UNITY_ARGS[@]}"
    cmake --build build/cli-installed -j "$HURRAY_JOBS" --target hurray
    build/cli-installed/hurray verify "$SHARED_DIR/conformance/files/basic.hrry"
    if [[ -f "$pc_dir/hurray-http.pc" ]]; then
        # find_package(hurray ... OPTIONAL_COMPONENTS http) found it: URLs are read (a refused
        # connection, not "no HTTP support").
        url_err="$(build/cli-installed/hurray ls http://127.0.0.1:1/x.hrry --http-retries 0 2>&1 || true)"
        [[ "$url_err" != *"no HTTP support"* ]] ||
            { echo "the tool built against the install has no HTTP support: $url_err" >&2; exit 1; }
    fi
    [[ -x build/install/bin/hurray ]] || { echo "the hurray tool was not installed" >&2; exit 1; }
    build/install/bin/hurray verify "$SHARED_DIR/conformance/files/basic.hrry"
    stage_end
fi

# --------------------------------------------------------------------------
# The Python package as a user installs it: a wheel built by pyproject.toml's backend
# (setup.py runs CMake), installed into a fresh venv; `pip install .` into another. The
# pytest suite and the examples run against each install from outside the source tree.
if [[ "${HURRAY_SKIP_WHEEL:-0}" == 1 ]]; then
    stage_skip "2b. Python wheel + pip install into venvs" "HURRAY_SKIP_WHEEL=1"
elif [[ ! -f build/gcc/python/hurray/__init__.py ]]; then
    stage_skip "2b. Python wheel + pip install into venvs" "stage 1 built no Python module"
else
    stage_start "2b. Python wheel + pip install . into fresh venvs; pytest, examples, mypy from the installs"
    rm -rf build/dist build/venv-wheel build/venv-pip build/wheel/stage
    # Stage 1's compiler and flags, so that ccache serves its objects (the wheel's own
    # default is -DHURRAY_WERROR=OFF and the system's c++).
    export HURRAY_WHEEL_BUILD_DIR="$HURRAY_ROOT/build/wheel" CMAKE_BUILD_PARALLEL_LEVEL="$HURRAY_JOBS"
    export HURRAY_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DHURRAY_WERROR=ON ${HURRAY_LAUNCHER_ARGS[*]} ${UNITY_ARGS[*]}"
    /usr/bin/python3 -m build --wheel --no-isolation --outdir build/dist
    wheels=(build/dist/hurray-*.whl)
    [[ ${#wheels[@]} == 1 && -f "${wheels[0]}" ]] || { echo "python3 -m build made no single wheel" >&2; exit 1; }
    echo "--- the wheel:"
    /usr/bin/python3 -m zipfile -l "${wheels[0]}" | grep -v '\.py ' || true
    py_outside="$(mktemp -d)"
    for how in wheel pip; do
        venv="$HURRAY_ROOT/build/venv-$how"
        /usr/bin/python3 -m venv --system-site-packages "$venv"
        if [[ $how == wheel ]]; then
            "$venv/bin/pip" install --no-index -q "${wheels[0]}"
        else
            "$venv/bin/pip" install --no-build-isolation --no-index -q "$HURRAY_ROOT"
        fi
        site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
        [[ $how == wheel ]] && wheel_site="$site"
        echo "--- pytest against the package installed by $how into $venv (run from $py_outside)"
        # The whole suite (the examples run inside it, test_examples.py, with this venv's python).
        (cd "$py_outside" && env -u PYTHONPATH HURRAY_EXPECT_PACKAGE_DIR="$site" \
            HURRAY_CONFORMANCE_DIR="$SHARED_DIR/conformance" HURRAY_CLI="$site/hurray/bin/hurray" \
            PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$HURRAY_ROOT/python/tests")
        (cd "$py_outside" && env -u PYTHONPATH "$venv/bin/hurray" verify "$SHARED_DIR/conformance/files/basic.hrry")
    done
    echo "--- mypy: the examples and a typed usage file against the installed package's stubs"
    PYTHON="$HURRAY_ROOT/build/venv-wheel/bin/python" bash python/typecheck/run_mypy.sh "$wheel_site"
    rm -rf "$py_outside"
    stage_end
fi

# --------------------------------------------------------------------------
if [[ "${HURRAY_SKIP_ASAN:-0}" == 1 ]]; then
    stage_skip "3. ASan+UBSan tests + coverage" "HURRAY_SKIP_ASAN=1"
else
    # One build for the sanitizers and the coverage: gcov writes its counts at exit
    # (ASan's exit included); processes that die of a signal or _exit (death tests,
    # the SIGKILL crash test's children) write none, as in any coverage build.
    # -fprofile-update=atomic (hurray_enable_coverage) keeps threaded counts sane.
    cov=ON
    [[ "${HURRAY_SKIP_COV:-0}" == 1 ]] && cov=OFF
    stage_start "3. GCC ASan+UBSan+coverage Debug -O1 build of the ctest programs + ctest + gcovr (build/asan)"
    cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=g++ \
        -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DCMAKE_C_FLAGS_DEBUG="-g1 -O1" -DHURRAY_SANITIZE=ON -DHURRAY_COVERAGE="$cov" -DHURRAY_WERROR=ON \
        -DHURRAY_BUILD_TESTS=ON -DHURRAY_BUILD_BENCH=OFF -DHURRAY_BUILD_EXAMPLES=OFF \
        -DHURRAY_INSTALL=OFF -DHURRAY_BUILD_PYTHON=OFF "${HURRAY_LAUNCHER_ARGS[@]}" "${UNITY_ARGS[@]}"
    # What ctest runs (tests/CMakeLists.txt: hurray_ctest_programs), not `all`; the
    # hurray tool comes with hurray_cli_tests (stage 4d runs it over the corpora).
    cmake --build build/asan -j "$HURRAY_JOBS" --target hurray_ctest_programs
    find build/asan -name '*.gcda' -delete   # counts from earlier runs
    ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        ctest --test-dir build/asan "${CTEST_ARGS[@]}"
    if [[ "$cov" == ON ]]; then
        gcovr -r . --filter 'src/' -j "$HURRAY_JOBS" --print-summary \
            --fail-under-line "$MIN_LINE_COVERAGE" build/asan
    else
        echo "HURRAY_SKIP_COV=1: no coverage instrumentation, no gcovr"
    fi
    stage_end
fi

# --------------------------------------------------------------------------
# ThreadSanitizer over the tests that start threads. Programs: hurray_io_tests
# (tests whose names say Thread, Pipe, Socket or Concurrent: FileReader shared by 8
# threads, lazy descriptors, pipe and socket ends fed by a thread), hurray_net_tests
# (all: async ends on 1- and 4-thread io_contexts, validation on a thread pool) and
# hurray_c_tests (all; per-thread last-error messages from 4 threads). A threaded
# test added to tests/io must carry one of those words in its name.
TSAN_IO_FILTER='*Thread*:*Pipe*:*Socket*:*Concurrent*:*ParallelOpen*-*EveryIndexByte*'
if [[ "${HURRAY_SKIP_TSAN:-0}" == 1 ]]; then
    stage_skip "3b. TSan tests" "HURRAY_SKIP_TSAN=1"
else
    stage_start "3b. GCC ThreadSanitizer Debug -O1 build of the threaded tests + run (build/tsan)"
    cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=g++ \
        -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DCMAKE_C_FLAGS_DEBUG="-g1 -O1" -DHURRAY_SANITIZE_THREAD=ON \
        -DHURRAY_WERROR=ON -DHURRAY_BUILD_TESTS=ON -DHURRAY_BUILD_BENCH=OFF -DHURRAY_BUILD_EXAMPLES=OFF \
        -DHURRAY_BUILD_TOOLS=OFF -DHURRAY_BUILD_JSON=OFF -DHURRAY_INSTALL=OFF -DHURRAY_BUILD_PYTHON=OFF \
        "${HURRAY_LAUNCHER_ARGS[@]}" "${UNITY_ARGS[@]}"
    tsan_targets=(hurray_io_tests hurray_net_tests)
    [[ -n "$(cmake -L -N build/tsan 2>/dev/null | grep '^HURRAY_BUILD_C:BOOL=ON')" ]] &&
        tsan_targets+=(hurray_c_tests hurray_c_test_writer hurray_c_test_dlpack_writer)
    [[ -n "$(cmake -L -N build/tsan 2>/dev/null | grep '^HURRAY_BUILD_HTTP:BOOL=ON')" ]] &&
        tsan_targets+=(hurray_http_tests)
    cmake --build build/tsan -j "$HURRAY_JOBS" --target "${tsan_targets[@]}"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
    echo "--- hurray_io_tests --gtest_filter=$TSAN_IO_FILTER"
    (cd build/tsan/tests && ./hurray_io_tests --gtest_filter="$TSAN_IO_FILTER" --gtest_brief=1)
    if [[ -x build/tsan/tests/hurray_net_tests ]]; then
        echo "--- hurray_net_tests"
        (cd build/tsan/tests && ./hurray_net_tests --gtest_brief=1)
    fi
    if [[ -x build/tsan/tests/hurray_http_tests ]]; then
        echo "--- hurray_http_tests --gtest_filter=*Concurrent*"
        (cd build/tsan/tests && ./hurray_http_tests --gtest_filter='*Concurrent*' --gtest_brief=1)
    fi
    if [[ -x build/tsan/tests/hurray_c_tests ]]; then
        echo "--- hurray_c_tests"
        (cd build/tsan/tests && ./hurray_c_test_writer c_api_kv.hrry &&
            ./hurray_c_test_dlpack_writer c_api_dlpack.hrry &&
            ./hurray_c_tests "$SHARED_DIR/conformance" c_api_kv.hrry . | tail -n 1)
    fi
    unset TSAN_OPTIONS
    stage_end
fi

# --------------------------------------------------------------------------
if [[ "${HURRAY_SKIP_CLANG:-0}" == 1 ]]; then
    stage_skip "4. Clang 14 build, clang-tidy, fuzz" "HURRAY_SKIP_CLANG=1"
else
    stage_start "4a. Clang 14 -Werror build of the libraries (hurray::http included) + fuzz (build/clang)"
    clang_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG"
        -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
        -DHURRAY_WERROR=ON -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_BENCH=OFF
        -DHURRAY_BUILD_EXAMPLES=OFF -DHURRAY_BUILD_FUZZ=ON -DHURRAY_INSTALL=OFF
        -DHURRAY_BUILD_TOOLS=OFF "${HURRAY_LAUNCHER_ARGS[@]}")
    cmake -S . -B build/clang "${clang_args[@]}" "${UNITY_ARGS[@]}"
    cmake --build build/clang -j "$HURRAY_JOBS"
    # clang-tidy's compile commands name each source, not the unity files: the same
    # configuration without unity, configured only (build/clang-tidy-db).
    cmake -S . -B build/clang-tidy-db "${clang_args[@]}" -DCMAKE_UNITY_BUILD=OFF >/dev/null
    stage_end

    if [[ "${HURRAY_SKIP_TIDY:-0}" == 1 ]]; then
        stage_skip "4b. clang-tidy" "HURRAY_SKIP_TIDY=1"
    else
        stage_start "4b. clang-tidy-14 on src/core, src/io, src/json, src/c, src/convert, src/http and python/src"
        shopt -s nullglob
        tidy_files=(src/core/*.cpp src/io/*.cpp src/json/*.cpp src/c/*.cpp src/convert/*.cpp src/http/*.cpp)
        # The Python extension, when build/clang builds it (pybind11 found).
        if grep -q '/python/src/' build/clang-tidy-db/compile_commands.json; then
            tidy_files+=(python/src/*.cpp)
        fi
        shopt -u nullglob
        if ((${#tidy_files[@]} == 0)); then
            echo "no src/core/*.cpp or src/json/*.cpp files: nothing to lint"
        else
            # scripts/tidy_cached.py: clang-tidy-14 on each file whose preprocessed
            # input, flags and configuration no earlier run found clean.
            if ! /usr/bin/python3 scripts/tidy_cached.py -p build/clang-tidy-db -j "$HURRAY_JOBS" \
                "${tidy_files[@]}"; then
                echo "clang-tidy FAILED: fix the findings above (checks: .clang-tidy)" >&2
                exit 1
            fi
        fi
        stage_end
    fi

    # Seed corpora: writable temp copies; nothing is ever written into ../shared.
    seed_descriptors() {
        if [[ -d "$SHARED_DIR/conformance/descriptors" ]]; then
            cp "$SHARED_DIR"/conformance/descriptors/* "$1/"
        else
            echo "warning: $SHARED_DIR/conformance/descriptors missing; empty seed corpus"
        fi
    }
    # The conformance files plus files from the tests' own builder (written by
    # hurray_fuzz_seeds of the stage-1 build, tests/fuzz_seeds.cpp).
    seed_files() {
        if compgen -G "$SHARED_DIR/conformance/files/*.hrry" >/dev/null; then
            cp "$SHARED_DIR"/conformance/files/*.hrry "$1/"
        else
            echo "warning: no $SHARED_DIR/conformance/files/*.hrry"
        fi
        if [[ -x build/gcc/tests/hurray_fuzz_seeds ]]; then
            build/gcc/tests/hurray_fuzz_seeds files "$1" >/dev/null
        fi
    }
    # Streams written by hurray_fuzz_seeds of the stage-1 build.
    seed_streams() {
        if [[ -x build/gcc/tests/hurray_fuzz_seeds ]]; then
            build/gcc/tests/hurray_fuzz_seeds streams "$1" >/dev/null
        else
            echo "warning: build/gcc/tests/hurray_fuzz_seeds missing; empty seed corpus"
        fi
    }
    # Transport protocol messages (one of each kind, and sessions of several) written by
    # hurray_fuzz_seeds of the stage-1 build.
    seed_transport() {
        if [[ -x build/gcc/tests/hurray_fuzz_seeds ]]; then
            build/gcc/tests/hurray_fuzz_seeds transport "$1" >/dev/null
        else
            echo "warning: build/gcc/tests/hurray_fuzz_seeds missing; empty seed corpus"
        fi
    }
    # The annotator of `hurray inspect` reads all three kinds of input.
    seed_annotate() {
        seed_descriptors "$1"
        seed_files "$1"
        seed_streams "$1"
    }
    # The converters' readers: files written by the tests' independent Python writers
    # (tests/convert/writers/, /usr/bin/python3 with NumPy) plus the kept corpus.
    # seed_from_writer DIR PATTERN SCRIPT ARGS...: SCRIPT's files matching PATTERN.
    seed_from_writer() {
        local dir="$1" pattern="$2" script="$3" tmp
        shift 3
        if [[ ! -x /usr/bin/python3 ]]; then
            echo "warning: no /usr/bin/python3: $script writes no seeds"
            return
        fi
        tmp="$(mktemp -d)"
        if /usr/bin/python3 "$script" "$@" "$tmp" >/dev/null; then
            find "$tmp" -maxdepth 1 -type f -name "$pattern" -size -256k -exec cp {} "$dir/" \;
        else
            echo "warning: $script failed: no seeds from it"
        fi
        rm -rf "$tmp"
    }
    seed_safetensors() { seed_from_writer "$1" '*.safetensors' tests/convert/writers/safetensors_writer.py write; }
    seed_gguf() { seed_from_writer "$1" '*.gguf' tests/convert/writers/gguf_writer.py; }
    seed_npy() { seed_from_writer "$1" '*.npy' tests/convert/writers/numpy_arrays.py; }
    # NumPy's .npz files, and small archives of every shape (stored, deflated, zip64 end
    # records, data descriptors).
    seed_npz() {
        seed_from_writer "$1" '*.npz' tests/convert/writers/numpy_arrays.py
        seed_from_writer "$1" '*.npz' tests/convert/writers/npz_seeds.py
    }
    # The fuzz targets: TARGET:MAX_LEN:SEED_FUNCTION. Each runs FUZZ_SECONDS seconds
    # from SEED_FUNCTION's inputs plus the corpus kept in fuzz/corpus/TARGET (inputs
    # that found new coverage in earlier runs; HURRAY_FUZZ_UPDATE_CORPUS=1 merges this
    # run's finds into it, minimised). libFuzzer uses one core: HURRAY_JOBS targets
    # run at a time.
    FUZZ_TARGETS=(
        fuzz_decode:4096:seed_descriptors
        fuzz_file_reader:65536:seed_files
        fuzz_stream_reader:65536:seed_streams
        fuzz_transport_message:65536:seed_transport
        fuzz_annotate:65536:seed_annotate
        fuzz_convert_safetensors:65536:seed_safetensors
        fuzz_convert_gguf:131072:seed_gguf
        fuzz_convert_npy:65536:seed_npy
        fuzz_convert_npz:65536:seed_npz
    )
    # fuzz_prepare TARGET SEED: build/clang/fuzz-work/TARGET/corpus from the seeds and
    # the kept corpus.
    fuzz_prepare() {
        local target="$1" seed="$2" work="build/clang/fuzz-work/$1"
        rm -rf "$work"
        mkdir -p "$work/corpus"
        "$seed" "$work/corpus"
        if [[ -d "fuzz/corpus/$target" ]]; then
            cp fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
        fi
        chmod -R u+w "$work/corpus"
    }
    # fuzz_run TARGET MAX_LEN: runs it; its exit status goes to fuzz-work/TARGET/rc.
    fuzz_run() {
        local target="$1" max_len="$2" work="$HURRAY_ROOT/build/clang/fuzz-work/$1" rc=0
        (cd "$work" && "$HURRAY_ROOT/build/clang/fuzz/$target" \
            -max_total_time="$FUZZ_SECONDS" -max_len="$max_len" -timeout=10 \
            -print_final_stats=1 \
            -artifact_prefix="$HURRAY_ROOT/build/clang/fuzz-artifacts/" \
            corpus) >"$HURRAY_ROOT/build/clang/$target.log" 2>&1 || rc=$?
        echo "$rc" >"$work/rc"
    }
    # fuzz_finish TARGET MAX_LEN SEED: reports, merges into the kept corpus when asked,
    # and keeps the corpus for stage 4d (the CLI over the corpora).
    fuzz_finish() {
        local target="$1" max_len="$2" seed="$3" work="build/clang/fuzz-work/$1"
        local log="build/clang/$target.log"
        echo "--- $target: seed corpus $(cat "$work/seeds"), log $log"
        if [[ "$(cat "$work/rc")" == 0 ]]; then
            tail -n 12 "$log"
        else
            tail -n 200 "$log"
            echo "$target FAILED; full log: $log; reproducer in build/clang/fuzz-artifacts/" >&2
            exit 1
        fi
        if [[ "${HURRAY_FUZZ_UPDATE_CORPUS:-0}" == 1 ]]; then
            # Merged over the seeds and the kept corpus, so that only inputs that add
            # coverage beyond both are kept; the seeds themselves are not.
            echo "--- merging this run's new coverage into fuzz/corpus/$target"
            mkdir -p "fuzz/corpus/$target" "$work/keep"
            "$seed" "$work/keep"
            local seeds
            seeds="$(ls "$work/keep")"
            cp fuzz/corpus/"$target"/* "$work/keep/" 2>/dev/null || true
            "$HURRAY_ROOT/build/clang/fuzz/$target" -merge=1 -max_len="$max_len" -timeout=10 \
                "$work/keep" "$work/corpus" 2>&1 | tail -n 1
            for f in "$work"/keep/*; do
                grep -qxF "$(basename "$f")" <<<"$seeds" || cp -n "$f" "fuzz/corpus/$target/"
            done
            echo "fuzz/corpus/$target: $(find "fuzz/corpus/$target" -type f | wc -l) file(s)"
        fi
        rm -rf "build/clang/fuzz-corpus/$target"
        mkdir -p build/clang/fuzz-corpus
        mv "$work/corpus" "build/clang/fuzz-corpus/$target"
        rm -rf "$work"
    }
    if [[ "${HURRAY_SKIP_FUZZ:-0}" == 1 ]]; then
        stage_skip "4c. fuzz targets" "HURRAY_SKIP_FUZZ=1"
    else
        fuzz_ready=()
        for spec in "${FUZZ_TARGETS[@]}"; do
            IFS=: read -r target max_len seed <<<"$spec"
            if [[ -x "build/clang/fuzz/$target" ]]; then
                fuzz_ready+=("$spec")
            else
                stage_skip "4c. $target" "build/clang/fuzz/$target was not built"
            fi
        done
        stage_start "4c. ${#fuzz_ready[@]} fuzz targets for ${FUZZ_SECONDS}s each, $HURRAY_JOBS at a time"
        mkdir -p build/clang/fuzz-artifacts
        running=0
        for spec in "${fuzz_ready[@]}"; do
            IFS=: read -r target max_len seed <<<"$spec"
            fuzz_prepare "$target" "$seed"
            find "build/clang/fuzz-work/$target/corpus" -type f | wc -l >"build/clang/fuzz-work/$target/seeds"
            echo "started $target ($(cat "build/clang/fuzz-work/$target/seeds") seed inputs)"
            fuzz_run "$target" "$max_len" &
            running=$((running + 1))
            if ((running >= HURRAY_JOBS)); then
                wait -n || true
                running=$((running - 1))
            fi
        done
        wait
        for spec in "${fuzz_ready[@]}"; do
            IFS=: read -r target max_len seed <<<"$spec"
            fuzz_finish "$target" "$max_len" "$seed"
        done
        stage_end
    fi

    # The `hurray` tool over what the fuzzers found and the conformance vectors:
    # exit 0 or 1 with a message, never a usage error, a signal or a hang. The
    # sanitizer build of the tool is used when stage 3 built it.
    cli_bin=build/gcc/tools/hurray
    [[ -x build/asan/tools/hurray ]] && cli_bin=build/asan/tools/hurray
    if [[ ! -x "$cli_bin" ]]; then
        stage_skip "4d. hurray CLI over the fuzz corpora" "no hurray binary was built"
    else
        stage_start "4d. $cli_bin over the fuzz corpora and conformance vectors"
        # Stage 3's gcovr has read build/asan's counts already: the coverage-instrumented
        # tool writes its own into a scratch folder (GCOV_PREFIX) instead of locking and
        # merging every object's .gcda in build/asan at each of its ~4000 exits (~25% of
        # this stage).
        gcov_scratch="$(mktemp -d)"
        GCOV_PREFIX="$gcov_scratch" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
            bash scripts/cli_corpus_check.sh "$cli_bin" "${HURRAY_CLI_CORPUS_FILES:-100}" \
            build/clang/fuzz-corpus/fuzz_decode build/clang/fuzz-corpus/fuzz_file_reader \
            build/clang/fuzz-corpus/fuzz_stream_reader build/clang/fuzz-corpus/fuzz_annotate \
            build/clang/fuzz-corpus/fuzz_convert_safetensors build/clang/fuzz-corpus/fuzz_convert_gguf \
            build/clang/fuzz-corpus/fuzz_convert_npy build/clang/fuzz-corpus/fuzz_convert_npz \
            "$SHARED_DIR/conformance/descriptors" \
            "$SHARED_DIR/conformance/files"
        rm -rf "$gcov_scratch"
        stage_end
    fi
fi

# --------------------------------------------------------------------------
banner "Stage times"
if [[ ${#HURRAY_LAUNCHER_ARGS[@]} -gt 0 ]]; then
    echo "ccache ($CCACHE_DIR) over this run:"
    ccache --show-stats | grep -E 'Hits|Misses|Cache size' || true
fi
printf '%s\n' "${STAGE_TIMES[@]}"
printf '%-66s %4ds\n' "total" "$SECONDS"

# Last: the main build's test summary (stage 1's ctest run), the lines CI reads.
banner "All stages passed in $((SECONDS / 60))m$((SECONDS % 60))s (total wall time). Stage 1's ctest summary (build/gcc)"
sed -n '/tests passed, .* tests failed out of/,$p' build/gcc/ctest-summary.log
