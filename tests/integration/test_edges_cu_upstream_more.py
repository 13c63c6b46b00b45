"""More upstream exchange edges (nginx's proxy module): a 101 answer to a request that asked for no upgrade, a
read timeout before and after the head went out, proxy_next_upstream on a timeout."""
import pytest

from conftest import simple
from helpers.backend import Backend

R = Backend.reply


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.hayate_only  # nginx 1.22 closes the client connection without an answer
def test_101_without_an_upgrade_request_is_502(server, be):
    be.handler = lambda req: b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n'
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; }' % be.port))
    assert srv.get('/').status == 502


def test_read_timeout_before_the_head_is_504(server, be):
    be.handler = lambda req: [3.0, R(200, b'late')]
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_read_timeout 300ms; }' % be.port))
    assert srv.get('/').status == 504
    assert 'upstream timed out (110: Connection timed out) while reading response header from upstream' \
        in srv.error_log()


def test_read_timeout_after_the_head_cuts_the_body(server, be):
    be.handler = lambda req: [b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', 3.0, b'defghij']
    srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_read_timeout 300ms;
                                        proxy_buffering off; }''' % be.port))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    while c._fill():
        pass
    assert c.buf.startswith(b'HTTP/1.1 200'), c.buf
    assert c.buf.endswith(b'abc'), c.buf  # the client sees a short body and the close
    assert 'upstream timed out (110: Connection timed out) while reading upstream' in srv.error_log()


def test_timeout_passed_to_the_next_server(server, be):
    slow = Backend().start()
    try:
        slow.handler = lambda req: [3.0, R(200, b'slow')]
        be.handler = lambda req: R(200, b'fast')
        srv = server(simple('location / { proxy_pass http://u; proxy_read_timeout 300ms; }', http_extra='''
            upstream u { server 127.0.0.1:%d; server 127.0.0.1:%d backup; }''' % (slow.port, be.port)))
        r = srv.get('/')
        assert r.status == 200 and r.body == b'fast', r
    finally:
        slow.stop()
