#!/bin/bash
# bench/c10k.sh — zero-tuning C10K: hayate with its DEFAULT (embedded) configuration, then nginx with the shape of
# Debian's default /etc/nginx/nginx.conf, each under `ab -c 10000 -n 100000` for a 10 KiB file on loopback.
#
#   bench/c10k.sh [--quick] [--keep]
#
# hayate runs as `hayate -p PREFIX/ -g 'daemon off;'` with no configuration file under PREFIX, so it uses the
# embedded default (conf/default.conf: worker_processes auto, listen 8080, no worker_connections): port 8080 must
# be free. nginx gets Debian's worker_processes auto / worker_connections 768 on port $C10K_NGINX_PORT. Each server
# is pinned to $C10K_SERVER_CPUS (default 0: `auto` then means one worker each), ab to $C10K_CLIENT_CPU (1) and
# runs under `ulimit -n 20000` (for ab only). Reported: completed and failed requests (ab's "Failed requests"
# plus non-2xx), req/s, the kernel's ListenOverflows during the run, and [alert]/[crit] lines in each error log.
#
# Environment: HY_BIN (build/hayate), NGINX_BIN (/usr/sbin/nginx), C10K_CONCURRENCY / C10K_REQUESTS (10000 /
# 100000; --quick: 2000 / 20000), C10K_NGINX_PORT (first free from 18580), C10K_SERVER_CPUS, C10K_CLIENT_CPU.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "c10k: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ "$quick" = 1 ]; then
    conc=${C10K_CONCURRENCY:-2000}; reqs=${C10K_REQUESTS:-20000}
else
    conc=${C10K_CONCURRENCY:-10000}; reqs=${C10K_REQUESTS:-100000}
fi
hy_bin=${HY_BIN:-$root/build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
srv_cpus=${C10K_SERVER_CPUS:-0}
cli_cpu=${C10K_CLIENT_CPU:-1}

. "$here/lib.sh"

pkgs=""
command -v ab >/dev/null || pkgs="$pkgs apache2-utils"
command -v taskset >/dev/null || pkgs="$pkgs util-linux"
command -v curl >/dev/null || pkgs="$pkgs curl"
[ -x "$nginx_bin" ] || { [ "$nginx_bin" = /usr/sbin/nginx ] && pkgs="$pkgs nginx"; }
# shellcheck disable=SC2086
[ -z "$pkgs" ] || "$root/tools/install-deps.sh" $pkgs || exit 1
[ -x "$hy_bin" ] || { echo "c10k: hayate binary not found at $hy_bin (run make, or set HY_BIN)" >&2; exit 1; }
[ -x "$nginx_bin" ] || { echo "c10k: nginx not found at $nginx_bin" >&2; exit 1; }
if port_busy 8080 || ss -Hltn 'sport = :8080' 2>/dev/null | grep -q .; then
    echo "c10k: something already listens on port 8080, which hayate's default configuration uses:" >&2
    ss -ltnp 'sport = :8080' >&2 2>/dev/null
    exit 1
fi
nginx_port=${C10K_NGINX_PORT:-$(free_port 18580)}

prefix=$(mktemp -d /tmp/hayate-c10k.XXXXXX) || exit 1
chmod 755 "$prefix" # workers run as nobody / www-data when started as root
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html" "$prefix/nginx"
head -c 10240 /dev/urandom >"$prefix/html/10k.dat"
chmod 644 "$prefix/html/10k.dat"

pids=()
cleanup() { bench_cleanup c10k; }
trap cleanup EXIT
trap 'exit 130' INT TERM

nginx_user=nobody
id www-data >/dev/null 2>&1 && nginx_user=www-data
# Debian's /etc/nginx/nginx.conf, minus what does not apply on loopback without TLS (ssl_*, gzip, the includes
# of conf.d and sites-enabled, whose default site is this server block); paths under the prefix. The access log
# is on, as in Debian (and as in hayate's default: logs/access.log)
cat >"$prefix/nginx/nginx.conf" <<EOF
user $nginx_user;
worker_processes auto;
pid $prefix/logs/nginx.pid;
error_log $prefix/logs/nginx-error.log;
daemon off;

events {
    worker_connections 768;
    # multi_accept on;
}

http {
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log $prefix/logs/nginx-access.log;

    server {
        listen 127.0.0.1:$nginx_port default_server;
        root $prefix/html;
        index index.html;
        server_name _;
    }
}
EOF

listen_overflows() {
    awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 } else { for (i = 1; i <= NF; i++)
        if (n[i] == "ListenOverflows") print $i } }' /proc/net/netstat
}

# start NAME PORT CMD...: runs the server pinned, waits until it answers 200 for /10k.dat
start() {
    local name=$1 port=$2
    shift 2
    taskset -c "$srv_cpus" "$@" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    for _ in $(seq 100); do
        if ! kill -0 "$started_pid" 2>/dev/null; then
            echo "c10k: $name exited at start:" >&2
            tail -20 "$prefix/logs/$name.out" >&2
            exit 1
        fi
        [ "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' --max-time 1 "http://127.0.0.1:$port/10k.dat")" \
            = "200 10240" ] && return 0
        sleep 0.1
    done
    echo "c10k: $name does not serve /10k.dat on 127.0.0.1:$port" >&2
    exit 1
}

stop() { bench_stop c10k "$1"; }

# run NAME PORT LOG: sets r_done r_failed r_non2xx r_rps r_secs r_ovf
run() {
    local name=$1 port=$2 log=$3 o1 o2 rc
    o1=$(listen_overflows)
    (ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
     exec timeout 600 taskset -c "$cli_cpu" ab -q -r -s 30 -c "$conc" -n "$reqs" "http://127.0.0.1:$port/10k.dat") \
        >"$log" 2>&1 &
    echo $! >"$prefix/client.pid"
    wait $!
    rc=$?
    : >"$prefix/client.pid"
    o2=$(listen_overflows)
    r_ovf=$((o2 - o1))
    r_done=$(awk '/^Complete requests:/ { print $3 }' "$log")
    r_failed=$(awk '/^Failed requests:/ { print $3 }' "$log")
    r_non2xx=$(awk '/^Non-2xx responses:/ { print $3 }' "$log")
    r_rps=$(awk '/^Requests per second:/ { printf "%.0f", $4 }' "$log")
    r_secs=$(awk '/^Time taken for tests:/ { printf "%.1f", $5 }' "$log")
    if [ -z "$r_done" ] || [ "$rc" != 0 ]; then
        echo "c10k: ab failed against $name (exit $rc):" >&2
        tail -5 "$log" >&2
        r_done=${r_done:-ERR}
    fi
    r_failed=${r_failed:-?}; r_non2xx=${r_non2xx:-0}; r_rps=${r_rps:-?}; r_secs=${r_secs:-?}
}

bad_lines() { grep -cE '\[(alert|crit|emerg)\]' "$1" 2>/dev/null || true; }

echo "c10k: ab -c $conc -n $reqs, servers on CPU(s) $srv_cpus, ab on CPU $cli_cpu" >&2

# ---- hayate, default configuration
start hayate 8080 "$hy_bin" -p "$prefix/" -g 'daemon off;'
hy_pid=$started_pid
hy_workers=$(pgrep -P "$hy_pid" | wc -l)
echo "c10k: hayate ($hy_workers workers) ..." >&2
run hayate 8080 "$prefix/logs/ab-hayate.txt"
hy=("$r_done" "$r_failed" "$r_non2xx" "$r_rps" "$r_secs" "$r_ovf")
stop "$hy_pid"
hy_log="$prefix/logs/error.log"
hy_bad=$(bad_lines "$hy_log")
hy_why=$(grep -o 'using [0-9]* worker process.*' "$hy_log" | head -1)
hy_lim=$(grep -o 'limits: .*' "$hy_log" | head -1)
sleep 1

# ---- nginx, Debian's default shape
start nginx "$nginx_port" "$nginx_bin" -p "$prefix/nginx/" -c "$prefix/nginx/nginx.conf"
nginx_pid=$started_pid
nginx_workers=$(pgrep -P "$nginx_pid" | wc -l)
echo "c10k: nginx ($nginx_workers workers) ..." >&2
run nginx "$nginx_port" "$prefix/logs/ab-nginx.txt"
ng=("$r_done" "$r_failed" "$r_non2xx" "$r_rps" "$r_secs" "$r_ovf")
stop "$nginx_pid"
ng_log="$prefix/logs/nginx-error.log"
ng_bad=$(bad_lines "$ng_log")
ng_wc=$(grep -c 'worker_connections are not enough' "$ng_log" 2>/dev/null || true)

echo
echo "| server (config) | workers | complete | failed | non-2xx | req/s | time (s) | ListenOverflows | [alert]/[crit] lines |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
echo "| hayate (embedded default) | $hy_workers | ${hy[0]} | ${hy[1]} | ${hy[2]} | ${hy[3]} | ${hy[4]} | ${hy[5]} | $hy_bad |"
echo "| nginx (Debian default shape, worker_connections 768) | $nginx_workers | ${ng[0]} | ${ng[1]} | ${ng[2]} | ${ng[3]} | ${ng[4]} | ${ng[5]} | $ng_bad |"
echo
echo "hayate: $hy_why; $hy_lim"
echo "nginx: \"worker_connections are not enough\" logged $ng_wc times"
echo
echo "Commands:"
echo "    taskset -c $srv_cpus $hy_bin -p PREFIX/ -g 'daemon off;'      # no PREFIX/conf/hayate.conf: the embedded default"
echo "    taskset -c $srv_cpus $nginx_bin -p PREFIX/nginx/ -c PREFIX/nginx/nginx.conf"
echo "    (ulimit -n 20000; taskset -c $cli_cpu ab -q -r -s 30 -c $conc -n $reqs http://127.0.0.1:PORT/10k.dat)"
if [ "${hy_bad:-0}" -gt 0 ]; then
    echo
    echo "hayate's [alert]/[crit] lines:"
    grep -E '\[(alert|crit|emerg)\]' "$hy_log" | sort | uniq -c | sort -rn | head -5
fi
ok=1
[ "${hy[0]}" = "$reqs" ] && [ "${hy[1]}" = 0 ] && [ "${hy[2]}" = 0 ] && [ "${hy_bad:-0}" = 0 ] || ok=0
[ "$ok" = 1 ] && echo && echo "hayate: PASS (0 failed, no [alert]/[crit])" || { echo; echo "hayate: FAIL"; }
[ "$ok" = 1 ]
