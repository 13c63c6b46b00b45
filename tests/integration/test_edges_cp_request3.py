"""Request-core edges, third part (issue 18's coverage): ETags that gzip cannot weaken, server_name_in_redirect
with a first name that is not a plain name, LF alone in a header value, server_tokens off in the error page, a
Location that is already absolute, 304 and codes without a page, error_page with arguments, the automatic
redirect of a prefix location without arguments."""
import gzip

import pytest

from conftest import IS_NGINX, PROG, simple
from helpers.backend import Backend


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.parametrize('etag,expect', [('""', 'W/""'), ('W', None), ('Wx"', None), ('W/', None)])
def test_gzip_and_odd_etags(server, be, etag, expect):
    be.handler = lambda r: be.reply(200, b'z' * 2000, [('Content-Type', 'text/plain'), ('ETag', etag)])
    srv = server(simple('location / { gzip on; gzip_min_length 1; gzip_types text/plain; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', headers=[('Accept-Encoding', 'gzip')])
    assert r.status == 200 and gzip.decompress(r.body) == b'z' * 2000
    assert r.header('ETag') == expect


@pytest.mark.hayate_only  # nginx 1.22 writes the wildcard name into the URL (DIFFERENCES.md)
@pytest.mark.parametrize('names', ['*.example.com', '~^w\\d+$', '""'])
def test_server_name_in_redirect_without_a_plain_first_name(server, names):
    srv = server(simple('server_name %s; server_name_in_redirect on; root {html};' % names),
                 files={'html/dir/index.html': 'x'})
    r = srv.get('/dir', host='w1.example.com')
    assert r.status == 301
    assert r.header('Location') == 'http://127.0.0.1:%d/dir/' % srv.port


@pytest.mark.hayate_only  # nginx sends CR/LF raw (docs/DIFFERENCES.md)
def test_lf_alone_in_a_header_value_is_encoded(server):
    srv = server(simple('location / { add_header X-U "[$uri]"; return 200 "ok"; }'))
    r = srv.get('/a%0Ab%0Dc')
    assert r.status == 200 and r.header('X-U') == '[/a%0Ab%0Dc]'


def test_server_tokens_off_in_the_error_page(server):
    srv = server(simple('server_tokens off; location / { return 404; }'))
    r = srv.get('/')
    assert r.status == 404
    assert r.header('Server') == PROG
    assert ('<hr><center>%s</center>' % PROG).encode() in r.body


def test_absolute_location_is_kept(server):
    srv = server(simple('location / { return 302 http://other.example/x; }'))
    r = srv.get('/')
    assert r.status == 302 and r.header('Location') == 'http://other.example/x'


def test_return_304_has_no_body(server):
    srv = server(simple('location / { return 304; }'))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 304 and r.body == b''
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 304
    c.close()


@pytest.mark.hayate_only  # nginx's handling of codes it has no page for differs in the details
@pytest.mark.parametrize('code', [300, 305, 417, 422])
def test_codes_without_a_page(server, code):
    srv = server(simple('location / { return %d; }' % code))
    r = srv.get('/')
    assert r.status == code and r.body == b''
    assert r.header('Content-Length') == '0'


def test_error_page_with_arguments(server):
    srv = server(simple('error_page 404 /err?from=404; location = /err { return 200 "args=$args"; } '
                        'location / { return 404; }'))
    r = srv.get('/missing')
    assert r.status == 404 and r.body == b'args=from=404'


def test_prefix_location_redirect_without_arguments(server, be):
    srv = server(simple('location /app/ { proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/app')
    assert r.status == 301
    assert r.header('Location').endswith('/app/')
