#!/usr/bin/env bash
# ctest example.readme_remote: serves FILE with nginx on a free port of
# 127.0.0.1 (scripts/nginx_serve.sh), runs hurray_readme_remote on its URL,
# stops nginx. Exit 77 (ctest: skipped) when nginx is missing.
#   readme_remote.sh EXAMPLE FILE
set -euo pipefail
example=$1
file=$2
source "$(dirname "$0")/../scripts/nginx_serve.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hurray-readme-remote.XXXXXX")
HURRAY_NGINX_PID=
trap 'hurray_nginx_stop "$HURRAY_NGINX_PID"; rm -rf "$work"' EXIT
mkdir -p "$work/www"
cp "$file" "$work/www/model.hrry"
rc=0
hurray_nginx_start "$work/nginx" "$work/www" || rc=$?
if [[ $rc -ne 0 ]]; then
    exit "$rc"
fi
"$example" "http://127.0.0.1:$HURRAY_NGINX_PORT/model.hrry"
