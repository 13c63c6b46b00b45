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
    local t=0 p v
    for p in "$@" $(for q in "$@"; do pgrep -P "$q"; done); do
        v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) # a process may end between pgrep and here
        t=$((t + ${v:-0}))
    done
    echo $t
}

# h2o_config [OPTION...] LISTEN...: an h2o 2.2 config (YAML) on stdout, one thread serving a docroot — the one
# generator for bench/run.sh, tls.sh and h2.sh. LISTEN is PORT (plain HTTP) or PORT:MIN[:MAX] (TLS with
# minimum-version MIN and, if given, maximum-version MAX, e.g. 18482:TLSv1.2:TLSv1.2; needs --cert and --key;
# OCSP stapling updates off). Options (each line appears only when its option is given and not empty):
#   --user U             user: U (as root h2o switches to a user, nobody by default)
#   --max-connections N  max-connections: N
#   --pid-file F         pid-file: F
#   --error-log F        error-log: F
#   --cert F --key F     the certificate and key of the TLS listeners
#   --paths TEXT         YAML lines put under hosts/default/paths before "/:", as they are (6-space indented)
#   --root DIR           "/:" serves DIR (file.dir)
h2o_config() {
    local user= maxconn= pidfile= errlog= cert= key= paths= root= l port min max
    while [ $# -gt 0 ]; do
        case "$1" in
        --user) user=$2; shift 2 ;;
        --max-connections) maxconn=$2; shift 2 ;;
        --pid-file) pidfile=$2; shift 2 ;;
        --error-log) errlog=$2; shift 2 ;;
        --cert) cert=$2; shift 2 ;;
        --key) key=$2; shift 2 ;;
        --paths) paths=$2; shift 2 ;;
        --root) root=$2; shift 2 ;;
        *) break ;;
        esac
    done
    [ -n "$user" ] && echo "user: $user"
    echo "num-threads: 1"
    [ -n "$maxconn" ] && echo "max-connections: $maxconn"
    [ -n "$pidfile" ] && echo "pid-file: $pidfile"
    [ -n "$errlog" ] && echo "error-log: $errlog"
    for l in "$@"; do
        IFS=: read -r port min max <<<"$l"
        printf 'listen:\n  host: 127.0.0.1\n  port: %s\n' "$port"
        [ -n "$min" ] || continue
        printf '  ssl:\n    certificate-file: %s\n    key-file: %s\n    minimum-version: %s\n' "$cert" "$key" "$min"
        [ -n "$max" ] && echo "    max-version: $max"
        echo "    ocsp-update-interval: 0"
    done
    printf 'hosts:\n  default:\n    paths:\n'
    [ -n "$paths" ] && printf '%s\n' "$paths"
    printf '      /:\n        file.dir: %s\n' "$root"
}

# ---- rounds in pairs: the machine's speed drifts by tens of percent within minutes, so the servers compared are
# run back to back within a round, a ratio is taken per round, and the median of those ratios is reported
# (docs/BENCHMARKS.md, "Rounds").

# bench_rounds ROUNDS OUT FN NAME...: runs `FN NAME` for every NAME, back to back, ROUNDS times: odd rounds in
# the order given, even rounds in the reverse order (for a pair: nginx then hayate, then hayate then nginx), so
# that no server always runs first or second. FN runs in this shell (not a subshell: a client it waits for
# stays interruptible), with $bench_round set to the round's number, and prints one line
# "REQ/S CPU_PER_REQUEST [MORE...]" ("n/a" for a value it has not); each run adds "ROUND NAME REQ/S CPU [MORE...]"
# to the file OUT (emptied first). Returns 1 when FN fails.
bench_rounds() {
    local rounds=$1 out=$2 fn=$3 r i line
    shift 3
    local names=("$@") order
    : >"$out"
    for r in $(seq "$rounds"); do
        order=()
        for ((i = 0; i < ${#names[@]}; i++)); do
            if [ $((r % 2)) = 1 ]; then order+=("${names[i]}"); else order=("${names[i]}" "${order[@]}"); fi
        done
        bench_round=$r
        for i in "${order[@]}"; do
            "$fn" "$i" >"$out.run" || { rm -f "$out.run"; return 1; }
            read -r line <"$out.run"
            echo "$r $i $line" >>"$out"
        done
    done
    rm -f "$out.run"
}

# bench_stats FORMAT: numbers on stdin, one a line -> "MEDIAN MIN MAX COUNT" with printf FORMAT (e.g. %.2f);
# the median of an even count is the mean of the two middle values; "n/a n/a n/a 0" when there are none
bench_stats() {
    sort -g | awk -v f="$1" '{ v[++n] = $1 }
        END { if (!n) { print "n/a n/a n/a 0"; exit }
              m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
              printf f " " f " " f " %d\n", m, v[1], v[n], n }'
}

# bench_median OUT NAME FIELD FORMAT: "MEDIAN MIN MAX COUNT" of NAME's FIELD (1 = REQ/S, 2 = CPU, 3... = MORE)
# over the rounds in OUT (bench_rounds); values that are not positive numbers are left out
bench_median() {
    awk -v who="$2" -v k=$(($3 + 2)) '$2 == who && $k ~ /^[0-9.]+$/ && $k > 0 { print $k }' "$1" | bench_stats "$4"
}

# bench_ratio OUT NUM DEN FIELD: the per-round ratios NUM's FIELD / DEN's FIELD (rounds where either is missing
# or not a positive number are left out) -> "MEDIAN MIN MAX COUNT", two decimals
bench_ratio() {
    awk -v a="$2" -v b="$3" -v k=$(($4 + 2)) '$k ~ /^[0-9.]+$/ && $k > 0 { if ($2 == a) x[$1] = $k; if ($2 == b) y[$1] = $k }
        END { for (r in x) if (r in y) printf "%.6f\n", x[r] / y[r] }' "$1" | bench_stats %.2f
}

# bench_sum OUT NAME FIELD: the sum of NAME's FIELD over the rounds (failure counts); a value that is not a
# number (ERR: the client failed) wins and is printed as it is
bench_sum() {
    awk -v who="$2" -v k=$(($3 + 2)) '$2 == who { if ($k ~ /^[0-9]+$/) t += $k; else bad = $k }
        END { print bad != "" ? bad : t + 0 }' "$1"
}

# bench_spread MIN MAX: "MIN–MAX" (the spread column), "n/a" when there is no ratio
bench_spread() { if [ "$1" = n/a ]; then echo n/a; else echo "$1–$2"; fi; }

# bench_pair_head ROUNDS / bench_pair_row ID OUT ROUNDS: the table of bench/proxy.sh and bench/apps.sh, from the
# rounds of `bench_rounds ROUNDS OUT FN nginx hayate [floor]` (FN printing "REQ/S µS_PER_REQUEST NON_2XX"): each
# server's median req/s and median µs, the median of the per-round CPU ratios, their spread when ROUNDS > 1,
# the non-2xx responses of all rounds, and the floor's median µs and its ratio to nginx ("n/a" for a scenario the
# floor did not run: bench/floor.c)
bench_pair_head() {
    local sp= sl=
    [ "$1" -gt 1 ] && sp=' spread of the rounds (min–max) |' sl='---:|'
    printf '| scenario | nginx req/s (median) | nginx µs CPU/req (median) | hayate req/s (median) | hayate µs CPU/req (median) | CPU/req hayate/nginx (%s) |%s non-2xx (nginx/hayate, all rounds) | floor µs CPU/req (median) | CPU/req floor/nginx (median) |\n' \
        "$([ "$1" = 1 ] && echo "1 round" || echo "median of $1 rounds")" "$sp"
    printf '|---|---:|---:|---:|---:|---:|%s---|---:|---:|\n' "$sl"
}
bench_pair_row() {
    local id=$1 out=$2 ratio rmin rmax sp=
    read -r ratio rmin rmax _ < <(bench_ratio "$out" hayate nginx 2)
    [ "$3" -gt 1 ] && sp=" $(bench_spread "$rmin" "$rmax") |"
    printf '| %s | %s | %s | %s | %s | %s |%s %s / %s | %s | %s |\n' "$id" \
        "$(bench_median "$out" nginx 1 %.0f | cut -d' ' -f1)" "$(bench_median "$out" nginx 2 %.1f | cut -d' ' -f1)" \
        "$(bench_median "$out" hayate 1 %.0f | cut -d' ' -f1)" "$(bench_median "$out" hayate 2 %.1f | cut -d' ' -f1)" \
        "$ratio" "$sp" "$(bench_sum "$out" nginx 3)" "$(bench_sum "$out" hayate 3)" \
        "$(bench_median "$out" floor 2 %.1f | cut -d' ' -f1)" "$(bench_ratio "$out" floor nginx 2 | cut -d' ' -f1)"
}

# floor_build: compiles bench/floor.c into $prefix/floor (the least a proxy can do per request: a third front for
# the keep-alive scenarios of bench/proxy.sh and bench/apps.sh); false, with the compiler's words, when it fails
floor_build() { cc -O2 -Wall -Wextra -Werror -o "$prefix/floor" "$root/bench/floor.c"; }

# front_start BINARY ID: a front of bench/proxy.sh and bench/apps.sh, pinned to $scpu: the floor (BINARY "floor",
# started with the script's `floor_args ID`) or a server (hayate or nginx: one worker, the script's `front_conf ID`
# in $prefix/front/conf/f.conf); sets front_pid (what bench_stop stops) and front_procs (whose CPU counts)
front_start() {
    local bin=$1 id=$2
    if [ "$bin" = floor ]; then
        floor_start "$fport" $(floor_args "$id") || return 1
        front_pid=$floor_pid front_procs=$floor_pid
        return 0
    fi
    cat >"$prefix/front/conf/f.conf" <<CONF
worker_processes 1; error_log logs/error.log; pid logs/f.pid; daemon on;
events { worker_connections 20000; }
http { access_log off; $(front_conf "$id") }
CONF
    rm -f "$prefix/front/logs/f.pid"
    taskset -c "$scpu" "$bin" -p "$prefix/front/" -c conf/f.conf || return 1
    for _ in $(seq 50); do [ -s "$prefix/front/logs/f.pid" ] && break; sleep 0.1; done
    front_pid=$(cat "$prefix/front/logs/f.pid")
    for _ in $(seq 50); do pgrep -P "$front_pid" >/dev/null && break; sleep 0.1; done # the worker is forked
    front_procs="$front_pid $(pgrep -P "$front_pid" | tr '\n' ' ')"
}

# floor_start PORT ARGS...: starts the floor on 127.0.0.1:PORT pinned to $scpu, its pid in $floor_pid (a child of
# this shell: bench_stop's QUIT ends it); false when it does not accept within 5 s
floor_start() {
    local port=$1
    shift
    taskset -c "$scpu" "$prefix/floor" "$port" "$@" 2>>"$prefix/floor.log" &
    floor_pid=$!
    wait_port "$port"
}
