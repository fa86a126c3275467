#!/usr/bin/env bash
# ctest example.readme_remote: serves FILE with nginx (Debian package) on a
# free port of 127.0.0.1, runs hurray_readme_remote on its URL, stops nginx.
# Exit 77 (ctest: skipped) when nginx is missing.
#   readme_remote.sh EXAMPLE FILE
set -euo pipefail
example=$1
file=$2
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [[ ! -x $nginx_bin ]]; then
    echo "nginx is not installed (scripts/bootstrap.sh installs it)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hurray-readme-remote.XXXXXX")
pid=
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
mkdir -p "$work/www" "$work/tmp"
cp "$file" "$work/www/model.hrry"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 16; }
http {
  access_log off;
  default_type application/octet-stream;
  client_body_temp_path $work/tmp/body;
  proxy_temp_path $work/tmp/proxy;
  fastcgi_temp_path $work/tmp/fastcgi;
  uwsgi_temp_path $work/tmp/uwsgi;
  scgi_temp_path $work/tmp/scgi;
  server { listen 127.0.0.1:$port; root $work/www; }
}
CONF
"$nginx_bin" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
pid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done
"$example" "http://127.0.0.1:$port/model.hrry"
