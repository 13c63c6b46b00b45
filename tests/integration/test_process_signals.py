"""Signals to the master (nginx's): HUP reload (good and broken configs, `-s reload`), QUIT graceful, TERM fast,
USR1 reopen logs."""
import hashlib
import os
import re
import signal
import socket
import threading
import time

import pytest

from conftest import IS_NGINX
from helpers.http1 import build_request
from helpers.process import (master_conf, one_server, children, workers_of, wait_until, wait_log, quick_get, cli,
                             alive)

FILES = {'html/a.txt': 'old\n', 'html2/a.txt': 'new\n'}


class Hammer:
    """A client thread making requests on new connections until stopped (bounded), recording every failure."""

    def __init__(self, port, path='/a.txt', ok_bodies=(b'old\n', b'new\n'), limit=20000, timeout=5.0):
        self.port, self.path, self.ok_bodies, self.limit, self.timeout = port, path, ok_bodies, limit, timeout
        self.done = 0
        self.failures = []
        self.bodies = set()
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop_ev.is_set() and self.done < self.limit:
            try:
                st, body = quick_get(self.port, self.path, timeout=self.timeout)
                if st != 200 or body not in self.ok_bodies:
                    self.failures.append((st, body[:100]))
                self.bodies.add(body)
            except Exception as e:  # noqa: BLE001 - every failure counts
                self.failures.append(repr(e))
            self.done += 1

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop_ev.set()
        self.t.join(15)


def write_conf(srv, text):
    srv.prefix.conf(text, full=True)


def conf_with_root(root, workers=2, extra=''):
    return master_conf(one_server('root {tmp}/%s;\n%s' % (root, extra)), workers=workers)


# ---------------------------------------------------------------- reload

def test_reload_good_config(server):
    s = server(conf_with_root('html'), files=FILES, full=True)
    old = workers_of(s, 2)
    assert len(old) == 2, old
    assert quick_get(s.port, '/a.txt') == (200, b'old\n')
    with Hammer(s.port) as h:
        wait_until(lambda: h.done >= 20, 5)
        write_conf(s, conf_with_root('html2'))
        res = cli(s, '-s', 'reload')
        assert res.returncode == 0, res
        # new workers serve the new root; the old ones retire
        assert wait_until(lambda: quick_get(s.port, '/a.txt') == (200, b'new\n'), 5)
        assert wait_until(lambda: not any(alive(p) for p in old), 5), [p for p in old if alive(p)]
        n = h.done
        wait_until(lambda: h.done >= n + 20, 5)
    assert h.failures == [], h.failures[:10]
    assert h.done > 40
    new = workers_of(s, 2)
    assert len(new) == 2 and not set(new) & set(old), (old, new)
    for _ in range(10):
        assert quick_get(s.port, '/a.txt') == (200, b'new\n')


def test_reload_adds_a_listener_and_a_location(server):
    s = server(conf_with_root('html'), files=dict(FILES, **{'html2/x/b.txt': 'bee\n'}), full=True)
    workers_of(s, 2)
    text = master_conf(one_server('root {tmp}/html;\nlocation /x/ { root {tmp}/html2; }',
                                  listen='listen 127.0.0.1:{port}; listen 127.0.0.1:{port2};'))
    write_conf(s, text)
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: _accepts(s.port2) and quick_get(s.port2, '/x/b.txt') == (200, b'bee\n'), 5)
    # old workers may still take a connection or two on {port} until they have seen their QUIT
    assert wait_until(lambda: quick_get(s.port, '/x/b.txt') == (200, b'bee\n'), 5)
    assert quick_get(s.port, '/a.txt') == (200, b'old\n')


def _accepts(port):
    try:
        socket.create_connection(('127.0.0.1', port), 0.5).close()
        return True
    except OSError:
        return False


BROKEN = 'no_such_directive_here on;'


def broken_conf():
    text = conf_with_root('html2')
    lines = text.splitlines()
    lines.insert(3, BROKEN)  # line 4
    return '\n'.join(lines) + '\n', 4


def test_reload_broken_config_cli(server, prog):
    s = server(conf_with_root('html'), files=FILES, full=True)
    old = workers_of(s, 2)
    text, line = broken_conf()
    write_conf(s, text)
    res = cli(s, '-s', 'reload')
    assert res.returncode != 0, res
    assert re.search(r'\[emerg\] .*unknown directive "no_such_directive_here" in %s:%d' %
                     (re.escape(s.prefix.conf_path), line), res.stderr), res.stderr
    # nothing was signalled: a later USR1 is the barrier (a pending HUP, signal 1, is read before USR1, 10)
    os.kill(s.proc.pid, signal.SIGUSR1)
    assert wait_log(s, r'signal 10 \(SIGUSR1\) received'), s.error_log()
    assert 'reconfiguring' not in s.error_log()
    assert children(s.proc.pid) == old
    for _ in range(5):
        assert quick_get(s.port, '/a.txt') == (200, b'old\n')


def test_reload_broken_config_sighup(server):
    s = server(conf_with_root('html'), files=FILES, full=True)
    old = workers_of(s, 2)
    text, line = broken_conf()
    write_conf(s, text)
    with Hammer(s.port) as h:
        os.kill(s.proc.pid, signal.SIGHUP)
        m = wait_log(s, r'\[emerg\] \d+#\d+: unknown directive "no_such_directive_here" in %s:%d$' %
                     (re.escape(s.prefix.conf_path), line))
        assert m, s.error_log()
        n = h.done
        wait_until(lambda: h.done >= n + 20, 5)
    assert h.failures == [], h.failures[:10]
    assert h.bodies == {b'old\n'}
    assert s.alive()
    assert children(s.proc.pid) == old
    # and a fixed config then reloads fine
    write_conf(s, conf_with_root('html2'))
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: quick_get(s.port, '/a.txt') == (200, b'new\n'), 5)


def test_reload_removes_a_listener(server):
    s = server(master_conf(one_server('root {tmp}/html;', listen='listen 127.0.0.1:{port}; listen 127.0.0.1:{port2};')),
               files=FILES, full=True)
    old = workers_of(s, 2)
    assert quick_get(s.port2, '/a.txt') == (200, b'old\n')
    write_conf(s, conf_with_root('html2'))
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: not any(alive(p) for p in old), 5)
    assert quick_get(s.port, '/a.txt') == (200, b'new\n')
    # the address is gone from the config: nobody may listen there any more
    assert wait_until(lambda: not _accepts(s.port2), 3), 'the removed address still accepts connections'


def test_reload_changes_worker_count_without_failures(server):
    s = server(conf_with_root('html', workers=3), files=FILES, full=True)
    old = workers_of(s, 3)
    with Hammer(s.port, timeout=1.0) as h:
        wait_until(lambda: h.done >= 20, 5)
        write_conf(s, conf_with_root('html2', workers=1))
        os.kill(s.proc.pid, signal.SIGHUP)
        assert wait_until(lambda: len(children(s.proc.pid)) == 1 and not any(alive(p) for p in old), 5), \
            children(s.proc.pid)
        n = h.done
        wait_until(lambda: h.done >= n + 50, 5)
    assert quick_get(s.port, '/a.txt') == (200, b'new\n')
    # no connection may hang: a socket of a dropped worker slot must not stay open with nobody accepting
    hung = [f for f in h.failures if 'timed out' in str(f)]
    assert hung == [], h.failures[:10]
    resets = [f for f in h.failures if 'ConnectionResetError' in str(f)]
    assert len(resets) == len(h.failures), h.failures[:10]
    if resets and not IS_NGINX:
        # known (see the report of issue 3): connections still in the accept queue of a dropped SO_REUSEPORT
        # slot's socket are reset when its retiring worker closes it; nginx shares one socket, so it has none
        pytest.xfail('%d connection(s) reset while shrinking from 3 workers to 1' % len(resets))
    assert resets == []


# ---------------------------------------------------------------- QUIT, TERM

BIG = 20 * 1024 * 1024


def big_file():
    # deterministic, incompressible enough, cheap to make
    block = hashlib.sha256(b'hayate').digest() * 2048  # 64 KiB
    return block * (BIG // len(block))


def test_graceful_quit_finishes_slow_response(server):
    data = big_file()
    s = server(master_conf(one_server('root {html};'), workers=1), files={'html/big.bin': data}, full=True)
    workers = workers_of(s, 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(('127.0.0.1', s.port))
    sock.sendall(build_request('GET', '/big.bin', 'localhost', [('Connection', 'close')]))
    got = b''
    while b'\r\n\r\n' not in got or len(got) < 65536:
        chunk = sock.recv(16384)
        assert chunk, got[:200]
        got += chunk
    head, body = got.split(b'\r\n\r\n', 1)
    assert head.startswith(b'HTTP/1.1 200'), head
    assert b'Content-Length: %d' % BIG in head, head
    assert len(body) < BIG // 2  # most of the response is still to be sent when QUIT arrives
    os.kill(s.proc.pid, signal.SIGQUIT)
    # the worker stays to finish; the master waits for it
    assert wait_log(s, r'gracefully shutting down'), s.error_log()
    assert alive(workers[0]) and s.alive()
    parts = [body]
    total = len(body)
    while total < BIG + 1:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    sock.close()
    assert total == BIG
    assert b''.join(parts) == data
    s.proc.wait(10)
    assert s.proc.returncode == 0
    s.stopped = True
    assert not os.path.exists(s.prefix.path('logs/hy.pid'))


def test_graceful_quit_refuses_new_connections(server):
    s = server(master_conf(one_server('root {html};'), workers=1), files={'html/big.bin': big_file()}, full=True)
    workers_of(s, 1)
    # keep the worker busy with an in-flight response so that the server is draining, not gone
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(('127.0.0.1', s.port))
    sock.sendall(build_request('GET', '/big.bin', 'localhost', [('Connection', 'close')]))
    assert sock.recv(4096).startswith(b'HTTP/1.1 200')
    os.kill(s.proc.pid, signal.SIGQUIT)
    try:
        # a draining server takes no new connections: connect is refused (not left hanging in a backlog)
        assert wait_until(lambda: not _accepts(s.port), 3), 'still accepting connections while draining'
        assert s.alive()
    finally:
        while sock.recv(1 << 20):
            pass
        sock.close()
    s.proc.wait(10)
    assert s.proc.returncode == 0
    s.stopped = True


def test_term_is_fast(server):
    s = server(master_conf(one_server('root {html};'), workers=2), files={'html/big.bin': big_file()}, full=True)
    kids = workers_of(s, 2)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(('127.0.0.1', s.port))
    sock.sendall(build_request('GET', '/big.bin', 'localhost', [('Connection', 'close')]))
    assert sock.recv(4096).startswith(b'HTTP/1.1 200')
    os.kill(s.proc.pid, signal.SIGTERM)
    # the server exits without waiting for the client to read the response ...
    s.proc.wait(10)
    assert s.proc.returncode == 0
    s.stopped = True
    # ... so the in-flight response is cut: what was not yet in the socket buffers never comes
    total = 0
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            total += len(chunk)
    except (ConnectionResetError, socket.timeout):
        pass
    sock.close()
    assert total < BIG
    assert wait_until(lambda: not any(alive(k) for k in kids), 5)


# ---------------------------------------------------------------- USR1

def test_usr1_reopens_logs(server):
    s = server(master_conf(one_server('root {html};'), workers=2), files=FILES, full=True)
    workers_of(s, 2)
    log = s.prefix.path('logs/error.log')
    old = log + '.1'
    assert quick_get(s.port, '/missing-before')[0] == 404
    assert wait_log(s, r'missing-before'), s.error_log()
    os.rename(log, old)
    assert quick_get(s.port, '/missing-renamed')[0] == 404
    # until reopened, lines still go to the renamed file
    assert wait_log(s, r'missing-renamed', path=old)
    os.kill(s.proc.pid, signal.SIGUSR1)
    assert wait_until(lambda: os.path.exists(log), 5), 'error.log not recreated'
    # every worker must have reopened: ask enough times that both workers answer one. The master recreates
    # the file before the workers have all reopened theirs, so a round may still reach the old file: each
    # round has its own names, and the round that found all of them in the new file must have none in the old
    rounds = [0]
    def reopened():
        rounds[0] += 1
        for i in range(10):
            assert quick_get(s.port, '/missing-after-%d-%d' % (rounds[0], i))[0] == 404
        text = open(log, errors='replace').read()
        return all('missing-after-%d-%d ' % (rounds[0], i) in text for i in range(10))
    assert wait_until(reopened, 5), open(log).read()
    with open(old, errors='replace') as f:
        assert 'missing-after-%d-' % rounds[0] not in f.read()
