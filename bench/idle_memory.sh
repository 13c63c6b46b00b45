#!/bin/bash
# bench/idle_memory.sh — memory per idle keep-alive connection: N clients (default 10,000) each make one request
# and then stay connected, idle; the server's RSS (VmRSS summed over the master and its workers, from /proc) is
# taken before and after, and the difference divided by N. hayate first, then nginx with the same configuration.
#
#   bench/idle_memory.sh [--keep] [N]
#
# Both run master_process on, one worker pinned to $IDLE_SERVER_CPU (0), with worker_connections N + 1024,
# worker_rlimit_nofile 2N + 1024 and keepalive_timeout 300s; the client (python3, selectors) runs on
# $IDLE_CLIENT_CPU (1). RSS leaves out kernel socket buffers (the same for both servers). HY_BIN, NGINX_BIN as in
# bench/run.sh.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
keep=0
n=10000
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    ''|*[!0-9]*) echo "idle: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    *) n=$1 ;;
    esac
    shift
done
hy_bin=${HY_BIN:-$root/build/hayate}
nginx_bin=${NGINX_BIN:-/usr/sbin/nginx}
srv_cpu=${IDLE_SERVER_CPU:-0}
cli_cpu=${IDLE_CLIENT_CPU:-1}
python=${PYTHON:-/usr/bin/python3}

. "$here/lib.sh"

pkgs=""
command -v taskset >/dev/null || pkgs="$pkgs util-linux"
command -v curl >/dev/null || pkgs="$pkgs curl"
[ -x "$python" ] || pkgs="$pkgs python3"
[ -x "$nginx_bin" ] || { [ "$nginx_bin" = /usr/sbin/nginx ] && pkgs="$pkgs nginx"; }
# shellcheck disable=SC2086
[ -z "$pkgs" ] || "$root/tools/install-deps.sh" $pkgs || exit 1
[ -x "$hy_bin" ] || { echo "idle: hayate binary not found at $hy_bin" >&2; exit 1; }
[ -x "$nginx_bin" ] || { echo "idle: nginx not found at $nginx_bin" >&2; exit 1; }
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((n + 100)) ] && [ "$(id -u)" != 0 ]; then
    echo "idle: the client needs $((n + 100)) descriptors, the hard limit is $hard" >&2
    exit 1
fi
hy_port=$(free_port 18780)
nginx_port=$(free_port 18781 "$hy_port")

prefix=$(mktemp -d /tmp/hayate-idle.XXXXXX) || exit 1
chmod 755 "$prefix"
mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html"
head -c 612 /dev/zero | tr '\0' x >"$prefix/html/small.html"
chmod 644 "$prefix/html/small.html"

pids=()
cleanup() { bench_cleanup idle; }
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$prefix/client.py" <<'EOF'
"""client.py PID PORT N: RSS of PID's process tree before and after N idle keep-alive connections."""
import os, resource, selectors, socket, sys, time

pid, port, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = n + 256
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want) if os.geteuid() == 0 else hard))

def tree_rss():
    kids = [p for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/stat' % p).read().rsplit(')', 1)[1].split()[1] == str(pid)]
    total = 0
    for p in [str(pid)] + kids:
        for line in open('/proc/%s/status' % p):
            if line.startswith('VmRSS:'):
                total += int(line.split()[1])
    return total, 1 + len(kids)

REQ = b'GET /small.html HTTP/1.1\r\nHost: localhost\r\n\r\n'

def batch(k):
    socks = []
    for _ in range(k):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(('127.0.0.1', port))
        socks.append(s)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE, b'')
    todo, deadline = len(socks), time.monotonic() + 30
    while todo and time.monotonic() < deadline:
        for key, ev in sel.select(1):
            s = key.fileobj
            if ev & selectors.EVENT_WRITE:
                s.send(REQ)
                sel.modify(s, selectors.EVENT_READ, b'')
                continue
            try:
                d = s.recv(65536)
            except OSError:
                d = b''
            buf = key.data + d
            if not d:
                raise SystemExit('connection closed by the server before its response')
            head, sep, body = buf.partition(b'\r\n\r\n')
            if sep:
                cl = [int(l.split(b':')[1]) for l in head.split(b'\r\n') if l.lower().startswith(b'content-length:')]
                if not head.startswith(b'HTTP/1.1 200') or not cl:
                    raise SystemExit('unexpected response: %r' % head[:200])
                if len(body) >= cl[0]:
                    sel.unregister(s)
                    todo -= 1
                    continue
            sel.modify(s, selectors.EVENT_READ, buf)
    sel.close()
    if todo:
        raise SystemExit('%d responses missing' % todo)
    return socks

warm = batch(1)  # one request first, so caches and buffers that any first request sets up are counted in "before"
for s in warm:
    s.close()
time.sleep(1)
before, nproc = tree_rss()
socks = []
while len(socks) < n:
    socks += batch(min(500, n - len(socks)))
time.sleep(2)
after, _ = tree_rss()
sel = selectors.DefaultSelector()
for s in socks:
    sel.register(s, selectors.EVENT_READ)
closed = len(sel.select(0))  # readable while idle = closed by the server
sel.close()
for s in socks:
    s.close()
print(before, after, nproc, n - closed)
EOF

# conf NAME PORT ACCESS_LOG
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
    $3
    keepalive_timeout 300s;
    keepalive_requests 1000;
    server {
        listen 127.0.0.1:$2;
        root $prefix/html;
    }
}
EOF
}

measure() {
    local name=$1 bin=$2 port=$3 al=$4 cf="$prefix/conf/$1.conf" pid
    conf "$name" "$port" "$al" >"$cf"
    taskset -c "$srv_cpu" "$bin" -p "$prefix/" -c "$cf" </dev/null >"$prefix/logs/$name.out" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { echo "idle: $name exited at start:" >&2; tail "$prefix/logs/$name.out" >&2; exit 1; }
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port/small.html")" = 200 ] && break
        sleep 0.1
    done
    timeout 300 taskset -c "$cli_cpu" "$python" "$prefix/client.py" "$pid" "$port" "$n" >"$prefix/logs/$name-client.txt" 2>&1 &
    echo $! >"$prefix/client.pid"
    wait $!
    local rc=$?
    : >"$prefix/client.pid"
    kill -QUIT "$pid"
    wait "$pid" 2>/dev/null
    if [ "$rc" != 0 ]; then
        echo "idle: the client failed against $name:" >&2
        tail -5 "$prefix/logs/$name-client.txt" >&2
        echo "ERR ERR ERR ERR"
        return
    fi
    cat "$prefix/logs/$name-client.txt"
}

echo "idle: $n idle keep-alive connections; server on CPU $srv_cpu, client on CPU $cli_cpu" >&2
hy_al="# access_log: not in hayate yet (issue 4)"
conf x 1 "access_log off;" >"$prefix/conf/probe.conf"
"$hy_bin" -t -q -p "$prefix/" -c "$prefix/conf/probe.conf" >/dev/null 2>&1 && hy_al="access_log off;"
read -r -a hy <<<"$(measure hayate "$hy_bin" "$hy_port" "$hy_al")"
read -r -a ng <<<"$(measure nginx "$nginx_bin" "$nginx_port" "access_log off;")"

row() {
    local name=$1 b=$2 a=$3 np=$4 open=$5
    if [ "$b" = ERR ]; then echo "| $name | ERR | ERR | | | |"; return; fi
    awk -v name="$name" -v b="$b" -v a="$a" -v np="$np" -v o="$open" -v n="$n" 'BEGIN {
        printf "| %s | %d | %.1f MiB | %.1f MiB | %.2f KiB | %d |\n", name, np, b / 1024, a / 1024, (a - b) / n, o }'
}
echo
echo "| server | processes | RSS before | RSS with $n idle connections | per connection | still open |"
echo "|---|---:|---:|---:|---:|---:|"
row hayate "${hy[@]}"
row nginx "${ng[@]}"
echo
echo "Commands: each server pinned with taskset -c $srv_cpu (config: worker_processes 1, worker_connections $((n + 1024)),"
echo "worker_rlimit_nofile $((2 * n + 1024)), keepalive_timeout 300s); taskset -c $cli_cpu python3 client.py PID PORT $n"
