#!/usr/bin/env bash
# tools/h2spec.sh — the h2spec HTTP/2 conformance suite (github.com/summerwind/h2spec, not a Debian package: CI does
# not run it) against hayate, and beside it Debian's nginx (/usr/sbin/nginx, `listen ... http2`) and h2o
# (/usr/bin/h2o) with equivalent configurations: one server block serving a static file, h2c with prior knowledge
# and TLS (ALPN h2, `-t -k`), on loopback. Prints one line of counts per server and transport; the full h2spec
# output of each stays in the work directory it names (-k keeps it).
#
# Usage: tools/h2spec.sh H2SPEC [-b HAYATE_BIN] [-n] [-o] [-k] [-T SECONDS]
#   -b  hayate binary (build/hayate)   -n  also nginx   -o  also h2o   -k  keep the work directory
#   -T  h2spec's per-test timeout (-o, default 3)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../bench/lib.sh"
h2spec=${1:?usage: tools/h2spec.sh H2SPEC [-b HAYATE_BIN] [-n] [-o] [-k] [-T SECONDS]}
shift
hy_bin=$here/../build/hayate nginx_bin=/usr/sbin/nginx h2o_bin=/usr/bin/h2o
servers=hayate keep=0 timeout=3
while getopts b:nokT: opt; do
    case $opt in
    b) hy_bin=$OPTARG ;; n) servers="$servers nginx" ;; o) servers="$servers h2o" ;; k) keep=1 ;;
    T) timeout=$OPTARG ;; *) exit 2 ;;
    esac
done
[ -x "$h2spec" ] || { echo "tools/h2spec: $h2spec is not executable" >&2; exit 2; }

tmp=$(mktemp -d /tmp/hy-h2spec.XXXXXX)
chmod 755 "$tmp"
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; [ $keep = 1 ] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/html" "$tmp/logs" "$tmp/conf"
chmod 777 "$tmp/logs" # h2o writes its log as nobody
printf 'hello\n' >"$tmp/html/index.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/conf/k.pem" \
    -out "$tmp/conf/c.pem" -days 2 -subj /CN=localhost >/dev/null 2>&1
chmod 644 "$tmp/conf/k.pem"

ngx_conf() { # name plain-port tls-port listen-parameter server-directive
    cat <<EOF
worker_processes 1;
master_process off;
daemon off;
pid $tmp/logs/$1.pid;
error_log $tmp/logs/$1.err info;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $tmp/logs/$1-body;
    server {
        listen 127.0.0.1:$2 $4;
        listen 127.0.0.1:$3 ssl $4;
        $5
        ssl_certificate $tmp/conf/c.pem;
        ssl_certificate_key $tmp/conf/k.pem;
        root $tmp/html;
        location / {}
    }
}
EOF
}

h2o_conf() { # plain-port tls-port
    cat <<EOF
user: nobody
num-threads: 1
error-log: $tmp/logs/h2o.err
listen:
  host: 127.0.0.1
  port: $1
listen:
  host: 127.0.0.1
  port: $2
  ssl:
    certificate-file: $tmp/conf/c.pem
    key-file: $tmp/conf/k.pem
    ocsp-update-interval: 0
hosts:
  default:
    paths:
      /:
        file.dir: $tmp/html
EOF
}

run() { # name
    local name=$1 p t pid
    p=$(any_port) t=$(any_port)
    case $name in
    hayate) ngx_conf hayate "$p" "$t" "" "http2 on;" >"$tmp/conf/hayate.conf"
        "$hy_bin" -p "$tmp/" -c "$tmp/conf/hayate.conf" >"$tmp/logs/hayate.out" 2>&1 & ;;
    nginx) ngx_conf nginx "$p" "$t" http2 "" >"$tmp/conf/nginx.conf"
        "$nginx_bin" -p "$tmp/" -c "$tmp/conf/nginx.conf" >"$tmp/logs/nginx.out" 2>&1 & ;;
    h2o) h2o_conf "$p" "$t" >"$tmp/conf/h2o.conf"
        "$h2o_bin" -c "$tmp/conf/h2o.conf" >"$tmp/logs/h2o.out" 2>&1 & ;;
    esac
    pid=$!
    pids="$pids $pid"
    if ! wait_port "$p" || ! wait_port "$t"; then
        echo "tools/h2spec: $name did not start" >&2
        cat "$tmp/logs/$name".* >&2
        return 1
    fi
    "$h2spec" -h 127.0.0.1 -p "$p" -o "$timeout" >"$tmp/$name-h2c.txt" 2>&1
    printf '%-7s h2c: %s\n' "$name" "$(tail -n 1 "$tmp/$name-h2c.txt")"
    "$h2spec" -h 127.0.0.1 -p "$t" -t -k -o "$timeout" >"$tmp/$name-tls.txt" 2>&1
    printf '%-7s tls: %s\n' "$name" "$(tail -n 1 "$tmp/$name-tls.txt")"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

for s in $servers; do
    run "$s"
done
[ $keep = 1 ] && echo "h2spec outputs: $tmp/*-h2c.txt, $tmp/*-tls.txt"
exit 0
