"""HTTP/2 scheduling and per-stream limits (proto/h2.c, h2_stream.c, h2_prio.c): RFC 9218 priorities (the
priority header, PRIORITY_UPDATE, SETTINGS_NO_RFC7540_PRIORITIES), limit_rate per stream, and 421 for a Host
whose server has http2 off — with python3-h2 at frame level.

The scheduling tests hold the server's DATA behind a closed connection window (a first response uses up the
initial 65535 bytes and is not acknowledged), send the requests, wait for every response head, then open the
window wide: the order of the DATA frames that follow is the server's choice alone."""
import os
import socket
import threading
import time

import pytest

from conftest import IS_NGINX
from helpers.backend import Backend
from helpers.tls import make_cert

import h2.events
import h2.settings
from helpers.h2client import H2

WINDOW = 65535
SIZE = 96 * 1024


@pytest.fixture(scope='module')
def cert(tmp_path_factory):
    return make_cert(str(tmp_path_factory.mktemp('h2pcerts')), 'ec', 'localhost', kind='ec')


def conf(extra=''):
    return '''
http {
    server {
        listen 127.0.0.1:{port};
        http2 on;
        root {html};
        %s
    }
}
''' % extra


def files():
    f = {'html/filler.bin': b'f' * WINDOW}
    for i in range(8):
        f['html/r%d.bin' % i] = bytes([0x30 + i]) * SIZE
    f['html/big.bin'] = os.urandom(1 << 20)
    f['html/slow/s.bin'] = os.urandom(40 * 1024)
    f['html/after/s.bin'] = os.urandom(64 * 1024)
    f['html/var/s.bin'] = os.urandom(40 * 1024)
    return f


def client(port):
    c = H2(port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 24})
    st, _, body = c.response(c.request('/filler.bin'), ack=False)  # the connection window is now 0
    assert st == 200 and len(body) == WINDOW
    return c


def priority_update(sid, value):
    payload = sid.to_bytes(4, 'big') + value.encode()
    return len(payload).to_bytes(3, 'big') + b'\x10\x00' + b'\x00\x00\x00\x00' + payload


def wait_heads(c, sids, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = {e.stream_id for e in c.events if isinstance(e, h2.events.ResponseReceived)}
        if set(sids) <= got:
            return
        c.read(0.2)
    raise TimeoutError('no response heads for %r' % (sids,))


def data_order(c, sids, timeout=20.0, open_window=True, sizes=None):
    """Open the connection window, read until every stream ended: the stream id of each DATA frame in order."""
    start = len(c.events)
    if open_window:
        c.conn.increment_flow_control_window(1 << 24)
    c.flush()
    deadline = time.monotonic() + timeout
    order, ended, got = [], set(), {}
    i = start
    while set(sids) - ended:
        if time.monotonic() > deadline:
            raise TimeoutError('streams %r did not end' % (set(sids) - ended,))
        c.read(0.2)
        while i < len(c.events):
            e = c.events[i]
            i += 1
            if isinstance(e, h2.events.DataReceived) and e.data:
                order.append(e.stream_id)
                got[e.stream_id] = got.get(e.stream_id, 0) + len(e.data)
            elif isinstance(e, h2.events.StreamEnded):
                ended.add(e.stream_id)
    assert all(got[s] == (sizes or {}).get(s, SIZE) for s in sids), got
    return order


def runs(order):
    """[1,1,3,3,1] -> [1,3,1]"""
    out = []
    for s in order:
        if not out or out[-1] != s:
            out.append(s)
    return out


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_settings_no_rfc7540_priorities(server):
    s = server(conf(), files=files())
    sock = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    sock.sendall(b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + b'\x00\x00\x00\x04\x00\x00\x00\x00\x00')
    head = b''
    while len(head) < 9:
        head += sock.recv(9 - len(head))
    assert head[3] == 4 and head[4] == 0  # the server's SETTINGS first
    n = int.from_bytes(head[0:3], 'big')
    payload = b''
    while len(payload) < n:
        payload += sock.recv(n - len(payload))
    sock.close()
    settings = {int.from_bytes(payload[i:i + 2], 'big'): int.from_bytes(payload[i + 2:i + 6], 'big')
                for i in range(0, n, 6)}
    assert settings.get(9) == 1, settings  # SETTINGS_NO_RFC7540_PRIORITIES


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_urgency_orders_responses(server):
    s = server(conf(), files=files())
    c = client(s.port)
    prios = [('r0', 'u=5'), ('r1', 'u=1'), ('r2', None), ('r3', 'u=0'), ('r4', 'u=7, i=?0')]
    sids = []
    for name, p in prios:
        sids.append(c.request('/%s.bin' % name, headers=[('priority', p)] if p else None))
    wait_heads(c, sids)
    order = data_order(c, sids)
    assert runs(order) == [sids[3], sids[1], sids[2], sids[0], sids[4]], runs(order)
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_incremental_streams_interleave(server):
    s = server(conf(), files=files())
    c = client(s.port)
    # two incremental streams of one urgency share it frame by frame; a less urgent one waits for both; two
    # non-incremental ones of the same urgency go one after the other in stream order
    a = c.request('/r0.bin', headers=[('priority', 'u=2, i')])
    b = c.request('/r1.bin', headers=[('priority', 'i, u=2')])
    d = c.request('/r2.bin', headers=[('priority', 'u=4')])
    e = c.request('/r3.bin', headers=[('priority', 'u=4')])
    wait_heads(c, [a, b, d, e])
    order = data_order(c, [a, b, d, e])
    r = runs(order)
    first = r[:r.index(d)]
    assert set(first) == {a, b} and len(first) > 4, r  # interleaved, many turns each
    assert r[r.index(d):] == [d, e], r
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_non_incremental_in_stream_order(server):
    s = server(conf(), files=files())
    c = client(s.port)
    sids = [c.request('/r%d.bin' % i) for i in range(4)]  # all u=3 non-incremental (the default)
    wait_heads(c, sids)
    assert runs(data_order(c, sids)) == sids
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_non_incremental_stream_order_not_readiness_order(server):
    # stream windows of 0: the responses wait, then the later stream's window opens first, in the same packet
    s = server(conf(), files=files())
    c = H2(s.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    a = c.request('/r0.bin')
    b = c.request('/r1.bin')
    d = c.request('/r2.bin', headers=[('priority', 'u=4')])
    wait_heads(c, [a, b, d])
    c.conn.increment_flow_control_window(1 << 24)
    for sid in (d, b, a):
        c.conn.increment_flow_control_window(1 << 24, stream_id=sid)
    assert runs(data_order(c, [a, b, d], open_window=False)) == [a, b, d]
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_non_incremental_stream_order_when_heads_come_late(server):
    # the first stream's response head comes after the second's (a proxied response held by its backend):
    # when both can send, the first goes first all the same
    release = threading.Event()
    be = Backend()
    be.handler = lambda req: [lambda: release.wait(10), be.reply(200, b'p' * 16384)]
    be.start()
    try:
        s = server(conf('location /p/ { proxy_pass http://127.0.0.1:%d; }' % be.port), files=files())
        c = client(s.port)
        a = c.request('/p/x')
        b = c.request('/r1.bin')
        wait_heads(c, [b])
        release.set()
        wait_heads(c, [a])
        r = runs(data_order(c, [a, b], sizes={a: 16384, b: SIZE}))
        assert r[0] == a, r  # (not all of it, maybe: a stream that waits for its data lets the next one go)
        c.close()
    finally:
        be.stop()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_priority_update_on_a_stream_is_a_connection_error(server):
    s = server(conf(), files=files())
    c = H2(s.port)
    sid = c.request('/r0.bin', end=False)
    frame = bytearray(priority_update(sid, 'u=0'))
    frame[8] = sid  # sent on the stream instead of stream 0
    c.send_raw(bytes(frame))
    ev = c.wait_for(h2.events.ConnectionTerminated)
    assert ev is not None and ev.error_code == 1  # PROTOCOL_ERROR
    assert 'client sent invalid PRIORITY_UPDATE frame' in s.error_log()
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_priority_update_reorders_queued_streams(server):
    s = server(conf(), files=files())
    c = client(s.port)
    a = c.request('/r0.bin')
    b = c.request('/r1.bin')
    d = c.request('/r2.bin', headers=[('priority', 'u=1')])
    wait_heads(c, [a, b, d])
    # a becomes the least urgent, b the most; an update that does not parse changes nothing; one for a stream
    # not opened yet applies to its request when it comes
    nxt = c.conn.get_next_available_stream_id()
    c.send_raw(priority_update(a, 'u=7') + priority_update(b, 'u=0') + priority_update(d, 'u=0,') +
               priority_update(nxt, 'u=0, i'))
    e = c.request('/r3.bin', headers=[('priority', 'u=6')])
    assert e == nxt
    wait_heads(c, [e])
    r = runs(data_order(c, [a, b, d, e]))
    # b (u=0) and e (u=0, incremental: after b or shared with it), then d (u=1), then a (u=7)
    assert r[0] in (b, e) and set(r[:r.index(d)]) == {b, e} and r[r.index(d):] == [d, a], r
    c.close()


@pytest.mark.skipif(IS_NGINX, reason='nginx does not implement RFC 9218')
def test_malformed_priority_ignored(server):
    s = server(conf(), files=files())
    c = client(s.port)
    a = c.request('/r0.bin', headers=[('priority', 'u=0,')])     # not a Dictionary: the defaults (u=3)
    b = c.request('/r1.bin', headers=[('priority', 'u=9, x=?')])  # not a Dictionary either
    d = c.request('/r2.bin', headers=[('priority', 'u=9, i=?2')])
    e = c.request('/r3.bin', headers=[('priority', 'u=2;q=1, foo=bar')])  # parameters and unknown keys skipped
    f = c.request('/r4.bin', headers=[('priority', 'u="0"'), ('priority', 'u=4')])  # two fields, one list: u=4
    # out-of-range u ignored, i still read: u=3 incremental, the two share their turn after the three above
    g = c.request('/r5.bin', headers=[('priority', 'u=9, i')])
    h = c.request('/r6.bin', headers=[('priority', 'i, u=-1')])
    wait_heads(c, [a, b, d, e, f, g, h])
    r = runs(data_order(c, [a, b, d, e, f, g, h]))
    assert r[:4] == [e, a, b, d] and r[-1] == f, r
    assert set(r[4:-1]) == {g, h} and len(r[4:-1]) > 4, r
    c.close()


def rate_conf():
    # `listen ... http2` (nginx 1.22's form, deprecated since 1.25.1) so that Debian's nginx runs these too
    return '''
http {
    server {
        listen 127.0.0.1:{port} http2;
        root {html};
        location /slow/ { limit_rate 8k; }
        location /after/ { limit_rate 8k; limit_rate_after 24k; }
        location /var/ { set $limit_rate 8k; }
    }
}
'''


def paced_stream(s, path, rate, after, total):
    """Fetch path and /big.bin on one connection: the big one ends while the paced one is still held back, and
    the paced one never got more than its allowance counted from before its request left."""
    c = H2(s.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 24})
    try:
        return paced(c, path, rate, after, total)
    finally:
        c.close()


def paced(c, path, rate, after, total):
    c.conn.increment_flow_control_window(1 << 26)
    c.flush()
    t0 = time.monotonic()
    slow = c.request(path)
    fast = c.request('/big.bin')
    got = {slow: 0, fast: 0}
    ended = set()
    fast_done_at = None
    deadline = time.monotonic() + 30
    i = 0
    while slow not in ended:
        assert time.monotonic() < deadline, got
        c.read(0.2)
        while i < len(c.events):
            e = c.events[i]
            i += 1
            if isinstance(e, h2.events.DataReceived):
                got[e.stream_id] += len(e.data)
                if e.stream_id == slow:
                    elapsed = time.monotonic() - t0
                    assert got[slow] <= after + rate * (elapsed + 1) + 16384, (got[slow], elapsed)
            elif isinstance(e, h2.events.StreamEnded):
                ended.add(e.stream_id)
                if e.stream_id == fast:
                    fast_done_at = got[slow]
    assert got[fast] == 1 << 20 and got[slow] == total
    assert fast_done_at is not None and fast_done_at < total  # the other stream was not slowed
    return fast_done_at


def test_limit_rate_per_stream(server):
    s = server(rate_conf(), files=files())
    paced_stream(s, '/slow/s.bin', 8192, 0, 40 * 1024)


def test_limit_rate_after_per_stream(server):
    s = server(rate_conf(), files=files())
    paced_stream(s, '/after/s.bin', 8192, 24 * 1024, 64 * 1024)


def test_set_limit_rate_per_stream(server):
    s = server(rate_conf(), files=files())
    paced_stream(s, '/var/s.bin', 8192, 0, 40 * 1024)


def misdirected_conf(cert):
    return '''
http {
    server {
        listen 127.0.0.1:{port2} ssl;
        listen 127.0.0.1:{port};
        server_name localhost;
        http2 on;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "localhost\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        listen 127.0.0.1:{port};
        server_name disabled;
        http2 off;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "disabled\\n"; }
    }
}
''' % (cert[0], cert[1], cert[0], cert[1])


@pytest.mark.skipif(IS_NGINX, reason='Debian 12 nginx (1.22) has no per-server http2 directive')
def test_misdirected_request_421(server, cert):
    s = server(misdirected_conf(cert))
    for port, tls in ((s.port2, True), (s.port, False)):
        c = H2(port, tls=tls)
        st, _, body = c.get('/', authority='localhost')
        assert st == 200 and body == b'localhost\n'
        st, _, _ = c.get('/', authority='disabled')
        assert st == 421
        st, _, body = c.get('/', authority='localhost')  # the connection stays usable
        assert st == 200
        c.close()
    assert 'client attempted to request the server name for which the negotiated protocol is disabled' in \
        s.error_log()


def test_misdirected_request_421_client_verification(server, cert):
    """As over HTTP/1: when the server the :authority names verifies client certificates and is not the one the SNI
    name chose, an HTTP/2 request is answered 421 (nginx's h2_ssl_verify_client.t)."""
    s = server('''
http {
    ssl_certificate %s;
    ssl_certificate_key %s;
    ssl_verify_client optional_no_ca;
    server {
        listen 127.0.0.1:{port} ssl http2;
        server_name localhost;
        ssl_client_certificate %s;
        location / { return 200 "localhost\\n"; }
    }
    server {
        listen 127.0.0.1:{port} ssl http2;
        server_name example.com;
        location / { return 200 "example\\n"; }
    }
}
''' % (cert[0], cert[1], cert[0]))
    c = H2(s.port, tls=True)  # SNI localhost
    st, _, body = c.get('/', authority='localhost')
    assert st == 200 and body == b'localhost\n'
    st, _, _ = c.get('/', authority='example.com')
    assert st == 421
    c.close()
    assert 'client attempted to request the server name different from the one that was negotiated' in \
        s.error_log()
