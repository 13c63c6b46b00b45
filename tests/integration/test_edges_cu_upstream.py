"""Upstream exchange edges, as nginx's ngx_http_proxy_module documents them: a request that was sent and then
failed is passed to the next server only when the method is idempotent (not POST, LOCK, PATCH) unless
proxy_next_upstream has non_idempotent; proxy_next_upstream_tries larger than the servers; a chunked request body
with proxy_request_buffering off (streamed with HTTP/1.1, read whole with HTTP/1.0: no chunked coding there);
responses without a body (HEAD, 204, 304) and intercepted errors. Run against nginx too."""
import pytest

from conftest import simple
from helpers.backend import Backend

R = Backend.reply


@pytest.fixture
def backends():
    made = []

    def make(n=1):
        out = [Backend().start() for _ in range(n)]
        made.extend(out)
        return out
    yield make
    for b in made:
        b.stop()


def two_peers(a, b, loc_extra='', ups_extra=''):
    return simple('''
        location / {
            proxy_pass http://u;
            %s
        }''' % loc_extra, http_extra='''
        upstream u { server 127.0.0.1:%d; server 127.0.0.1:%d backup; %s }''' % (a.port, b.port, ups_extra))


@pytest.mark.parametrize('method,retried', [
    ('GET', True), ('PUT', True), ('DELETE', True), ('POST', False), ('LOCK', False), ('PATCH', False)])
def test_sent_request_retried_only_when_idempotent(server, backends, method, retried):
    a, b = backends(2)
    a.handler = lambda req: None  # reads the request, closes without an answer
    b.handler = lambda req: R(200, b'second')
    srv = server(two_peers(a, b))
    r = srv.get('/x', method=method, body=b'data')
    a.wait_requests(1)
    if retried:
        assert r.status == 200 and r.body == b'second', r
        assert [q.method for q in b.requests] == [method]
    else:
        assert r.status == 502, r
        assert b.requests == []


@pytest.mark.parametrize('method', ['POST', 'PATCH'])
def test_non_idempotent_retried_with_the_flag(server, backends, method):
    a, b = backends(2)
    a.handler = lambda req: None
    b.handler = lambda req: R(200, b'second:' + req.body)
    srv = server(two_peers(a, b, 'proxy_next_upstream error timeout non_idempotent;'))
    r = srv.get('/x', method=method, body=b'data')
    assert r.status == 200 and r.body == b'second:data', r


def test_tries_larger_than_servers(server, backends):
    a, b = backends(2)
    a.handler = lambda req: R(502, b'bad')
    b.handler = lambda req: R(200, b'second')
    srv = server(two_peers(a, b, 'proxy_next_upstream http_502; proxy_next_upstream_tries 10;'))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'second', r


def test_next_upstream_timeout_not_yet_reached(server, backends):
    a, b = backends(2)
    a.handler = lambda req: R(503, b'busy')
    b.handler = lambda req: R(200, b'second')
    srv = server(two_peers(a, b, 'proxy_next_upstream http_503; proxy_next_upstream_timeout 30s;'))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'second', r


def chunked_post(srv, chunks):
    body = b''.join(b'%x\r\n%s\r\n' % (len(c), c) for c in chunks) + b'0\r\n\r\n'
    return srv.raw(b'POST /up HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'
                   b'Transfer-Encoding: chunked\r\n\r\n' + body)


def test_unbuffered_chunked_body_http11_is_streamed_chunked(server, backends):
    be, = backends()
    be.handler = lambda req: R(200, b'got:' + req.body)
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_request_buffering off; proxy_http_version 1.1; }'''
                        % be.port))
    c = srv.conn()
    c.send(b'POST /up HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'
           b'Transfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n')
    be.wait_open(1)  # the body is not complete yet: the request goes out as it comes
    c.send(b'5\r\nworld\r\n0\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'got:hello world', r
    q = be.requests[0]
    assert (q.header('Transfer-Encoding') or '').lower() == 'chunked', q.headers
    assert q.header('Content-Length') is None


def test_unbuffered_chunked_body_http10_is_read_whole(server, backends):
    be, = backends()
    be.handler = lambda req: R(200, b'got:' + req.body)
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_request_buffering off; proxy_http_version 1.0; }'''
                        % be.port))
    r = chunked_post(srv, [b'hello ', b'world'])
    assert r.status == 200 and r.body == b'got:hello world', r
    q = be.requests[0]
    assert q.header('Content-Length') == '11', q.headers
    assert q.header('Transfer-Encoding') is None


def test_unbuffered_content_length_body(server, backends):
    be, = backends()
    be.handler = lambda req: R(200, b'got:' + req.body)
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_request_buffering off; }''' % be.port))
    r = srv.get('/up', method='POST', body=b'x' * 5000)
    assert r.status == 200 and r.body == b'got:' + b'x' * 5000, r
    assert be.requests[0].header('Content-Length') == '5000'


def test_head_request_passes_no_body(server, backends):
    be, = backends()
    be.handler = lambda req: R(200, b'', [('Content-Length', '5'), ('X-M', req.method)], length=False)
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.head('/')
    assert r.status == 200 and r.body == b'', r
    assert r.header('X-M') == 'HEAD' and r.header('Content-Length') == '5'


@pytest.mark.parametrize('status', [204, 304])
def test_bodiless_statuses(server, backends, status):
    be, = backends()
    be.handler = lambda req: R(status, b'', [('ETag', '"e"')], length=False)
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/')
    assert r.status == status and r.body == b'', r
    assert r.header('ETag') == '"e"'


def test_intercepted_error_uses_error_page(server, backends):
    be, = backends()
    be.handler = lambda req: R(404, b'backend says no')
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_intercept_errors on; error_page 404 /nf.html; }
        location = /nf.html { return 200 "ours"; }''' % be.port))
    r = srv.get('/missing')
    assert r.status == 404 and r.body == b'ours', r


def test_intercept_without_error_page_passes_response(server, backends):
    be, = backends()
    be.handler = lambda req: R(301, b'moved', [('Location', 'http://x/')])
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_intercept_errors on; }''' % be.port))
    r = srv.get('/')
    assert r.status == 301 and r.header('Location') == 'http://x/', r
