"""Limits the server sets and meets: EMFILE back-off (no CPU spin, recovery), the worker_connections limit
(the oldest idle keep-alive connection makes room)."""
import errno
import re
import resource
import selectors
import socket
import time

import pytest

from conftest import IS_NGINX
from helpers.http1 import build_request
from helpers.process import master_conf, one_server, workers_of, wait_until, cpu_seconds, quick_get, drop_log_lines

FILES = {'html/a.txt': 'hello\n'}
CLIENTS = 1000


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        if hard != resource.RLIM_INFINITY and hard < n:
            pytest.skip('the client needs %d descriptors, hard limit %d' % (n, hard))
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def open_clients(port, n):
    """n connected, idle client sockets (non-blocking connect, bounded wait). The listen backlog is large
    (somaxconn), so the kernel completes the handshakes whether or not the server accepts."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex(('127.0.0.1', port))
        assert err in (0, errno.EINPROGRESS), err
        socks.append(s)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE)
    pending = len(socks)
    deadline = time.monotonic() + 5
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            sel.unregister(key.fileobj)
            pending -= 1
    sel.close()
    return socks, pending


def exchange_all(socks, timeout=8.0):
    """Sends one `Connection: close` request on every socket and reads until each closes; returns how many got a
    complete 200 response."""
    req = build_request('GET', '/a.txt', 'localhost', [('Connection', 'close')])
    sel = selectors.DefaultSelector()
    bufs = {}
    for s in socks:
        try:
            s.send(req)
        except OSError:
            continue
        bufs[s] = b''
        sel.register(s, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    open_n = len(bufs)
    while open_n and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            s = key.fileobj
            try:
                d = s.recv(65536)
            except OSError:
                d = b''
            if d:
                bufs[s] += d
            else:
                sel.unregister(s)
                open_n -= 1
    sel.close()
    bad = [b[:300] for b in bufs.values() if not (b.startswith(b'HTTP/1.1 200') and b.endswith(b'\r\n\r\nhello\n'))]
    return len(bufs) - len(bad), bad[:5]


def test_emfile_backoff_no_spin_and_recovery(server):
    raise_nofile(CLIENTS + 256)
    # nginx's default backlog (511) would leave some handshakes to SYN retransmits; hayate's is somaxconn
    listen = 'listen 127.0.0.1:{port}%s;' % (' backlog=4096' if IS_NGINX else '')
    # the open-file cache keeps a.txt's descriptor: with every descriptor taken by connections, an open() per
    # request would fail (500 and [crit], in nginx as in hayate), which is not what this test is about
    s = server(master_conf(one_server('root {html};\nopen_file_cache max=16 inactive=60s;\n'
                                      'open_file_cache_valid 60s;', listen=listen),
                           workers=1, main='worker_rlimit_nofile 256;', events='worker_connections 1024;'),
               files=FILES, full=True)
    (worker,) = workers_of(s, 1)
    assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    socks, pending = open_clients(s.port, CLIENTS)
    try:
        assert pending == 0, '%d connects did not complete' % pending
        # saturated: the worker holds what its 256 descriptors allow, the rest waits in the listen queue
        assert wait_until(lambda: re.search(r'Too many open files', s.error_log()), 5) or IS_NGINX, s.error_log()
        c0 = cpu_seconds(worker)
        t0 = time.monotonic()
        time.sleep(2)
        used = (cpu_seconds(worker) - c0) / (time.monotonic() - t0)
        assert used < 0.5, 'worker used %.2f CPU-seconds per second while out of descriptors' % used
        # existing and queued connections are all answered as descriptors free up
        served, bad = exchange_all(socks)
        assert served == CLIENTS, (served, bad, s.error_log()[-3000:])
    finally:
        for c in socks:
            c.close()
    # recovered: new connections are served at once
    for _ in range(20):
        assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    assert s.stop() == 0
    log = s.error_log()
    emfile = [l for l in log.splitlines() if '(24: Too many open files)' in l]
    if IS_NGINX:
        # nginx logs accept4() EMFILE at [crit] on every retry (accept_mutex_delay): expected, not checked here
        drop_log_lines(s, r'\[crit\] .*accept4\(\) failed \(24: Too many open files\)')
        drop_log_lines(s, r'\[alert\] .*accept4\(\) failed \(9: Bad file descriptor\)')  # nginx, at exit
        return
    assert 1 <= len(emfile) <= 10, emfile
    assert all('[error]' in l and 'accept4() failed (24: Too many open files)' in l and 'pausing accepts' in l
               for l in emfile), emfile
    assert not re.search(r'\[(alert|crit|emerg)\]', log), log


@pytest.mark.hayate_only
def test_emfile_logged_at_most_once_per_second(server):
    """Longer saturation: the EMFILE line is rate-limited (a spinning listener would log it thousands of times)."""
    raise_nofile(600)
    s = server(master_conf(one_server('root {html};'), workers=1, main='worker_rlimit_nofile 64;',
                           events='worker_connections 1024;'), files=FILES, full=True)
    workers_of(s, 1)
    socks, pending = open_clients(s.port, 300)
    try:
        assert pending == 0
        t0 = time.monotonic()
        time.sleep(3)
        n = len(re.findall(r'Too many open files', s.error_log()))
        elapsed = time.monotonic() - t0 + 1  # the line logged when saturation began, before t0
        assert 1 <= n <= elapsed + 2, n
    finally:
        for c in socks:
            c.close()
    assert quick_get(s.port, '/a.txt') == (200, b'hello\n')


def keepalive_conn(port):
    c = socket.create_connection(('127.0.0.1', port), 5)
    c.sendall(build_request('GET', '/a.txt', 'localhost', []))
    buf = b''
    while not buf.endswith(b'\r\n\r\nhello\n'):
        d = c.recv(4096)
        assert d, buf
        buf += d
    assert buf.startswith(b'HTTP/1.1 200'), buf
    return c


def is_closed(c, timeout=2.0):
    c.settimeout(timeout)
    try:
        return c.recv(1) == b''
    except socket.timeout:
        return False
    except OSError:
        return True


def test_worker_connections_limit_closes_oldest_idle(server):
    s = server(master_conf(one_server('root {html};'), workers=1, events='worker_connections 20;'), files=FILES,
               full=True)
    workers_of(s, 1)
    conns = []
    try:
        for _ in range(30):
            conns.append(keepalive_conn(s.port))
        # a new client is still served: idle keep-alive connections make room
        assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
        if not IS_NGINX:
            # hayate closes exactly the oldest idle ones; the newest stay open
            assert is_closed(conns[0]) and is_closed(conns[9])
            assert not is_closed(conns[-1], 0.3)
            c = conns[-1]
            c.sendall(build_request('GET', '/a.txt', 'localhost', [('Connection', 'close')]))
            assert c.recv(4096).startswith(b'HTTP/1.1 200')
    finally:
        for c in conns:
            c.close()
    assert s.stop() == 0
    if IS_NGINX:
        return
    assert '[alert]' not in s.error_log()
