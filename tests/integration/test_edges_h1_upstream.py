"""What an HTTP/1.x backend may answer, as the proxy reads it: a status line without a reason, HTTP/1.0
close-delimited bodies, interim 1xx responses before the final one, LF-only heads, chunked bodies with
extensions and trailers, a broken chunk size, a body after 204 or to a HEAD, "Connection" tokens deciding
whether an upstream keepalive connection is reused. helpers.backend answers raw bytes chosen by the request's
URI; they run against Debian's nginx too."""
import pytest

from conftest import simple
from helpers.backend import Backend

RAW = {
    '/noreason': b'HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok',
    '/http10': b'HTTP/1.0 200 OK\r\nX-A: 1\r\n\r\nclose-delimited',
    '/interim': b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    '/hints': b'HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok',
    '/lf': b'HTTP/1.1 200 OK\nContent-Length: 2\nX-B: 2\n\nok',
    '/spaces': b'HTTP/1.1 200    Fine\r\nContent-Length: 2\r\n\r\nok',
    '/chunked': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
                b'5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n',
    '/badchunk': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nxx\r\n0\r\n\r\n',
    '/nocontent': b'HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\njunk',
    '/short': b'HTTP/1.1 2',
    '/ka-close': b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, close\r\n\r\nok',
    '/cookies': b'HTTP/1.1 200 OK\r\nSet-Cookie: other=1\r\nSet-Cookie: sidx=no\r\n'
                b'Set-Cookie: sid=abc; Path=/\r\nContent-Length: 2\r\n\r\nok',
    '/ka': b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive\r\n\r\nok',
}


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda req: RAW.get(req.target.split('?')[0], b'HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n')
    yield b
    b.stop()


@pytest.fixture
def srv(server, be):
    return server('''
http {
    upstream ka { server 127.0.0.1:%d; keepalive 4; }
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass http://127.0.0.1:%d; add_header X-Sid "[$upstream_cookie_sid]"; }
        location /k/ { proxy_pass http://ka/; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
''' % (be.port, be.port))


@pytest.mark.parametrize('uri,status,body', [
    ('/noreason', 200, b'ok'),
    ('/http10', 200, b'close-delimited'),
    ('/interim', 200, b'ok'),
    ('/hints', 201, b'ok'),
    ('/lf', 200, b'ok'),
    ('/spaces', 200, b'ok'),
    ('/chunked', 200, b'hello world'),
])
def test_answers(srv, uri, status, body):
    r = srv.get(uri)
    assert (r.status, r.body) == (status, body), r


def test_fields_kept(srv):
    assert srv.get('/http10').header('X-A') == '1'
    assert srv.get('/lf').header('X-B') == '2'


def test_nocontent_body_dropped(srv):
    c = srv.conn()
    r = c.request(b'GET /nocontent HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 204 and r.body == b''
    r = c.request(b'GET /noreason HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.body == b'ok'


def test_head(srv):
    r = srv.head('/noreason')
    assert r.status == 200 and r.body == b''


@pytest.mark.parametrize('uri', ['/short'])
def test_bad_heads_502(srv, uri):
    assert srv.get(uri).status == 502


def test_bad_chunk_cuts_the_response(srv):
    """The client never sees a complete response: the connection is closed."""
    c = srv.conn()
    c.send(b'GET /badchunk HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    while c._fill():
        pass
    # the head may have been queued but not sent: either nothing or a response without its last chunk
    assert not c.buf.endswith(b'0\r\n\r\n'), c.buf
    assert 'upstream sent invalid chunked response' in srv.error_log()


def test_connection_tokens_decide_reuse(srv, be):
    for _ in range(2):
        assert srv.get('/k/ka').body == b'ok'
    assert be.connections == 1
    for _ in range(2):
        assert srv.get('/k/ka-close').body == b'ok'
    assert be.connections == 2  # the third went on the first connection, which "close" ended


def test_upstream_cookie_variable(srv):
    """$upstream_cookie_NAME: the value of that cookie among the Set-Cookie fields, not of a longer name."""
    r = srv.get('/cookies')
    assert r.header('X-Sid') == '[abc]', r
