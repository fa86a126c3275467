#!/usr/bin/env bash
# Compares two builds of hurray_bench by instruction counts, which do not depend on how
# loaded the machine is (wall-clock ratios on a shared 2-core VM move by 10-40% between
# runs of the same binary): for each benchmark, the instructions (callgrind's Ir,
# inclusive) of one call of its hot library function, in BASE and in HEAD.
#
#   bench/callgrind_compare.sh BASE/bench/hurray_bench HEAD/bench/hurray_bench
#
# Build the baseline in a worktree, e.g.
#   git worktree add ../bench-base <commit> && cmake -S ../bench-base -B ../bench-base/build/gcc \
#     -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DHURRAY_BUILD_BENCH=ON \
#     -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_PYTHON=OFF -DHURRAY_BUILD_TOOLS=OFF
#   cmake --build ../bench-base/build/gcc --target hurray_bench
# Needs valgrind. Takes about 15 minutes. A benchmark either build lacks prints nan.
set -euo pipefail
[[ $# == 2 ]] || { echo "usage: $0 BASE_HURRAY_BENCH HEAD_HURRAY_BENCH" >&2; exit 2; }
BASE="$1"
HEAD="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# run FILTER FUNCTION_REGEX LABEL: one callgrind run of each build.
run() {
    local out=()
    for bin in "$BASE" "$HEAD"; do
        HURRAY_BENCH_META_MAX=100000 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            --compress-strings=no --compress-pos=no "$bin" --benchmark_filter="$1" \
            --benchmark_min_time=0.01 >/dev/null 2>&1 || true
        out+=("$(/usr/bin/python3 "$HERE/callgrind_percall.py" "$work/cg.out" "$2" | awk '{print $1}')")
        rm -f "$work/cg.out"
    done
    /usr/bin/python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2])
print(f"{sys.argv[3]:<52} {a:14.1f} {b:14.1f} {b / a:7.3f}")' "${out[0]}" "${out[1]}" "$3"
}

printf '%-52s %14s %14s %7s\n' "benchmark: function" "base Ir/call" "head Ir/call" "head/base"
for arg in 0 1; do
    run "^BM_DescriptorDecode/$arg\$" '^hurray::decode\(' "DescriptorDecode/$arg: decode"
    run "^BM_DescriptorEncode/$arg\$" '^hurray::encode\(' "DescriptorEncode/$arg: encode"
    run "^BM_DescriptorEncodeTo/$arg\$" '^hurray::encode_to\(' "DescriptorEncodeTo/$arg: encode_to"
    run "^BM_DescriptorCheck/$arg\$" '^hurray::check_descriptor\(' "DescriptorCheck/$arg: check_descriptor"
    run "^BM_DescriptorPeekLength/$arg\$" '^hurray::peek_length\(' "DescriptorPeekLength/$arg: peek_length"
done
for b in DequantizeNf4/4096 DequantizePerBlockInt4/4096 DequantizePerBlockInt4Asymmetric/4096; do
    run "^BM_$b\$" '^hurray::dequantize\(' "$b: dequantize"
done
for b in ViewMaterializeRowMajor4096 ViewMaterializeColumnMajor4096 ViewMaterializeTransposed4096; do
    run "^BM_$b/" '^hurray::TensorView::materialize\(' "$b: materialize"
done
for b in BulkFloat16ToFloat32 BulkFloat32ToFloat16 BulkFloat32ToBFloat16; do
    run "^BM_$b/" '^hurray::(convert|convert_floats)\(' "$b: convert_floats"
done
run '^BM_FileOpenEnumerate/1000/' '^hurray::FileReader::open\(' "FileOpenEnumerate/1000: FileReader::open"
run '^BM_FileOpenEnumerate/1000/' '^hurray::FileReader::descriptor\(' "FileOpenEnumerate/1000: FileReader::descriptor"
run '^BM_MetaOpenEnumerate/291/' '^hurray::FileReader::open\(' "MetaOpenEnumerate/291 (kFull): FileReader::open"
run '^BM_MetaOpenEnumerate/100000/' '^hurray::FileReader::open\(' "MetaOpenEnumerate/100000 (kFull): FileReader::open"
run '^BM_CApiReadAll/' '^hurray_file_open' "CApiReadAll: hurray_file_open*"
