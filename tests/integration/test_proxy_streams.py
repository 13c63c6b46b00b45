"""Proxied exchanges the other proxy tests do not reach (issue 18's coverage): an upgraded connection that idles
past proxy_read_timeout, that a client floods without reading (backpressure both ways), or that a client resets;
and proxied responses over HTTP/2: streamed (chunks with pauses), larger than the client's window, cut by the
backend mid-body, reset by the client mid-body; request bodies over HTTP/2 to a proxy (small, too large)."""
import socket
import struct
import threading
import time

import h2.events
import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend
from helpers.h2client import H2
from helpers.process import wait_log
from test_proxy_upstream import upgrade_echo_backend

UPGRADE = b'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'


def tunnel_server(server, port, extra=''):
    return server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; %s }''' % (port, extra)))


def open_tunnel(srv, rcvbuf=None):
    c = srv.conn(timeout=10, rcvbuf=rcvbuf)
    c.send(UPGRADE)
    _, status, _, _, _ = c.read_head()
    assert status == 101
    data = bytes(c.buf)
    c.buf = b''
    while len(data) < 5:
        data += c.sock.recv(100)
    assert data == b'hello'
    return c


def test_upgraded_connection_idle_past_read_timeout_is_closed(server):
    ls, _ = upgrade_echo_backend()
    try:
        srv = tunnel_server(server, ls.getsockname()[1], 'proxy_read_timeout 1s;')
        c = open_tunnel(srv)
        c.sock.settimeout(10)
        assert c.sock.recv(10) == b''   # closed by the server, not by us
        wait_log(srv, r'upstream timed out \(110: Connection timed out\) while proxying upgraded connection')
    finally:
        ls.close()


def test_tunnel_backpressure_keeps_every_byte(server):
    # the client writes 8 MB before it reads: the echo fills the server's queue towards the client, the server
    # stops reading the upstream, the upstream stops reading, the server stops reading the client; once the
    # client reads, everything flows again and arrives in order
    ls, _ = upgrade_echo_backend()
    try:
        srv = tunnel_server(server, ls.getsockname()[1])
        c = open_tunnel(srv, rcvbuf=4096)
        msg = bytes(range(97, 123)) * (8 * 1024 * 1024 // 26)
        sent = threading.Event()

        def writer():
            c.sock.sendall(msg)
            sent.set()
        t = threading.Thread(target=writer, daemon=True)
        t.start()
        got = bytearray()
        c.sock.settimeout(10)
        while len(got) < len(msg):
            d = c.sock.recv(1 << 16)
            assert d, 'tunnel closed after %d bytes' % len(got)
            got += d
        assert bytes(got) == msg.upper()
        t.join(10)
        assert sent.is_set()
    finally:
        ls.close()


def test_tunnel_client_reset_ends_the_upstream_side(server):
    closed = threading.Event()
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(8)

    def serve():
        c, _ = ls.accept()
        buf = b''
        while b'\r\n\r\n' not in buf:
            buf += c.recv(4096)
        c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhello')
        c.settimeout(10)
        try:
            while c.recv(65536):
                pass
        except OSError:
            pass
        closed.set()
        c.close()
    threading.Thread(target=serve, daemon=True).start()
    try:
        srv = tunnel_server(server, ls.getsockname()[1])
        c = open_tunnel(srv)
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        c.sock.close()
        assert closed.wait(10), 'the upstream connection stayed open after the client reset'
    finally:
        ls.close()


# ---------------------------------------------------------------- proxied responses over HTTP/2

@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def h2_proxy(server, be, extra=''):
    body = 'location / { proxy_pass http://127.0.0.1:%d; %s }' % (be.port, extra)
    if IS_NGINX:  # nginx 1.22: the listen parameter
        return server(simple(body, listen='listen 127.0.0.1:{port} http2;'))
    return server(simple(body, 'http2 on;'))


def test_h2_streamed_response_with_pauses(server, be):
    chunks = [b'first-', 0.3, b'second-', 0.3, b'third']
    be.handler = lambda r: Backend.chunked(200, chunks)
    srv = h2_proxy(server, be, 'proxy_http_version 1.1; proxy_buffering off;')
    c = H2(srv.port)
    try:
        status, hd, body = c.get('/s')
        assert status == 200 and body == b'first-second-third'
        assert 'transfer-encoding' not in hd
        # the connection serves another stream afterwards
        status, _, body = c.get('/s2')
        assert status == 200 and body == b'first-second-third'
    finally:
        c.close()


def test_h2_response_larger_than_the_window(server, be):
    data = bytes(range(256)) * 8192  # 2 MB
    be.handler = lambda r: be.reply(200, data)
    srv = h2_proxy(server, be, 'proxy_buffers 4 8k; proxy_buffer_size 8k;')
    c = H2(srv.port)
    try:
        status, hd, body = c.get('/big')
        assert status == 200 and body == data
        assert hd.get('content-length') == str(len(data))
    finally:
        c.close()


def test_h2_backend_cut_mid_body_resets_the_stream(server, be):
    # a Content-Length the backend does not honour: the client must not take the short body for a whole one
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + b'x' * 1000
    be.close_after = 1
    srv = h2_proxy(server, be, 'proxy_buffering off;')
    c = H2(srv.port)
    try:
        sid = c.request('/cut')
        with pytest.raises((ConnectionError, EOFError)):
            c.response(sid)
        wait_log(srv, r'upstream prematurely closed connection')
        # the connection (or a new one) still serves
        c2 = H2(srv.port)
        be.handler = lambda r: be.reply(200, b'fine')
        assert c2.get('/ok')[2] == b'fine'
        c2.close()
    finally:
        c.close()


def test_h2_client_resets_a_streaming_response(server, be):
    gate = threading.Event()
    be.handler = lambda r: Backend.chunked(200, [b'a' * 100])[:-1] + [lambda: gate.wait(5), b'64\r\n' + b'b' * 100 + b'\r\n0\r\n\r\n']
    srv = h2_proxy(server, be, 'proxy_http_version 1.1; proxy_buffering off;')
    c = H2(srv.port)
    try:
        sid = c.request('/r')
        assert c.wait_for(h2.events.DataReceived) is not None
        c.conn.reset_stream(sid)
        c.flush()
        gate.set()
        # the reset stream's late data is dropped; the connection carries on
        be.handler = lambda r: be.reply(200, b'next')
        status, _, body = c.get('/n')
        assert status == 200 and body == b'next'
    finally:
        gate.set()
        c.close()


def test_h2_request_body_to_a_proxy(server, be):
    # a body without content-length (HTTP/2 allows it: the stream's end ends it) is passed on with its length
    be.handler = lambda r: be.reply(200, ('%d:%s' % (len(r.body), r.body[:5].decode())).encode())
    srv = h2_proxy(server, be, 'client_max_body_size 16k;')
    c = H2(srv.port)
    try:
        sid = c.request('/p', method='POST', body=b'hello' * 2000)
        status, _, body = c.response(sid)
        assert status == 200 and body == b'10000:hello'
        assert be.requests[-1].header('Content-Length') == '10000'
        sid = c.request('/p', method='POST', body=b'hello' * 2000, headers=[('content-length', '10000')])
        assert c.response(sid)[2] == b'10000:hello'
    finally:
        c.close()
    # too large: 413, announced by content-length or found as DATA frames arrive
    for hdrs in ([('content-length', '40000')], []):
        c = H2(srv.port)
        try:
            sid = c.request('/p', method='POST', body=b'z' * 40000, headers=hdrs)
            status, _, _ = c.response(sid)
            assert status == 413
        finally:
            c.close()
    assert len(be.requests) == 2


def test_h2_unbuffered_request_body_to_a_proxy(server, be):
    be.handler = lambda r: be.reply(200, ('%d' % len(r.body)).encode())
    srv = h2_proxy(server, be, 'proxy_request_buffering off; proxy_http_version 1.1; client_max_body_size 1m;')
    c = H2(srv.port)
    try:
        body = bytes(range(256)) * 1000
        sid = c.request('/u', method='POST', body=body, end=False)
        c.send_body(sid, b'!' * 1000, end=True)
        status, _, resp = c.response(sid)
        assert status == 200 and resp == b'%d' % (len(body) + 1000)
        assert be.requests[-1].body == body + b'!' * 1000
    finally:
        c.close()
