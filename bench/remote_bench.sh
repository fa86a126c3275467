#!/usr/bin/env bash
# Remote files over loopback HTTP: libhurray against curl on the same URLs,
# served by nginx (Debian package) started here on 127.0.0.1 and stopped at
# the end. Prints ratios measured in this one run.
#
#   bench/remote_bench.sh [BUILD_DIR]        (default build/gcc, a Release build
#                                             with HURRAY_BUILD_BENCH=ON)
#
#   1. Listing a file of N tensors (HURRAY_BENCH_REMOTE_TENSORS, default 100000):
#      open + every descriptor decoded, with the default options; requests and
#      bytes received against the size of the index + descriptors. Twice: nginx
#      as shipped (request header lines up to 8 KiB, so a multi-range request
#      carries ~400 ranges) and nginx with large_client_header_buffers 4 4m
#      (and HttpOptions::max_range_header_bytes = HURRAY_BENCH_BIG_BUDGET,
#      default 4000000; libhurray caps it at what libcurl can send).
#   2. `hurray get --no-fsync URL -o OUT` of a file of HURRAY_BENCH_REMOTE_MIB MiB
#      (default 1024) against `curl -o OUT URL` (neither fsyncs; hurray get also
#      checks the file before renaming it into place): best of 3 each,
#      alternating; ratio curl_s / hurray_s (>= 1: hurray is as fast).
#   3. One 64 MiB tensor of that file fetched into memory (open included)
#      against `curl -r a-b` of the same range to /dev/null and to a file:
#      best of 5 each; and the same range read into a reused buffer
#      (HttpRangeSource::read, as an engine fills its own memory), best of 5.
set -euo pipefail

build=${1:-build/gcc}
bench="$build/bench/hurray_remote_bench"
hurray="$build/tools/hurray"
for exe in "$bench" "$hurray"; do
    [[ -x $exe ]] || { echo "remote_bench: $exe is missing (configure with -DHURRAY_BUILD_BENCH=ON and build)" >&2; exit 2; }
done
command -v curl >/dev/null || { echo "remote_bench: curl is missing" >&2; exit 2; }

n=${HURRAY_BENCH_REMOTE_TENSORS:-100000}
mib=${HURRAY_BENCH_REMOTE_MIB:-1024}
work=$(mktemp -d "${TMPDIR:-/tmp}/hurray-remote-bench.XXXXXX")
source "$(dirname "$0")/../scripts/nginx_serve.sh"
pid= pid_big=
trap 'hurray_nginx_stop "$pid"; hurray_nginx_stop "$pid_big"; rm -rf "$work"' EXIT

mkdir -p "$work/www"
echo "writing $n small tensors and $mib MiB of 64 MiB tensors under $work/www"
"$bench" make-many "$work/www/many.hrry" "$n"
"$bench" make-big "$work/www/big.hrry" "$mib"

# nginx as shipped (request header lines up to 8 KiB), and with 4 MiB lines.
hurray_nginx_start "$work/nginx" "$work/www"
pid=$HURRAY_NGINX_PID
url="http://127.0.0.1:$HURRAY_NGINX_PORT"
hurray_nginx_start "$work/nginx-big" "$work/www" "large_client_header_buffers 4 4m;"
pid_big=$HURRAY_NGINX_PID
url_big="http://127.0.0.1:$HURRAY_NGINX_PORT"

field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

echo
echo "== 1. listing $n tensors (open + every descriptor decoded)"
for server in "$url" "$url_big"; do
    label=$([[ $server == "$url_big" ]] && echo "nginx, 4 MiB header lines" || echo "nginx as shipped")
    if ! out=$(HURRAY_BENCH_RANGE_HEADER_BYTES=$([[ $server == "$url_big" ]] && echo "${HURRAY_BENCH_BIG_BUDGET:-4000000}" || echo 65536) \
        "$bench" list "$server/many.hrry"); then
        echo "$label: failed"
        continue
    fi
    req=$(field requests "$out"); bytes=$(field bytes "$out")
    idx=$(field index_bytes "$out"); desc=$(field descriptor_bytes "$out")
    awk -v l="$label" -v r="$req" -v b="$bytes" -v i="$idx" -v d="$desc" -v s="$(field seconds "$out")" 'BEGIN {
        printf "%-27s %6d requests  %10d bytes = %.2fx index + descriptors (%d + %d)  %.3f s\n", l, r, b, b / (i + d), i, d, s }'
done

best() {  # best of N runs of a command, in seconds
    local runs=$1; shift
    local best=
    for _ in $(seq "$runs"); do
        local t0 t1
        t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
        best=$(awk -v a="$best" -v t="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" 'BEGIN{ if (a == "" || t < a) print t; else print a }')
    done
    echo "$best"
}

echo
echo "== 2. downloading $mib MiB: hurray get vs curl -o"
curl_s=; get_s=
for _ in 1 2 3; do
    rm -f "$work/curl.out" "$work/get.hrry"
    c=$(best 1 curl -s -f -o "$work/curl.out" "$url/big.hrry")
    g=$(best 1 "$hurray" get --quiet --no-fsync "$url/big.hrry" -o "$work/get.hrry")
    curl_s=$(awk -v a="$curl_s" -v t="$c" 'BEGIN{ if (a == "" || t < a) print t; else print a }')
    get_s=$(awk -v a="$get_s" -v t="$g" 'BEGIN{ if (a == "" || t < a) print t; else print a }')
done
cmp -s "$work/curl.out" "$work/get.hrry" || { echo "remote_bench: hurray get and curl -o differ" >&2; exit 1; }
awk -v c="$curl_s" -v g="$get_s" -v m="$mib" 'BEGIN {
    printf "curl -o      %.3f s  %7.1f MiB/s\nhurray get   %.3f s  %7.1f MiB/s\nratio curl/hurray: %.2f (goal >= 0.95)\n", c, m / c, g, m / g, c / g }'
rm -f "$work/curl.out" "$work/get.hrry"

echo
echo "== 3. one 64 MiB tensor of the $mib MiB file"
out=$("$bench" tensor "$url/big.hrry" t3)
off=$(field data_offset "$out"); len=$(field data_length "$out")
h_s=; t_s=
for _ in 1 2 3 4 5; do
    o=$("$bench" tensor "$url/big.hrry" t3)
    h_s=$(awk -v a="$h_s" -v t="$(field with_open "$o")" 'BEGIN{ if (a == "" || t < a) print t; else print a }')
    t_s=$(awk -v a="$t_s" -v t="$(field seconds "$o")" 'BEGIN{ if (a == "" || t < a) print t; else print a }')
done
c_s=$(best 5 curl -s -f -r "$off-$((off + len - 1))" -o /dev/null "$url/big.hrry")
cf_s=$(best 5 curl -s -f -r "$off-$((off + len - 1))" -o "$work/range.out" "$url/big.hrry")
rm -f "$work/range.out"
awk -v c="$c_s" -v cf="$cf_s" -v h="$h_s" -v t="$t_s" -v r="$(field requests "$out")" 'BEGIN {
    printf "curl -r -o FILE %.4f s (into the page cache; ratio curl/hurray %.2f)\n", cf, cf / h
    printf "curl -r      %.4f s (process, connection, the range to /dev/null)\nhurray       %.4f s (open: the tail, header and index; then %d request(s) for the tensor, into fresh memory: %.4f s)\nratio curl/hurray: %.2f (the tensor alone: %.2f; fresh memory costs its page faults, which /dev/null does not)\n", c, h, r, t, c / h, c / t }'
w_s=$(field seconds "$("$bench" range "$url/big.hrry" "$off" "$len")")
awk -v c="$c_s" -v w="$w_s" 'BEGIN {
    printf "hurray read  %.4f s (HttpRangeSource::read into a reused buffer, as an engine fills its own memory)\nratio curl/hurray: %.2f (goal >= 0.9)\n", w, c / w }'
