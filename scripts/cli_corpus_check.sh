#!/usr/bin/env bash
# Runs the `hurray` tool over every input of some corpus directories (fuzz corpora,
# conformance vectors) and checks that it handles each one: `inspect`, `ls --json`,
# `info` and `verify` must exit 0 (valid) or 1 (invalid, with a message on stderr),
# never 2 (usage), never by a signal, never hang.
#
#   scripts/cli_corpus_check.sh HURRAY_BINARY MAX_FILES_PER_DIR DIR...
#
# At most MAX_FILES_PER_DIR files are taken from each directory (the largest
# first, since they exercise the most), to bound the time under sanitizers. Inputs
# are checked HURRAY_JOBS (default 2) at a time.
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

# check_one FILE: prints "valid" or "invalid" for a handled input, "FAIL: ..." lines
# (and the command's stderr) for each command that misbehaved.
check_one() {
    local f="$1" err rc cmd verdict=invalid
    err="$(mktemp)"
    for cmd in "inspect" "ls --json" "info" "verify"; do
        rc=0
        # shellcheck disable=SC2086  # $cmd is a command and its options
        timeout 20 "$HURRAY_CLI_BIN" $cmd "$f" >/dev/null 2>"$err" || rc=$?
        case "$rc" in
            0) [[ "$cmd" == verify ]] && verdict=valid ;;
            1) [[ -s "$err" ]] || echo "FAIL: hurray $cmd $f: exit 1 without a message on stderr" ;;
            *)
                echo "FAIL: hurray $cmd $f: exit status $rc (124: timeout, >128: signal)"
                head -c 2000 "$err" | sed 's/^/    /' || true
                ;;
        esac
    done
    rm -f "$err"
    echo "$verdict"
}
export -f check_one
export HURRAY_CLI_BIN="$bin"

inputs=()
for dir in "$@"; do
    if [[ ! -d "$dir" ]]; then
        echo "cli_corpus_check: no directory $dir (skipped)"
        continue
    fi
    mapfile -t files < <(find "$dir" -maxdepth 1 -type f -printf '%s %p\n' | sort -rn |
        head -n "$max_files" | cut -d' ' -f2-)
    inputs+=("${files[@]}")
done

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if ((${#inputs[@]} > 0)); then
    printf '%s\0' "${inputs[@]}" | xargs -0 -n 1 -P "${HURRAY_JOBS:-2}" bash -c 'check_one "$1"' _ >"$out"
fi
grep -v '^valid$\|^invalid$' "$out" >&2 || true
checked="$(grep -c '^valid$\|^invalid$' "$out" || true)"
valid="$(grep -c '^valid$' "$out" || true)"
failures="$(grep -c '^FAIL: ' "$out" || true)"
echo "cli_corpus_check: $checked input(s), $valid verified valid, $failures failure(s)"
((failures == 0 && checked == ${#inputs[@]}))
