"""HTTP/1 request body edges (issue 18's coverage): a chunked body that turns malformed or too large while a
handler reads it (400, 413), "100 Continue" for a handler that reads the body, a partial HTTP/2 preface on a cleartext listener, an HTTP/2
preface on a listener without HTTP/2."""
import socket
import threading

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.process import wait_log


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, b'got %d' % len(r.body))
    yield b
    b.stop()


def proxy_srv(server, be, loc_extra='', http_extra=''):
    return server(simple('location / { %s proxy_pass http://127.0.0.1:%d; }' % (loc_extra, be.port),
                         "log_format st '$request $status'; access_log {tmp}/logs/st.log st; " + http_extra))


def test_chunked_body_turning_malformed_while_read_is_400(server, be):
    srv = proxy_srv(server, be)
    c = srv.conn()
    c.send(b'POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
    assert c.still_open(0.3)
    c.send_lenient(b'zz\r\nbad\r\n0\r\n\r\n')
    r = c.read_response()
    assert r.status == 400
    assert be.requests == []
    c.close()


def test_chunked_body_growing_above_the_limit_while_read_is_413(server, be):
    srv = proxy_srv(server, be, 'client_max_body_size 10;')
    c = srv.conn()
    c.send(b'POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
    assert c.still_open(0.3)
    c.send_lenient(b'10\r\n' + b'x' * 16 + b'\r\n0\r\n\r\n')
    r = c.read_response()
    assert r.status == 413
    assert wait_log(srv, r'client intended to send too large chunked body: (21|5\+16) bytes')  # nginx: received+chunk
    assert be.requests == []
    c.close()


def test_expect_continue_for_a_handler_that_reads_the_body(server, be):
    srv = proxy_srv(server, be)
    c = srv.conn()
    c.send(b'POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n')
    r = c.read_response(allow_interim=True)
    assert r.status == 100
    c.send(b'hello')
    r = c.read_response()
    assert r.status == 200 and r.body == b'got 5'
    c.close()


@pytest.mark.hayate_only  # nginx 1.22: "listen ... http2" rather than "http2 on"
def test_partial_h2_preface_then_close(server):
    srv = server(simple('location / { return 200 "ok"; }', 'http2 on;'))
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'PRI * HTTP/2.0\r\n')
    s.shutdown(socket.SHUT_WR)
    assert s.recv(100) == b''  # closed without an answer
    s.close()
    c = srv.conn()
    assert c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n').status == 200
    c.close()


def test_h2_preface_where_http2_is_off_is_a_bad_request(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    r = c.request(b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', method='GET')
    assert r.status in (400, 405)
    c.close()
