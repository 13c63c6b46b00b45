#!/bin/bash
# bench/run.sh — hayate beside nginx on loopback, same config, same core. `make bench` builds, then runs this.
#
#   bench/run.sh [--quick] [--out FILE] [--only ID[,ID...]] [--list] [--keep]
#
# Both servers run one worker pinned to CPU $BENCH_SERVER_CPU (0); the load generator runs pinned to
# $BENCH_CLIENT_CPU (1). Prints a markdown table (req/s, ratio hayate/nginx, failed requests) and each
# server's memory after the run; with --out FILE the same is appended to FILE as a dated section
# (docs/BENCHMARKS.md). See docs/BENCHMARKS.md for what each scenario means.
#
# Environment:
#   HY_BIN          hayate binary (default: build/hayate); set it to /usr/sbin/nginx to test this script
#   NGINX_BIN       reference nginx (default: /usr/sbin/nginx, installed from Debian when missing)
#   BENCH_SECONDS   duration of each wrk run (default 10; --quick: 2)
#   BENCH_REQUESTS  requests of each ab run (default 20000; --quick: 2000)
#   BENCH_QUICK=1   same as --quick;  BENCH_OUT=FILE same as --out FILE;  BENCH_ONLY=ids same as --only
#   BENCH_NGINX_PORT / BENCH_HAYATE_PORT   loopback ports (default: first free from 18480 / 18481)
#   BENCH_SERVER_CPU / BENCH_CLIENT_CPU    CPUs for servers / load generator (default 0 / 1)
#   BENCH_HY_MASTER  master_process for hayate: on (default, as nginx) or off
#   BENCH_NGINX_MASTER  master_process for nginx: on (default, as deployed) or off
#   BENCH_WORKER_CONNECTIONS  worker_connections for both (default 4096)
#   BENCH_ROUNDS    runs per scenario and server, alternating which server goes first; best req/s kept (default 1)
#
# Adding a scenario: add one line to SCENARIOS below (id|label|tool|concurrency|path|request header; a path
# "tls:/x" is fetched over HTTPS from the TLS listener, "tls12:/x" from the one limited to TLS 1.2),
# put the file it fetches in make_docroot(), and if it needs configuration add it to server_conf() — both
# servers get the same text. tool is "wrk" (keep-alive, runs BENCH_SECONDS) or "ab" (one connection per
# request, BENCH_REQUESTS requests, run with `ulimit -n 20000` for ab only).
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

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

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
# port_busy PORT: true when something accepts connections on 127.0.0.1:PORT
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# free_port START: the first port from START up that nothing listens on
free_port() {
    local p=$1
    while port_busy "$p" || [ "$p" = "${2:-}" ]; do p=$((p + 1)); done
    echo "$p"
}
nginx_port=${BENCH_NGINX_PORT:-$(free_port 18480)}
hayate_port=${BENCH_HAYATE_PORT:-$(free_port 18481 "$nginx_port")}
for p in "$nginx_port" "$hayate_port"; do
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

# start NAME BIN PORT: starts the server pinned to the server CPU, waits until it answers; sets started_pid
start() {
    local name=$1 bin=$2 port=$3
    taskset -c "$srv_cpu" "$bin" -p "$prefix/" -c "$prefix/conf/$name.conf" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    for _ in $(seq 100); do
        if ! kill -0 "$started_pid" 2>/dev/null; then
            echo "bench: $name ($bin) exited at start:" >&2
            cat "$prefix/logs/$name.out" "$prefix/logs/$name-error.log" 2>/dev/null | tail -20 >&2
            exit 1
        fi
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/small.html" && return 0
        sleep 0.1
    done
    echo "bench: $name does not answer on 127.0.0.1:$port" >&2
    exit 1
}

# check NAME PORT: every file answers 200 with its exact size (a fast 404 must not pass for a fast server)
check() {
    local name=$1 port=$2 f got want
    for f in small.html 10k.dat 1m.dat gz/40k.html; do
        want="200 $(stat -c %s "$prefix/html/$f")"
        got=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{size_download}' "http://127.0.0.1:$port/$f")
        if [ "$got" != "$want" ]; then
            echo "bench: $name: GET /$f gave \"$got\", want \"$want\"" >&2
            exit 1
        fi
    done
    # gzip-40k must really be compressed (and decompress to the file)
    if ! curl -s --max-time 5 -H 'Accept-Encoding: gzip' -D "$prefix/logs/$name-gz.head" "http://127.0.0.1:$port/gz/40k.html" |
        gzip -dc 2>/dev/null | cmp -s - "$prefix/html/gz/40k.html" ||
        ! grep -qi '^content-encoding: gzip' "$prefix/logs/$name-gz.head"; then
        echo "bench: $name: GET /gz/40k.html with Accept-Encoding: gzip is not the gzipped file" >&2
        exit 1
    fi
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

# run_client TOOL CONC URL HEADER LOG: prints "REQS_PER_SEC FAILED" (FAILED counts socket errors, non-2xx/3xx
# and, for ab, length mismatches); "0 ERR" when the client aborted
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
            /Socket errors:/ { gsub(",", ""); err += $4 + $6 + $8 + $10 }
            /Non-2xx or 3xx responses:/ { err += $NF }
            END { if (rps == "" || rc != 0) print "0 ERR"; else printf "%.0f %d\n", rps, err }' "$log"
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
            END { if (rps == "" || rc != 0) print "0 ERR"; else printf "%.0f %d\n", rps, err }' "$log"
    fi
}

# add_fail A B: failure counts summed; ERR (client aborted) wins
add_fail() {
    if [ "$1" = ERR ] || [ "$2" = ERR ]; then echo ERR; else echo $(($1 + $2)); fi
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

nginx_ver=$("$nginx_bin" -v 2>&1 | head -1)
hy_ver=$("$hy_bin" -v 2>&1 | head -1)
echo "bench: nginx: $nginx_ver ($nginx_bin, master_process $nginx_master); hayate: $hy_ver ($hy_bin, master_process $hy_master)" >&2
echo "bench: servers on CPU $srv_cpu, load generator on CPU $cli_cpu; wrk ${secs}s, ab ${reqs} requests, $rounds round(s)" >&2

table="| scenario | nginx req/s | hayate req/s | ratio (hayate/nginx) | failed (nginx / hayate) |
|---|---:|---:|---:|---|"
cmds=""
for s in "${SCENARIOS[@]}"; do
    IFS='|' read -r id label tool conc path hdr <<<"$s"
    if [ -n "$only" ] && ! [[ ",$only," == *",$id,"* ]]; then
        continue
    fi
    echo "bench: $id: $label ..." >&2
    # rounds alternate which server goes first; the best req/s of the rounds is kept, failures are summed
    n_rps=0; h_rps=0; n_fail=0; h_fail=0
    for r in $(seq "$rounds"); do
        for who in $([ $((r % 2)) = 1 ] && echo "nginx hayate" || echo "hayate nginx"); do
            port=$nginx_port
            [ $who = hayate ] && port=$hayate_port
            # in the background + wait, so that INT/TERM interrupt the run at once (the EXIT trap cleans up)
            url="http://127.0.0.1:$port$path"
            case "$path" in
            tls:*) url="https://127.0.0.1:$((port + 1000))${path#tls:}" ;;
            tls12:*) url="https://127.0.0.1:$((port + 2000))${path#tls12:}" ;;
            esac
            run_client "$tool" "$conc" "$url" "$hdr" "$prefix/logs/$id-$who-$r.txt" \
                >"$prefix/result" &
            wait $!
            read -r rps fail <"$prefix/result"
            sleep 1 # let the last connections close before the next run
            if [ $who = nginx ]; then
                [ "$rps" -gt "$n_rps" ] && n_rps=$rps
                n_fail=$(add_fail "$n_fail" "$fail")
            else
                [ "$rps" -gt "$h_rps" ] && h_rps=$rps
                h_fail=$(add_fail "$h_fail" "$fail")
            fi
            if [ "$fail" = ERR ]; then
                echo "bench: $id: the client failed against $who; its output:" >&2
                tail -5 "$prefix/logs/$id-$who-$r.txt" >&2
            fi
        done
    done
    if [ "$n_rps" -gt 0 ] && [ "$h_rps" -gt 0 ]; then
        ratio=$(awk -v h="$h_rps" -v n="$n_rps" 'BEGIN { printf "%.2f", h / n }')
    else
        ratio="n/a"
    fi
    table="$table
| $label | $n_rps | $h_rps | $ratio | $n_fail / $h_fail |"
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
for who in nginx hayate; do
    p=$([ $who = nginx ] && echo "$nginx_pid" || echo "$hayate_pid")
    rss=$(tree_mem "$p" VmRSS)
    hwm=$(tree_mem "$p" VmHWM)
    np=$((1 + $(pgrep -P "$p" 2>/dev/null | wc -l)))
    mem="$mem
| $who | $((rss / 1024)).$(((rss % 1024) * 10 / 1024)) MiB | $((hwm / 1024)).$(((hwm % 1024) * 10 / 1024)) MiB | $np |"
done

bad_log=""
for who in nginx hayate; do
    c=$(grep -cE '\[(alert|crit|emerg)\]' "$prefix/logs/$who-error.log" 2>/dev/null)
    [ "${c:-0}" -gt 0 ] && bad_log="$bad_log $who:${c}"
done

echo
echo "$table"
echo
echo "$mem"
[ -n "${hy_note:-}" ] && echo && echo "Note: $hy_note"
[ -n "$bad_log" ] && echo && echo "Warning: [alert]/[crit]/[emerg] lines in the error logs:$bad_log (see --keep)"

# HTTP/2 (bench/h2.sh): hayate, nginx and h2o (Debian's 2.2) under h2load over TLS and h2c, req/s and server CPU
# per request; BENCH_H2=0 skips it (and --only does)
h2table=""
if [ "${BENCH_H2:-1}" = 1 ] && [ -z "$only" ]; then
    h2table=$(HY_BIN="$hy_bin" NGINX_BIN="$nginx_bin" BENCH_SERVER_CPU="$srv_cpu" BENCH_CLIENT_CPU="$cli_cpu" \
        BENCH_H2_REQUESTS=$([ "$quick" = 1 ] && echo 20000 || echo 200000) "$here/h2.sh")
    echo
    echo "$h2table"
fi
# TLS with h2o beside nginx (bench/tls.sh): HTTPS keep-alive and TLS 1.3/1.2 handshakes, req/s and server CPU per
# request for hayate, nginx, nginx with open_file_cache and h2o; skipped with BENCH_H2=0 and --only
tlstable=""
if [ "${BENCH_H2:-1}" = 1 ] && [ -z "$only" ]; then
    tlstable=$(HY_BIN="$hy_bin" NGINX_BIN="$nginx_bin" BENCH_SERVER_CPU="$srv_cpu" BENCH_CLIENT_CPU="$cli_cpu" \
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
        echo "Rounds: $rounds (best req/s kept, failures summed); wrk ${secs}s per run, ab $reqs requests per run."
        echo "Machine: $ncpu CPUs ($cpu), $(uname -sr); servers pinned to CPU $srv_cpu, load generator to CPU $cli_cpu."
        echo "nginx: $nginx_ver, master_process $nginx_master, 1 worker. hayate: $hy_ver ($hy_bin), master_process $hy_master."
        [ -n "${hy_note:-}" ] && echo "Note: $hy_note."
        echo
        echo "$table"
        echo
        echo "$mem"
        [ -n "$h2table" ] && echo && echo "$h2table"
        [ -n "$tlstable" ] && echo && echo "$tlstable"
        [ -n "$bad_log" ] && echo && echo "Warning: [alert]/[crit]/[emerg] lines in the error logs:$bad_log"
        echo
        echo "Commands (PORT = $nginx_port for nginx, $hayate_port for hayate):"
        echo
        echo "$cmds"
    } >>"$out"
    echo >&2
    echo "bench: appended to $out" >&2
fi
