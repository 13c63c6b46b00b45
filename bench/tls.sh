#!/usr/bin/env bash
# bench/tls.sh — the TLS scenarios with h2o beside hayate and nginx (issue 10): HTTPS keep-alive (wrk -t1 -c128,
# the 612-byte file, TLS 1.3, ECDSA P-256) and a new TLS 1.3 / TLS 1.2 handshake per request (ab -c32, no
# keep-alive). One worker/thread pinned on $BENCH_SERVER_CPU, the client on $BENCH_CLIENT_CPU. Servers: hayate
# (its defaults), nginx (its defaults: no open-file cache), nginx-ofc (nginx with `open_file_cache max=1000`, as
# hayate and h2o keep files open by default) and h2o (Debian's 2.2, one thread). Reports req/s and the server's
# CPU per request (utime+stime of its processes from /proc over the run). bench/run.sh calls it after h2.sh; alone:
#   bench/tls.sh [SECONDS=10] [AB_REQUESTS=4000]
# Environment: HY_BIN (build/hayate), NGINX_BIN (/usr/sbin/nginx), H2O_BIN (/usr/bin/h2o), BENCH_SERVER_CPU (0),
# BENCH_CLIENT_CPU (1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
hy_bin=${HY_BIN:-$here/../build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
h2o_bin=${H2O_BIN:-/usr/bin/h2o}
secs=${1:-10}
abn=${2:-4000}
srv_cpu=${BENCH_SERVER_CPU:-0}
cli_cpu=${BENCH_CLIENT_CPU:-1}
for t in wrk ab; do command -v $t >/dev/null || { echo "bench/tls: $t missing" >&2; exit 1; }; done

tmp=$(mktemp -d /tmp/hy-bench-tls.XXXXXX)
chmod 755 "$tmp"
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; sleep 0.5; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/html" "$tmp/logs" "$tmp/conf"
chmod 777 "$tmp/logs" # h2o writes its log as nobody
head -c 612 /dev/zero | tr '\0' 'x' >"$tmp/html/small.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/conf/k.pem" \
    -out "$tmp/conf/c.pem" -days 2 -subj /CN=localhost >/dev/null 2>&1
chmod 644 "$tmp/conf/k.pem"


ngx_conf() { # name tls13-port tls12-port extra
    cat <<EOF
worker_processes 1;
master_process on;
daemon off;
pid $tmp/logs/$1.pid;
error_log $tmp/logs/$1.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    $4
    ssl_certificate $tmp/conf/c.pem;
    ssl_certificate_key $tmp/conf/k.pem;
    server { listen 127.0.0.1:$2 ssl; ssl_protocols TLSv1.3; root $tmp/html; }
    server { listen 127.0.0.1:$3 ssl; ssl_protocols TLSv1.2; root $tmp/html; }
}
EOF
}

h2o_conf() { # tls13-port tls12-port
    h2o_config --user nobody --error-log "$tmp/logs/h2o.err" --cert "$tmp/conf/c.pem" --key "$tmp/conf/k.pem" \
        --root "$tmp/html" "$1:TLSv1.3" "$2:TLSv1.2:TLSv1.2"
}



hz=$(getconf CLK_TCK)
declare -A p13 p12 pid
start() { # name
    local name=$1 a=$(any_port) b=$(any_port)
    p13[$name]=$a p12[$name]=$b
    case $name in
    hayate) ngx_conf hayate $a $b "" >"$tmp/conf/hayate.conf"
        taskset -c "$srv_cpu" "$hy_bin" -p "$tmp/" -c "$tmp/conf/hayate.conf" >"$tmp/logs/hayate.out" 2>&1 & ;;
    nginx) ngx_conf nginx $a $b "" >"$tmp/conf/nginx.conf"
        taskset -c "$srv_cpu" "$nginx_bin" -p "$tmp/" -c "$tmp/conf/nginx.conf" >"$tmp/logs/nginx.out" 2>&1 & ;;
    nginx-ofc) ngx_conf nginx-ofc $a $b "open_file_cache max=1000;" >"$tmp/conf/nginx-ofc.conf"
        taskset -c "$srv_cpu" "$nginx_bin" -p "$tmp/" -c "$tmp/conf/nginx-ofc.conf" >"$tmp/logs/nginx-ofc.out" 2>&1 & ;;
    h2o) h2o_conf $a $b >"$tmp/conf/h2o.conf"
        taskset -c "$srv_cpu" "$h2o_bin" -c "$tmp/conf/h2o.conf" >"$tmp/logs/h2o.out" 2>&1 & ;;
    esac
    pid[$name]=$!
    pids="$pids $!"
    wait_port "$a" && wait_port "$b" || { echo "bench/tls: $name did not start" >&2; cat "$tmp/logs/$name".* >&2; return 1; }
}

servers=""
for s in hayate nginx nginx-ofc h2o; do
    case $s in nginx*) [ -x "$nginx_bin" ] || continue ;; h2o) [ -x "$h2o_bin" ] || continue ;; esac
    start $s && servers="$servers $s"
done

measure() { # server scenario -> "req/s µs-per-request failed"
    local s=$1 scen=$2 out before after n rps failed
    before=$(cpu_ticks ${pid[$s]})
    case $scen in
    tls-ka) out=$(taskset -c "$cli_cpu" wrk -t1 -c128 -d"${secs}s" "https://127.0.0.1:${p13[$s]}/small.html")
        n=$(echo "$out" | awk '/requests in/{print $1}')
        rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
        failed=$(echo "$out" | awk '/Non-2xx|Socket errors/{f=1} END{print f ? "yes" : 0}') ;;
    tls13-hs | tls12-hs)
        local p=${p13[$s]} v=TLS1.3
        [ $scen = tls12-hs ] && p=${p12[$s]} v=TLS1.2
        out=$(taskset -c "$cli_cpu" ab -q -n "$abn" -c 32 -f $v "https://127.0.0.1:$p/small.html" 2>&1)
        n=$(echo "$out" | awk '/^Complete requests:/{print $3}')
        rps=$(echo "$out" | awk '/^Requests per second:/{print $4}')
        failed=$(echo "$out" | awk '/^Failed requests:/{print $3}') ;;
    esac
    after=$(cpu_ticks ${pid[$s]})
    awk -v a="$after" -v b="$before" -v hz="$hz" -v n="${n:-0}" -v r="${rps:--}" -v f="${failed:--}" \
        'BEGIN { if (n > 0) printf "%s %.2f %s\n", r, (a - b) / hz * 1e6 / n, f; else print r, "-", f }'
}

echo "| scenario | server | req/s | server CPU µs/request | CPU/request ÷ hayate's | failed |"
echo "|---|---|---:|---:|---:|---:|"
for scen in tls-ka tls13-hs tls12-hs; do
    hy_cpu=
    for s in $servers; do
        read -r rps cpu failed < <(measure $s $scen)
        [ $s = hayate ] && hy_cpu=$cpu
        ratio=$(awk -v c="$cpu" -v h="$hy_cpu" 'BEGIN { if (h + 0 > 0 && c + 0 > 0) printf "%.2f", c / h; else print "-" }')
        echo "| $scen | $s | $rps | $cpu | $ratio | $failed |"
    done
done
echo
echo "CPU per request: (utime+stime of the server's processes during the run) / requests done; clock tick 1/$hz s."
echo "The last column is each server's CPU per request divided by hayate's (above 1: hayate is cheaper)."
