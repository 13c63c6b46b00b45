"""More request-core edges (issue 18's coverage): TRACE and CONNECT, an absolute-form target naming the host,
header names of the lengths of the known fields, invalid header names (ignore_invalid_headers), methods that are
not upper-case tokens, the codes nginx answers with "400 Bad Request" (494-497), 204, weak ETags after gzip, a
content type with parameters matched by gzip_types, absolute_redirect off, a redirect on an https listener,
recursive_error_pages in a loop, a client that goes while a proxied response is awaited (499), graceful stop
with an idle keep-alive connection and with a request in flight, chunked_transfer_encoding off, sendfile with
tcp_nopush, client_body_timeout."""
import gzip
import signal
import socket
import ssl
import threading
import time

import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend
from helpers.process import wait_log, wait_until
from helpers.tls import make_cert


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def ok_srv(server, extra='', http_extra=''):
    return server(simple('%s location / { return 200 "h=$host a=$http_x_abc|$http_x_abcdefghijklmnopq"; }'
                         % extra, http_extra))


def test_trace_is_405(server):
    srv = ok_srv(server)
    r = srv.raw(b'TRACE / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 405 and r.header('Connection') == 'close'


@pytest.mark.hayate_only  # nginx 1.22 parses CONNECT's target as a URI (400 for all of these)
@pytest.mark.parametrize('target,status', [('example.com:443', 405), ('/path', 400), (':443', 400),
                                           ('example.com:', 400), ('a/b:443', 400)])
def test_connect_targets(server, target, status):
    srv = ok_srv(server)
    r = srv.raw(b'CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n' % target.encode())
    assert r.status == status


def test_absolute_form_target_names_the_host(server):
    srv = ok_srv(server)
    r = srv.raw(b'GET http://abs.example/x HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.body.startswith(b'h=abs.example ')


def test_header_names_as_long_as_known_fields(server):
    srv = ok_srv(server)
    names = ['X-Abc', 'X-Abcd', 'X-Abcdef', 'X-Abcdefgh', 'X-Abcdefghijk', 'X-Abcdefghijklmno', 'X-Abcdefghijklmnopq']
    assert [len(n) for n in names] == [5, 6, 8, 10, 13, 17, 19]
    r = srv.get('/', headers=[(n, 'v%d' % len(n)) for n in names])
    assert r.status == 200 and r.body == b'h=localhost a=v5|v19'


def test_invalid_header_name_is_ignored(server):
    srv = ok_srv(server)
    r = srv.get('/', headers=[('X@Bad', '1'), ('X-Abc', 'kept')])
    assert r.status == 200 and r.body == b'h=localhost a=kept|'
    assert wait_log(srv, r'client sent invalid header line: "X@Bad')


@pytest.mark.hayate_only  # nginx passes such a field on with ignore_invalid_headers off (DIFFERENCES.md)
def test_invalid_header_name_refused_when_not_ignored(server):
    srv = ok_srv(server, extra='ignore_invalid_headers off;')
    r = srv.get('/', headers=[('X@Bad', '1')])
    assert r.status == 400


@pytest.mark.parametrize('method', [b'get', b'G3T', b'GeT'])
def test_method_not_an_upper_case_token_is_400(server, method):
    srv = ok_srv(server)
    r = srv.raw(method + b' / HTTP/1.1\r\nHost: x\r\n\r\n', method='GET')
    assert r.status == 400


@pytest.mark.parametrize('code', [494, 495, 496, 497])
def test_codes_answered_as_400(server, code):
    srv = server(simple('location / { return %d; }' % code))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 400 and b'<title>400 ' in r.body
    if code == 494:  # "Request Header Too Large": nginx keeps the connection
        assert r.header('Connection') == 'keep-alive'
        assert c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n').status == 400
    else:
        assert r.header('Connection') == 'close'
        assert c.is_closed()
    c.close()


def test_204_has_no_body(server):
    srv = server(simple('location / { return 204; }'))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 204 and r.header('Content-Length') is None and r.header('Transfer-Encoding') is None
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')  # kept alive, nothing stray in between
    assert r.status == 204
    c.close()


@pytest.mark.parametrize('etag,expect', [('"strong"', 'W/"strong"'), ('W/"weak"', 'W/"weak"'), ('unquoted', None)])
def test_gzip_weakens_the_etag(server, be, etag, expect):
    be.handler = lambda r: be.reply(200, b'z' * 2000, [('Content-Type', 'Text/Plain; charset=utf-8'),
                                                      ('ETag', etag)])
    srv = server(simple('location / { gzip on; gzip_min_length 1; gzip_types text/plain; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', headers=[('Accept-Encoding', 'gzip')])
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip'
    assert gzip.decompress(r.body) == b'z' * 2000
    assert r.header('ETag') == expect


@pytest.mark.hayate_only  # nginx 1.22 keeps the space before ";" in the type it matches (no gzip)
def test_gzip_type_with_space_before_its_parameters(server, be):
    be.handler = lambda r: be.reply(200, b'z' * 2000, [('Content-Type', 'text/plain \t; charset=utf-8')])
    srv = server(simple('location / { gzip on; gzip_min_length 1; gzip_types text/plain; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', headers=[('Accept-Encoding', 'gzip')])
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip'


@pytest.mark.parametrize('ctype', ['; charset=utf-8', 'application/json'])
def test_gzip_types_not_matching(server, be, ctype):
    be.handler = lambda r: be.reply(200, b'z' * 2000, [('Content-Type', ctype)])
    srv = server(simple('location / { gzip on; gzip_min_length 1; gzip_types text/plain; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/', headers=[('Accept-Encoding', 'gzip')])
    assert r.status == 200 and r.header('Content-Encoding') is None and r.body == b'z' * 2000


def test_absolute_redirect_off(server):
    srv = server(simple('absolute_redirect off; root {html};'), files={'html/dir/index.html': 'x'})
    r = srv.get('/dir')
    assert r.status == 301 and r.header('Location') == '/dir/'


def test_redirect_on_an_https_listener(server, tmp_path):
    cert = make_cert(str(tmp_path), 'rsa', 'localhost')
    srv = server(simple('ssl_certificate %s; ssl_certificate_key %s; root {html};' % cert,
                        listen='listen 127.0.0.1:{port} ssl;'), files={'html/dir/index.html': 'x'})
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', srv.port), timeout=5), server_hostname='localhost')
    s.sendall(b'GET /dir HTTP/1.1\r\nHost: h.example\r\nConnection: close\r\n\r\n')
    data = b''
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    assert data.startswith(b'HTTP/1.1 301')
    assert b'\r\nLocation: https://h.example:%d/dir/\r\n' % srv.port in data


def test_recursive_error_pages_loop_is_500(server):
    srv = server(simple('recursive_error_pages on; error_page 404 /nf; location = /nf { return 404; } '
                        'location / { return 404; }'))
    r = srv.get('/x')
    assert r.status == 500
    assert wait_log(srv, r'rewrite or internal redirection cycle while internally redirecting to "/nf"')


def test_client_gone_while_proxy_waits_is_499(server, be):
    gate = threading.Event()
    be.handler = lambda r: [lambda: gate.wait(10), be.reply(200, b'late')]
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port,
                        "log_format st '$request $status'; access_log {tmp}/logs/st.log st;"))
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'GET /gone HTTP/1.1\r\nHost: x\r\n\r\n')
    be.wait_requests(1)
    s.close()
    try:
        assert wait_until(lambda: 'GET /gone HTTP/1.1 499' in open(srv.tmp + '/logs/st.log').read(), 10)
    finally:
        gate.set()


def test_graceful_stop_closes_an_idle_keepalive_connection(server):
    srv = ok_srv(server)
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200 and r.header('Connection') == 'keep-alive'
    srv.proc.send_signal(signal.SIGQUIT)
    assert c.is_closed(timeout=10)
    assert srv.proc.wait(10) == 0
    c.close()


@pytest.mark.hayate_only  # nginx run as these tests run it (master_process off) does not wait for the request
def test_graceful_stop_with_a_request_in_flight(server, be):
    gate = threading.Event()
    be.handler = lambda r: [lambda: gate.wait(10), be.reply(200, b'done')]
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    be.wait_requests(1)
    srv.proc.send_signal(signal.SIGQUIT)
    assert not wait_until(lambda: srv.proc.poll() is not None, 0.3)  # it waits for the request
    gate.set()
    r = c.read_response()
    assert r.status == 200 and r.body == b'done'
    assert r.header('Connection') == 'close'
    assert c.is_closed()
    assert srv.proc.wait(10) == 0
    c.close()


def test_chunked_transfer_encoding_off(server, be):
    be.handler = lambda r: [b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nclose-delimited']
    srv = server(simple('location / { chunked_transfer_encoding off; proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200 and r.body == b'close-delimited'
    assert r.header('Transfer-Encoding') is None and r.header('Content-Length') is None
    assert r.header('Connection') == 'close'
    c.close()


def test_unknown_length_to_http10_is_close_delimited(server, be):
    be.handler = lambda r: [b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nten bytes!']
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.raw(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
    assert r.status == 200 and r.body == b'ten bytes!' and r.header('Transfer-Encoding') is None


def test_sendfile_with_tcp_nopush(server):
    body = bytes(range(256)) * 400
    srv = server(simple('sendfile on; tcp_nopush on; root {html};'), files={'html/f.bin': body})
    c = srv.conn()
    r = c.request(b'GET /f.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200 and r.body == body
    r = c.request(b'GET /f.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200 and r.body == body
    c.close()


def test_client_body_timeout(server, be):
    srv = server(simple('location / { client_body_timeout 1s; proxy_pass http://127.0.0.1:%d; }' % be.port,
                        "log_format st '$request $status'; access_log {tmp}/logs/st.log st;"))
    c = srv.conn()
    c.send(b'POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\npart')
    log = srv.tmp + '/logs/st.log'
    assert wait_until(lambda: 'POST /slow HTTP/1.1 408' in open(log).read(), 10)
    if not IS_NGINX:  # nginx logs nothing at info for it
        assert wait_log(srv, r'client timed out \(110: Connection timed out\) while reading client request body')
    c.close()
    assert be.requests == []
