"""charset on proxied responses (override_charset on): the source charset comes from the upstream's Content-Type parameter (quoted or
not, any case, with more parameters after it), a gzip-encoded upstream body is named but not recoded, and a
streamed (unbuffered) body is recoded piece by piece."""
import gzip

import pytest

from conftest import simple
from helpers.backend import Backend
from test_charset import maps


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def start(server, be, loc=''):
    return server(simple('''location / { charset utf-8; override_charset on; proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
                                          %s }''' % (be.port, loc),
                         http_extra='include koi-utf;'), files=maps())


@pytest.mark.parametrize('ct', ['text/html; charset=koi8-r', 'text/html;charset="KOI8-R"',
                                # nginx 1.22 takes the charset to the end of the field and keeps the blank
                                # before ';': these two are hayate's reading
                                pytest.param('text/html; charset=koi8-r; format=flowed', marks=pytest.mark.hayate_only),
                                pytest.param('text/html ; charset="koi8-r', marks=pytest.mark.hayate_only)])
def test_source_charset_from_the_upstream(server, be, ct):
    be.handler = lambda r: be.reply(200, 'Привет'.encode('koi8_r'), [('Content-Type', ct)])
    srv = start(server, be)
    r = srv.get('/')
    assert r.status == 200 and r.body == 'Привет'.encode()
    assert r.header('Content-Type') == 'text/html; charset=utf-8'


def test_gzip_from_the_upstream_is_not_recoded(server, be):
    body = gzip.compress('Привет'.encode('koi8_r'))
    be.handler = lambda r: be.reply(200, body, [('Content-Type', 'text/html; charset=koi8-r'),
                                                ('Content-Encoding', 'gzip')])
    srv = start(server, be)
    r = srv.get('/', headers=[('Accept-Encoding', 'gzip')])
    assert r.status == 200 and r.body == body  # recoding compressed bytes would corrupt them


def test_streamed_body_recoded_in_pieces(server, be):
    part = 'Привет мир '.encode('koi8_r')
    be.handler = lambda r: Backend.chunked(200, [part * 1000, 0.1, part * 1000, 0.1, part],
                                           headers=[('Content-Type', 'text/plain; charset=koi8-r')])
    srv = start(server, be, 'proxy_buffering off; charset_types text/plain;')
    r = srv.get('/')
    assert r.status == 200 and r.body == ('Привет мир ' * 2001).encode()
