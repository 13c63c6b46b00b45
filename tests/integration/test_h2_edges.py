"""HTTP/2 connection edges (issue 18's coverage), over h2c with prior knowledge: a request body with trailers, a
client that stops sending its body (client_body_timeout: 408), a client that resets a stream whose body a proxy
reads, a client whose first frame is not SETTINGS, invalid frames (GOAWAY PROTOCOL_ERROR), more new streams in one
read than twice the concurrency limit (GOAWAY ENHANCE_YOUR_CALM), an idle connection (GOAWAY then close)."""
import socket
import struct
import time

import h2.events
import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.h2client import H2
from helpers.process import wait_log

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has no "http2 on" (and different limits and wording)

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'


def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def h2srv(server, body, http_extra=''):
    return server(simple(body, 'http2 on; ' + http_extra))


def test_request_body_with_trailers(server, be):
    be.handler = lambda r: be.reply(200, ('%d:%s' % (len(r.body), r.body.decode())).encode())
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:%d; }' % be.port)
    c = H2(srv.port)
    try:
        sid = c.request('/t', method='POST', body=b'abc', end=False)
        c.conn.send_headers(sid, [('x-trailer', '1')], end_stream=True)
        c.flush()
        status, _, body = c.response(sid)
        assert status == 200 and body == b'3:abc'
    finally:
        c.close()


def test_body_that_stops_coming_resets_the_stream(server, be):
    # as nginx: no 408 goes out, the stream is reset with PROTOCOL_ERROR, the connection goes on
    be.handler = lambda r: be.reply(200, b'next')
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:%d; client_body_timeout 1s; }' % be.port,
                "log_format st '$request $status'; access_log {tmp}/logs/st.log st;")
    c = H2(srv.port)
    try:
        sid = c.request('/slow', method='POST', body=b'part', end=False, headers=[('content-length', '100')])
        with pytest.raises(ConnectionError, match='stream 1 reset: 1$'):
            c.response(sid, timeout=10)
        wait_log(srv, r'client timed out \(110: Connection timed out\) while reading client request body')
        assert be.requests == []
        status, _, body = c.get('/n')
        assert status == 200 and body == b'next'
    finally:
        c.close()
    srv.stop()
    log = open(srv.tmp + '/logs/st.log').read()
    assert 'POST /slow HTTP/2.0 408' in log, log


def test_reset_while_a_proxy_reads_the_body(server, be):
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:%d; }' % be.port,
                "log_format st '$request $status'; access_log {tmp}/logs/st.log st;")
    c = H2(srv.port)
    try:
        sid = c.request('/r', method='POST', body=b'part', end=False, headers=[('content-length', '100')])
        time.sleep(0.2)
        c.conn.reset_stream(sid)
        c.flush()
        be.handler = lambda r: be.reply(200, b'next')
        status, _, body = c.get('/n')
        assert status == 200 and body == b'next'
    finally:
        c.close()
    srv.stop()
    log = open(srv.tmp + '/logs/st.log').read()
    assert 'POST /r HTTP/2.0 499' in log, log
    assert all(r.target != '/r' for r in be.requests)


def raw_conn(port):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    return s


def read_frames(s, want_type, timeout=5.0):
    """Frames until one of want_type arrives (returned as (type, flags, sid, payload)) or the connection closes."""
    buf = b''
    deadline = time.monotonic() + timeout
    got = []
    while time.monotonic() < deadline:
        while len(buf) >= 9:
            ln = int.from_bytes(buf[:3], 'big')
            if len(buf) < 9 + ln:
                break
            f = (buf[3], buf[4], int.from_bytes(buf[5:9], 'big') & 0x7fffffff, buf[9:9 + ln])
            buf = buf[9 + ln:]
            got.append(f)
            if f[0] == want_type:
                return f, got
        try:
            d = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            break
        if not d:
            break
        buf += d
    return None, got


def test_first_frame_not_settings_is_tolerated(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    s = raw_conn(srv.port)
    # a PING before the client's SETTINGS: the server takes it as if SETTINGS (empty) had come first
    s.sendall(PREFACE + frame(6, 0, 0, b'12345678') + frame(4, 0, 0))
    f, _ = read_frames(s, 6)
    assert f is not None and f[1] & 1 and f[3] == b'12345678'  # the PING's ACK
    s.close()


def test_invalid_frame_is_goaway_protocol_error(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    s = raw_conn(srv.port)
    s.sendall(PREFACE + frame(4, 0, 0) + frame(0, 0, 0, b'data on stream 0'))
    f, _ = read_frames(s, 7)
    assert f is not None
    assert int.from_bytes(f[3][4:8], 'big') == 1  # PROTOCOL_ERROR
    s.close()
    wait_log(srv, 'client sent invalid HTTP/2')


def test_too_many_new_streams_in_one_read(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'http2_max_concurrent_streams 2;')
    c = H2(srv.port)
    try:
        for _ in range(6):  # 2 x 2 allowed per read, in one write
            c.conn.send_headers(c.conn.get_next_available_stream_id(),
                                [(':method', 'GET'), (':path', '/'), (':scheme', 'http'), (':authority', 'x')],
                                end_stream=True)
        c.flush()
        ev = c.wait_for(h2.events.ConnectionTerminated)
        assert ev is not None and ev.error_code == 11  # ENHANCE_YOUR_CALM
        wait_log(srv, 'client sent too many streams at once')
    finally:
        c.close()


def test_idle_connection_gets_goaway_then_closes(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'keepalive_timeout 1s;')
    c = H2(srv.port)
    try:
        status, _, body = c.get('/')
        assert status == 200
        ev = c.wait_for(h2.events.ConnectionTerminated, timeout=10)
        assert ev is not None and ev.error_code == 0
        deadline = time.monotonic() + 10
        while not c.closed and time.monotonic() < deadline:
            c.read(1.0)
        assert c.closed
    finally:
        c.close()
