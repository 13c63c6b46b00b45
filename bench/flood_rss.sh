#!/bin/bash
# bench/flood_rss.sh — RSS after connection floods (issue 17): ROUNDS times, N clients (default 5,000) each open a
# connection, send half a request head and stop; the server closes them at client_header_timeout (3s). The
# server's RSS (VmRSS summed over master and worker, from /proc) is taken before the first round, with the N
# connections open, and after each round once every connection is gone and RSS has settled. hayate first, then
# nginx with the same configuration. RSS should come back near where it started, round after round.
#
#   bench/flood_rss.sh [--keep] [N] [ROUNDS]
#
# Both run master_process on, one worker pinned to $FLOOD_SERVER_CPU (0), worker_connections N + 1024,
# worker_rlimit_nofile 2N + 1024; the client (python3, selectors) runs on $FLOOD_CLIENT_CPU (1). HY_BIN,
# NGINX_BIN as in bench/run.sh. The half head carries a FLOOD_COOKIE_BYTES (2000) cookie, like a browser's.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
keep=0
n=5000
rounds=3
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    ''|*[!0-9]*) echo "flood: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ ${#args[@]} -ge 1 ] && n=${args[0]}
[ ${#args[@]} -ge 2 ] && rounds=${args[1]}
hy_bin=${HY_BIN:-$root/build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
srv_cpu=${FLOOD_SERVER_CPU:-0}
cli_cpu=${FLOOD_CLIENT_CPU:-1}
python=${PYTHON:-/usr/bin/python3}

. "$here/lib.sh"

pkgs=""
command -v taskset >/dev/null || pkgs="$pkgs util-linux"
command -v curl >/dev/null || pkgs="$pkgs curl"
[ -x "$python" ] || pkgs="$pkgs python3"
[ -x "$nginx_bin" ] || { [ "$nginx_bin" = /usr/sbin/nginx ] && pkgs="$pkgs nginx"; }
# shellcheck disable=SC2086
[ -z "$pkgs" ] || "$root/tools/install-deps.sh" $pkgs || exit 1
[ -x "$hy_bin" ] || { echo "flood: hayate binary not found at $hy_bin" >&2; exit 1; }
[ -x "$nginx_bin" ] || { echo "flood: nginx not found at $nginx_bin" >&2; exit 1; }
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((n + 100)) ] && [ "$(id -u)" != 0 ]; then
    echo "flood: the client needs $((n + 100)) descriptors, the hard limit is $hard" >&2
    exit 1
fi
hy_port=$(free_port 18790)
nginx_port=$(free_port 18791 "$hy_port")

prefix=$(mktemp -d /tmp/hayate-flood.XXXXXX) || exit 1
chmod 755 "$prefix"
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html"
head -c 612 /dev/zero | tr '\0' x >"$prefix/html/small.html"
chmod 644 "$prefix/html/small.html"

pids=()
cleanup() { bench_cleanup flood; }
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$prefix/client.py" <<'EOF'
"""client.py PID PORT N ROUNDS: RSS (KiB) of PID's process tree before, then per round with N half-sent
requests open and after the server closed them all. Prints: before, then "open after" per round."""
import os, resource, selectors, socket, sys, time

pid, port, n, rounds = (int(a) for a in sys.argv[1:5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = n + 256
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want) if os.geteuid() == 0 else hard))

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:  # a process that went away meanwhile
        return ''

def tree_rss():
    kids = [p for p in os.listdir('/proc') if p.isdigit() and read('/proc/%s/stat' % p).rsplit(')', 1)[-1].split()[1:2] == [str(pid)]]
    total = 0
    for p in [str(pid)] + kids:
        for line in read('/proc/%s/status' % p).splitlines():
            if line.startswith('VmRSS:'):
                total += int(line.split()[1])
    return total

def settled_rss():
    """RSS once it has not changed for 2 s (at most 15 s)."""
    last, since, end = tree_rss(), time.monotonic(), time.monotonic() + 15
    while time.monotonic() < end and time.monotonic() - since < 2:
        time.sleep(0.2)
        r = tree_rss()
        if r != last:
            last, since = r, time.monotonic()
    return last

# half a browser-sized head: the request line, a few fields and part of a cookie, never the blank line
HALF = (b'GET /small.html HTTP/1.1\r\nHost: localhost\r\nUser-Agent: flood/1.0\r\nAccept: */*\r\n'
        b'Cookie: s=' + b'c' * int(os.environ.get('FLOOD_COOKIE_BYTES', '2000')))

def flood():
    socks = []
    sel = selectors.DefaultSelector()
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(('127.0.0.1', port))
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE)
    todo, deadline = n, time.monotonic() + 60
    while todo and time.monotonic() < deadline:  # send the half head on each
        for key, ev in sel.select(1):
            key.fileobj.send(HALF)
            sel.modify(key.fileobj, selectors.EVENT_READ)
            todo -= 1
    if todo:
        raise SystemExit('%d connections not established' % todo)
    time.sleep(1)  # let the server read them all
    open_rss = tree_rss()
    left, deadline = n, time.monotonic() + 60
    while left and time.monotonic() < deadline:  # wait for the server to close each (client_header_timeout)
        for key, ev in sel.select(1):
            try:
                d = key.fileobj.recv(65536)
            except OSError:
                d = b''
            if not d:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                left -= 1
    sel.close()
    for s in socks:
        s.close()
    if left:
        raise SystemExit('%d connections not closed by the server' % left)
    return open_rss, settled_rss()

print(settled_rss())
for r in range(rounds):
    print(*flood())
EOF

# conf NAME PORT
conf() {
    cat <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile $((2 * n + 1024));
pid $prefix/logs/$1.pid;
error_log $prefix/logs/$1-error.log warn;
events {
    worker_connections $((n + 1024));
}
http {
    default_type text/html;
    access_log off;
    client_header_timeout 3s;
    server {
        listen 127.0.0.1:$2;
        root $prefix/html;
    }
}
EOF
}

measure() {
    local name=$1 bin=$2 port=$3 cf="$prefix/conf/$1.conf" pid
    conf "$name" "$port" >"$cf"
    taskset -c "$srv_cpu" "$bin" -p "$prefix/" -c "$cf" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { echo "flood: $name exited at start:" >&2; tail "$prefix/logs/$name.out" >&2; exit 1; }
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/small.html")" = 200 ] && break
        sleep 0.1
    done
    timeout 600 taskset -c "$cli_cpu" "$python" "$prefix/client.py" "$pid" "$port" "$n" "$rounds" \
        >"$prefix/logs/$name-client.txt" 2>&1 &
    echo $! >"$prefix/client.pid"
    wait $!
    local rc=$?
    : >"$prefix/client.pid"
    bench_stop flood "$pid"
    if [ "$rc" != 0 ]; then
        echo "flood: the client failed against $name:" >&2
        tail -5 "$prefix/logs/$name-client.txt" >&2
        return 1
    fi
    cat "$prefix/logs/$name-client.txt"
}

echo "flood: $rounds rounds of $n abandoned half-headers; server on CPU $srv_cpu, client on CPU $cli_cpu" >&2
hy=$(measure hayate "$hy_bin" "$hy_port") || hy=""
ng=$(measure nginx "$nginx_bin" "$nginx_port") || ng=""

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
row() {
    local name=$1 data=$2
    [ -n "$data" ] || { echo "| $name | ERR | |"; return; }
    local before line r=0 cells=""
    before=$(echo "$data" | head -1)
    while read -r o a; do
        r=$((r + 1))
        cells="$cells $(mib "$o") → $(mib "$a") |"
    done < <(echo "$data" | tail -n +2)
    echo "| $name | $(mib "$before") |$cells"
}
echo
hdr="| server | RSS before |"
sep="|---|---:|"
for r in $(seq "$rounds"); do hdr="$hdr round $r: with $n open → after |"; sep="$sep---:|"; done
echo "$hdr"
echo "$sep"
row hayate "$hy"
row nginx "$ng"
echo
echo "RSS = VmRSS of master + worker. Command: bench/flood_rss.sh $n $rounds (worker_processes 1, client_header_timeout 3s,"
echo "worker_connections $((n + 1024)); server taskset -c $srv_cpu, client taskset -c $cli_cpu)"
