#!/bin/bash
# bench/proxy.sh — hayate and nginx as a reverse proxy in front of the same backend (issue 12; `make bench` runs
# it after run.sh). The front (one worker) is pinned to CPU $BENCH_SERVER_CPU (0); wrk and the backend share
# CPU $BENCH_CLIENT_CPU (1). Reports req/s and the front's CPU per request (utime+stime of its master and worker
# from /proc, over the measured run). Each scenario runs BENCH_ROUNDS (default 3) rounds of a pair: nginx and hayate
# back to back, nginx first in odd rounds and hayate first in even ones; the ratio column is the median of the
# per-round ratios hayate/nginx (with their min–max when rounds > 1), req/s and µs are each server's median
# (bench/lib.sh: bench_rounds, bench_pair_row; docs/BENCHMARKS.md, "Rounds"). Scenarios:
#   seed003-ka   proxy_pass to upstream { server 127.0.0.1:P; keepalive 10240; } (HTTP/1.1, Connection ""),
#                backend: nginx serving a 612-byte file; wrk -t1 -c128
#   seed003-noka the same without upstream keep-alive (HTTP/1.0, a connection per request)
#   seed004-ka   proxy_pass to gunicorn (hello world, 1 sync worker) on a unix socket, keepalive 16; wrk -c128
#   seed004-noka the same without keepalive
#   seed003-h2   seed003-ka behind an HTTP/2 front (h2c, prior knowledge): h2load -c 128 -m 10 instead of wrk
# In seed003-ka, seed004-ka and seed004-noka a third front joins each round (BENCH_FLOOR=0 leaves it out):
# bench/floor.c, a proxy that makes the same socket calls and no HTTP work, whose CPU per request is the floor of
# any proxy on this machine; its columns say how much of nginx's CPU per request is left when the proxy's own code
# costs next to nothing.
#   usage: bench/proxy.sh [--quick] [--only ID[,ID]]   (env: HY_BIN, NGINX_BIN, BENCH_SECONDS, BENCH_ROUNDS,
#          BENCH_FLOOR)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/lib.sh"
HY_BIN=${HY_BIN:-$root/build/hayate}
NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
case "$rounds" in ''|*[!0-9]*|0) echo "proxy bench: BENCH_ROUNDS must be a positive integer" >&2; exit 2 ;; esac
scpu=${BENCH_SERVER_CPU:-0} ccpu=${BENCH_CLIENT_CPU:-1}
only=
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) secs=3 ;;
    --only) only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    *) sed -n '2,/^set -u/{/^#/p}' "$0" >&2; exit 2 ;;
    esac
    shift
done
command -v wrk >/dev/null || { echo "proxy bench: wrk is missing" >&2; exit 1; }
prefix=$(mktemp -d /tmp/hy-proxy-bench.XXXXXX) keep=0 pids=()
trap 'bench_cleanup proxy-bench' EXIT
chmod 755 "$prefix"
mkdir -p "$prefix/be/html" "$prefix/be/logs" "$prefix/front/logs" "$prefix/front/conf"
head -c 612 /dev/zero | tr '\0' x >"$prefix/be/html/small.html"
bport=$(free_port 18600) fport=$(free_port 18700 "$bport")

# the backend nginx (pinned with the load generator)
cat >"$prefix/be/nginx.conf" <<CONF
worker_processes 1; error_log logs/error.log; pid logs/nginx.pid; daemon on;
events { worker_connections 20000; }
http { access_log off; keepalive_requests 100000; server { listen 127.0.0.1:$bport backlog=4096; root html; } }
CONF
taskset -c "$ccpu" "$NGINX_BIN" -p "$prefix/be/" -c nginx.conf || exit 1
for _ in $(seq 50); do [ -s "$prefix/be/logs/nginx.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$prefix/be/logs/nginx.pid")")

# gunicorn with a hello-world app on a unix socket (seed 004)
cat >"$prefix/app.py" <<'APP'
def app(environ, start_response):
    body = b"Hello, World"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
APP
sock=$prefix/app.sock
if command -v gunicorn >/dev/null; then
    taskset -c "$ccpu" gunicorn --chdir "$prefix" -w 1 --backlog 2048 -b "unix:$sock" app:app \
        >"$prefix/gunicorn.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
fi

front_conf() { # ID -> the front's http{} server part
    case "$1" in
    seed003-ka) echo "upstream be { server 127.0.0.1:$bport; keepalive 10240; }
        server { listen 127.0.0.1:$fport backlog=4096; location / { proxy_pass http://be;
            proxy_http_version 1.1; proxy_set_header Connection \"\"; } }" ;;
    seed003-noka) echo "server { listen 127.0.0.1:$fport backlog=4096; location / { proxy_pass http://127.0.0.1:$bport; } }" ;;
    seed003-h2) echo "upstream be { server 127.0.0.1:$bport; keepalive 10240; }
        server { listen 127.0.0.1:$fport backlog=4096 http2; keepalive_requests 1000000; location / { proxy_pass http://be;
            proxy_http_version 1.1; proxy_set_header Connection \"\"; } }" ;;
    seed004-ka) echo "upstream app { server unix:$sock; keepalive 16; }
        server { listen 127.0.0.1:$fport backlog=4096; location / { proxy_pass http://app;
            proxy_http_version 1.1; proxy_set_header Connection \"\"; } }" ;;
    seed004-noka) echo "server { listen 127.0.0.1:$fport backlog=4096; location / { proxy_pass http://unix:$sock; } }" ;;
    esac
}
url_of() { case "$1" in seed003*) echo /small.html ;; *) echo /hello ;; esac; }

floor_args() { # ID -> the floor's UPSTREAM MODE (nothing: the floor sits this one out). gunicorn's sync worker
    # closes every connection, with or without keepalive 16, so both seed004 rows get a connection per request.
    # Not seed003-noka: the floor answers before the backend's FIN arrives there, closes first and pays the FIN
    # round and a TIME_WAIT that the saturated servers do not (bench/floor.c, http-close)
    case "$1" in
    seed003-ka) echo "127.0.0.1:$bport http-ka" ;;
    seed004-ka|seed004-noka) echo "unix:$sock http-close" ;;
    esac
}

ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
one() { # BINARY ID -> "req/s µs-per-request non2xx"
    local bin=$1 id=$2
    front_start "$bin" "$id" || return 1
    local m=$front_pid procs=$front_procs
    local u; u=http://127.0.0.1:$fport$(url_of "$id")
    local c0 out c1 n bad rps
    if [[ $id == *-h2 ]]; then
        taskset -c "$ccpu" h2load -c128 -m10 -D2 "$u" >/dev/null 2>&1
        c0=$(ticks $procs)
        out=$(taskset -c "$ccpu" h2load -c128 -m10 -D"$secs" "$u" 2>&1)
        c1=$(ticks $procs)
        n=$(echo "$out" | awk '/^requests:/{print $8}')
        bad=$(echo "$out" | awk '/^requests:/{f=$10} /^status codes:/{x=$7+$9} END{print f+x}')
        rps=$(echo "$out" | awk '/^finished in/{print $4}')
    else
        taskset -c "$ccpu" wrk -t1 -c128 -d2s "$u" >/dev/null
        c0=$(ticks $procs)
        out=$(taskset -c "$ccpu" wrk -t1 -c128 -d"${secs}s" "$u")
        c1=$(ticks $procs)
        n=$(echo "$out" | awk '/requests in/{print $1}')
        bad=$(echo "$out" | awk '/Non-2xx/{print $NF}' | head -1)
        rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    fi
    bench_stop proxy-bench "$m"
    awk -v n="$n" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v bad="${bad:-0}" -v rps="$rps" \
        'BEGIN { printf "%.0f %.1f %s\n", rps, d * 1e6 / hz / n, bad }'
}

front() { case $1 in nginx) one "$NGINX_BIN" "$id" ;; hayate) one "$HY_BIN" "$id" ;; floor) one floor "$id" ;; esac; }

use_floor=${BENCH_FLOOR:-1}
if [ "$use_floor" = 1 ] && ! floor_build; then echo "${0##*/}: bench/floor.c did not build; no floor column" >&2; use_floor=0; fi
bench_pair_head "$rounds"
for id in seed003-ka seed003-noka seed004-ka seed004-noka seed003-h2; do
    [ -n "$only" ] && [[ ",$only," != *",$id,"* ]] && continue
    [[ $id == seed004* ]] && [ ! -S "$sock" ] && { echo "| $id | (gunicorn missing) |||||" ; continue; }
    fronts=(nginx hayate)
    [ "$use_floor" = 1 ] && [ -n "$(floor_args "$id")" ] && fronts+=(floor)
    bench_rounds "$rounds" "$prefix/rounds" front "${fronts[@]}" || { echo "proxy bench: $id: a front did not start" >&2; exit 1; }
    bench_pair_row "$id" "$prefix/rounds" "$rounds"
done
