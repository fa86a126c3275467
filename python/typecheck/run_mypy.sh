#!/usr/bin/env bash
# Type-checks the Python examples and python/typecheck/usage.py with mypy against a
# BUILT hurray package, and checks the extension's stub (hurray/_hurray.pyi):
#
#   bash python/typecheck/run_mypy.sh build/gcc/python
#
# PACKAGE_DIR holds hurray/ with _hurray*.so, the .py modules, _hurray.pyi and py.typed
# (python/CMakeLists.txt copies them there). Steps, each must pass:
#   1. mypy on the stub alone (hurray._hurray named on the command line);
#   2. mypy on python/examples/*.py and python/typecheck/usage.py (mypy.ini: errors in
#      the package's own unannotated .py modules are not reported);
#   3. stubtest: the stub against the imported extension (stubtest.ini;
#      stubtest_allowlist.txt says what is expected to differ), when this mypy has
#      mypy.stubtest;
#   4. usage.py run with the package on PYTHONPATH (it writes into a temporary directory).
# Environment: PYTHON (default /usr/bin/python3, whose mypy is Debian's mypy 1.0.1),
# MYPY_CACHE_DIR (default: mypy-cache next to PACKAGE_DIR, i.e. in the build tree).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 PACKAGE_DIR   (e.g. build/gcc/python)" >&2
    exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON_SRC="$(dirname "$HERE")"  # python/
PACKAGE_DIR="$(cd "$1" && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
CONFIG="$HERE/mypy.ini"
CACHE_DIR="${MYPY_CACHE_DIR:-$(dirname "$PACKAGE_DIR")/mypy-cache}"

fail() {
    echo "run_mypy.sh: $*" >&2
    exit 1
}

pkg="$PACKAGE_DIR/hurray"
[[ -f "$pkg/__init__.py" ]] || fail "$pkg/__init__.py not found: PACKAGE_DIR must contain the built hurray package"
compgen -G "$pkg/_hurray*.so" >/dev/null || fail "no $pkg/_hurray*.so: build the hurray_python target first"
for f in _hurray.pyi py.typed; do
    [[ -f "$pkg/$f" ]] || fail "$pkg/$f is missing: the build copies python/hurray/$f next to the .py modules"
    cmp -s "$pkg/$f" "$PYTHON_SRC/hurray/$f" ||
        fail "$pkg/$f differs from python/hurray/$f: rebuild (the hurray_python target copies it)"
done
"$PYTHON" -c 'import mypy' 2>/dev/null || fail "$PYTHON has no mypy (Debian: apt-get install mypy)"

mypy=("$PYTHON" -m mypy --config-file "$CONFIG" --cache-dir "$CACHE_DIR" --no-error-summary)
# A build tree's package is found through MYPYPATH; an installed one (PACKAGE_DIR is a
# site-packages of PYTHON, e.g. a venv's) through PYTHON's own path, as a user's mypy
# finds it (mypy refuses a site-packages folder in MYPYPATH).
case "$(basename "$PACKAGE_DIR")" in
site-packages | dist-packages) ;;
*) export MYPYPATH="$PACKAGE_DIR" ;;
esac
echo "mypy $("$PYTHON" -m mypy --version | cut -d' ' -f2) with $CONFIG, package $PACKAGE_DIR"

echo "== 1. the stub: hurray/_hurray.pyi"
"${mypy[@]}" -m hurray._hurray
echo "   ok"

targets=("$PYTHON_SRC"/examples/*.py "$HERE/usage.py")
echo "== 2. ${#targets[@]} files: ${targets[*]#"$PYTHON_SRC/"}"
"${mypy[@]}" "${targets[@]}"
echo "   ok"

echo "== 3. stubtest hurray._hurray"
if "$PYTHON" -c 'import mypy.stubtest' 2>/dev/null; then
    PYTHONPATH="$PACKAGE_DIR" "$PYTHON" -m mypy.stubtest hurray._hurray --mypy-config-file "$HERE/stubtest.ini" \
        --allowlist "$HERE/stubtest_allowlist.txt"
else
    echo "   skipped: this mypy has no mypy.stubtest"
fi

echo "== 4. run usage.py"
PYTHONPATH="$PACKAGE_DIR" "$PYTHON" "$HERE/usage.py" >/dev/null
echo "   ok"
echo "run_mypy.sh: no type errors (stub, ${#targets[@]} files, stubtest)"
