"""Proxy directives no other test exercises: proxy_method (a constant and a variable), proxy_ignore_headers
(X-Accel-Redirect and X-Accel-Limit-Rate not acted on), and ssi_value_length (a longer parameter value is an
error). The backend is helpers.backend; they run against Debian's nginx too."""
import pytest

from conftest import simple
from helpers.backend import Backend


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda req: b.reply(200, ('%s %s' % (req.method, req.target)).encode(),
                                    [('X-Accel-Redirect', '/internal/f.txt')] if 'accel' in req.target else [])
    yield b
    b.stop()


@pytest.fixture
def srv(server, be):
    return server(simple('''root {html};
        location /m/ { proxy_pass http://127.0.0.1:%d; proxy_method POST; }
        location /v/ { proxy_pass http://127.0.0.1:%d; proxy_method $arg_m; }
        location /accel/ { proxy_pass http://127.0.0.1:%d; }
        location /ign/accel/ { proxy_pass http://127.0.0.1:%d; proxy_ignore_headers X-Accel-Redirect
                               X-Accel-Limit-Rate X-Accel-Buffering X-Accel-Charset Expires Cache-Control; }
        location /internal/ { internal; }
    ''' % ((be.port,) * 4)), files={'html/internal/f.txt': 'from the file'})


def test_method_constant(srv, be):
    r = srv.get('/m/x')
    assert r.status == 200 and r.body == b'POST /m/x'


def test_method_variable(srv, be):
    r = srv.get('/v/x?m=PROPFIND')
    assert r.status == 200 and r.body == b'PROPFIND /v/x?m=PROPFIND'


def test_accel_redirect_followed(srv):
    r = srv.get('/accel/a')
    assert r.status == 200 and r.body == b'from the file'


def test_accel_redirect_ignored(srv):
    r = srv.get('/ign/accel/a')
    assert r.status == 200 and r.body == b'GET /ign/accel/a'


@pytest.mark.parametrize('value,want', [('12345', b'[12345]'), ('123456', b'[]')])
def test_ssi_value_length(server, value, want):
    srv = server(simple('root {html}; location / { ssi on; ssi_value_length 5; ssi_silent_errors on; }'),
                 files={'html/p.html': '<!--#set var="a" value="%s" -->[<!--#echo var="a" default="" -->]' % value})
    assert srv.get('/p.html').body == want
