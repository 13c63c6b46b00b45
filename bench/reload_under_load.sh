#!/bin/bash
# bench/reload_under_load.sh — reload while loaded: `wrk -c256` for $RUL_SECONDS (10) against the server while it
# is reloaded $RUL_RELOADS (10) times, one per second (`-s reload`, alternating between two configs that differ by
# keepalive_timeout so that every reload is a new generation). Reports wrk's socket errors (connect, read, write,
# timeout) and non-2xx/3xx responses; hayate first, then nginx with the same configuration.
#
#   bench/reload_under_load.sh [--keep]
#
# Both run master_process on with $RUL_WORKERS (2) workers, pinned to $RUL_SERVER_CPUS (0); wrk -t1 is pinned
# to $RUL_CLIENT_CPU (1). Environment: HY_BIN, NGINX_BIN, RUL_SECONDS, RUL_RELOADS, RUL_CONNECTIONS (256),
# RUL_WORKERS, RUL_SERVER_CPUS, RUL_CLIENT_CPU.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reload: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
hy_bin=${HY_BIN:-$root/build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
secs=${RUL_SECONDS:-10}
reloads=${RUL_RELOADS:-10}
nconn=${RUL_CONNECTIONS:-256}
workers=${RUL_WORKERS:-2}
srv_cpus=${RUL_SERVER_CPUS:-0}
cli_cpu=${RUL_CLIENT_CPU:-1}
case "$secs$reloads$nconn$workers" in *[!0-9]*) echo "reload: numeric settings expected" >&2; exit 2 ;; esac

. "$here/lib.sh"

pkgs=""
command -v wrk >/dev/null || pkgs="$pkgs wrk"
command -v taskset >/dev/null || pkgs="$pkgs util-linux"
command -v curl >/dev/null || pkgs="$pkgs curl"
[ -x "$nginx_bin" ] || { [ "$nginx_bin" = /usr/sbin/nginx ] && pkgs="$pkgs nginx"; }
# shellcheck disable=SC2086
[ -z "$pkgs" ] || "$root/tools/install-deps.sh" $pkgs || exit 1
[ -x "$hy_bin" ] || { echo "reload: hayate binary not found at $hy_bin" >&2; exit 1; }
[ -x "$nginx_bin" ] || { echo "reload: nginx not found at $nginx_bin" >&2; exit 1; }
hy_port=$(free_port 18680)
nginx_port=$(free_port 18681 "$hy_port")

prefix=$(mktemp -d /tmp/hayate-reload.XXXXXX) || exit 1
chmod 755 "$prefix"
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html"
head -c 612 /dev/urandom | base64 -w 0 | head -c 612 >"$prefix/html/small.html"
chmod 644 "$prefix/html/small.html"

pids=()
cleanup() { bench_cleanup reload; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# conf NAME PORT KEEPALIVE_TIMEOUT ACCESS_LOG_LINE
conf() {
    cat <<EOF
daemon off;
master_process on;
worker_processes $workers;
pid $prefix/logs/$1.pid;
error_log $prefix/logs/$1-error.log notice;

events {
    worker_connections 4096;
}

http {
    default_type text/html;
    $4
    keepalive_timeout $3;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$2;
        root $prefix/html;
    }
}
EOF
}

start() {
    local name=$1 port=$2
    shift 2
    taskset -c "$srv_cpus" "$@" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    for _ in $(seq 100); do
        kill -0 "$started_pid" 2>/dev/null || { echo "reload: $name exited at start:" >&2; tail "$prefix/logs/$name.out" >&2; exit 1; }
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/small.html")" = 200 ] && return 0
        sleep 0.1
    done
    echo "reload: $name does not answer on $port" >&2
    exit 1
}

stop() { bench_stop reload "$1"; }

# load NAME BIN PORT ACCESS_LOG_LINE: prints "requests rps connect read write timeout non2xx reload_failures"
load() {
    local name=$1 bin=$2 port=$3 al=$4 log="$prefix/logs/wrk-$1.txt" cf="$prefix/conf/$1.conf" i fails=0
    conf "$name" "$port" 65 "$al" >"$cf"
    start "$name" "$port" "$bin" -p "$prefix/" -c "$cf"
    local pid=$started_pid
    timeout $((secs + 30)) taskset -c "$cli_cpu" wrk -t1 -c"$nconn" -d"${secs}s" --timeout 5s \
        "http://127.0.0.1:$port/small.html" >"$log" 2>&1 &
    local wrk_pid=$!
    echo "$wrk_pid" >"$prefix/client.pid"
    sleep 0.5
    for i in $(seq "$reloads"); do
        conf "$name" "$port" $((65 + i % 2)) "$al" >"$cf"
        "$bin" -p "$prefix/" -c "$cf" -s reload >>"$prefix/logs/$name-reload.out" 2>&1 || fails=$((fails + 1))
        sleep 1
    done
    wait "$wrk_pid"
    : >"$prefix/client.pid"
    stop "$pid"
    awk -v f="$fails" '
        /requests in/ { req = $1 }
        /^Requests\/sec:/ { rps = $2 }
        /Socket errors:/ { gsub(",", ""); c = $4; r = $6; w = $8; t = $10 }
        /Non-2xx or 3xx responses:/ { n = $NF }
        END { printf "%s %.0f %d %d %d %d %d %d\n", req, rps, c, r, w, t, n, f }' "$log"
}

echo "reload: wrk -t1 -c$nconn -d${secs}s, $reloads reloads 1 s apart, $workers workers on CPU(s) $srv_cpus" >&2
hy_al="# access_log: not in hayate yet (issue 4)"
"$hy_bin" -t -q -p "$prefix/" -c <(conf x "$hy_port" 65 "access_log off;") >/dev/null 2>&1 && hy_al="access_log off;"
read -r -a hy <<<"$(load hayate "$hy_bin" "$hy_port" "$hy_al")"
sleep 1
read -r -a ng <<<"$(load nginx "$nginx_bin" "$nginx_port" "access_log off;")"

count() { grep -cE "$2" "$prefix/logs/$1-error.log" 2>/dev/null || true; }
echo
echo "| server | requests | req/s | socket errors (connect / read / write / timeout) | non-2xx | failed reloads | [alert]/[crit] lines |"
echo "|---|---:|---:|---|---:|---:|---:|"
echo "| hayate | ${hy[0]} | ${hy[1]} | ${hy[2]} / ${hy[3]} / ${hy[4]} / ${hy[5]} | ${hy[6]} | ${hy[7]} | $(count hayate '\[(alert|crit)\]') |"
echo "| nginx | ${ng[0]} | ${ng[1]} | ${ng[2]} / ${ng[3]} / ${ng[4]} / ${ng[5]} | ${ng[6]} | ${ng[7]} | $(count nginx '\[(alert|crit)\]') |"
echo
echo "SIGHUP received: hayate $(count hayate 'signal 1 \(SIGHUP\)') times, nginx $(count nginx 'signal 1 \(SIGHUP\)') times"
echo "Commands: server pinned with taskset -c $srv_cpus; taskset -c $cli_cpu wrk -t1 -c$nconn -d${secs}s --timeout 5s http://127.0.0.1:PORT/small.html;"
echo "    meanwhile, $reloads times: BIN -p PREFIX/ -c CONF -s reload; sleep 1"
errs=$((hy[2] + hy[3] + hy[4] + hy[5] + hy[6] + hy[7]))
[ "$errs" = 0 ] && echo "hayate: PASS (0 socket errors, 0 non-2xx)" || echo "hayate: FAIL ($errs errors)"
[ "$errs" = 0 ]
