"""HTTP/1.x basics: methods, versions, Host rules, absolute-form, Date/Server headers."""
import email.utils
import re
import time

import pytest

from conftest import IS_NGINX, simple
from helpers.http1 import build_request

FILES = {'html/f.txt': 'file\n', 'html/index.html': '<p>index</p>\n'}


@pytest.fixture
def srv(server):
    return server(simple('root {html};'), files=FILES)


def test_get(srv):
    r = srv.get('/f.txt')
    assert r.status == 200
    assert r.version == 'HTTP/1.1'
    assert r.reason == 'OK'
    assert r.body == b'file\n'
    assert r.header('Content-Length') == '5'
    assert r.header('Content-Type') == 'text/plain'


def test_head_same_headers_no_body(srv):
    g = srv.get('/f.txt')
    c = srv.conn()
    c.send(build_request('HEAD', '/f.txt', headers={'Connection': 'close'}))
    h = c.read_response('HEAD')
    assert h.status == 200
    # nothing after the head: the connection closes with no body bytes
    assert c.is_closed(5)
    assert c.buf == b''
    for name in ('Content-Length', 'Content-Type', 'Last-Modified', 'ETag', 'Accept-Ranges'):
        assert h.header(name) == g.header(name), name
    assert h.header('Content-Length') == '5'


def test_head_keepalive_then_get(srv):
    c = srv.conn()
    c.send(build_request('HEAD', '/f.txt') + build_request('GET', '/f.txt', headers={'Connection': 'close'}))
    h = c.read_response('HEAD')
    g = c.read_response('GET')
    assert h.status == 200 and h.body == b''
    assert g.status == 200 and g.body == b'file\n'


def test_date_header(srv):
    r = srv.get('/f.txt')
    d = r.header('Date')
    assert d and re.match(r'^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) '
                          r'\d{4} \d\d:\d\d:\d\d GMT$', d), d
    ts = email.utils.parsedate_to_datetime(d).timestamp()
    assert abs(ts - time.time()) < 120


def test_server_header(srv, prog):
    r = srv.get('/f.txt')
    assert re.match(r'^%s/\d+\.\d+\.\d+$' % prog, r.header('Server')), r.header('Server')


def test_server_tokens_off(server, prog):
    s = server(simple('root {html};', http_extra='server_tokens off;'), files=FILES)
    r = s.get('/f.txt')
    assert r.header('Server') == prog
    r = s.get('/missing')
    assert r.status == 404
    assert r.header('Server') == prog
    assert b'/1.' not in r.body and b'/0.' not in r.body


def test_error_page_body(srv, prog):
    r = srv.get('/missing')
    assert r.status == 404
    assert r.reason == 'Not Found'
    assert r.header('Content-Type') == 'text/html'
    assert b'<title>404 Not Found</title>' in r.body
    assert b'<center>%s/' % prog.encode() in r.body


def test_http10(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.0\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'file\n'
    assert r.version == 'HTTP/1.1'
    assert r.header('Connection') == 'close'
    assert c.is_closed(5)


def test_http10_keepalive(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'file\n'
    assert r.header('Connection').lower() == 'keep-alive'
    r = c.request(b'GET /f.txt HTTP/1.0\r\n\r\n')   # answered on the same connection: it was kept
    assert r.status == 200
    assert c.is_closed(5)


def test_http10_without_host_ok(srv):
    assert srv.raw(b'GET /f.txt HTTP/1.0\r\n\r\n').status == 200


def test_http11_without_host(srv):
    r = srv.raw(b'GET /f.txt HTTP/1.1\r\n\r\n')
    assert r.status == 400
    assert r.header('Connection') == 'close'


def test_two_hosts(srv):
    r = srv.raw(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n')
    assert r.status == 400


@pytest.mark.parametrize('host', ['a/b', 'a..b', ''])
def test_bad_host(srv, host):
    r = srv.raw(('GET /f.txt HTTP/1.1\r\nHost: %s\r\n\r\n' % host).encode())
    assert r.status == 400


@pytest.mark.parametrize('host', ['example.com', 'example.com:8080', '[::1]:80', '127.0.0.1', 'EXAMPLE.com.'])
def test_good_host(srv, host):
    r = srv.raw(('GET /f.txt HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % host).encode())
    assert r.status == 200


def test_absolute_form(srv):
    r = srv.raw(b'GET http://example.com/f.txt HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.body == b'file\n'


def test_absolute_form_host_wins(server):
    # the host in the request line overrides the Host header for server selection
    body = '''http {
    server { listen 127.0.0.1:{port} default_server; server_name a.test; root {html}/a; }
    server { listen 127.0.0.1:{port}; server_name b.test; root {html}/b; }
}
'''
    s = server(body, files={'html/a/x.txt': 'A', 'html/b/x.txt': 'B'})
    r = s.raw(b'GET http://b.test/x.txt HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n')
    assert r.body == b'B'


def test_lf_only_line_endings(srv):
    r = srv.raw(b'GET /f.txt HTTP/1.1\nHost: a\nConnection: close\n\n')
    assert r.status == 200 and r.body == b'file\n'


def test_leading_empty_lines_ignored(srv):
    r = srv.raw(b'\r\n\r\nGET /f.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    assert r.status == 200


@pytest.mark.parametrize('version,status', [('HTTP/2.0', 505), ('HTTP/3.0', 505), ('HTTP/1.2', 200)])
def test_versions(srv, version, status):
    r = srv.raw(('GET /f.txt %s\r\nHost: a\r\nConnection: close\r\n\r\n' % version).encode())
    assert r.status == status


@pytest.mark.parametrize('line', [b'get /f.txt HTTP/1.1', b'GET f.txt HTTP/1.1', b'GET /f.txt HTTX/1.1',
                                  b'GET /f.txt HTTP/1.1 x', b'G@T /f.txt HTTP/1.1'])
def test_bad_request_line(srv, line):
    r = srv.raw(line + b'\r\nHost: a\r\n\r\n', method='GET')
    assert r.status == 400
    assert r.header('Connection') == 'close'


@pytest.mark.parametrize('method', ['DELETE', 'PUT', 'OPTIONS', 'PATCH', 'FOO'])
def test_other_methods_405(srv, method):
    r = srv.raw(build_request(method, '/f.txt', headers={'Connection': 'close', 'Content-Length': '0'}))
    assert r.status == 405
    assert r.reason == 'Not Allowed'


def test_post_static_405(srv):
    r = srv.raw(build_request('POST', '/f.txt', headers={'Connection': 'close'}, body='abc'))
    assert r.status == 405


def test_header_names_case_insensitive(srv):
    r = srv.raw(b'GET /f.txt HTTP/1.1\r\nhOsT: a\r\ncOnNeCtIoN: close\r\n\r\n')
    assert r.status == 200 and r.header('Connection') == 'close'


def test_query_string_ignored_for_file(srv):
    r = srv.get('/f.txt?a=1&b=/../x')
    assert r.status == 200 and r.body == b'file\n'


def test_percent_decoding(server):
    s = server(simple('root {html};'), files={'html/a b.txt': 'space', 'html/%41.txt': 'pct'})
    assert s.get('/a%20b.txt').body == b'space'
    assert s.get('/%2541.txt').body == b'pct'
    assert s.get('/%61%20b.txt').body == b'space'


def test_path_normalisation(srv):
    for path in ('/./f.txt', '//f.txt', '/x/../f.txt', '/x/./../f.txt', '/%2e/f.txt', '/x/%2e%2e/f.txt'):
        r = srv.get(path)
        assert r.status == 200 and r.body == b'file\n', path


def test_invalid_percent_encoding(srv):
    r = srv.get('/%zz')
    assert r.status == 400


def test_no_stdout(srv):
    srv.get('/f.txt')
    srv.stop()
    assert srv.stdout() == ''


def test_http_client_keepalive(srv):
    import http.client
    c = http.client.HTTPConnection('127.0.0.1', srv.port, timeout=5)
    try:
        for _ in range(3):
            c.request('GET', '/f.txt')
            r = c.getresponse()
            assert r.status == 200 and r.read() == b'file\n'
        c.request('HEAD', '/f.txt')
        r = c.getresponse()
        assert r.status == 200 and r.read() == b'' and r.getheader('Content-Length') == '5'
    finally:
        c.close()


def test_curl(srv, tmp_path):
    import shutil
    import subprocess
    if not shutil.which('curl'):
        pytest.skip('no curl')
    out = tmp_path / 'out'
    p = subprocess.run(['curl', '-sS', '--max-time', '10', '-o', str(out), '-w', '%{http_code} %{size_download}',
                        'http://127.0.0.1:%d/f.txt' % srv.port, 'http://127.0.0.1:%d/f.txt' % srv.port],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b'200 5')
    assert out.read_bytes() == b'file\n'
