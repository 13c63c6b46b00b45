"""least_time header | last_byte [inflight] (NGINX Plus; hayate's arithmetic in upstream/balancer.c): the peer
with the least connections x (average response time + 20 ms) + average time, for its weight, gets the request, ties by
weighted round robin. `header` measures the time to the response head, `last_byte` to the last byte; a slow
peer's average fades only once its fail_timeout has passed since its last response, and then it is tried again
(a probe); `inflight` also counts the age of the tries still in flight. Debian's nginx has no least_time (Plus
only): hayate only. The backends' delays make one peer slower than the other by hundreds of milliseconds; what
is checked is which peer answers, never how long it took."""
import threading
import time

import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend

pytestmark = pytest.mark.skipif(IS_NGINX, reason='least_time is NGINX Plus only')

HEAD = b'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n'


def backend(items):
    b = Backend().start()
    b.handler = lambda r: items(r) if callable(items) else list(items)
    return b


def conf(method, a, b, params=''):
    return simple('''
        location / { proxy_pass http://u; }
    ''', http_extra='''
        upstream u { %s; server 127.0.0.1:%d %s; server 127.0.0.1:%d %s; }
    ''' % (method, a.port, params, b.port, params))


def bodies(srv, n):
    out = []
    for _ in range(n):
        r = srv.get('/')
        assert r.status == 200
        out.append(r.body)
    return out


@pytest.fixture
def stop():
    bs = []
    yield bs.append
    for b in bs:
        b.stop()


def test_last_byte_prefers_faster_peer(server, stop):
    a = backend([HEAD, 0.6, b'A'])  # head at once, last byte late
    b = backend([0.3, HEAD + b'B'])  # everything a little late
    stop(a), stop(b)
    srv = server(conf('least_time last_byte', a, b))
    got = bodies(srv, 8)
    assert got[:2] == [b'A', b'B']  # nothing known: round robin
    assert got[2:] == [b'B'] * 6    # B's last byte comes sooner


def test_header_prefers_faster_head(server, stop):
    a = backend([HEAD, 0.6, b'A'])
    b = backend([0.3, HEAD + b'B'])
    stop(a), stop(b)
    srv = server(conf('least_time header', a, b))
    got = bodies(srv, 8)
    assert got[:2] == [b'A', b'B']
    assert got[2:] == [b'A'] * 6    # A's head comes sooner


def shares(srv, n, want, timeout=15.0):
    """n requests whose answers count as want ({body: count}); tried again (after the averages fade:
    fail_timeout=0) until a deadline, since a loaded machine may slow one fast answer past 20 ms"""
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        b = bodies(srv, n)
        got = {k: b.count(k) for k in want}
        if got == want:
            return
        time.sleep(0.6)
    raise AssertionError('wanted %r, got %r' % (want, got))


def test_fast_peers_share_round_robin(server, stop):
    a = backend([HEAD + b'A'])
    b = backend([HEAD + b'B'])
    stop(a), stop(b)
    srv = server(conf('least_time last_byte', a, b, 'fail_timeout=0'))
    shares(srv, 8, {b'A': 4, b'B': 4})


def test_weights_count(server, stop):
    a = backend([HEAD + b'A'])
    b = backend([HEAD + b'B'])
    stop(a), stop(b)
    srv = server(simple('location / { proxy_pass http://u; }', http_extra='''
        upstream u { least_time header; server 127.0.0.1:%d weight=3 fail_timeout=0; server 127.0.0.1:%d fail_timeout=0; }
    ''' % (a.port, b.port)))
    shares(srv, 8, {b'A': 6, b'B': 2})


def test_slow_peer_probed_after_fail_timeout(server, stop):
    slow = {'on': True}
    a = backend(lambda r: [HEAD, 0.5, b'A'] if slow['on'] else [HEAD + b'A'])
    b = backend([HEAD + b'B'])
    stop(a), stop(b)
    srv = server(conf('least_time last_byte', a, b, 'fail_timeout=1s'))
    got = bodies(srv, 5)
    assert got == [b'A'] + [b'B'] * 4  # A was slow: B until A's time fades
    slow['on'] = False
    deadline = time.monotonic() + 15
    probed = False
    while time.monotonic() < deadline and not probed:
        probed = srv.get('/').body == b'A'
        if not probed:
            time.sleep(0.1)
    assert probed
    # one fast answer averages with A's slow time as it was: B is still preferred right after the probe
    assert bodies(srv, 3) == [b'B'] * 3


@pytest.mark.parametrize('inflight', [False, True])
def test_inflight_counts_tries_in_flight(server, stop, inflight):
    release = threading.Event()
    first = {'n': 0}

    def a_items(r):
        first['n'] += 1
        if first['n'] == 1:  # the first request hangs until the test ends it
            return [lambda: release.wait(20), HEAD + b'A']
        return [HEAD + b'A']
    a = backend(a_items)
    b = backend([0.3, HEAD + b'B'])
    stop(a), stop(b)
    srv = server(conf('least_time last_byte%s' % (' inflight' if inflight else ''), a, b))
    from helpers.http1 import build_request
    import socket
    hung = socket.create_connection(('127.0.0.1', srv.port))
    try:
        hung.sendall(build_request('GET', '/'))
        a.wait_requests(1)
        assert srv.get('/').body == b'B'  # A is busy: B (0.3 s)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.0:  # A's try in flight grows older than B's average
            time.sleep(0.05)
        # without inflight A's unknown time counts as 0: 1 x 20 + 0 < 300; with it, A's try is ~1.3 s old
        assert srv.get('/').body == (b'B' if inflight else b'A')
    finally:
        release.set()
        hung.close()


@pytest.mark.parametrize('args', ['foo', 'header foo', 'last_byte inflight x'])
def test_conf_errors(run_cli, prefix, args):
    c = prefix.conf(simple('location / { proxy_pass http://u; }',
                           http_extra='upstream u { least_time %s; server 127.0.0.1:1; }' % args))
    r = run_cli(['-t', '-c', c])
    assert r.rc != 0
    assert 'least_time' in r.err or 'invalid parameter' in r.err or 'invalid number of arguments' in r.err
