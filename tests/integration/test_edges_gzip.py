"""gzip edges (ngx_http_gzip_module): gzip_proxied's expired/no-cache/no-store/private against a proxied
response's own Expires and Cache-Control (a request with Via), gzip_disable msie6's exact reading of the
User-Agent, gzip_http_version. The backend is helpers.backend; they run against Debian's nginx too."""
import gzip
import time
from email.utils import formatdate

import pytest

from conftest import simple
from helpers.backend import Backend

BODY = b'compress me please, ' * 100


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def run(server, be, proxied, headers, ua=None, http_version=None):
    be.handler = lambda req: be.reply(200, BODY, [('Content-Type', 'text/html')] + headers)
    extra = 'gzip on; gzip_proxied %s;' % proxied
    if http_version:
        extra += ' gzip_http_version %s;' % http_version
    s = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port, http_extra=extra))
    h = {'Accept-Encoding': 'gzip', 'Via': '1.1 cache'}
    if ua:
        h['User-Agent'] = ua
    return s.get('/', headers=h)


def compressed(r):
    assert r.status == 200, r
    if r.header('Content-Encoding') == 'gzip':
        assert gzip.decompress(r.body) == BODY
        return True
    assert r.body == BODY
    return False


PAST = 'Thu, 01 Jan 1970 00:00:01 GMT'


@pytest.mark.parametrize('proxied,headers,want', [
    ('expired', [('Expires', PAST)], True),
    ('expired', [('Expires', 'FUTURE')], False),
    ('expired', [('Expires', 'not a date')], False),
    ('no-cache', [('Expires', PAST)], False),             # an Expires needs "expired"
    ('no-cache', [('Cache-Control', 'no-cache')], True),
    ('no-cache', [('Cache-Control', 'max-age=0, no-cache')], True),
    ('no-cache', [('Cache-Control', 'no-cachex')], False),
    ('no-cache', [('Cache-Control', 'private')], False),
    ('no-store', [('Cache-Control', 'public, no-store')], True),
    ('no-store', [('Cache-Control', 'public,no-store')], True),
    ('no-store', [('Cache-Control', 'no-store, max-age=0')], True),
    ('no-cache', [('Cache-Control', 'no-cache="Set-Cookie"')], False),
    ('no-cache', [('Cache-Control', 'no-cache;x')], False),
    ('no-cache', [('Cache-Control', 'no-cache\t,x')], False),
    ('no-cache', [('Cache-Control', 'x,\tno-cache')], False),
    ('no-cache', [('Cache-Control', 'xno-cache')], False),
    ('private', [('Cache-Control', 'max-age=0,private')], True),
    ('private', [('Cache-Control', 'private')], True),
    ('private', [('Cache-Control', 'max-age=60')], False),
    ('no-cache no-store private', [('Cache-Control', 'public')], False),
    ('no_last_modified', [('Last-Modified', PAST)], False),
    ('no_last_modified', [], True),
    ('no_etag', [('ETag', '"x"')], False),
    ('no_etag', [], True),
    ('auth', [], True),
])
def test_proxied(server, be, proxied, headers, want):
    headers = [(k, formatdate(time.time() + 3600, usegmt=True) if v == 'FUTURE' else v) for k, v in headers]
    assert compressed(run(server, be, proxied, headers)) is want


@pytest.mark.parametrize('ua,want', [
    ('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)', False),
    ('Mozilla/4.0 (compatible; MSIE 5.01; Windows NT)', False),
    ('Mozilla/4.0 (compatible; MSIE 4.01; Windows 95)', False),
    ('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)', True),
    ('Mozilla/4.0 (compatible; MSIE 6.0; Opera 8.0)', True),
    ('Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)', True),
    ('Mozilla/4.0 (compatible; MSIE 6', True),
    ('Mozilla/4.0 (compatible; MSIE 60; X)', True),
    ('Mozilla/5.0', True),
])
def test_disable_msie6(server, be, ua, want):
    be.handler = lambda req: be.reply(200, BODY, [('Content-Type', 'text/html')])
    s = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port,
                      http_extra='gzip on; gzip_disable msie6;'))
    assert compressed(s.get('/', headers={'Accept-Encoding': 'gzip', 'User-Agent': ua})) is want


def test_http_version(server, be):
    be.handler = lambda req: be.reply(200, BODY, [('Content-Type', 'text/html')])
    loc = 'location / { proxy_pass http://127.0.0.1:%d; }' % be.port
    s = server('''
http {
    gzip on;
    server { listen 127.0.0.1:{port}; %s }
    server { listen 127.0.0.1:{port2}; gzip_http_version 1.0; %s }
}
''' % (loc, loc))
    h = {'Accept-Encoding': 'gzip'}
    assert compressed(s.get('/', headers=h, version='HTTP/1.0')) is False
    assert compressed(s.get('/', headers=h, version='HTTP/1.0', port=s.port2)) is True
    assert compressed(s.get('/', headers=h, port=s.port2)) is True


def test_proxied_accept_ranges_dropped(server, be):
    """A compressed response cannot serve byte ranges of the original: the backend's Accept-Ranges goes."""
    be.handler = lambda req: be.reply(200, BODY, [('Content-Type', 'text/html'), ('Accept-Ranges', 'bytes')])
    s = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port, http_extra='gzip on;'))
    r = s.get('/', headers={'Accept-Encoding': 'gzip'})
    assert compressed(r) is True and r.header('Accept-Ranges') is None, r
    r = s.get('/')
    assert compressed(r) is False and r.header('Accept-Ranges') == 'bytes', r


def test_gunzipped_proxied_accept_ranges_dropped(server, be):
    """gunzip: the inflated body is not the one the backend's Accept-Ranges spoke of."""
    z = gzip.compress(BODY)
    be.handler = lambda req: be.reply(200, z, [('Content-Type', 'text/html'), ('Content-Encoding', 'gzip'),
                                                ('Accept-Ranges', 'bytes')])
    s = server(simple('location / { proxy_pass http://127.0.0.1:%d; gunzip on; }' % be.port))
    r = s.get('/')
    assert r.status == 200 and r.body == BODY and r.header('Accept-Ranges') is None, r
