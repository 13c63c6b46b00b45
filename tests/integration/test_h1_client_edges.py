"""HTTP/1.x client behaviour at the edges (issue 18's coverage): a client that closes in the middle of a request
body a handler is reading, a chunked request body that breaks while a proxy reads it, header names with
underscores (dropped unless underscores_in_headers on), a partial HTTP/2 preface on an http2 port, an HTTP/1.0
client asking to upgrade."""
import socket
import threading
import time

import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend
from helpers.process import wait_log


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def read_all(s):
    out = b''
    s.settimeout(10)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (ConnectionResetError, socket.timeout):
        pass
    return out


def test_client_closes_mid_body_while_a_proxy_reads_it(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + b'a' * 1000)
    time.sleep(0.2)  # let the server start reading the body
    s.close()
    wait_log(srv, r'client prematurely closed connection( while reading client request body|, client)')
    assert be.requests == []  # nothing went upstream
    assert srv.get('/after').status == 200  # and the worker carries on


def test_broken_chunked_body_to_a_proxy_is_400(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n')
    out = read_all(s)
    s.close()
    assert out.startswith(b'HTTP/1.1 400'), out[:100]
    wait_log(srv, 'client sent invalid chunked body')
    assert be.requests == []


def test_body_over_the_limit_while_streamed(server, be):
    # chunked (no length to check up front) and unbuffered: the limit is found while the body flows
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; client_max_body_size 1k; }' % be.port))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n' + b'b' * 2048 +
              b'\r\n0\r\n\r\n')
    out = read_all(s)
    s.close()
    assert out.startswith(b'HTTP/1.1 413'), out[:100]
    wait_log(srv, 'client intended to send too large chunked body')


def test_underscores_in_header_names(server):
    srv = server('''
http {
    server { listen 127.0.0.1:{port}; location / { return 200 "[$http_x_under_score]"; } }
    server { listen 127.0.0.1:{port2}; underscores_in_headers on;
             location / { return 200 "[$http_x_under_score]"; } }
}
''')
    assert srv.get('/', headers=[('X_Under_Score', 'v')]).body == b'[]'
    assert srv.get('/', headers=[('X-Under-Score', 'w')]).body == b'[w]'
    assert srv.get('/', headers=[('X_Under_Score', 'v')], port=srv.port2).body == b'[v]'


@pytest.mark.hayate_only
def test_partial_h2_preface_then_close(server):
    srv = server(simple('location / { return 200 "ok"; }', 'http2 on;'))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'PRI * HTTP/2.0\r\n')
    s.shutdown(socket.SHUT_WR)
    assert read_all(s) == b''  # no HTTP/1 error page for half a preface: the connection just closes
    s.close()
    assert srv.get('/').body == b'ok'


@pytest.mark.hayate_only
def test_http10_upgrade_is_refused(server):
    # an HTTP/1.0 client cannot switch protocols (RFC 9110 7.8: Upgrade is HTTP/1.1): the 101 is not relayed
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(4)

    def serve():
        c, _ = ls.accept()
        buf = b''
        while b'\r\n\r\n' not in buf:
            buf += c.recv(4096)
        c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        time.sleep(1)
        c.close()
    threading.Thread(target=serve, daemon=True).start()
    try:
        srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; }'''
                            % ls.getsockname()[1]))
        s = socket.create_connection(('127.0.0.1', srv.port))
        s.sendall(b'GET /ws HTTP/1.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        out = read_all(s)
        assert out.startswith(b'HTTP/1.1 502'), out[:100]
    finally:
        ls.close()
