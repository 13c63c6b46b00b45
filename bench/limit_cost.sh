#!/bin/bash
# bench/limit_cost.sh — what limit_req costs a small keep-alive request (issue 14's budget: 5% of the plain run).
# One hayate worker pinned to CPU 0 serves the 612-byte file from two locations, one behind a limit_req with a rate
# no load reaches; wrk -t1 -c128 on CPU 1 alternates between them (ROUNDS pairs, 8 s each); server CPU per request
# comes from the worker's utime+stime in /proc.   usage: bench/limit_cost.sh [BINARY=build/hayate] [ROUNDS=3]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/hayate} rounds=${2:-3}
command -v wrk >/dev/null || { echo "limit_cost: wrk is missing (apt-get install wrk)" >&2; exit 1; }
prefix=$(mktemp -d /tmp/hy-limit-cost.XXXXXX)
chmod 755 "$prefix" # workers run as nobody when started by root
trap '[ -s "$prefix/logs/h.pid" ] && kill -QUIT "$(cat "$prefix/logs/h.pid")" 2>/dev/null; sleep 0.5; rm -rf "$prefix"' EXIT
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html/lim"
head -c 612 /dev/zero | tr '\0' x >"$prefix/html/small.html"
cp "$prefix/html/small.html" "$prefix/html/lim/small.html"
port=18961
cat >"$prefix/conf/h.conf" <<CONF
worker_processes 1;
error_log logs/error.log;
pid logs/h.pid;
events { worker_connections 4096; }
http { access_log off;
    limit_req_zone \$server_name zone=bench:1m rate=10000000r/s;
    server { listen 127.0.0.1:$port; root html;
        location / {}
        location /lim/ { limit_req zone=bench burst=1000 nodelay; } } }
CONF
taskset -c 0 "$bin" -p "$prefix/" -c conf/h.conf || exit 1
for _ in $(seq 50); do [ -s "$prefix/logs/h.pid" ] && pgrep -P "$(cat "$prefix/logs/h.pid")" >/dev/null && break; sleep 0.1; done
w=$(pgrep -P "$(cat "$prefix/logs/h.pid")")
ticks() { awk '{print $14 + $15}' "/proc/$w/stat"; }
taskset -c 1 wrk -t1 -c128 -d2s "http://127.0.0.1:$port/small.html" >/dev/null # warm-up
printf '| round | plain µs/req | limit_req µs/req | ratio |\n|---|---:|---:|---:|\n'
sp=0 sl=0
for r in $(seq "$rounds"); do
    v=()
    for p in /small.html /lim/small.html; do
        c0=$(ticks)
        out=$(taskset -c 1 wrk -t1 -c128 -d8s "http://127.0.0.1:$port$p")
        c1=$(ticks)
        echo "$out" | grep -q 'Non-2xx\|Socket errors' && { echo "limit_cost: errors on $p" >&2; echo "$out" >&2; exit 1; }
        n=$(echo "$out" | awk '/requests in/{print $1}')
        v+=("$(awk -v n="$n" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", d * 1e6 / hz / n }')")
    done
    printf '| %d | %s | %s | %.3f |\n' "$r" "${v[0]}" "${v[1]}" "$(awk -v a="${v[0]}" -v b="${v[1]}" 'BEGIN{print b/a}')"
    sp=$(awk -v a="$sp" -v b="${v[0]}" 'BEGIN{print a+b}') sl=$(awk -v a="$sl" -v b="${v[1]}" 'BEGIN{print a+b}')
done
awk -v a="$sp" -v b="$sl" -v r="$rounds" 'BEGIN { printf "mean µs/request: plain %.3f, limit_req %.3f, ratio %.3f\n", a/r, b/r, b/a }'
