#!/bin/bash
# bench/run.sh — hayate beside nginx (and h2o as a second reference) on loopback, same config, same core.
# `make bench` builds, then runs this.
#
#   bench/run.sh [--quick] [--out FILE] [--only ID[,ID...]] [--list] [--keep]
#
# Each server runs one worker (h2o: one thread) pinned to CPU $BENCH_SERVER_CPU (0); the load generator runs
# pinned to $BENCH_CLIENT_CPU (1). Prints two markdown tables — req/s (ratios hayate/nginx and hayate/h2o, failed
# requests) and server CPU per request (utime+stime of the server's processes from /proc over each measured run,
# divided by the requests the client completed; ratios hayate/nginx and hayate/h2o, below 1 = hayate cheaper) —
# and each server's memory after the run; with --out FILE the same is appended to FILE as a dated section
# (docs/BENCHMARKS.md). See docs/BENCHMARKS.md for what each scenario means.
#
# h2o (Debian's 2.2, $H2O_BIN) serves the same files from its own YAML config (h2o_conf below): file.dir of the
# same docroot, gzip quality 6 under /gz/, the combined log under /log/, a 13-byte file holding nginx's
# 'Hello, World\n' at /hello (h2o 2.2 has no `return`), the same certificate on the TLS listeners. It has no
# limit_req, so small-ka-limit (listed in H2O_SKIP) shows "—" for it; so do all its columns when the binary is
# missing or fails to start or to pass the content check (a warning says which). nginx and hayate get exactly
# the config they got before h2o was added.
#
# Environment:
#   HY_BIN          hayate binary (default: build/hayate); set it to /usr/sbin/nginx to test this script
#   NGINX_BIN       reference nginx (default: /usr/sbin/nginx, installed from Debian when missing)
#   H2O_BIN         second reference (default: /usr/bin/h2o, installed from Debian when missing and BENCH_H2=1);
#                   a path that does not exist (H2O_BIN=none) leaves h2o out ("—" in its columns)
#   BENCH_SECONDS   duration of each wrk run (default 10; --quick: 2)
#   BENCH_REQUESTS  requests of each ab run (default 20000; --quick: 2000)
#   BENCH_QUICK=1   same as --quick;  BENCH_OUT=FILE same as --out FILE;  BENCH_ONLY=ids same as --only
#   BENCH_NGINX_PORT / BENCH_HAYATE_PORT / BENCH_H2O_PORT   loopback ports (default: first free from 18480 /
#                   18481 / 18482); each server also listens on PORT+1000 (TLS) and PORT+2000 (TLS 1.2 only)
#   BENCH_SERVER_CPU / BENCH_CLIENT_CPU    CPUs for servers / load generator (default 0 / 1)
#   BENCH_HY_MASTER  master_process for hayate: on (default, as nginx) or off
#   BENCH_NGINX_MASTER  master_process for nginx: on (default, as deployed) or off
#   BENCH_WORKER_CONNECTIONS  worker_connections for both (default 4096)
#   BENCH_ROUNDS    rounds per scenario (default 1): in each, the servers run back to back, the order reversed
#                   every other round (nginx hayate h2o, then h2o hayate nginx); each server's median req/s and
#                   CPU per request are shown, every ratio is the median of the per-round ratios, and with more
#                   than one round a spread column gives their lowest and highest (bench/lib.sh bench_rounds)
#
# Adding a scenario: add one line to SCENARIOS below (id|label|tool|concurrency|path|request header; a path
# "tls:/x" is fetched over HTTPS from the TLS listener, "tls12:/x" from the one limited to TLS 1.2),
# put the file it fetches in make_docroot(), and if it needs configuration add it to server_conf() — both
# servers get the same text — and its h2o equivalent to h2o_conf() (or its id to H2O_SKIP). tool is "wrk"
# (keep-alive, runs BENCH_SECONDS) or "ab" (one connection per request, BENCH_REQUESTS requests, run with
# `ulimit -n 20000` for ab only).
set -u

SCENARIOS=(
    "small-ka|small file (612 B), keep-alive, wrk -t1 -c128|wrk|128|/small.html|"
    "small-close|small file (612 B), no keep-alive, ab -c100|ab|100|/small.html|"
    "10k-c1000|10 KiB file, 1,000 concurrent, no keep-alive, ab -c1000|ab|1000|/10k.dat|"
    "1m-ka|1 MiB file, keep-alive, wrk -t1 -c32|wrk|32|/1m.dat|"
    "gzip-40k|40 KiB HTML, gzip level 6 (seed 003), keep-alive, wrk -t1 -c32|wrk|32|/gz/40k.html|Accept-Encoding: gzip"
    "hello-ka|return 200 'Hello, World' (seed 004), keep-alive, wrk -t1 -c128|wrk|128|/hello|"
    "small-ka-log|small file (612 B), combined access log on, keep-alive, wrk -t1 -c128|wrk|128|/log/small.html|"
    "small-ka-limit|small file (612 B), limit_req that never rejects, keep-alive, wrk -t1 -c128|wrk|128|/lim/small.html|"
    "tls-ka|small file over HTTPS (TLS 1.3, ECDSA P-256), keep-alive, wrk -t1 -c128|wrk|128|tls:/small.html|"
    "tls13-hs|small file over HTTPS, a new TLS 1.3 handshake per request, ab -c32|ab|32|tls:/small.html|"
    "tls12-hs|small file over HTTPS, a new TLS 1.2 handshake per request, ab -c32|ab|32|tls12:/small.html|"
)
# scenarios h2o cannot serve equivalently: limit_req has no h2o 2.2 counterpart
H2O_SKIP=",small-ka-limit,"

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/lib.sh" # port_busy, free_port, cpu_ticks, h2o_config, bench_rounds and the round statistics

quick=${BENCH_QUICK:-0}
out=${BENCH_OUT:-}
only=${BENCH_ONLY:-}
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --out) out=${2:?--out needs a file}; shift ;;
    --out=*) out=${1#--out=} ;;
    --only) only=${2:?--only needs scenario ids}; shift ;;
    --only=*) only=${1#--only=} ;;
    --keep) keep=1 ;;
    --list) for s in "${SCENARIOS[@]}"; do IFS='|' read -r id label _ <<<"$s"; printf '%-12s %s\n' "$id" "$label"; done; exit 0 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$quick" = 1 ]; then
    secs=${BENCH_SECONDS:-2}
    reqs=${BENCH_REQUESTS:-2000}
else
    secs=${BENCH_SECONDS:-10}
    reqs=${BENCH_REQUESTS:-20000}
fi
case "$secs$reqs" in *[!0-9]*) echo "bench: BENCH_SECONDS and BENCH_REQUESTS must be integers" >&2; exit 2 ;; esac
hy_bin=${HY_BIN:-$root/build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
h2o_bin=${H2O_BIN:-/usr/bin/h2o}
nginx_port=${BENCH_NGINX_PORT:-$(free_port 18480)}
hayate_port=${BENCH_HAYATE_PORT:-$(free_port 18481 "$nginx_port")}
h2o_port=${BENCH_H2O_PORT:-$(free_port 18482 "$nginx_port")}
[ "$h2o_port" = "$hayate_port" ] && h2o_port=$(free_port $((hayate_port + 1)) "$nginx_port")
for p in "$nginx_port" "$hayate_port" "$h2o_port"; do
    port_busy "$p" && { echo "bench: 127.0.0.1:$p is already in use" >&2; exit 1; }
done
srv_cpu=${BENCH_SERVER_CPU:-0}
cli_cpu=${BENCH_CLIENT_CPU:-1}
hy_master=${BENCH_HY_MASTER:-on}
nginx_master=${BENCH_NGINX_MASTER:-on}
wconn=${BENCH_WORKER_CONNECTIONS:-4096}
rounds=${BENCH_ROUNDS:-1}
case "$rounds" in ''|*[!0-9]*|0) echo "bench: BENCH_ROUNDS must be a positive integer" >&2; exit 2 ;; esac

# ---- tools (Debian packages), installed only when missing
pkgs=""
command -v wrk >/dev/null || pkgs="$pkgs wrk"
command -v ab >/dev/null || pkgs="$pkgs apache2-utils"
command -v taskset >/dev/null || pkgs="$pkgs util-linux"
command -v curl >/dev/null || pkgs="$pkgs curl"
if [ "${BENCH_H2:-1}" = 1 ]; then # the HTTP/2 scenarios (bench/h2.sh): h2load, and h2o as the reference
    command -v h2load >/dev/null || pkgs="$pkgs nghttp2-client"
    [ -x /usr/bin/h2o ] || pkgs="$pkgs h2o"
fi
[ -x "$nginx_bin" ] || { [ "$nginx_bin" = /usr/sbin/nginx ] && pkgs="$pkgs nginx"; }
if [ -n "$pkgs" ]; then
    # shellcheck disable=SC2086
    "$root/tools/install-deps.sh" $pkgs || exit 1
fi
[ -x "$nginx_bin" ] || { echo "bench: nginx not found at $nginx_bin" >&2; exit 1; }
[ -x "$hy_bin" ] || { echo "bench: hayate binary not found at $hy_bin (run make, or set HY_BIN)" >&2; exit 1; }
ncpu=$(nproc)
if [ "$srv_cpu" -ge "$ncpu" ] || [ "$cli_cpu" -ge "$ncpu" ]; then
    echo "bench: need CPUs $srv_cpu and $cli_cpu, this machine has $ncpu; set BENCH_SERVER_CPU/BENCH_CLIENT_CPU" >&2
    exit 1
fi

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# ---- prefix with docroot and configs
prefix=$(mktemp -d /tmp/hayate-bench.XXXXXX) || exit 1
chmod 755 "$prefix" # nginx's worker runs as nobody when started as root
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html"

pids=()
cleanup() {
    # a load generator still running (interrupted run): `timeout` forwards TERM to it
    if [ -s "$prefix/client.pid" ]; then
        kill -TERM "$(cat "$prefix/client.pid")" 2>/dev/null
    fi
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$p" 2>/dev/null && { kill -KILL "$p" 2>/dev/null; echo "bench: killed $p (did not stop on TERM)" >&2; }
        wait "$p" 2>/dev/null
    done
    pids=()
    if [ "$keep" = 1 ]; then echo "bench: kept $prefix" >&2; else rm -rf "$prefix"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_docroot() {
    local h="$prefix/html"
    # 612 bytes, the size of nginx's welcome page
    {
        printf '<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to the benchmark</title>\n</head>\n<body>\n'
        printf '<h1>Static file benchmark</h1>\n<p>This page is served by the server under test.</p>\n'
        printf '<p>It is about the size of the default welcome page that many servers ship.</p>\n'
    } >"$h/small.html"
    local pad=$((612 - $(stat -c %s "$h/small.html") - 3 - 21)) # '<p>' and the 21 bytes of the closing tags
    { printf '<p>'; head -c "$pad" /dev/zero | tr '\0' '.'; printf '</p>\n</body>\n</html>\n'; } >>"$h/small.html"
    head -c 10240 /dev/urandom >"$h/10k.dat"
    head -c 1048576 /dev/urandom >"$h/1m.dat"
    # 40 KiB of HTML-like text that compresses like a real page (about 5:1 at level 6), for gzip-40k
    mkdir -p "$h/gz"
    awk 'BEGIN {
        srand(3); nw = split("the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet server static " \
            "file compression request response header body cache worker location alpha beta gamma delta", w, " ")
        printf "<!DOCTYPE html>\n<html>\n<head>\n<title>Compression benchmark</title>\n</head>\n<body>\n"
        for (n = 0; n < 41500;) {
            line = sprintf("<div class=\"item-%d\"><p>", n % 17)
            k = 5 + int(rand() * 20)
            for (i = 0; i < k; i++) line = line w[1 + int(rand() * nw)] " "
            line = line sprintf("</p><a href=\"/page/%d\">link %d</a></div>\n", n, n)
            printf "%s", line
            n += length(line)
        }
    }' | head -c 40960 >"$h/gz/40k.html"
    # h2o 2.2 has no `return`: for hello-ka it serves a file holding nginx's answer (outside the shared docroot)
    mkdir -p "$prefix/h2o"
    printf 'Hello, World\n' >"$prefix/h2o/hello"
}

# server_conf NAME PORT MASTER — the same text for both servers but for the port, names of files, and
# master_process (see docs/BENCHMARKS.md for why).
server_conf() {
    local name=$1 port=$2 master=$3 access_log=${4:-"access_log off;"}
    cat <<EOF
daemon off;
master_process $master;
worker_processes 1;
worker_rlimit_nofile $((wconn * 2 + 1024));
pid $prefix/logs/$name.pid;
error_log $prefix/logs/$name-error.log warn;

events {
    worker_connections $wconn;
}

http {
    default_type application/octet-stream;
    types {
        text/html html;
    }
    $access_log
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    # for the small-ka-limit scenario: one key (the server's name), a rate no load here reaches
    limit_req_zone \$server_name zone=bench:1m rate=10000000r/s;
    open_file_cache max=10000 inactive=60s;
    open_file_cache_valid 60s;
    open_file_cache_min_uses 1;
    open_file_cache_errors on;

    server {
        listen 127.0.0.1:$port backlog=4096;
        listen 127.0.0.1:$((port + 1000)) ssl backlog=4096;
        server_name localhost;
        ssl_certificate $prefix/conf/bench.crt;
        ssl_certificate_key $prefix/conf/bench.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $prefix/html;
        location / {
        }
        # the same files with the combined access log on, for the small-ka-log scenario
        location /log/ {
            alias $prefix/html/;
            access_log $prefix/logs/$name-access.log combined;
        }
        # the same files behind limit_req (never rejecting: the cost of the shared-zone lookup), small-ka-limit
        location /lim/ {
            alias $prefix/html/;
            limit_req zone=bench burst=1000000 nodelay;
        }
        # seed 004's fixed answer, for the hello-ka scenario
        location = /hello {
            return 200 "Hello, World\n";
        }
        # seed 003's compression settings, for the gzip-40k scenario only
        location /gz/ {
            gzip on;
            gzip_comp_level 6;
            gzip_types text/plain text/css application/json application/javascript text/xml application/xml application/xml+rss text/javascript;
        }
    }
    # the tls12-hs scenario: the same files, TLS 1.2 only (ab resumes no session: every request is a full handshake)
    server {
        listen 127.0.0.1:$((port + 2000)) ssl backlog=4096;
        server_name localhost;
        ssl_certificate $prefix/conf/bench.crt;
        ssl_certificate_key $prefix/conf/bench.key;
        ssl_protocols TLSv1.2;
        root $prefix/html;
        location / {
        }
    }
}
EOF
}

# h2o_conf PORT — h2o 2.2's equivalent of server_conf (YAML): one thread, the same docroot and listeners.
# Differences, all h2o's own: no `return` (/hello is a file with the same 13 bytes), no limit_req (small-ka-limit
# skipped), no access_log off (h2o logs nothing where no access-log is given), no sendfile (h2o 2.2 reads files
# with pread into its buffers), no open_file_cache setting (h2o's file cache is always on: open descriptors are
# shared by the requests of one event-loop pass, then closed), keep-alive without a request limit, the listen
# backlog is the kernel's somaxconn (4096 here, as nginx's backlog=4096).
h2o_conf() {
    local port=$1 user=
    [ "$(id -u)" = 0 ] && user=nobody # as root, h2o switches to a user (nobody by default): said explicitly
    h2o_config --user "$user" --max-connections "$wconn" --pid-file "$prefix/logs/h2o.pid" \
        --error-log "$prefix/logs/h2o-error.log" --cert "$prefix/conf/bench.crt" --key "$prefix/conf/bench.key" \
        --root "$prefix/html" --paths "\
      # hello-ka: the body of nginx's return 200, as a file (h2o adds etag, last-modified, accept-ranges)
      /hello:
        file.file: $prefix/h2o/hello
      # small-ka-log: nginx's combined format (h2o's default access-log format is the same)
      /log/:
        file.dir: $prefix/html
        access-log:
          path: $prefix/logs/h2o-access.log
          format: '%h %l %u %t \"%r\" %s %b \"%{Referer}i\" \"%{User-agent}i\"'
      # gzip-40k: gzip level 6 as gzip_comp_level 6 (text/html is compressible in h2o's mime map)
      /gz/:
        file.dir: $prefix/html/gz
        compress:
          gzip: 6" \
        "$port" "$((port + 1000)):TLSv1.2" "$((port + 2000)):TLSv1.2:TLSv1.2"
}

# start NAME BIN PORT [optional]: starts the server pinned to the server CPU, waits until it answers; sets
# started_pid. A server that does not start ends the script, unless "optional" (h2o): then it returns 1.
start() {
    local name=$1 bin=$2 port=$3 optional=${4:-}
    if [ "$name" = h2o ]; then
        taskset -c "$srv_cpu" "$bin" -c "$prefix/conf/h2o.conf" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    else
        taskset -c "$srv_cpu" "$bin" -p "$prefix/" -c "$prefix/conf/$name.conf" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    fi
    started_pid=$!
    pids+=("$started_pid")
    for _ in $(seq 100); do
        if ! kill -0 "$started_pid" 2>/dev/null; then
            echo "bench: $name ($bin) exited at start:" >&2
            cat "$prefix/logs/$name.out" "$prefix/logs/$name-error.log" 2>/dev/null | tail -20 >&2
            [ -n "$optional" ] && return 1
            exit 1
        fi
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/small.html" && return 0
        sleep 0.1
    done
    echo "bench: $name does not answer on 127.0.0.1:$port" >&2
    [ -n "$optional" ] && return 1
    exit 1
}

# check NAME PORT [optional]: every file answers 200 with its exact size (a fast 404 must not pass for a fast
# server), /hello and /log/ too; failing ends the script, unless "optional" (h2o): then it returns 1
check() {
    local name=$1 port=$2 optional=${3:-} f got want
    for f in small.html 10k.dat 1m.dat gz/40k.html; do
        want="200 $(stat -c %s "$prefix/html/$f")"
        got=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{size_download}' "http://127.0.0.1:$port/$f")
        if [ "$got" != "$want" ]; then
            echo "bench: $name: GET /$f gave \"$got\", want \"$want\"" >&2
            [ -n "$optional" ] && return 1
            exit 1
        fi
    done
    want="200 $(stat -c %s "$prefix/html/small.html")"
    got=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{size_download}' "http://127.0.0.1:$port/log/small.html")
    if [ "$got" != "$want" ]; then
        echo "bench: $name: GET /log/small.html gave \"$got\", want \"$want\"" >&2
        [ -n "$optional" ] && return 1
        exit 1
    fi
    got=$(curl -s --max-time 5 -w ' %{http_code}' "http://127.0.0.1:$port/hello")
    if [ "$got" != "Hello, World
 200" ]; then
        echo "bench: $name: GET /hello gave \"$got\", want the 13 bytes \"Hello, World\" and a newline, and 200" >&2
        [ -n "$optional" ] && return 1
        exit 1
    fi
    # gzip-40k must really be compressed (and decompress to the file)
    if ! curl -s --max-time 5 -H 'Accept-Encoding: gzip' -D "$prefix/logs/$name-gz.head" "http://127.0.0.1:$port/gz/40k.html" |
        gzip -dc 2>/dev/null | cmp -s - "$prefix/html/gz/40k.html" ||
        ! grep -qi '^content-encoding: gzip' "$prefix/logs/$name-gz.head"; then
        echo "bench: $name: GET /gz/40k.html with Accept-Encoding: gzip is not the gzipped file" >&2
        [ -n "$optional" ] && return 1
        exit 1
    fi
    return 0
}

# tree_mem PID FIELD: sum of FIELD (VmRSS, VmHWM) in kB over PID and its children
tree_mem() {
    local p sum=0 v kids
    kids=$(pgrep -P "$1" 2>/dev/null)
    for p in "$1" $kids; do
        v=$(awk -v f="$2:" '$1 == f { print $2 }' "/proc/$p/status" 2>/dev/null)
        sum=$((sum + ${v:-0}))
    done
    echo "$sum"
}

# run_client TOOL CONC URL HEADER LOG: prints "REQS_PER_SEC FAILED REQUESTS" (FAILED counts socket errors,
# non-2xx/3xx and, for ab, length mismatches; REQUESTS the requests completed); "0 ERR 0" when the client aborted
run_client() {
    local tool=$1 conc=$2 url=$3 hdr=$4 log=$5 rc
    local hargs=()
    [ -n "$hdr" ] && hargs=(-H "$hdr")
    if [ "$tool" = wrk ]; then
        timeout $((secs * 3 + 30)) taskset -c "$cli_cpu" wrk -t1 -c"$conc" -d"${secs}s" --timeout 5s "${hargs[@]}" "$url" \
            >"$log" 2>&1 &
        echo $! >"$prefix/client.pid"
        wait $!
        rc=$?
        awk -v rc="$rc" '
            /^Requests\/sec:/ { rps = $2 }
            / requests in / { done = $1 }
            /Socket errors:/ { gsub(",", ""); err += $4 + $6 + $8 + $10 }
            /Non-2xx or 3xx responses:/ { err += $NF }
            END { if (rps == "" || rc != 0) print "0 ERR 0"; else printf "%.0f %d %d\n", rps, err, done }' "$log"
    else
        local n=$reqs
        [ "$n" -lt "$conc" ] && n=$conc
        (ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
         exec timeout $((n / 100 + 120)) taskset -c "$cli_cpu" ab -q -r -s 30 -n "$n" -c "$conc" "${hargs[@]}" "$url") \
            >"$log" 2>&1 &
        echo $! >"$prefix/client.pid"
        wait $!
        rc=$?
        awk -v rc="$rc" '
            /^Requests per second:/ { rps = $4 }
            /^Failed requests:/ { err += $3 }
            /^Non-2xx responses:/ { err += $3 }
            /^Complete requests:/ { done = $3 }
            END { if (rps == "" || rc != 0) print "0 ERR 0"; else printf "%.0f %d %d\n", rps, err, done }' "$log"
    fi
}

make_docroot
# one ECDSA P-256 certificate for the TLS scenarios (as a CDN would serve), made for this run only
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -keyout "$prefix/conf/bench.key" -out "$prefix/conf/bench.crt" >/dev/null 2>&1 ||
    { echo "bench: openssl could not make a certificate" >&2; exit 1; }
server_conf nginx "$nginx_port" "$nginx_master" >"$prefix/conf/nginx.conf"
server_conf hayate "$hayate_port" "$hy_master" >"$prefix/conf/hayate.conf"
if ! "$hy_bin" -t -q -p "$prefix/" -c "$prefix/conf/hayate.conf" >"$prefix/logs/hayate-t.out" 2>&1; then
    echo "bench: hayate rejects the benchmark config:" >&2
    cat "$prefix/logs/hayate-t.out" >&2
    exit 1
fi

start nginx "$nginx_bin" "$nginx_port"
nginx_pid=$started_pid
start hayate "$hy_bin" "$hayate_port"
hayate_pid=$started_pid
check nginx "$nginx_port"
check hayate "$hayate_port"
# h2o, the second reference: optional — missing, not starting or failing the check leaves its columns at "—"
h2o_pid=""
h2o_note=""
if [ -x "$h2o_bin" ]; then
    chmod 777 "$prefix/logs" # h2o's thread runs as nobody when started as root
    h2o_conf "$h2o_port" >"$prefix/conf/h2o.conf"
    if ! "$h2o_bin" -t -c "$prefix/conf/h2o.conf" >"$prefix/logs/h2o-t.out" 2>&1; then
        h2o_note="h2o ($h2o_bin) rejects its config: $(tail -1 "$prefix/logs/h2o-t.out"); its columns are empty"
    elif ! start h2o "$h2o_bin" "$h2o_port" optional; then
        h2o_note="h2o ($h2o_bin) did not start; its columns are empty"
    else
        h2o_pid=$started_pid
        if ! check h2o "$h2o_port" optional; then
            h2o_note="h2o ($h2o_bin) failed the content check; its columns are empty"
            kill -TERM "$h2o_pid" 2>/dev/null
            h2o_pid=""
        fi
    fi
else
    h2o_note="no h2o at $h2o_bin (Debian package h2o); its columns are empty"
fi
[ -n "$h2o_note" ] && echo "bench: $h2o_note" >&2

nginx_ver=$("$nginx_bin" -v 2>&1 | head -1)
hy_ver=$("$hy_bin" -v 2>&1 | head -1)
h2o_ver=$([ -n "$h2o_pid" ] && "$h2o_bin" -v 2>&1 | head -1)
echo "bench: nginx: $nginx_ver ($nginx_bin, master_process $nginx_master); hayate: $hy_ver ($hy_bin, master_process $hy_master)${h2o_pid:+; h2o: $h2o_ver ($h2o_bin, num-threads 1)}" >&2
echo "bench: servers on CPU $srv_cpu, load generator on CPU $cli_cpu; wrk ${secs}s, ab ${reqs} requests, $rounds round(s)" >&2

hz=$(getconf CLK_TCK)
# the tables: each server's median over the rounds; each ratio the median of the per-round ratios (the servers
# run back to back within a round: the machine's speed drifts between rounds), with its spread (min–max of the
# per-round ratios) when there is more than one round
sp= sl= med_of="1 round"
[ "$rounds" -gt 1 ] && sp=" spread (min–max) |" sl="---:|" med_of="median of $rounds rounds"
table="| scenario | nginx req/s (median) | hayate req/s (median) | h2o req/s (median) | ratio (hayate/nginx, $med_of) |$sp ratio (hayate/h2o, $med_of) |$sp failed (nginx / hayate / h2o, all rounds) |
|---|---:|---:|---:|---:|$sl---:|$sl---|"
cputable="| scenario | nginx CPU µs/req (median) | hayate CPU µs/req (median) | h2o CPU µs/req (median) | CPU hayate/nginx ($med_of) |$sp CPU hayate/h2o ($med_of) |$sp
|---|---:|---:|---:|---:|$sl---:|$sl"
cmds=""
# measure WHO: one run of the scenario ($id $tool $conc $path $hdr) against WHO, for bench_rounds:
# "REQ/S CPU_µs_PER_REQUEST FAILED" ("n/a n/a ERR" when the client failed)
measure() {
    local who=$1 port pid url t0 t1 rps fail done_ log
    case $who in
    nginx) port=$nginx_port pid=$nginx_pid ;;
    hayate) port=$hayate_port pid=$hayate_pid ;;
    h2o) port=$h2o_port pid=$h2o_pid ;;
    esac
    url="http://127.0.0.1:$port$path"
    case "$path" in
    tls:*) url="https://127.0.0.1:$((port + 1000))${path#tls:}" ;;
    tls12:*) url="https://127.0.0.1:$((port + 2000))${path#tls12:}" ;;
    esac
    log="$prefix/logs/$id-$who-$bench_round.txt"
    t0=$(cpu_ticks "$pid")
    # in the background + wait, so that INT/TERM interrupt the run at once (the EXIT trap cleans up)
    run_client "$tool" "$conc" "$url" "$hdr" "$log" >"$prefix/result" &
    wait $!
    t1=$(cpu_ticks "$pid")
    read -r rps fail done_ <"$prefix/result"
    sleep 1 # let the last connections close before the next run
    if [ "$fail" = ERR ]; then
        echo "bench: $id: the client failed against $who; its output:" >&2
        tail -5 "$log" >&2
        echo "n/a n/a ERR"
    elif [ "${done_:-0}" -gt 0 ]; then
        awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$done_" -v r="$rps" -v f="$fail" 'BEGIN { printf "%s %.2f %s\n", r, t / hz * 1e6 / n, f }'
    else
        echo "$rps n/a $fail"
    fi
}
# med WHO FIELD FORMAT: WHO's median of FIELD (1 req/s, 2 CPU) over the rounds in $rows
med() { bench_median "$rows" "$1" "$2" "$3" | cut -d' ' -f1; }
# rat DEN FIELD: "| MEDIAN |" of the per-round ratios hayate/DEN of FIELD, and "SPREAD |" after it when rounds > 1
rat() {
    local m lo hi
    read -r m lo hi _ < <(bench_ratio "$rows" hayate "$1" "$2")
    printf '%s |' "$m"
    [ "$rounds" -gt 1 ] && printf ' %s |' "$(bench_spread "$lo" "$hi")"
}
for s in "${SCENARIOS[@]}"; do
    IFS='|' read -r id label tool conc path hdr <<<"$s"
    if [ -n "$only" ] && ! [[ ",$only," == *",$id,"* ]]; then
        continue
    fi
    echo "bench: $id: $label ..." >&2
    servers=(nginx hayate)
    [ -n "$h2o_pid" ] && [[ "$H2O_SKIP" != *",$id,"* ]] && servers=(nginx hayate h2o)
    # rounds (bench/lib.sh bench_rounds): the servers back to back, odd rounds nginx hayate h2o, even rounds the
    # reverse; failures are summed over the rounds
    rows="$prefix/logs/$id-rounds.txt"
    bench_rounds "$rounds" "$rows" measure "${servers[@]}"
    if [ ${#servers[@]} = 3 ]; then
        o_rps=$(med h2o 1 %.0f) o_fail=$(bench_sum "$rows" h2o 3) o_cpu=$(med h2o 2 %.2f)
        o_ratio=$(rat h2o 1) o_cratio=$(rat h2o 2)
    else
        o_rps="—" o_fail="—" o_cpu="—" o_ratio="— |" o_cratio="— |"
        [ "$rounds" -gt 1 ] && o_ratio="— | — |" o_cratio="— | — |"
    fi
    table="$table
| $label | $(med nginx 1 %.0f) | $(med hayate 1 %.0f) | $o_rps | $(rat nginx 1) $o_ratio $(bench_sum "$rows" nginx 3) / $(bench_sum "$rows" hayate 3) / $o_fail |"
    cputable="$cputable
| $label | $(med nginx 2 %.2f) | $(med hayate 2 %.2f) | $o_cpu | $(rat nginx 2) $o_cratio"
    shown="http://127.0.0.1:PORT$path"
    case "$path" in
    tls:*) shown="https://127.0.0.1:PORT+1000${path#tls:}" ;;
    tls12:*) shown="https://127.0.0.1:PORT+2000${path#tls12:}" ;;
    esac
    if [ "$tool" = wrk ]; then
        cmds="$cmds
    taskset -c $cli_cpu wrk -t1 -c$conc -d${secs}s --timeout 5s${hdr:+ -H '$hdr'} $shown"
    else
        n=$reqs; [ "$n" -lt "$conc" ] && n=$conc
        cmds="$cmds
    (ulimit -n 20000; taskset -c $cli_cpu ab -q -r -s 30 -n $n -c $conc${hdr:+ -H '$hdr'} $shown)"
    fi
done

mem="| server | RSS after the run | peak RSS (VmHWM) | processes |
|---|---:|---:|---:|"
for who in nginx hayate h2o; do
    case $who in
    nginx) p=$nginx_pid ;;
    hayate) p=$hayate_pid ;;
    h2o) p=$h2o_pid ;;
    esac
    [ -n "$p" ] || continue
    if [ $who = h2o ]; then # h2o's process only: its crash-handler helper (a perl script, idle) is not counted
        rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$p/status" 2>/dev/null)
        hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$p/status" 2>/dev/null)
        rss=${rss:-0} hwm=${hwm:-0} np=1
    else
        rss=$(tree_mem "$p" VmRSS)
        hwm=$(tree_mem "$p" VmHWM)
        np=$((1 + $(pgrep -P "$p" 2>/dev/null | wc -l)))
    fi
    mem="$mem
| $who | $((rss / 1024)).$(((rss % 1024) * 10 / 1024)) MiB | $((hwm / 1024)).$(((hwm % 1024) * 10 / 1024)) MiB | $np |"
done
cpunote="CPU per request: utime+stime of the server's processes (nginx and hayate: master and worker; h2o: its one
process and its idle crash-handler helper) from /proc over the measured run, divided by the requests the client
completed; clock tick 1/$hz s. $rounds round(s), the servers back to back in each (the order reversed every other
round): req/s and µs are each server's median over the rounds, a ratio is the median of the per-round ratios$([ "$rounds" -gt 1 ] && echo ",
spread the lowest and highest of them"). A CPU ratio below 1 means hayate spends less CPU per request."

bad_log=""
for who in nginx hayate; do
    c=$(grep -cE '\[(alert|crit|emerg)\]' "$prefix/logs/$who-error.log" 2>/dev/null)
    [ "${c:-0}" -gt 0 ] && bad_log="$bad_log $who:${c}"
done

echo
echo "$table"
echo
echo "$cputable"
echo
echo "$cpunote"
echo
echo "$mem"
[ -n "${hy_note:-}" ] && echo && echo "Note: $hy_note"
[ -n "$h2o_note" ] && echo && echo "Note: $h2o_note"
[ -n "$bad_log" ] && echo && echo "Warning: [alert]/[crit]/[emerg] lines in the error logs:$bad_log (see --keep)"

# HTTP/2 (bench/h2.sh): hayate, nginx and h2o (Debian's 2.2) under h2load over TLS and h2c, req/s and server CPU
# per request; BENCH_H2=0 skips it (and --only does)
h2table=""
if [ "${BENCH_H2:-1}" = 1 ] && [ -z "$only" ]; then
    h2table=$(HY_BIN="$hy_bin" NGINX_BIN="$nginx_bin" H2O_BIN="$h2o_bin" BENCH_SERVER_CPU="$srv_cpu" BENCH_CLIENT_CPU="$cli_cpu" \
        BENCH_H2_REQUESTS=$([ "$quick" = 1 ] && echo 20000 || echo 200000) "$here/h2.sh")
    echo
    echo "$h2table"
fi
# TLS with h2o beside nginx (bench/tls.sh): HTTPS keep-alive and TLS 1.3/1.2 handshakes, req/s and server CPU per
# request for hayate, nginx, nginx with open_file_cache and h2o; skipped with BENCH_H2=0 and --only
tlstable=""
if [ "${BENCH_H2:-1}" = 1 ] && [ -z "$only" ]; then
    tlstable=$(HY_BIN="$hy_bin" NGINX_BIN="$nginx_bin" H2O_BIN="$h2o_bin" BENCH_SERVER_CPU="$srv_cpu" BENCH_CLIENT_CPU="$cli_cpu" \
        "$here/tls.sh" "$([ "$quick" = 1 ] && echo 3 || echo 10)" "$([ "$quick" = 1 ] && echo 1000 || echo 4000)")
    echo
    echo "$tlstable"
fi

if [ -n "$out" ]; then
    rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "no commit")
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    {
        echo
        echo "### $(date -u '+%Y-%m-%d %H:%M UTC') — $rev$([ "$quick" = 1 ] && echo ' (quick)')"
        echo
        echo "Rounds: $rounds (servers back to back in each; medians of each server's req/s and CPU per request, ratios the median of the per-round ratios, failures summed); wrk ${secs}s per run, ab $reqs requests per run."
        echo "Machine: $ncpu CPUs ($cpu), $(uname -sr); servers pinned to CPU $srv_cpu, load generator to CPU $cli_cpu;"
        echo "load average at the start: $load_start."
        echo "nginx: $nginx_ver, master_process $nginx_master, 1 worker. hayate: $hy_ver ($hy_bin), master_process $hy_master."
        [ -n "$h2o_pid" ] && echo "h2o: $h2o_ver ($h2o_bin), num-threads 1 (config: bench/run.sh h2o_conf)."
        [ -n "${hy_note:-}" ] && echo "Note: $hy_note."
        [ -n "$h2o_note" ] && echo "Note: $h2o_note."
        echo
        echo "$table"
        echo
        echo "$cputable"
        echo
        echo "$cpunote"
        echo
        echo "$mem"
        [ -n "$h2table" ] && echo && echo "$h2table"
        [ -n "$tlstable" ] && echo && echo "$tlstable"
        [ -n "$bad_log" ] && echo && echo "Warning: [alert]/[crit]/[emerg] lines in the error logs:$bad_log"
        echo
        echo "Commands (PORT = $nginx_port for nginx, $hayate_port for hayate${h2o_pid:+, $h2o_port for h2o}):"
        echo
        echo "$cmds"
    } >>"$out"
    echo >&2
    echo "bench: appended to $out" >&2
fi
