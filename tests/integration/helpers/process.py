"""Helpers for the process-model tests (master/workers, signals, limits).

Configs for these tests are full configs (server(..., full=True)) with `master_process on; daemon off;` so the
fixture starts the master in the foreground, waits for it and stops it with QUIT at teardown.
"""
import http.client
import os
import re
import signal
import socket
import subprocess
import time

from conftest import IS_NGINX, HY_BIN


def master_conf(http_body, workers=2, user='root', main='', events='worker_connections 1024;',
                error_level='info'):
    """A full config running a master with `workers` workers. `user` None leaves the directive out (the
    default user, nobody). nginx gets an access_log under the prefix; hayate has no access_log yet."""
    access = 'access_log {tmp}/logs/access.log;' if IS_NGINX else ''
    lines = [
        'daemon off;',
        'master_process on;',
        'worker_processes %s;' % workers,
        'user %s;' % user if user else '',
        'error_log {tmp}/logs/error.log %s;' % error_level,
        'pid {tmp}/logs/hy.pid;',
        main,
        'events {\n    %s\n}' % events,
        'http {\n    %s\n%s\n}' % (access, http_body),
    ]
    return '\n'.join(lines) + '\n'


def one_server(body, listen='listen 127.0.0.1:{port};'):
    """The http{} body with one server."""
    return '''
    include mime.types;
    default_type application/octet-stream;
    server {
        %s
        %s
    }''' % (listen, body)


# ---------------------------------------------------------------- /proc

def proc_stat(pid):
    """Fields of /proc/PID/stat after the command name (index 0 = state), or None when gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return s[s.rindex(')') + 2:].split()


def alive(pid):
    st = proc_stat(pid)
    return st is not None and st[0] not in ('Z', 'X')


def children(pid):
    """Live (non-zombie) child pids of `pid`, sorted."""
    kids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        st = proc_stat(int(d))
        if st and int(st[1]) == pid and st[0] not in ('Z', 'X'):
            kids.append(int(d))
    return sorted(kids)


def cpu_seconds(pid):
    """utime + stime of `pid` in seconds."""
    st = proc_stat(pid)
    return (int(st[11]) + int(st[12])) / os.sysconf('SC_CLK_TCK')


def status_field(pid, name):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith(name + ':'):
                return line.split(':', 1)[1].split()
    return None


def wait_until(fn, timeout=5.0, interval=0.05):
    """Calls fn() until it returns something truthy or `timeout` passes; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def workers_of(srv, n, timeout=5.0):
    """Waits until the master has exactly n live children and returns their pids (or what it has)."""
    got = wait_until(lambda: (lambda k: k if len(k) == n else None)(children(srv.proc.pid)), timeout)
    return got or children(srv.proc.pid)


# ---------------------------------------------------------------- logs

def wait_log(srv, pattern, timeout=5.0, path=None):
    """Waits until the error log (or `path`) matches regex `pattern`; returns the match or None."""
    rx = re.compile(pattern, re.M)

    def look():
        if path is None:
            return rx.search(srv.error_log())
        try:
            with open(path, errors='replace') as f:
                return rx.search(f.read())
        except FileNotFoundError:
            return None
    return wait_until(look, timeout)


def drop_log_lines(srv, pattern):
    """Removes the lines matching `pattern` from the error log so that teardown does not fail on an
    [alert]/[crit] line the test expected. Call it after the server stopped."""
    p = srv.prefix.path('logs/error.log')
    with open(p, errors='replace') as f:
        lines = f.read().splitlines(True)
    rx = re.compile(pattern)
    with open(p, 'w') as f:
        f.writelines(l for l in lines if not rx.search(l))


# ---------------------------------------------------------------- clients

def cli(srv, *args, timeout=10.0):
    """Runs the binary with -p/-c of `srv` and extra args; returns CompletedProcess (text)."""
    cmd = [HY_BIN, '-p', srv.tmp + '/', '-c', srv.prefix.conf_path] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          cwd=srv.tmp, timeout=timeout, universal_newlines=True, errors='replace')


def quick_get(port, path='/', timeout=5.0, host='127.0.0.1'):
    """One request on a new connection with Connection: close; returns (status, body)."""
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        c.request('GET', path, headers={'Connection': 'close'})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over an AF_UNIX stream socket."""

    def __init__(self, path, timeout=5.0):
        super().__init__('localhost', timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


def unix_get(path, url='/', timeout=5.0):
    c = UnixHTTPConnection(path, timeout)
    try:
        c.request('GET', url, headers={'Connection': 'close'})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def kill_quietly(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
