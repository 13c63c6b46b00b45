"""HTTP/1.x connection edges: keepalive_disable (msie6 after a POST, safari, none), keepalive_requests and
keepalive_timeout 0 ending a connection with "Connection: close", underscores_in_headers and
ignore_invalid_headers, Expect: 100-continue on HTTP/1.0 and on a request whose body is never read. Written
from nginx's documentation; they run against Debian's nginx too (but the hayate_only ones)."""
import pytest

from conftest import simple

MSIE6 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)'
SAFARI = ('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) '
          'Version/16.0 Safari/605.1.15')
CHROME = ('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) '
          'Chrome/120.0 Safari/537.36')

CONF = simple('''
    location / { return 200 "ok"; }
    location /safari/ { keepalive_disable safari; return 200 "ok"; }
    location /none/ { keepalive_disable none; return 200 "ok"; }
    location /two/ { keepalive_requests 2; return 200 "ok"; }
    location /zero/ { keepalive_timeout 0; return 200 "ok"; }
    location /hdr/ { return 200 "[$http_x_a_b]"; }
''')


def ask(srv, path, ua=None, method='GET', body=None):
    """One request; then whether the connection was closed (else a second request is answered on it)."""
    c = srv.conn()
    hdrs = 'Host: x\r\n'
    if ua:
        hdrs += 'User-Agent: %s\r\n' % ua
    if body is not None:
        hdrs += 'Content-Length: %d\r\n' % len(body)
    r = c.request(('%s %s HTTP/1.1\r\n%s\r\n' % (method, path, hdrs)).encode() + (body or b''), method)
    if r.header('Connection') == 'close':
        closed = c.is_closed(5.0)
    else:
        closed = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n').status != 200
    c.close()
    return r, closed


@pytest.mark.parametrize('path,ua,method,keep', [
    ('/', MSIE6, 'POST', False),
    ('/', MSIE6, 'GET', True),
    ('/', 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)', 'POST', True),
    ('/', 'Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)', 'POST', False),
    ('/', SAFARI, 'GET', True),                  # default: msie6 only
    ('/safari/', SAFARI, 'GET', False),
    ('/safari/', CHROME, 'GET', True),
    ('/safari/', MSIE6, 'GET', True),
    ('/none/', MSIE6, 'POST', True),
])
def test_keepalive_disable(server, path, ua, method, keep):
    srv = server(CONF)
    r, closed = ask(srv, path, ua, method, b'x' if method == 'POST' else None)
    assert r.status == 200 and r.body == b'ok'
    assert (r.header('Connection') == 'close') is not keep, r
    assert closed is not keep


def test_keepalive_requests(server):
    srv = server(CONF)
    c = srv.conn()
    r1 = c.request(b'GET /two/ HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r1.header('Connection') == 'keep-alive'
    r2 = c.request(b'GET /two/ HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r2.status == 200 and r2.header('Connection') == 'close'
    assert c.is_closed(5.0)


def test_keepalive_timeout_zero(server):
    srv = server(CONF)
    r, closed = ask(srv, '/zero/')
    assert r.header('Connection') == 'close' and closed


@pytest.mark.parametrize('extra,want', [
    ('', b'[]'),                                            # dropped (ignore_invalid_headers on)
    ('underscores_in_headers on;', b'[1]'),
    ('ignore_invalid_headers off;', b'[1]'),                # passed on as it is
])
def test_underscores(server, extra, want):
    srv = server(simple('location /hdr/ { return 200 "[$http_x_a_b]"; }', http_extra=extra))
    r = srv.raw(b'GET /hdr/ HTTP/1.1\r\nHost: x\r\nX-A_B: 1\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.body == want


@pytest.mark.parametrize('extra', ['', 'ignore_invalid_headers off;'])
def test_control_byte_in_name_is_400(server, extra):
    srv = server(simple('location / { return 200 "ok"; }', http_extra=extra))
    r = srv.raw(b'GET / HTTP/1.1\r\nHost: x\r\nX\x01A: 1\r\nConnection: close\r\n\r\n')
    assert r.status == 400


def test_expect_on_http10_gets_no_interim(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    c.send(b'POST / HTTP/1.0\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n')
    c.send(b'ab')
    r = c.read_response('POST', allow_interim=True)
    assert r.status == 200 and r.body == b'ok'


def test_expect_with_unread_body(server):
    """The body is never needed (return): the final response comes at once, and the connection is not reused
    with the unsent body in the way (nginx sends no 100 then and closes or discards)."""
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n')
    r = c.read_response('POST', allow_interim=True)
    while r.status == 100:
        r = c.read_response('POST', allow_interim=True)
    assert r.status == 200 and r.body == b'ok'


def test_keepalive_time_ends_an_old_connection(server):
    """keepalive_time 1s: a request on a connection older than that is answered with "Connection: close"."""
    import time
    srv = server(simple('keepalive_time 1s; location / { return 200 "ok"; }'))
    c = srv.conn()
    deadline = time.monotonic() + 10
    n = 0
    while True:
        r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        n += 1
        assert r.status == 200
        if r.header('Connection') == 'close':
            break
        assert time.monotonic() < deadline, 'the connection was never closed'
        c.is_closed(0.2)  # pace the loop: nothing is expected to arrive
    assert n > 1 and c.is_closed(5.0)


def test_idle_connection_closed_on_graceful_shutdown(server):
    import signal
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    assert c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n').status == 200
    srv.proc.send_signal(signal.SIGQUIT)
    assert c.is_closed(10.0)
    srv.proc.wait(10)
    assert srv.proc.returncode == 0


def test_bad_chunked_body_while_discarding(server):
    """The body of a request answered without reading it is discarded; broken chunked framing there ends the
    connection instead of being read as a next request."""
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response('POST')
    assert r.status in (200, 400)
    assert c.is_closed(5.0)
