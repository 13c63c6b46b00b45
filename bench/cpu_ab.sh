#!/bin/bash
# bench/cpu_ab.sh — server CPU per request of two hayate builds, alternated (A B A B ...), for a change that
# must not cost CPU (issue 9: "within 3% of today"). One worker pinned to CPU 0, wrk -t1 on CPU 1 for 10 s on
# 127.0.0.1; CPU is the master's and worker's utime+stime from /proc. Give the same binary twice for an A/A run.
#   usage: bench/cpu_ab.sh OLD_BINARY NEW_BINARY [ROUNDS=3] [SCENARIO=small]
#   SCENARIO: small (612-byte file, -c128), 1m (1 MiB file, -c32), gzip (40 KiB HTML, gzip level 6, -c32),
#             tls (the 612-byte file over HTTPS, TLS 1.3 with an ECDSA P-256 certificate, -c128)
# Either binary may be Debian's nginx (/usr/sbin/nginx): both read the same config.
# Build the old one with: git archive <commit> | tar -x -C /tmp/old && make -C /tmp/old
set -u
[ $# -ge 2 ] || { sed -n 2,7p "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
command -v wrk >/dev/null || { echo "cpu_ab: wrk is missing (apt-get install wrk)" >&2; exit 1; }
prefix=$(mktemp -d /tmp/hy-cpu-ab.XXXXXX) keep=0 pids=()
trap 'bench_cleanup cpu_ab' EXIT
chmod 755 "$prefix" # workers run as nobody when started by root
port=$(free_port 18555)
mkdir -p "$prefix/html" "$prefix/logs" "$prefix/conf"
head -c 612 /dev/zero | tr '\0' x >"$prefix/html/small.html"
head -c 1048576 /dev/urandom >"$prefix/html/1m.dat"
mkdir -p "$prefix/html/gz" # text that compresses about 5:1, like bench/run.sh's gzip-40k page
awk 'BEGIN { srand(3); nw = split("the quick brown fox jumps over lazy dog lorem ipsum server static file cache", w, " ")
    for (n = 0; n < 41500;) { line = "<p>"; k = 5 + int(rand() * 20)
        for (i = 0; i < k; i++) line = line w[1 + int(rand() * nw)] " "
        line = line "</p>\n"; printf "%s", line; n += length(line) } }' | head -c 40960 >"$prefix/html/gz/40k.html"
scheme=http
case "${4:-small}" in
small) url=/small.html conns=128 hdr=() ;;
tls) url=/small.html conns=128 hdr=() scheme=https ;;
1m) url=/1m.dat conns=32 hdr=() ;;
gzip) url=/gz/40k.html conns=32 hdr=(-H 'Accept-Encoding: gzip') ;;
*) echo "cpu_ab: unknown scenario ${4}" >&2; exit 2 ;;
esac
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -keyout "$prefix/conf/k.pem" -out "$prefix/conf/c.pem" >/dev/null 2>&1
listen="listen 127.0.0.1:$port;"
[ "$scheme" = https ] && listen="listen 127.0.0.1:$port ssl; ssl_certificate c.pem; ssl_certificate_key k.pem;"
cat >"$prefix/conf/h.conf" <<CONF
worker_processes 1;
error_log logs/error.log;
pid logs/h.pid;
events { worker_connections 4096; }
http { access_log off; server { $listen root html; location / {}
    location /gz/ { gzip on; gzip_comp_level 6; } } }
CONF
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
one() { # BINARY -> "req/s µs-per-request"
    rm -f "$prefix/logs/h.pid"
    taskset -c 0 "$1" -p "$prefix/" -c conf/h.conf || return 1
    for _ in $(seq 50); do [ -s "$prefix/logs/h.pid" ] && break; sleep 0.1; done
    local m; m=$(cat "$prefix/logs/h.pid"); pids=("$m")
    for _ in $(seq 50); do pgrep -P "$m" >/dev/null && break; sleep 0.1; done # the worker is forked after the pid file
    local procs="$m $(pgrep -P "$m" | tr '\n' ' ')"
    taskset -c 1 wrk -t1 -c"$conns" -d2s "${hdr[@]}" "$scheme://127.0.0.1:$port$url" >/dev/null # warm-up
    local c0 out c1 n; c0=$(ticks $procs)
    out=$(taskset -c 1 wrk -t1 -c"$conns" -d10s "${hdr[@]}" "$scheme://127.0.0.1:$port$url")
    c1=$(ticks $procs)
    n=$(echo "$out" | awk '/requests in/{print $1}')
    if echo "$out" | grep -q 'Non-2xx\|Socket errors'; then
        echo "cpu_ab: $1 answered $url with errors:" >&2; echo "$out" >&2; return 1
    fi
    bench_stop cpu_ab "$m"
    awk -v n="$n" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v rps="$(echo "$out" | awk '/Requests\/sec/{print $2}')" \
        'BEGIN { printf "%.0f %.3f\n", rps, d * 1e6 / hz / n }'
}
rounds=${3:-3}
printf '| round | A req/s | A µs/req | B req/s | B µs/req |\n|---|---:|---:|---:|---:|\n'
sa=0 sb=0
for r in $(seq "$rounds"); do
    read -r ra ca < <(one "$1") && read -r rb cb < <(one "$2") || { echo "cpu_ab: a server did not start" >&2; exit 1; }
    printf '| %d | %s | %s | %s | %s |\n' "$r" "$ra" "$ca" "$rb" "$cb"
    sa=$(awk -v a="$sa" -v b="$ca" 'BEGIN{print a+b}') sb=$(awk -v a="$sb" -v b="$cb" 'BEGIN{print a+b}')
done
awk -v a="$sa" -v b="$sb" -v r="$rounds" 'BEGIN { printf "mean µs/request: A %.3f, B %.3f, B/A %.3f\n", a/r, b/r, b/a }'
