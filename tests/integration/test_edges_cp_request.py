"""The request core's edges (issue 18's coverage): the error log's context (server, host, referrer), absolute
redirects (server_name_in_redirect, a request without Host, IPv6, port_in_redirect), the built-in error pages of
less common codes and HEAD, 444, a header value with CR/LF from the request, the ACCESS phase with satisfy any and
auth_delay, a custom 401 page that keeps the challenge, named locations that are missing or loop, duplicate unique
header lines, client_body_in_file_only with temp path levels, a mirror with the request's conditional headers."""
import base64
import os
import re
import socket

import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend
from helpers.process import wait_log, wait_until

HTPASSWD = 'u:{PLAIN}p\n'
AUTH_OK = 'Basic ' + base64.b64encode(b'u:p').decode()
AUTH_BAD = 'Basic ' + base64.b64encode(b'u:wrong').decode()


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def test_error_log_context_has_server_host_and_referrer(server):
    srv = server(simple('server_name ctx.example; root {html};'))
    r = srv.get('/missing.txt', headers=[('Referer', 'http://ref.example/page')], host='h.example')
    assert r.status == 404
    m = wait_log(srv, r'open\(\) ".*missing.txt" failed.*')
    line = m.group(0)
    assert ', server: ctx.example,' in line
    assert ', host: "h.example"' in line
    assert ', referrer: "http://ref.example/page"' in line


def test_error_log_context_without_server_name(server):
    srv = server(simple('root {html};'))
    r = srv.get('/missing.txt', version='HTTP/1.0', host=None)
    assert r.status == 404
    m = wait_log(srv, r'open\(\) ".*missing.txt" failed.*')
    assert ', server: , request: "GET /missing.txt HTTP/1.0"' in m.group(0)
    assert 'host:' not in m.group(0)


def test_redirect_with_server_name_in_redirect(server):
    srv = server(simple('server_name main.example alias.example; server_name_in_redirect on; root {html};'),
                 files={'html/dir/index.html': 'x'})
    r = srv.get('/dir', host='alias.example')
    assert r.status == 301
    assert r.header('Location') == 'http://main.example:%d/dir/' % srv.port


def test_redirect_without_host_uses_the_local_address(server):
    srv = server(simple('root {html}; port_in_redirect off;'), files={'html/dir/index.html': 'x'})
    r = srv.get('/dir', version='HTTP/1.0', host=None)
    assert r.status == 301
    assert r.header('Location') == 'http://127.0.0.1/dir/'


@pytest.mark.hayate_only  # nginx 1.22 writes the IPv6 address without brackets (not a valid URL)
def test_redirect_without_host_over_ipv6(server):
    srv = server(simple('root {html};', listen='listen [::1]:{port};'), files={'html/dir/index.html': 'x'},
                 wait_host='::1')
    c = srv.conn(host='::1')
    r = c.request(b'GET /dir HTTP/1.0\r\n\r\n')
    c.close()
    assert r.status == 301
    assert r.header('Location') == 'http://[::1]:%d/dir/' % srv.port


@pytest.mark.parametrize('code,title', [(402, '402 Payment Required'), (406, '406 Not Acceptable'),
                                        (409, '409 Conflict'), (410, '410 Gone'),
                                        (411, '411 Length Required'), (412, '412 Precondition Failed'),
                                        (415, '415 Unsupported Media Type'),
                                        (416, '416 Requested Range Not Satisfiable'),
                                        (429, '429 Too Many Requests'), (501, '501 Not Implemented'),
                                        (502, '502 Bad Gateway'), (504, '504 Gateway Time-out'),
                                        (507, '507 Insufficient Storage')])
def test_builtin_error_pages(server, code, title):
    srv = server(simple('location / { return %d; }' % code))
    r = srv.get('/')
    assert r.status == code
    assert ('<title>%s</title>' % title).encode() in r.body
    assert r.header('Content-Type') == 'text/html'
    h = srv.head('/')
    assert h.status == code and h.body == b''
    assert int(h.header('Content-Length')) == len(r.body)


@pytest.mark.hayate_only  # hayate's page explains the code in a sentence of its own
def test_builtin_error_page_explains(server):
    srv = server(simple('location / { return 421; }'))
    r = srv.get('/')
    assert r.status == 421
    assert b'<center><p>This server does not answer for that host.</p></center>' in r.body


@pytest.mark.hayate_only  # nginx sends its 1xx/2xx and unknown codes differently (no page either way)
@pytest.mark.parametrize('code', [299, 418, 599])
def test_codes_without_a_page_have_an_empty_body(server, code):
    srv = server(simple('location / { return %d; }' % code))
    r = srv.get('/')
    assert r.status == code and r.body == b''
    assert r.header('Content-Length') == '0'
    h = srv.head('/')
    assert h.status == code


def test_return_444_closes_without_a_response(server):
    srv = server(simple('location / { return 444; }'))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.is_closed()
    assert c.buf == b''
    c.close()


@pytest.mark.hayate_only  # nginx sends CR/LF raw (docs/DIFFERENCES.md)
def test_header_value_with_crlf_from_the_request_is_encoded(server):
    srv = server(simple('location / { add_header X-U "[$uri]"; add_header X-Long "0123456789abcdef$uri"; '
                        'return 200 "ok"; }'))
    r = srv.get('/a%0D%0AX-Injected:%201')
    assert r.status == 200
    assert r.header('X-Injected') is None
    assert r.header('X-U') == '[/a%0D%0AX-Injected: 1]'
    assert r.header('X-Long') == '0123456789abcdef/a%0D%0AX-Injected: 1'


def auth_srv(server, loc_extra, server_extra=''):
    return server(simple('%s location / { %s auth_basic "zone"; auth_basic_user_file {tmp}/htpasswd; '
                         'root {html}; }' % (server_extra, loc_extra)),
                  files={'htpasswd': HTPASSWD, 'html/index.html': 'in\n'})


def test_satisfy_any_allowed_address_needs_no_credentials(server):
    srv = auth_srv(server, 'satisfy any; allow 127.0.0.1; deny all;')
    r = srv.get('/')
    assert r.status == 200 and r.header('WWW-Authenticate') is None


def test_satisfy_any_denied_address_then_credentials(server):
    srv = auth_srv(server, 'satisfy any; deny all;')
    r = srv.get('/')
    assert r.status == 401  # a 401 wins over the 403
    assert r.header('WWW-Authenticate') == 'Basic realm="zone"'
    assert srv.get('/', headers=[('Authorization', AUTH_OK)]).status == 200
    assert srv.get('/', headers=[('Authorization', AUTH_BAD)]).status == 401


def test_satisfy_any_nothing_allows_is_403(server):
    srv = server(simple('location / { satisfy any; deny all; root {html}; }'), files={'html/index.html': 'x'})
    assert srv.get('/').status == 403
    assert wait_log(srv, r'access forbidden by rule')


def test_satisfy_all_denied_is_403_before_auth(server):
    srv = auth_srv(server, 'deny all;')
    r = srv.get('/', headers=[('Authorization', AUTH_OK)])
    assert r.status == 403


def test_auth_delay(server):
    srv = auth_srv(server, 'auth_delay 300ms;')
    r = srv.get('/', headers=[('Authorization', AUTH_BAD)])
    assert r.status == 401
    assert srv.get('/', headers=[('Authorization', AUTH_OK)]).status == 200


def test_auth_delay_client_gone_before_it_ends(server):
    srv = auth_srv(server, 'auth_delay 2s;')
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ' + AUTH_BAD.encode() + b'\r\n\r\n')
    c.close()  # the connection goes while the answer waits; the server goes on
    assert srv.get('/', headers=[('Authorization', AUTH_OK)]).status == 200


def test_custom_401_page_keeps_the_challenge(server):
    srv = server(simple('error_page 401 /denied.html; location = /denied.html { root {html}; } '
                        'location / { auth_basic "zone"; auth_basic_user_file {tmp}/htpasswd; root {html}; }'),
                 files={'htpasswd': HTPASSWD, 'html/denied.html': 'custom denied\n', 'html/index.html': 'x'})
    r = srv.get('/')
    assert r.status == 401 and r.body == b'custom denied\n'
    assert r.header('WWW-Authenticate') == 'Basic realm="zone"'


def test_try_files_to_a_missing_named_location_is_500(server):
    srv = server(simple('root {html}; location / { try_files $uri @nowhere; }'))
    assert srv.get('/x').status == 500
    assert wait_log(srv, r'could not find named location "@nowhere"')


def test_named_location_cycle_is_500(server):
    srv = server(simple('root {html}; location / { try_files $uri @a; } location @a { try_files /nope @a; }'))
    assert srv.get('/x').status == 500
    assert wait_log(srv, r'rewrite or internal redirection cycle while redirect to named location "@a"')


@pytest.mark.hayate_only  # nginx 1.22 takes most of these duplicates (1.23 refuses them)
@pytest.mark.parametrize('name,v1,v2', [('If-Unmodified-Since', 'Mon, 01 Jan 2024 00:00:00 GMT',
                                         'Tue, 02 Jan 2024 00:00:00 GMT'),
                                        ('If-Match', '"a"', '"b"'), ('If-Range', '"a"', '"b"'),
                                        ('Expect', '100-continue', '100-continue'),
                                        ('Authorization', 'Basic eA==', 'Basic eQ=='),
                                        ('Content-Range', 'bytes 0-1/2', 'bytes 0-1/2')])
def test_duplicate_unique_header_is_400(server, name, v1, v2):
    srv = server(simple('location / { return 200 "ok"; }'))
    r = srv.get('/', headers=[(name, v1), (name, v2)])
    assert r.status == 400
    assert wait_log(srv, r'client sent duplicate header line: "%s: ' % name)


def test_duplicate_range_and_user_agent_are_taken(server):
    srv = server(simple('location / { return 200 "$http_user_agent"; }'))
    r = srv.get('/', headers=[('User-Agent', 'one'), ('User-Agent', 'two'), ('Range', 'bytes=0-0'),
                              ('Range', 'bytes=1-1')])
    assert r.status == 200 and r.body in (b'one', b'one, two')  # nginx 1.23 joins them, 1.22 takes the first


def test_invalid_host_is_400(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    assert srv.get('/', host='bad/host').status == 400
    r = srv.raw(b'GET http://bad..host/ HTTP/1.1\r\nHost: ok\r\nConnection: close\r\n\r\n')
    assert r.status == 400


def temp_files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def test_body_in_file_only_with_levels(server, be):
    be.handler = lambda r: be.reply(200, r.body)
    srv = server(simple('location / { client_body_in_file_only on; client_body_temp_path {tmp}/cbt 1 2; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', method='POST', body=b'stored body')
    assert r.status == 200 and r.body == b'stored body'
    files = temp_files(srv.tmp + '/cbt')
    assert len(files) == 1, files
    m = re.fullmatch(re.escape(srv.tmp) + r'/cbt/(\d)/(\d\d)/(\d{10})', files[0])
    assert m, files[0]
    assert m.group(3).endswith(m.group(2) + m.group(1))  # the levels are the name's last digits
    assert open(files[0], 'rb').read() == b'stored body'  # "on": the file is kept


def test_body_in_file_only_clean(server, be):
    be.handler = lambda r: be.reply(200, r.body)
    srv = server(simple('location / { client_body_in_file_only clean; client_body_temp_path {tmp}/cbt; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', method='POST', body=b'gone later')
    assert r.status == 200 and r.body == b'gone later'
    assert wait_until(lambda: os.path.isdir(srv.tmp + '/cbt') and temp_files(srv.tmp + '/cbt') == [])


def test_body_growing_in_memory_up_to_the_buffer(server, be):
    be.handler = lambda r: be.reply(200, ('%d' % len(r.body)).encode())
    srv = server(simple('location / { client_body_buffer_size 3000; proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n')
    for n in (100, 1000, 1500):  # memory grows in steps, then is capped at the buffer size
        c.send(b'%x\r\n%s\r\n' % (n, b'b' * n))
    c.send(b'0\r\n\r\n')
    r = c.read_response()
    c.close()
    assert r.status == 200 and r.body == b'2600'


def test_mirror_with_conditional_headers_and_a_spooled_body(server, be):
    mir = Backend().start()
    try:
        mir.handler = lambda r: mir.reply(200, b'')
        be.handler = lambda r: be.reply(200, b'main')
        srv = server(simple('location / { client_body_buffer_size 1k; mirror /m; proxy_pass http://127.0.0.1:%d; } '
                            'location = /m { internal; proxy_pass http://127.0.0.1:%d; }' % (be.port, mir.port)))
        hdrs = [('If-Modified-Since', 'Mon, 01 Jan 2024 00:00:00 GMT'), ('If-None-Match', '"e"'),
                ('Range', 'bytes=0-1'), ('User-Agent', 'ua/1'), ('X-Other', 'o')]
        r = srv.get('/p?q=1', method='POST', headers=hdrs, body=b'y' * 3000)
        assert r.status == 200 and r.body == b'main'
        mir.wait_requests(1)
        m = mir.requests[0]
        assert m.body == b'y' * 3000
        for k, v in hdrs:
            assert m.header(k) == v
    finally:
        mir.stop()
