# bench/lib.sh — helpers shared by the issue 3 bench scripts (sourced, not run).

# port_busy PORT: something listens on 127.0.0.1:PORT
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port FROM [EXCEPT]: the first port from FROM up that nobody listens on (and is not EXCEPT)
free_port() { local p=$1; while port_busy "$p" || [ "$p" = "${2:-}" ]; do p=$((p + 1)); done; echo "$p"; }

# bench_cleanup NAME: stop the load generator ($prefix/client.pid) and every server in ${pids[@]} (TERM, then
# KILL after 5 s), then remove $prefix unless $keep is 1. Meant for `trap cleanup EXIT`.
bench_cleanup() {
    [ -s "$prefix/client.pid" ] && kill -TERM "$(cat "$prefix/client.pid")" 2>/dev/null
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    pids=()
    if [ "$keep" = 1 ]; then echo "$1: kept $prefix" >&2; else rm -rf "$prefix"; fi
}

# bench_stop NAME PID: QUIT the server, wait up to 10 s, then KILL it
bench_stop() {
    kill -QUIT "$2" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$2" 2>/dev/null && { echo "$1: $2 did not stop on QUIT; killing" >&2; kill -KILL "$2"; }
    wait "$2" 2>/dev/null
}

# any_port: a loopback port the kernel says is free now
any_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port PORT: wait up to 5 s until 127.0.0.1:PORT accepts; false if it never does
wait_port() {
    for _ in $(seq 100); do
        port_busy "$1" && return 0
        sleep 0.05
    done
    return 1
}

# cpu_ticks PID...: utime+stime of the processes and their children (a master's workers), in clock ticks
cpu_ticks() {
    local t=0 p
    for p in "$@" $(for q in "$@"; do pgrep -P "$q"; done); do
        [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat)))
    done
    echo $t
}
