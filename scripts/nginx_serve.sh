# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts that need a web server (examples/readme_remote.sh,
# bench/remote_bench.sh): nginx (Debian package) serving one directory on a
# free port of 127.0.0.1, with its configuration, pid, logs and temporary
# paths in a directory of its own, as the current user.
#
#   hurray_nginx_start WORK ROOT [SERVER_DIRECTIVES]
#       starts nginx serving ROOT, its files under WORK (created), with
#       SERVER_DIRECTIVES (e.g. "large_client_header_buffers 4 4m;") in its
#       server block; waits until it accepts connections. Sets
#       HURRAY_NGINX_PORT and HURRAY_NGINX_PID. Returns 77 when nginx is not
#       installed, 1 when it does not start.
#   hurray_nginx_stop PID
#       stops it.

hurray_nginx_start() {
    local work=$1 root=$2 directives=${3:-}
    local bin
    bin=$(command -v nginx || echo /usr/sbin/nginx)
    if [[ ! -x $bin ]]; then
        echo "nginx is not installed (scripts/bootstrap.sh installs it)" >&2
        return 77
    fi
    mkdir -p "$work/tmp"
    HURRAY_NGINX_PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat >"$work/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 256; }
http {
  access_log off;
  default_type application/octet-stream;
  sendfile on;
  client_body_temp_path $work/tmp/body;
  proxy_temp_path $work/tmp/proxy;
  fastcgi_temp_path $work/tmp/fastcgi;
  uwsgi_temp_path $work/tmp/uwsgi;
  scgi_temp_path $work/tmp/scgi;
  server { listen 127.0.0.1:$HURRAY_NGINX_PORT; root $root; $directives }
}
CONF
    unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
    "$bin" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
    HURRAY_NGINX_PID=$!
    local _
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$HURRAY_NGINX_PORT") 2>/dev/null; then
            return 0
        fi
        if ! kill -0 "$HURRAY_NGINX_PID" 2>/dev/null; then
            break
        fi
        sleep 0.05
    done
    echo "nginx did not start: $(cat "$work/error.log" 2>/dev/null)" >&2
    return 1
}

hurray_nginx_stop() {
    if [[ -n ${1:-} ]]; then
        kill "$1" 2>/dev/null || true
        wait "$1" 2>/dev/null || true
    fi
}
