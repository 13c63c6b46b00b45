"""The CGI-like response head an SCGI application sends (ngx_http_scgi_module; the parser is shared with
uwsgi): a "Status:" field and its reason, a status line of its own ("HTTP/1.1 201 ..."), "Location" without a
Status (302), LF-only lines, an empty head, a bad Status or field name (502), Content-Length against the bytes
that follow, a response with no body (204, HEAD), a head larger than scgi_buffer_size, a peer closing before
the head is complete. The peer is a small raw SCGI responder in this file; its answer is chosen by the
request's URI. They run against Debian's nginx too."""
import socket

import pytest

from conftest import simple
from helpers.rawpeer import RawPeer

ANSWERS = {
    '/status': b'Status: 404 Not Here\r\nContent-Type: text/plain\r\n\r\nnope',
    '/status-bare': b'Status: 299\r\n\r\nodd',
    '/location': b'Location: http://example.com/x\r\n\r\n',
    '/line': b'HTTP/1.1 201 Made Here\r\nX-A: 1\r\n\r\nmade',
    '/lf': b'Status: 203 Fine\nX-B: 2\n\nlf-body',
    '/empty': b'\r\nbody-only',
    '/empty-lf': b'\nbody-lf',
    '/bad-status': b'Status: abc\r\n\r\nx',
    '/bad-name': b'Bad Name: x\r\n\r\nx',
    '/length': b'Content-Length: 3\r\n\r\nabcdef',
    '/short': b'Content-Length: 10\r\n\r\nabc',
    '/nocontent': b'Status: 204 No Content\r\n\r\n',
    '/big': b'X-Big: ' + b'y' * 8000 + b'\r\n\r\nx',
    '/cut': b'Status: 200 OK\r\nX-Half',
    '/accel': b'X-Accel-Redirect: /internal/f.txt\r\nX-Accel-Buffering: no\r\n\r\nignored',
    '/ign/accel': b'X-Accel-Redirect: /internal/f.txt\r\nX-Accel-Buffering: yes\r\n\r\nown body',
}


class ScgiPeer(RawPeer):
    def __init__(self):
        self.methods = []
        super().__init__(64)

    def serve(self, c):
        try:
            data = b''
            while b':' not in data:
                more = c.recv(4096)
                if not more:
                    return
                data += more
            n, rest = data.split(b':', 1)
            n = int(n)
            while len(rest) < n + 1:
                more = c.recv(4096)
                if not more:
                    return
                rest += more
            items = rest[:n].split(b'\0')
            env = dict(zip(items[0::2], items[1::2]))
            self.methods.append(env.get(b'REQUEST_METHOD'))
            uri = env.get(b'DOCUMENT_URI', b'').decode()
            if uri == '/env':
                names = (b'HTTP_X_A', b'HTTP_COOKIE', b'HTTP_X_B_C', b'EMPTY', b'FULL')
                body = b'|'.join(b'%s=%s' % (k, env[k]) if k in env else k + b'-' for k in names)
                c.sendall(b'Content-Type: text/plain\r\n\r\n' + body)
            else:
                c.sendall(ANSWERS.get(uri, b'Status: 500 Unknown\r\n\r\n'))
            c.shutdown(socket.SHUT_WR)
            while c.recv(4096):
                pass
        except OSError:
            pass
        finally:
            c.close()


@pytest.fixture
def srv(server):
    peer = ScgiPeer()
    s = server(simple('''root {html};
        location / { scgi_pass 127.0.0.1:%d; include scgi_params_min; }
        location /ign/ { scgi_pass 127.0.0.1:%d; include scgi_params_min;
                         scgi_ignore_headers X-Accel-Redirect X-Accel-Buffering; }
        location /internal/ { internal; }
        location /env { scgi_pass 127.0.0.1:%d; include scgi_params_min;
                        scgi_param EMPTY $arg_none if_not_empty; scgi_param FULL $arg_a if_not_empty; }''' %
               (peer.port, peer.port, peer.port)),
               files={'html/internal/f.txt': 'from the file','conf/scgi_params_min': 'scgi_param REQUEST_METHOD $request_method;\n'
                                              'scgi_param DOCUMENT_URI $document_uri;\n'})
    yield s
    peer.stop()


@pytest.mark.parametrize('uri,status,reason,body', [
    ('/status', 404, 'Not Here', b'nope'),
    ('/line', 201, 'Made Here', b'made'),
    ('/lf', 203, 'Fine', b'lf-body'),
    ('/empty', 200, 'OK', b'body-only'),
    ('/empty-lf', 200, 'OK', b'body-lf'),
    ('/length', 200, 'OK', b'abc'),
])
def test_heads(srv, uri, status, reason, body):
    r = srv.get(uri)
    assert (r.status, r.reason, r.body) == (status, reason, body), r


def test_status_without_reason(srv):
    r = srv.get('/status-bare')
    assert r.status == 299 and r.body == b'odd'


def test_location_without_status_is_302(srv):
    r = srv.get('/location')
    assert r.status == 302 and r.header('Location') == 'http://example.com/x'


def test_field_passed(srv):
    assert srv.get('/line').header('X-A') == '1'
    assert srv.get('/lf').header('X-B') == '2'


@pytest.mark.parametrize('uri,log', [
    ('/bad-status', 'upstream sent invalid'),
    ('/bad-name', 'upstream sent invalid header'),
    ('/big', 'upstream sent too big header'),
    ('/cut', 'upstream prematurely closed connection'),
])
def test_bad_heads_are_502(srv, uri, log):
    r = srv.get(uri)
    assert r.status == 502, r
    assert log in srv.error_log(), srv.error_log()


def test_no_content_and_head(srv):
    r = srv.get('/nocontent')
    assert r.status == 204 and r.body == b''
    r = srv.head('/status')
    assert r.status == 404 and r.body == b''


def test_short_body_is_cut(srv):
    """Content-Length 10, 3 bytes then the close: the client gets a response it can tell is incomplete."""
    c = srv.conn()
    c.send(b'GET /short HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    while c._fill():
        pass
    data = c.buf
    head, _, body = data.partition(b'\r\n\r\n')
    assert head.startswith(b'HTTP/1.1 200')
    assert b'Content-Length: 10' in head and len(body) == 3
    assert 'upstream prematurely closed connection' in srv.error_log()


def test_accel_redirect(srv):
    r = srv.get('/accel')
    assert r.status == 200 and r.body == b'from the file'
    assert srv.get('/internal/f.txt').status == 404  # internal only
    # ignored: the application's own body
    r = srv.get('/ign/accel')
    assert r.status == 200 and r.body == b'own body'


@pytest.mark.hayate_only
def test_request_fields_as_params(srv):
    """Repeated fields joined (", ", "; " for Cookie) as nginx 1.23+ does (Debian's 1.22 sends each), and
    if_not_empty."""
    r = srv.get('/env?a=1', headers=[('X-A', '1'), ('X-A', '2'), ('Cookie', 'a=1'), ('Cookie', 'b=2')])
    assert r.status == 200
    assert r.body == b'HTTP_X_A=1, 2|HTTP_COOKIE=a=1; b=2|HTTP_X_B_C-|EMPTY-|FULL=1', r.body


def test_if_not_empty(srv):
    r = srv.get('/env?a=1')
    assert r.status == 200 and r.body.endswith(b'|EMPTY-|FULL=1'), r.body
