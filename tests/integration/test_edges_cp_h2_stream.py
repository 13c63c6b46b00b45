"""One HTTP/2 stream's exchange with the request core (h2_stream.c, issue 18's coverage): an upstream that fails
in the middle of the body (RST_STREAM INTERNAL_ERROR), a response that ends while the client still sends its
body (RST_STREAM NO_ERROR), a body that grows above client_max_body_size while it is read (413), trailers made
only of connection fields (none sent), a response produced after the client reset its stream, an SSI page over
HTTP/2 whose include is a subrequest, a mirror of an HTTP/2 request with its body."""
import struct
import threading
import time

import h2.events
import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.h2client import H2
from helpers.process import wait_log

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has no "http2 on"


def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def h2srv(server, body, http_extra='', files=None):
    return server(simple(body, 'http2 on; ' + http_extra), files=files)


def ping_roundtrip(c, data=b'cp-ping!'):
    """Send a PING and wait for its ACK: the server has processed every frame sent before it."""
    c.conn.ping(data)
    c.flush()
    ev = c.wait_for(h2.events.PingAckReceived)
    assert ev is not None


def test_upstream_failing_mid_body_resets_the_stream(server, be):
    be.handler = lambda r: [b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + b'p' * 1000]
    be.close_after = 1
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:%d; proxy_buffering off; }' % be.port)
    c = H2(srv.port)
    try:
        sid = c.request('/cut')
        with pytest.raises(ConnectionError, match='stream %d reset: 2$' % sid):  # INTERNAL_ERROR
            c.response(sid)
        assert wait_log(srv, r'upstream prematurely closed connection')
        # the connection goes on
        be.handler = lambda r: be.reply(200, b'fine')
        status, _, body = c.get('/next')
        assert status == 200 and body == b'fine'
    finally:
        c.close()


def test_response_before_the_body_ends_resets_without_error(server):
    srv = h2srv(server, 'location / { return 200 "early"; }')
    c = H2(srv.port)
    try:
        sid = c.request('/', method='POST', body=b'part one', end=False)
        status = body = None
        deadline = time.monotonic() + 10
        reset = None
        while time.monotonic() < deadline and reset is None:
            for e in c.read(1.0):
                if getattr(e, 'stream_id', None) != sid:
                    continue
                if isinstance(e, h2.events.ResponseReceived):
                    status = dict(e.headers)[':status']
                elif isinstance(e, h2.events.DataReceived):
                    body = (body or b'') + e.data
                elif isinstance(e, h2.events.StreamReset):
                    reset = e.error_code
        assert status == '200' and body == b'early'
        assert reset == 0  # NO_ERROR: stop sending, the response is complete (RFC 9113 §8.1)
        status, _, body = c.get('/')
        assert status == 200
    finally:
        c.close()


def test_body_growing_above_the_limit_while_read_is_413(server, be):
    srv = h2srv(server, 'location / { client_max_body_size 10; proxy_pass http://127.0.0.1:%d; }' % be.port)
    c = H2(srv.port)
    try:
        sid = c.request('/', method='POST', body=b'12345', end=False)
        ping_roundtrip(c)  # the request started: its handler reads the body now
        c.send_body(sid, b'x' * 100, end=True)
        status, _, _ = c.response(sid)
        assert status == 413
        assert wait_log(srv, 'client intended to send too large body: 105 bytes')
        assert be.requests == []
    finally:
        c.close()


def test_trailers_of_connection_fields_only_are_not_sent(server):
    srv = h2srv(server, 'location / { add_trailer Connection "x"; return 200 "body"; }')
    c = H2(srv.port)
    try:
        sid = c.request('/')
        status, _, body = c.response(sid)
        assert status == 200 and body == b'body'
        assert not [e for e in c.events if isinstance(e, h2.events.TrailersReceived)]
    finally:
        c.close()


def test_body_read_in_pieces_across_reads(server, be):
    be.handler = lambda r: be.reply(200, b'%d' % len(r.body))
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:%d; }' % be.port)
    c = H2(srv.port)
    try:
        sid = c.request('/', method='POST', body=b'a' * 1000, end=False)
        ping_roundtrip(c)
        c.send_body(sid, b'b' * 70000, end=False)  # above the initial window: the server reopens it
        ping_roundtrip(c)
        c.conn.end_stream(sid)
        c.flush()
        status, _, body = c.response(sid)
        assert status == 200 and body == b'71000'
    finally:
        c.close()


def test_streamed_body_to_a_slow_upstream(server):
    # proxy_request_buffering off: the body goes on as it comes, paused while the upstream does not read
    import socket
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    got = {}

    def upstream():
        s, _ = ls.accept()
        s.settimeout(10)
        data = b''
        while b'\r\n\r\n' not in data:
            data += s.recv(65536)
        head, _, rest = data.partition(b'\r\n\r\n')
        gate.wait(10)
        body = rest
        while not body.endswith(b'0\r\n\r\n') and len(body) < 400000:
            d = s.recv(65536)
            if not d:
                break
            body += d
        got['body'] = body
        s.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
        s.close()

    gate = threading.Event()
    t = threading.Thread(target=upstream, daemon=True)
    t.start()
    srv = h2srv(server, 'location / { proxy_request_buffering off; proxy_http_version 1.1; '
                        'proxy_pass http://127.0.0.1:%d; }' % port)
    c = H2(srv.port)
    try:
        sid = c.request('/', method='POST', end=False)
        c.send_body(sid, b'z' * 200000, end=False)
        gate.set()
        c.conn.end_stream(sid)
        c.flush()
        status, _, body = c.response(sid, timeout=20)
        assert status == 200 and body == b'ok'
        t.join(10)
        assert got['body'].count(b'z') == 200000
    finally:
        c.close()
        ls.close()


def test_ssi_include_over_h2(server):
    srv = h2srv(server, 'root {html}; location / { ssi on; }',
                files={'html/page.html': '[<!--#include virtual="/part.html" -->]', 'html/part.html': 'inner'})
    c = H2(srv.port)
    try:
        status, _, body = c.get('/page.html')
        assert status == 200 and body == b'[inner]'
    finally:
        c.close()


def test_mirror_of_an_h2_request_with_body(server, be):
    mir = Backend().start()
    try:
        be.handler = lambda r: be.reply(200, b'main')
        mir.handler = lambda r: mir.reply(200, b'')
        srv = h2srv(server, 'location / { mirror /m; proxy_pass http://127.0.0.1:%d; } '
                            'location = /m { internal; proxy_pass http://127.0.0.1:%d; }' % (be.port, mir.port))
        c = H2(srv.port)
        try:
            status, _, body = c.get('/x', method='POST', body=b'mirrored', headers=[('user-agent', 'h2ua'),
                                                                                 ('if-none-match', '"t"')])
            assert status == 200 and body == b'main'
        finally:
            c.close()
        mir.wait_requests(1)
        m = mir.requests[0]
        assert m.body == b'mirrored' and m.header('User-Agent') == 'h2ua' and m.header('If-None-Match') == '"t"'
    finally:
        mir.stop()
