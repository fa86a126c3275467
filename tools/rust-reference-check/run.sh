#!/usr/bin/env bash
# Checks that the Rust reference implementation (pgillet/hurray) reads the HRRYFILEs
# libhurray writes, descriptor table included, exactly as libhurray does.
#
#   run.sh REFERENCE_CHECKOUT VENDORED_CRATES
#
# REFERENCE_CHECKOUT: a work tree of pgillet/hurray (its hurray-core and hurray-io).
# VENDORED_CRATES:    the crate sources made by vendor.sh (no crates.io access needed).
# Environment:
#   HURRAY_BUILD  libhurray's CMake build directory (libraries, tools/hurray);
#                 default: <repo>/build/gcc
#   WORK          scratch directory (builds, files); default: /tmp/hurray-ref-check
#   LLM=1         also write and check the 291-tensor LLM-like files (~2.2 GB of disk)
#   EXTRA_FILES   more .hrry files to check (space separated), e.g. golden files
#
# Prints one PASS/FAIL line per file and a summary table; exit status 1 on any FAIL.
set -uo pipefail
REF=$(realpath "${1:?reference checkout}")
VENDOR=$(realpath "${2:?vendored crates}")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HURRAY_BUILD=$(realpath "${HURRAY_BUILD:-$ROOT/build/gcc}")
WORK=${WORK:-/tmp/hurray-ref-check}
FILES=$WORK/files
OUT=$WORK/out
mkdir -p "$WORK/rust" "$FILES" "$OUT"
export PATH="$HOME/.cargo/bin:$PATH"

echo "reference: $REF @ $(git -C "$REF" rev-parse HEAD 2>/dev/null || echo '?')"
echo "libhurray: $ROOT @ $(git -C "$ROOT" rev-parse HEAD), build $HURRAY_BUILD"

# ── The reference's side: built offline, crates.io patched with the vendored sources ──
cp "$HERE/Cargo.toml" "$WORK/rust/"
rm -rf "$WORK/rust/src" && cp -r "$HERE/src" "$WORK/rust/src"
ln -sfn "$REF" "$WORK/rust/ref"
ln -sfn "$VENDOR" "$WORK/rust/vendor"
(cd "$WORK/rust" && cargo build --offline --release -q 2>&1 | grep -E '^error' -A12) && { echo "cargo build failed"; exit 1; }
RUSTCHK=$WORK/rust/target/release/hurray-ref-check
[ -x "$RUSTCHK" ] || { echo "cargo build failed"; exit 1; }

# ── libhurray's side ──
CXXFLAGS=(-std=c++20 -O2 -I"$ROOT/include" -I"$HURRAY_BUILD/include")
LIBS=(-L"$HURRAY_BUILD" -Wl,-rpath,"$HURRAY_BUILD" -lhurray_io -lhurray)
[ -f "$HURRAY_BUILD/libhurray_io.so" ] || LIBS+=(-lisal)  # static libraries: hurray_io's ISA-L
export LD_LIBRARY_PATH="$HURRAY_BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
g++ "${CXXFLAGS[@]}" "$HERE/list.cpp" -o "$WORK/list" "${LIBS[@]}" || exit 1
g++ "${CXXFLAGS[@]}" "$HERE/make_files.cpp" -o "$WORK/make_files" "${LIBS[@]}" || exit 1
CLI=$HURRAY_BUILD/tools/hurray

rm -f "$FILES"/*
"$WORK/make_files" "$FILES" ${LLM:+--llm} || exit 1
# Converted by the CLI: SafeTensors and GGUF made from dense.hrry, then back to HRRYFILE;
# an HRRYFILE re-packed file -> file; `hurray demo`'s model-like file.
if [ -x "$CLI" ]; then
  "$CLI" convert "$FILES/dense.hrry" "$WORK/dense.safetensors" >/dev/null &&
    "$CLI" convert "$WORK/dense.safetensors" "$FILES/from_safetensors.hrry" >/dev/null ||
    echo "FAIL convert SafeTensors"
  "$CLI" convert "$FILES/dense.hrry" "$WORK/dense.gguf" >/dev/null &&
    "$CLI" convert "$WORK/dense.gguf" "$FILES/from_gguf.hrry" >/dev/null ||
    echo "FAIL convert GGUF"
  "$CLI" convert "$FILES/mixed.hrry" "$FILES/mixed_repacked.hrry" >/dev/null || echo "FAIL convert repack"
  rm -rf "$WORK/demo" && "$CLI" demo "$WORK/demo" >/dev/null 2>&1
  for f in "$WORK"/demo/*.hrry; do [ -f "$f" ] && cp "$f" "$FILES/demo_$(basename "$f")"; done
else
  echo "note: no $CLI, conversions skipped"
fi
for f in ${EXTRA_FILES:-}; do cp "$f" "$FILES/extra_$(basename "$f")"; done

# ── Compare ──
fail=0
rows=()
for f in "$FILES"/*.hrry; do
  b=$(basename "$f" .hrry)
  "$RUSTCHK" "$f" >"$OUT/$b.rust" 2>"$OUT/$b.rust.err"; rrc=$?
  "$WORK/list" "$f" >"$OUT/$b.cpp" 2>&1; crc=$?
  why=""
  [ $rrc -ne 0 ] && why+="reference error ($(head -c 200 "$OUT/$b.rust.err")); "
  [ $crc -ne 0 ] && why+="libhurray error; "
  grep -v '^#' "$OUT/$b.rust" >"$OUT/$b.rust.cmp"
  grep -v '^#' "$OUT/$b.cpp" >"$OUT/$b.cpp.cmp"
  diff -q "$OUT/$b.rust.cmp" "$OUT/$b.cpp.cmp" >/dev/null || why+="listings differ (diff $OUT/$b.rust.cmp $OUT/$b.cpp.cmp); "
  table=$(grep -E '^kv hurray.descriptor_table ' "$OUT/$b.rust" | awk '{print $3, $4}')
  if grep -q '^# libhurray: table in use' "$OUT/$b.cpp"; then
    case "$table" in bytes\ len=*) ;; *) why+="table in use by libhurray but not a bytes KV entry of the reference; ";; esac
  else
    [ -n "$table" ] && why+="the reference lists a table libhurray does not use; "
  fi
  # A file without the table must list the same tensors as its twin with one.
  case "$b" in *_notable)
    twin="$OUT/${b%_notable}.rust.cmp"
    if [ -f "$twin" ] || "$RUSTCHK" "$FILES/${b%_notable}.hrry" 2>/dev/null | grep -v '^#' >"$twin"; then
      diff -q <(grep '^tensor' "$twin") <(grep '^tensor' "$OUT/$b.rust.cmp") >/dev/null ||
        why+="tensors differ from ${b%_notable}.hrry; "
      diff -q <(grep '^kv [^0-9]' "$twin" | grep -v '^kv hurray.descriptor_table ') <(grep '^kv [^0-9]' "$OUT/$b.rust.cmp") >/dev/null ||
        why+="KV differs from ${b%_notable}.hrry beyond the table; "
    fi;;
  esac
  n=$(sed -n 's/^tensors //p' "$OUT/$b.rust"); k=$(sed -n 's/^kv \([0-9]*\)$/\1/p' "$OUT/$b.rust")
  tb=$(echo "$table" | sed -n 's/bytes len=//p'); tb=${tb:--}
  if [ -z "$why" ]; then v=PASS; else v=FAIL; fail=1; fi
  echo "$v $b.hrry${why:+: $why}"
  rows+=("| $b.hrry | ${n:-?} | ${k:-?} | $tb | $v |")
done
echo
echo "| File | Tensors | KV entries (reference) | Table bytes | Verdict |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
exit $fail
