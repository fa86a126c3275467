#!/usr/bin/env bash
# Runs the `hurray` tool over every input of some corpus directories (fuzz corpora,
# conformance vectors) and checks that it handles each one: `inspect`, `ls --json`,
# `info` and `verify` must exit 0 (valid) or 1 (invalid, with a message on stderr),
# never 2 (usage), never by a signal, never hang.
#
#   scripts/cli_corpus_check.sh HURRAY_BINARY MAX_FILES_PER_DIR DIR...
#
# At most MAX_FILES_PER_DIR files are taken from each directory (the largest
# first, since they exercise the most), to bound the time under sanitizers.
set -euo pipefail

if (($# < 3)); then
    echo "usage: $0 HURRAY_BINARY MAX_FILES_PER_DIR DIR..." >&2
    exit 2
fi
bin="$1"
max_files="$2"
shift 2
if [[ ! -x "$bin" ]]; then
    echo "cli_corpus_check: $bin is not an executable" >&2
    exit 2
fi

err="$(mktemp)"
trap 'rm -f "$err"' EXIT
checked=0
valid=0
failures=0
for dir in "$@"; do
    if [[ ! -d "$dir" ]]; then
        echo "cli_corpus_check: no directory $dir (skipped)"
        continue
    fi
    mapfile -t files < <(find "$dir" -maxdepth 1 -type f -printf '%s %p\n' | sort -rn |
        head -n "$max_files" | cut -d' ' -f2-)
    for f in "${files[@]}"; do
        for cmd in "inspect" "ls --json" "info" "verify"; do
            rc=0
            # shellcheck disable=SC2086  # $cmd is a command and its options
            timeout 20 "$bin" $cmd "$f" >/dev/null 2>"$err" || rc=$?
            case "$rc" in
                0)
                    [[ "$cmd" == verify ]] && valid=$((valid + 1))
                    ;;
                1)
                    if [[ ! -s "$err" ]]; then
                        echo "FAIL: hurray $cmd $f: exit 1 without a message on stderr" >&2
                        failures=$((failures + 1))
                    fi
                    ;;
                *)
                    echo "FAIL: hurray $cmd $f: exit status $rc (124: timeout, >128: signal)" >&2
                    head -c 2000 "$err" >&2 || true
                    failures=$((failures + 1))
                    ;;
            esac
        done
        checked=$((checked + 1))
    done
done
echo "cli_corpus_check: $checked input(s), $valid verified valid, $failures failure(s)"
((failures == 0))
