"""charset edges (ngx_http_charset_module): a proxied Content-Type's charset parameter quoted, in capitals, or after
spaces (override_charset recodes from it), an encoded (gzip) response left alone, no charset added
to a 301/302, charset names compared case-insensitively. The backend is helpers.backend; they
run against Debian's nginx too."""
import pytest

from conftest import simple
from helpers.backend import Backend

KOI = 'Привет'.encode('koi8-r')
UTF = 'Привет'.encode('utf-8')

MAP = '''charset_map koi8-r utf-8 {
    F0 D09F; D2 D180; C9 D0B8; D7 D0B2; C5 D0B5; D4 D182;
}'''


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def front(server, be, loc):
    return server(simple('location / { proxy_pass http://127.0.0.1:%d; %s }\n location /r { charset utf-8; '
                         'return 302 /x; }\n location /ok { charset utf-8; default_type text/html; return 200 "x"; }'
                         % (be.port, loc), http_extra=MAP))


@pytest.mark.parametrize('ctype', ['text/html; charset="koi8-r"', 'text/html;charset=KOI8-R',
                                   'text/html ; charset=koi8-r'])
def test_override_recodes_from_the_response_charset(server, be, ctype):
    be.handler = lambda req: be.reply(200, KOI, [('Content-Type', ctype)])
    srv = front(server, be, 'charset utf-8; override_charset on;')
    r = srv.get('/')
    assert r.status == 200 and r.body == UTF, r
    assert r.header('Content-Type').replace(' ;', ';') == 'text/html; charset=utf-8'


def test_encoded_response_left_alone(server, be):
    be.handler = lambda req: be.reply(200, KOI, [('Content-Type', 'text/html; charset=koi8-r'),
                                                 ('Content-Encoding', 'gzip')])
    srv = front(server, be, 'charset utf-8; override_charset on;')
    r = srv.get('/')
    assert r.body == KOI


def test_without_override_the_response_keeps_its_charset(server, be):
    be.handler = lambda req: be.reply(200, KOI, [('Content-Type', 'text/html; charset=koi8-r')])
    srv = front(server, be, 'charset utf-8;')
    r = srv.get('/')
    assert r.body == KOI and r.header('Content-Type') == 'text/html; charset=koi8-r'


def test_no_charset_on_redirects(server, be):
    srv = front(server, be, '')
    r = srv.get('/r')
    assert r.status == 302 and 'charset' not in (r.header('Content-Type') or '')
    assert srv.get('/ok').header('Content-Type') == 'text/html; charset=utf-8'


def test_same_charset_in_other_case_is_not_recoded(server, be):
    be.handler = lambda req: be.reply(200, KOI, [('Content-Type', 'text/html')])
    srv = front(server, be, 'charset koi8-r; source_charset KOI8-R;')
    r = srv.get('/')
    assert r.body == KOI and r.header('Content-Type').lower() == 'text/html; charset=koi8-r'
