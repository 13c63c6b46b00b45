#!/usr/bin/env bash
# bench/h2.sh — HTTP/2 scenarios: hayate beside nginx (/usr/sbin/nginx) and h2o (/usr/bin/h2o, Debian's 2.2),
# `h2load -n N -c 100 -m 10` over TLS (ALPN h2, ECDSA P-256) and h2c (prior knowledge), one worker/thread
# pinned on $BENCH_SERVER_CPU, the client on $BENCH_CLIENT_CPU. Reports req/s and the server's CPU time per
# request (user+system of its worker processes, from /proc, over the run). bench/run.sh calls it at the end;
# it also runs alone: bench/h2.sh [N].
#
# Environment: HY_BIN (build/hayate), NGINX_BIN (/usr/sbin/nginx), H2O_BIN (/usr/bin/h2o), BENCH_H2_REQUESTS
# (200000), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
hy_bin=${HY_BIN:-$here/../build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
h2o_bin=${H2O_BIN:-/usr/bin/h2o}
n=${1:-${BENCH_H2_REQUESTS:-200000}}
srv_cpu=${BENCH_SERVER_CPU:-0}
cli_cpu=${BENCH_CLIENT_CPU:-1}
command -v h2load >/dev/null || { echo "bench/h2: h2load missing (apt-get install nghttp2-client)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/hy-bench-h2.XXXXXX)
chmod 755 "$tmp"
trap 'for p in ${pids:-}; do kill "$p" 2>/dev/null; done; sleep 0.5; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/html" "$tmp/logs" "$tmp/conf"
chmod 777 "$tmp/logs" # h2o writes its log as nobody
head -c 612 /dev/zero | tr '\0' 'x' >"$tmp/html/small.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/conf/k.pem" \
    -out "$tmp/conf/c.pem" -days 2 -subj /CN=localhost >/dev/null 2>&1
chmod 644 "$tmp/conf/k.pem"


ngx_conf() { # name plain tls listen-style
    cat <<EOF
worker_processes 1;
master_process on;
daemon off;
pid $tmp/logs/$1.pid;
error_log $tmp/logs/$1.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000; # h2o has no such limit: every stream of a connection is served
    open_file_cache max=1000; # h2o caches open files by default (its file-cache, 32 entries)
    server {
        listen 127.0.0.1:$2 $4;
        listen 127.0.0.1:$3 ssl $4;
        $5
        ssl_certificate $tmp/conf/c.pem;
        ssl_certificate_key $tmp/conf/k.pem;
        ssl_protocols TLSv1.3;
        root $tmp/html;
    }
}
EOF
}

h2o_conf() { # plain-port tls-port
    h2o_config --user nobody --error-log "$tmp/logs/h2o.err" --cert "$tmp/conf/c.pem" --key "$tmp/conf/k.pem" \
        --root "$tmp/html" "$1" "$2:TLSv1.2"
}



hz=$(getconf CLK_TCK)
pids=""
declare -A plain tls pid
start() { # name
    local name=$1 p=$(any_port) t=$(any_port)
    plain[$name]=$p tls[$name]=$t
    case $name in
    hayate) ngx_conf hayate $p $t "" "http2 on;" >"$tmp/conf/hayate.conf"
        taskset -c "$srv_cpu" "$hy_bin" -p "$tmp/" -c "$tmp/conf/hayate.conf" >"$tmp/logs/hayate.out" 2>&1 & ;;
    nginx) ngx_conf nginx $p $t http2 "" >"$tmp/conf/nginx.conf"
        taskset -c "$srv_cpu" "$nginx_bin" -p "$tmp/" -c "$tmp/conf/nginx.conf" >"$tmp/logs/nginx.out" 2>&1 & ;;
    h2o) h2o_conf $p $t >"$tmp/conf/h2o.conf"
        taskset -c "$srv_cpu" "$h2o_bin" -c "$tmp/conf/h2o.conf" >"$tmp/logs/h2o.out" 2>&1 & ;;
    esac
    pid[$name]=$!
    pids="$pids $!"
    wait_port "$p" && wait_port "$t" || { echo "bench/h2: $name did not start" >&2; cat "$tmp/logs/$name".* >&2; return 1; }
}

servers=""
for s in hayate nginx h2o; do
    case $s in nginx) [ -x "$nginx_bin" ] || continue ;; h2o) [ -x "$h2o_bin" ] || continue ;; esac
    start $s && servers="$servers $s"
done

echo "| scenario | server | req/s | server CPU µs/request | failed |"
echo "|---|---|---:|---:|---:|"
for scen in tls h2c; do
    for s in $servers; do
        if [ $scen = tls ]; then url=https://127.0.0.1:${tls[$s]}/small.html; else url=http://127.0.0.1:${plain[$s]}/small.html; fi
        before=$(cpu_ticks ${pid[$s]})
        out=$(taskset -c "$cli_cpu" h2load -n "$n" -c 100 -m 10 "$url" 2>&1)
        after=$(cpu_ticks ${pid[$s]})
        rps=$(echo "$out" | awk '/^finished in/ {print $4}')
        done_=$(echo "$out" | awk '/^requests:/ {print $8}')
        failed=$(echo "$out" | awk '/^requests:/ {print $12}')
        cpu=$(awk -v a="$after" -v b="$before" -v hz="$hz" -v d="${done_:-0}" \
            'BEGIN { if (d > 0) printf "%.2f", (a - b) / hz * 1e6 / d; else print "-" }')
        echo "| h2load -n $n -c 100 -m 10, $scen | $s | ${rps:--} | $cpu | ${failed:--} |"
    done
done
echo
echo "CPU per request: (utime+stime of the server's workers during the run) / requests done; clock tick 1/$hz s."
