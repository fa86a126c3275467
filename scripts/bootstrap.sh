#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing libhurray need.
# Idempotent: packages already installed are skipped, and `apt-get update` runs only
# when something is missing. Works as root; otherwise uses sudo.
set -euo pipefail

# Packages needed now (see README.md, "Dependencies and why").
HURRAY_APT_PACKAGES=(
    build-essential     # gcc/g++ 12, make, libc headers
    g++
    cmake               # >= 3.25
    ninja-build
    pkg-config          # checks the installed hurray.pc
    git
    clang-14            # second compiler, libFuzzer
    clang
    libclang-rt-14-dev  # Clang's sanitizer and libFuzzer runtimes
    clang-tidy-14       # lint
    clang-tidy
    libgtest-dev        # unit tests
    libgmock-dev        # matchers/mocks for the unit tests
    libbenchmark-dev    # bench/
    gcovr               # coverage report and threshold
    python3             # gcovr runs on it
    nlohmann-json3-dev  # hurray::json (JSON/CBOR form, private); tests read manifest.json
    libisal-dev         # CRC-32C of the HRRYFILE index (hurray::io, private)
    libzip-dev          # hurray::convert: .npz archives (NumPy's zip of .npy members), private
    libdlpack-dev       # <dlpack/dlpack.h>: the C ABI exports tensors as DLManagedTensor
    libasio-dev         # hurray::net: async streams on standalone Asio (header-only)
    libcli11-dev        # the `hurray` command-line tool's argument parsing (header-only)
    libfmt-dev          # the `hurray` tool's formatted output
    libcurl4-openssl-dev  # hurray::http: HTTP(S) range requests for remote files (private)
    nginx               # a real web server for the hurray::http tests (run by them on 127.0.0.1)
    ccache              # compiler cache: rebuilds of unchanged sources in the test command
    python3-dev         # Python.h: the hurray Python module (python/) is a CPython extension
    pybind11-dev        # the Python module's C++ bindings (header-only, CMake package)
    python3-numpy       # the Python module returns and takes numpy arrays (and its headers)
    python3-pytest      # runs the Python module's tests (ctest python.pytest)
    python3-scipy       # hurray.from_scipy / Tensor.to_scipy (scipy.sparse interop) and its tests; optional at run time
    python3-torch       # hurray.torch (safetensors.torch's calls) and its tests; optional at run time
    python3-setuptools  # pyproject.toml's build backend (setup.py runs the CMake build)
    python3-wheel       # bdist_wheel for setuptools
    python3-build       # `python3 -m build --wheel --no-isolation` in the test command
    python3-venv        # the fresh venvs the wheel and `pip install .` are tested in
    python3-pip         # pip inside those venvs
    mypy                # type-checks the examples against the package's stubs (python/typecheck)
)

# Needed by later work; move a name into HURRAY_APT_PACKAGES when the code starts
# using it. Not installed now.
# shellcheck disable=SC2034
HURRAY_APT_PACKAGES_LATER=(
)

is_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == "installed" ]]
}

missing=()
for pkg in "${HURRAY_APT_PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done

# Node.js and npm run the npm test servers (below); a machine with its own Node.js
# (e.g. NodeSource's, which bundles npm) keeps it: Debian's npm would conflict with it.
if ! command -v npm >/dev/null 2>&1; then
    for pkg in nodejs npm; do
        is_installed "$pkg" || missing+=("$pkg")
    done
fi

# Installs the packages of `missing` (apt-get update first), as root or through sudo.
install_apt_packages() {
    SUDO=()
    if [[ "$(id -u)" -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "bootstrap: not root and sudo is missing; install: ${missing[*]}" >&2
            exit 1
        fi
        SUDO=(sudo)
    fi

    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"

    for pkg in "${missing[@]}"; do
        if ! is_installed "$pkg"; then
            echo "bootstrap: $pkg is still not installed" >&2
            exit 1
        fi
    done
}

if ((${#missing[@]} == 0)); then
    echo "bootstrap: all ${#HURRAY_APT_PACKAGES[@]} packages already installed"
else
    install_apt_packages
fi

# Test servers from npm (tests/servers/package.json, its lock file pinning every
# package): s3rver, an S3 emulator the hurray::http tests start on 127.0.0.1. Installed
# into build/test-servers, again only when the lock file changed or the copy is missing.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
servers="$root/build/test-servers"
if [[ -f "$servers/node_modules/s3rver/bin/s3rver.js" ]] &&
    cmp -s "$root/tests/servers/package-lock.json" "$servers/package-lock.json"; then
    echo "bootstrap: npm test servers already installed ($servers)"
else
    echo "bootstrap: installing the npm test servers into $servers"
    mkdir -p "$servers"
    cp "$root/tests/servers/package.json" "$root/tests/servers/package-lock.json" "$servers/"
    (cd "$servers" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "bootstrap: done"
