"""HTTP/1 response framing and connection edges (issue 18's coverage): methods with "-" and "_", Expect values
that ask for no "100 Continue", 204 and 304 from an upstream without a length (not chunked), keepalive_requests
closing the last response, tcp_nodelay off and limit_rate on a keep-alive connection, a keep-alive connection
whose next request is malformed."""
import pytest

from conftest import simple
from helpers.backend import Backend


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.parametrize('method', [b'M-SEARCH', b'X_Y'])
def test_methods_with_dash_and_underscore(server, method):
    srv = server(simple('location / { return 200 "m=$request_method"; }'))
    r = srv.raw(method + b' / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', method='GET')
    assert r.status == 200 and r.body == b'm=' + method


@pytest.mark.parametrize('version,expect', [(b'HTTP/1.0', b'100-continue'), (b'HTTP/1.1', b'something-else')])
def test_expect_without_100_continue(server, be, version, expect):
    be.handler = lambda r: be.reply(200, b'got %d' % len(r.body))
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    c.send(b'POST / ' + version + b'\r\nHost: x\r\nContent-Length: 3\r\nExpect: ' + expect + b'\r\n\r\n')
    assert c.still_open(0.3) and c.buf == b''  # no interim response
    c.send(b'abc')
    r = c.read_response(allow_interim=True)
    assert r.status == 200 and r.body == b'got 3'
    c.close()


@pytest.mark.parametrize('status', [204, 304])
def test_upstream_status_without_body_is_not_chunked(server, be, status):
    be.handler = lambda r: [b'HTTP/1.1 %d X\r\nETag: "e"\r\n\r\n' % status]
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == status and r.header('Transfer-Encoding') is None and r.body == b''
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')  # the connection is still in step
    assert r.status == status
    c.close()


def test_keepalive_requests_closes_the_last_response(server):
    srv = server(simple('keepalive_requests 2; location / { return 200 "ok"; }'))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.header('Connection') == 'keep-alive'
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200 and r.header('Connection') == 'close'
    assert c.is_closed()
    c.close()


def test_tcp_nodelay_off_and_limit_rate_on_keepalive(server):
    body = b'r' * 30000
    srv = server(simple('tcp_nodelay off; root {html}; location / { limit_rate 1m; }'), files={'html/f': body})
    c = srv.conn()
    for _ in range(3):
        r = c.request(b'GET /f HTTP/1.1\r\nHost: x\r\n\r\n')
        assert r.status == 200 and r.body == body
    c.close()


def test_malformed_request_on_a_keepalive_connection(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200
    r = c.request(b'GET / HTTP/1.1 junk\r\nHost: x\r\n\r\n')
    assert r.status == 400
    assert c.is_closed()
    c.close()
