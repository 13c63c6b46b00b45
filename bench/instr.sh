#!/bin/bash
# bench/instr.sh — user-space instructions per request, counted by valgrind's callgrind: repeatable whatever else
# the machine does, so it can tell a 3% change that wall-clock timings on a shared VM cannot.
#   usage: bench/instr.sh BINARY [SCENARIO=http]
#   SCENARIO: http (612-byte file, keep-alive), https (same over TLS 1.3, ECDSA P-256, keep-alive),
#             tls12 / tls13 (a new handshake per request, ab without -k), gzip (40 KiB of HTML, gzip level 6,
#             keep-alive, gzip_http_version 1.0 for ab; hayate: after the first request its compressed-response
#             cache answers, nginx compresses every time), limit (http behind a limit_req whose rate never rejects:
#             what limit_req adds to a request, issue 14's 5% budget), proxy / proxy-noka (the 612-byte file from a
#             backend — Debian's nginx, not under valgrind — through proxy_pass with upstream keepalive / a connection
#             per request: seed 003's front, issue 12), fcgi / fcgi-ka (hello.php from PHP-FPM — not under valgrind — over
#             a unix socket, a connection per request / fastcgi_keep_conn with upstream keepalive: issue 13),
#             uwsgi (seed 004's hello-world WSGI app from uWSGI — not under valgrind — over a unix socket, a connection
#             per request: issue 13), h2c (the 612-byte file over HTTP/2 with prior knowledge, h2load -c 4 -m 10 instead of ab: issue 11)
# BINARY may be hayate or nginx (Debian's /usr/sbin/nginx): both read the same one-location config, run as a
# single process (master_process off). KEEP=1 keeps the callgrind outputs (cg.1000, cg.6000) in the printed directory.
# Two runs of ab -c4 (1,000 and 6,000 requests); the difference of the two
# totals over 5,000 cancels start-up and shutdown. Needs valgrind and ab (apache2-utils).
set -u
[ $# -ge 1 ] || { sed -n 2,9p "$0" >&2; exit 2; }
bin=$1 scen=${2:-http}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
for t in valgrind callgrind_annotate ab; do command -v $t >/dev/null || { echo "instr: $t is missing" >&2; exit 1; }; done
prefix=$(mktemp -d /tmp/hy-instr.XXXXXX) keep=${KEEP:-0} pids=()
trap 'bench_cleanup instr' EXIT
chmod 755 "$prefix"
mkdir -p "$prefix/html" "$prefix/logs" "$prefix/conf"
head -c 612 /dev/zero | tr '\0' x >"$prefix/html/small.html"
awk 'BEGIN { srand(3); nw = split("the quick brown fox jumps over lazy dog lorem ipsum server static file cache", w, " ")
    for (n = 0; n < 41500;) { line = "<p>"; k = 5 + int(rand() * 20)
        for (i = 0; i < k; i++) line = line w[1 + int(rand() * nw)] " "
        line = line "</p>\n"; printf "%s", line; n += length(line) } }' | head -c 40960 >"$prefix/html/40k.html"
port=$(free_port 18700) httpx=
case "$scen" in
http) listen="listen 127.0.0.1:$port;" url=http://127.0.0.1:$port/small.html ab=(-k) ;;
limit) listen="listen 127.0.0.1:$port; limit_req zone=bench burst=1000 nodelay;" url=http://127.0.0.1:$port/small.html ab=(-k)
    httpx='limit_req_zone $server_name zone=bench:1m rate=10000000r/s;' ;;
gzip) listen="listen 127.0.0.1:$port; gzip on; gzip_comp_level 6; gzip_http_version 1.0;" url=http://127.0.0.1:$port/40k.html
    ab=(-k -H 'Accept-Encoding: gzip') ;;
https | tls12 | tls13)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
        -keyout "$prefix/conf/k.pem" -out "$prefix/conf/c.pem" >/dev/null 2>&1
    listen="listen 127.0.0.1:$port ssl; ssl_certificate c.pem; ssl_certificate_key k.pem;"
    url=https://127.0.0.1:$port/small.html
    case "$scen" in https) ab=(-k) ;; tls12) ab=(-f TLS1.2) ;; tls13) ab=(-f TLS1.3) ;; esac ;;
proxy | proxy-noka)
    bport=$(free_port 18750 "$port")
    printf 'daemon off; master_process off; error_log %s/logs/be.err; pid %s/logs/be.pid; events {}\nhttp { access_log off; server { listen 127.0.0.1:%s; root %s/html; location / {} } }\n' \
        "$prefix" "$prefix" "$bport" "$prefix" >"$prefix/conf/be.conf"
    /usr/sbin/nginx -p "$prefix/" -c conf/be.conf -e "$prefix/logs/be.err" & pids+=($!); wait_port "$bport"
    ka='keepalive 10240;' pv='proxy_http_version 1.1; proxy_set_header Connection "";'
    [ "$scen" = proxy-noka ] && ka= pv=
    httpx="upstream be { server 127.0.0.1:$bport; $ka }"
    listen="listen 127.0.0.1:$port; location /p/ { proxy_pass http://be/; $pv }" url=http://127.0.0.1:$port/p/small.html ab=(-k) ;;
fcgi | fcgi-ka)
    fpm=$(command -v php-fpm8.2 || echo /usr/sbin/php-fpm8.2)
    mkdir -p "$prefix/php" && echo '<?php echo "Hello, World";' >"$prefix/php/hello.php"
    printf '[global]\npid = %s/logs/fpm.pid\nerror_log = %s/logs/fpm.log\ndaemonize = no\n[www]\nuser = root\ngroup = root\nlisten = %s/php.sock\nlisten.mode = 0666\npm = static\npm.max_children = 4\n' \
        "$prefix" "$prefix" "$prefix" >"$prefix/conf/fpm.conf"
    "$fpm" -R -F -n -y "$prefix/conf/fpm.conf" >"$prefix/logs/fpm.out" 2>&1 & pids+=($!)
    for _ in $(seq 100); do [ -S "$prefix/php.sock" ] && break; sleep 0.1; done
    sed 's|hayate/\$hayate_version|hayate|' "$here/../conf/fastcgi.conf" >"$prefix/conf/fastcgi.conf"
    pass="fastcgi_pass unix:$prefix/php.sock;"
    [ "$scen" = fcgi-ka ] && httpx="upstream php { server unix:$prefix/php.sock; keepalive 2; }" \
        pass="fastcgi_keep_conn on; fastcgi_pass php;"
    listen="listen 127.0.0.1:$port; location ~ \\.php\$ { root php; include fastcgi.conf; $pass }"
    url=http://127.0.0.1:$port/hello.php ab=(-k) ;;
uwsgi)
    command -v uwsgi >/dev/null || { echo "instr: uwsgi is missing" >&2; exit 1; }
    printf 'def app(environ, start_response):\n    start_response("200 OK", [("Content-Type", "text/plain")])\n    return [b"Hello, World"]\n' >"$prefix/hello.py"
    (cd "$prefix" && exec uwsgi --plugin python3 -s "$prefix/app.sock" --master --workers=2 --pythonpath "$prefix" \
        --wsgi=hello:app --die-on-term --disable-logging --chmod-socket=666) >"$prefix/logs/uwsgi.log" 2>&1 & pids+=($!)
    for _ in $(seq 100); do [ -S "$prefix/app.sock" ] && break; sleep 0.1; done
    sed 's|hayate/\$hayate_version|hayate|' "$here/../conf/uwsgi_params" >"$prefix/conf/uwsgi_params"
    listen="listen 127.0.0.1:$port; location /app { include uwsgi_params; uwsgi_pass unix:$prefix/app.sock; }"
    url=http://127.0.0.1:$port/app ab=(-k) ;;
h2c) listen="listen 127.0.0.1:$port; http2 on; keepalive_requests 100000;" url=http://127.0.0.1:$port/small.html ;;
*) echo "instr: unknown scenario $scen" >&2; exit 2 ;;
esac
cat >"$prefix/conf/i.conf" <<CONF
master_process off;
daemon off;
worker_processes 1;
error_log logs/error.log;
pid logs/i.pid;
events { worker_connections 1024; }
http { access_log off; $httpx server { $listen root html; location / {} } }
CONF
total() { # N -> instructions of a whole run answering N requests
    local out="$prefix/cg.$1"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" -p "$prefix/" -c conf/i.conf -e logs/error.log \
        >"$prefix/logs/vg.$1" 2>&1 &
    pids=($! "${pids[@]}")
    for _ in $(seq 200); do port_busy "$port" && break; sleep 0.1; done
    local res
    if [ "$scen" = h2c ]; then
        res=$(h2load -n "$1" -c 4 -m 10 "$url" 2>&1)
        echo "$res" | grep -q "requests: $1 total, $1 started, $1 done, $1 succeeded" ||
            { echo "instr: h2load failed:" >&2; echo "$res" >&2; exit 1; }
    else
        res=$(ab -q -n "$1" -c 4 "${ab[@]}" "$url" 2>&1)
        echo "$res" | grep -q '^Failed requests: *0$' || { echo "instr: ab failed:" >&2; echo "$res" >&2; exit 1; }
        echo "$res" | grep -q 'Non-2xx' && { echo "instr: non-2xx answers" >&2; exit 1; }
    fi
    kill -QUIT "${pids[0]}"; wait "${pids[0]}" 2>/dev/null; pids=("${pids[@]:1}")
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
a=$(total 1000) b=$(total 6000)
echo "$(basename "$bin") $scen: $(((b - a) / 5000)) instructions per request"
