"""The CGI-like response head of scgi_pass (uconf.c, shared with uwsgi and fastcgi): heads that end at once or
with mixed line ends, Status fields and HTTP status lines (valid and invalid), a Status without a known reason,
X-Accel-Buffering / X-Accel-Limit-Rate / X-Accel-Redirect (percent-decoding, unsafe targets, HEAD kept), repeated
ETag and Location fields, scgi_hide_header twice, and the *_temp_path levels errors. The SCGI peer is a small
socket server in this process, answering the bytes each test gives."""
import socket
import threading

import pytest

from conftest import simple, IS_NGINX


class ScgiPeer:
    def __init__(self, answer):
        self.answer = answer
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.envs = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            c.settimeout(10)
            buf = b''
            while b':' not in buf:
                buf += c.recv(4096)
            ln, rest = buf.split(b':', 1)
            n = int(ln)
            while len(rest) < n + 1:
                rest += c.recv(4096)
            items = rest[:n].split(b'\0')
            env = dict(zip(items[0::2], items[1::2]))
            body = rest[n + 1:]
            want = int(env.get(b'CONTENT_LENGTH', b'0') or 0)
            while len(body) < want:
                body += c.recv(4096)
            self.envs.append(env)
            c.sendall(self.answer(env) if callable(self.answer) else self.answer)
        except OSError:
            pass
        finally:
            c.close()

    def stop(self):
        self.sock.close()


@pytest.fixture
def peer():
    made = []

    def make(answer):
        p = ScgiPeer(answer)
        made.append(p)
        return p
    yield make
    for p in made:
        p.stop()


def conf(p, extra=''):
    return simple('''
        location / { scgi_pass 127.0.0.1:%d; %s }
        location /files/ { return 200 "file:$uri:$args:$request_method"; }
        location @named { return 200 "named:$request_method"; }''' % (p.port, extra))


@pytest.mark.parametrize('answer,status,body', [
    (b'\nplain', 200, b'plain'),
    (b'\r\nplain', 200, b'plain'),
    (b'Status: 201 Made\n\r\nmixed', 201, b'mixed'),
    (b'Content-Type: text/x\r\nX-A: 1\n\nlf', 200, b'lf'),
    (b'HTTP/1.1 203 Fine\r\nX-A: 1\r\n\r\nnph', 203, b'nph'),
    (b'Location: http://x/\r\n\r\n', 302, None),
])
def test_heads_accepted(server, peer, answer, status, body):
    p = peer(answer)
    srv = server(conf(p))
    r = srv.get('/')
    assert r.status == status, r
    if body is not None:
        assert r.body == body, r


@pytest.mark.parametrize('answer', [
    b'Status: 2x0\r\n\r\n',
    pytest.param(b'Status: 099 Low\r\n\r\n', marks=pytest.mark.hayate_only),  # nginx lets it through
    pytest.param(b'Status: 2000\r\n\r\n', marks=pytest.mark.hayate_only),  # nginx lets it through
    b'Status: 20\r\n\r\n',
    pytest.param(b'HTTP/1.1XYZ\r\n\r\n', marks=pytest.mark.hayate_only),  # nginx lets it through
    pytest.param(b'HTTP/1.1 abc Bad\r\n\r\n', marks=pytest.mark.hayate_only),  # nginx lets it through
    pytest.param(b'Content-Length: -5\r\n\r\n', marks=pytest.mark.hayate_only),  # nginx lets it through
    b'Bad Field\r\n\r\n',
])
def test_invalid_heads_are_502(server, peer, answer):
    p = peer(answer)
    srv = server(conf(p))
    assert srv.get('/').status == 502


@pytest.mark.hayate_only
def test_status_without_known_reason(server, peer):
    p = peer(b'Status: 299\r\n\r\nodd')
    srv = server(conf(p))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    r = c.read_response()
    assert r.status == 299 and r.body == b'odd', r


def test_status_with_reason_text(server, peer):
    p = peer(b'Status: 200 Very Fine\r\n\r\nok')
    srv = server(conf(p))
    r = srv.get('/')
    assert r.status == 200 and r.reason == 'Very Fine', r


def test_first_etag_and_location_kept(server, peer):
    p = peer(b'Status: 301\r\nETag: "one"\r\nETag: "two"\r\nLocation: http://a/\r\nLocation: http://b/\r\n\r\n')
    srv = server(conf(p))
    r = srv.get('/')
    assert r.status == 301
    assert r.header_all('ETag')[0] == '"one"' and r.header_all('Location')[0] == 'http://a/', r


def test_hide_header_twice(server, peer):
    p = peer(b'X-A: 1\r\nX-B: 2\r\nX-C: 3\r\n\r\nok')
    srv = server(conf(p, 'scgi_hide_header X-A; scgi_hide_header X-B; scgi_next_upstream_timeout 5s;'))
    r = srv.get('/')
    assert r.status == 200 and r.header('X-C') == '3' and r.header('X-A') is None and r.header('X-B') is None, r


@pytest.mark.parametrize('value,ok', [('yes', True), ('no', True), ('maybe', True)])
def test_accel_buffering_values(server, peer, value, ok):
    p = peer(b'X-Accel-Buffering: %s\r\n\r\n' % value.encode() + b'b' * 1000)
    srv = server(conf(p))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'b' * 1000
    assert r.header('X-Accel-Buffering') is None


@pytest.mark.parametrize('value,logged', [('off', False), ('100000', False),
                                           pytest.param('abc', True, marks=pytest.mark.hayate_only)])
def test_accel_limit_rate_values(server, peer, value, logged):
    p = peer(b'X-Accel-Limit-Rate: %s\r\n\r\nrated' % value.encode())
    srv = server(conf(p))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'rated', r
    srv.stop()
    assert ('upstream sent invalid "X-Accel-Limit-Rate" header' in srv.error_log()) == logged


@pytest.mark.parametrize('target,method,status,body', [
    ('/files/a%2Fb?x=1', 'GET', 200, b'file:/files/a/b:x=1:GET'),
    pytest.param('/files/%zz%4', 'GET', 200, b'file:/files/%zz%4::GET', marks=pytest.mark.hayate_only),
    ('/files/%41%62', 'POST', 200, b'file:/files/Ab::GET'),
    ('@named', 'POST', 200, b'named:POST'),
    ('/files/../etc', 'GET', 404, None),
    ('/files/%2e%2e/etc', 'GET', 404, None),
    ('/files/a%00b', 'GET', 404, None),
    ('?only=args', 'GET', 404, None),
])
def test_accel_redirect_targets(server, peer, target, method, status, body):
    p = peer(b'X-Accel-Redirect: %s\r\nX-Drop: 1\r\nSet-Cookie: c=1\r\n\r\nignored' % target.encode())
    srv = server(conf(p))
    r = srv.get('/', method=method, body=b'x' if method == 'POST' else None)
    assert r.status == status, r
    if body is not None:
        assert r.body == body, r
        assert r.header('X-Drop') is None and r.header('Set-Cookie') == 'c=1', r


def test_accel_redirect_keeps_head(server, peer):
    p = peer(b'X-Accel-Redirect: /files/h\r\n\r\n')
    srv = server(conf(p))
    r = srv.head('/')
    assert r.status == 200 and r.body == b'', r
    assert r.header('Content-Length') == str(len('file:/files/h::HEAD')), r


@pytest.mark.hayate_only
@pytest.mark.parametrize('levels', ['11', '5 5 1', '0', 'x'])
def test_temp_path_levels_errors(run_cli, prefix, levels):
    path = prefix.conf(simple('location / { proxy_pass http://127.0.0.1:1; proxy_temp_path tmp/p %s; }' % levels))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1, res
    assert 'invalid value "' in res.err and path in res.err, res.err


def test_temp_path_trailing_slash(server, peer):
    p = peer(b'\r\n' + b'z' * 300000)
    srv = server(conf(p, 'scgi_temp_path tmp/scgi/// 1 2; scgi_buffers 2 4k; scgi_buffer_size 4k; scgi_busy_buffers_size 4k;'),
                 files={'tmp/.keep': ''})
    r = srv.get('/')
    assert r.status == 200 and r.body == b'z' * 300000
