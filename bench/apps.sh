#!/bin/bash
# bench/apps.sh — hayate and nginx in front of real app servers (issue 13; `make bench` runs it after run.sh). The
# front (one worker) is pinned to CPU $BENCH_SERVER_CPU (0); wrk and the app server share CPU $BENCH_CLIENT_CPU (1).
# Reports req/s and the front's CPU per request (utime+stime of its master and worker from /proc, over the
# measured run), as bench/proxy.sh does, in BENCH_ROUNDS (default 3) rounds of a pair, nginx and hayate back to
# back, the order alternating; the ratio column is the median of the per-round ratios hayate/nginx (with their
# min–max when rounds > 1), req/s and µs are each server's median (docs/BENCHMARKS.md, "Rounds"). Scenarios:
#   seed004-uwsgi  `include uwsgi_params; uwsgi_pass app;` to uWSGI (python3 plugin, hello-world WSGI app,
#                  --master --workers=$BENCH_APP_WORKERS) on a unix socket; wrk -t1 -c64
#   php-fcgi       `include fastcgi.conf; fastcgi_pass unix:...;` to PHP-FPM (static pool) running hello.php
#   php-fcgi-ka    the same with upstream keepalive (half the workers: a pooled connection holds an FPM worker)
#                  and fastcgi_keep_conn on
#   memcached-ka   `set $memcached_key $uri; memcached_pass memd;` to memcached (one thread, the value "Hello,
#                  World") with `keepalive 8`; wrk -t1 -c64
# In php-fcgi-ka a third front joins each round (BENCH_FLOOR=0 leaves it out): bench/floor.c, which sends one fixed
# FastCGI request of fastcgi.conf's size per request and returns PHP's stdout, with no other work; its CPU per
# request is the floor of any FastCGI front on this machine (bench/proxy.sh says more).
#   usage: bench/apps.sh [--quick] [--only ID[,ID]]   (env: HY_BIN, NGINX_BIN, BENCH_SECONDS, BENCH_ROUNDS,
#          BENCH_FLOOR)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/lib.sh"
HY_BIN=${HY_BIN:-$root/build/hayate}
NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
case "$rounds" in ''|*[!0-9]*|0) echo "apps bench: BENCH_ROUNDS must be a positive integer" >&2; exit 2 ;; esac
workers=${BENCH_APP_WORKERS:-4}
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
command -v wrk >/dev/null || { echo "apps bench: wrk is missing" >&2; exit 1; }
prefix=$(mktemp -d /tmp/hy-apps-bench.XXXXXX) keep=0 pids=()
trap 'bench_cleanup apps-bench' EXIT
chmod 755 "$prefix"
mkdir -p "$prefix/front/logs" "$prefix/front/conf" "$prefix/php"
# the same parameters for both fronts ($hayate_version is hayate's own variable)
for f in uwsgi_params fastcgi.conf; do sed 's|hayate/\$hayate_version|hayate|' "$root/conf/$f" >"$prefix/front/conf/$f"; done
fport=$(free_port 18800)

# uWSGI with seed 004's hello-world app
cat >"$prefix/hello.py" <<'APP'
def app(environ, start_response):
    body = b"Hello, World"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
APP
usock=$prefix/app.sock
if command -v uwsgi >/dev/null; then
    (cd "$prefix" && exec taskset -c "$ccpu" uwsgi --plugin python3 -s "$usock" --master --workers="$workers" \
        --pythonpath "$prefix" --wsgi=hello:app --die-on-term --disable-logging --listen 1024 --chmod-socket=666) >"$prefix/uwsgi.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -S "$usock" ] && break; sleep 0.1; done
fi

# PHP-FPM with hello.php
psock=$prefix/php.sock
echo '<?php echo "Hello, World";' >"$prefix/php/hello.php"
fpm=$(command -v php-fpm8.2 || echo /usr/sbin/php-fpm8.2)
if [ -x "$fpm" ]; then
    cat >"$prefix/php-fpm.conf" <<CONF
[global]
pid = $prefix/php-fpm.pid
error_log = $prefix/php-fpm.log
daemonize = no
[www]
user = root
group = root
listen = $psock
listen.backlog = 1024
listen.mode = 0666
pm = static
pm.max_children = $workers
CONF
    taskset -c "$ccpu" "$fpm" -R -F -n -y "$prefix/php-fpm.conf" >"$prefix/php-fpm.out" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -S "$psock" ] && break; sleep 0.1; done
fi

# memcached with the value the app servers answer, under the key the bench asks for
mport=$(free_port 18900)
if command -v memcached >/dev/null; then
    taskset -c "$ccpu" memcached -l 127.0.0.1 -p "$mport" -U 0 -t 1 -u root >"$prefix/memcached.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        printf 'set /hello 0 0 12\r\nHello, World\r\n' | timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$mport; cat >&3; head -c 8 <&3" 2>/dev/null |
            grep -q STORED && { mc_ok=1; break; }
        sleep 0.1
    done
fi

front_conf() { # ID -> the front's http{} server part
    case "$1" in
    seed004-uwsgi) echo "upstream app { server unix:$usock; }
        server { listen 127.0.0.1:$fport backlog=4096; location / { include uwsgi_params; uwsgi_pass app; } }" ;;
    php-fcgi) echo "server { listen 127.0.0.1:$fport backlog=4096; root $prefix/php;
        location ~ \\.php\$ { include fastcgi.conf; fastcgi_pass unix:$psock; } }" ;;
    php-fcgi-ka) echo "upstream php { server unix:$psock; keepalive $((workers / 2)); }
        server { listen 127.0.0.1:$fport backlog=4096; root $prefix/php;
        location ~ \\.php\$ { include fastcgi.conf; fastcgi_keep_conn on; fastcgi_pass php; } }" ;;
    memcached-ka) echo "upstream memd { server 127.0.0.1:$mport; keepalive 8; }
        server { listen 127.0.0.1:$fport backlog=4096; location / { set \$memcached_key \$uri; memcached_pass memd; } }" ;;
    esac
}
url_of() { case "$1" in seed004* | memcached*) echo /hello ;; *) echo /hello.php ;; esac; }

floor_args() { # ID -> the floor's UPSTREAM MODE SCRIPT for a keep-alive scenario (nothing: the floor sits this one out)
    case "$1" in php-fcgi-ka) echo "unix:$psock fcgi-ka $prefix/php/hello.php" ;; esac
}

ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
one() { # BINARY ID -> "req/s µs-per-request non2xx"
    local bin=$1 id=$2
    front_start "$bin" "$id" || return 1
    local m=$front_pid procs=$front_procs
    local u; u=http://127.0.0.1:$fport$(url_of "$id")
    [ -n "${BENCH_DEBUG:-}" ] && curl -s -i "$u" | head -12 >&2
    taskset -c "$ccpu" wrk -t1 -c64 -d2s "$u" >/dev/null
    local c0 out c1 n bad; c0=$(ticks $procs)
    out=$(taskset -c "$ccpu" wrk -t1 -c64 -d"${secs}s" "$u")
    c1=$(ticks $procs)
    n=$(echo "$out" | awk '/requests in/{print $1}')
    bad=$(echo "$out" | awk '/Non-2xx/{print $NF}' | head -1)
    bench_stop apps-bench "$m"
    awk -v n="$n" -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v bad="${bad:-0}" \
        -v rps="$(echo "$out" | awk '/Requests\/sec/{print $2}')" \
        'BEGIN { printf "%.0f %.1f %s\n", rps, d * 1e6 / hz / n, bad }'
}

front() { case $1 in nginx) one "$NGINX_BIN" "$id" ;; hayate) one "$HY_BIN" "$id" ;; floor) one floor "$id" ;; esac; }

use_floor=${BENCH_FLOOR:-1}
if [ "$use_floor" = 1 ] && ! floor_build; then echo "${0##*/}: bench/floor.c did not build; no floor column" >&2; use_floor=0; fi
bench_pair_head "$rounds"
for id in seed004-uwsgi php-fcgi php-fcgi-ka memcached-ka; do
    [ -n "$only" ] && [[ ",$only," != *",$id,"* ]] && continue
    [[ $id == seed004* ]] && [ ! -S "$usock" ] && { echo "| $id | (uwsgi missing) |||||"; continue; }
    [[ $id == php* ]] && [ ! -S "$psock" ] && { echo "| $id | (php-fpm missing) |||||"; continue; }
    [[ $id == memcached* ]] && [ -z "${mc_ok:-}" ] && { echo "| $id | (memcached missing) |||||"; continue; }
    fronts=(nginx hayate)
    [ "$use_floor" = 1 ] && [ -n "$(floor_args "$id")" ] && fronts+=(floor)
    bench_rounds "$rounds" "$prefix/rounds" front "${fronts[@]}" || { echo "apps bench: $id: a front did not start" >&2; exit 1; }
    bench_pair_row "$id" "$prefix/rounds" "$rounds"
done
