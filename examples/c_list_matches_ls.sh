#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ctest example.c_list_matches_ls: examples/c_list.c (through the C ABI) prints
# exactly what `hurray ls` prints, for each file given.
#   c_list_matches_ls.sh HURRAY_C_LIST HURRAY_TOOL OUT_DIR FILE...
set -eu
c_list="$1"
tool="$2"
out="$3"
shift 3
mkdir -p "$out"
for file in "$@"; do
    "$c_list" "$file" > "$out/c_list.txt"
    "$tool" ls "$file" > "$out/hurray_ls.txt"
    if ! cmp -s "$out/c_list.txt" "$out/hurray_ls.txt"; then
        echo "hurray_c_list and hurray ls differ on $file:" >&2
        diff "$out/c_list.txt" "$out/hurray_ls.txt" >&2 || true
        exit 1
    fi
    echo "same listing: $file ($(($(wc -l < "$out/c_list.txt") - 1)) tensors)"
done
