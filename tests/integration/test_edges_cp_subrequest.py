"""Subrequests and request bodies (issue 18's coverage): SSI includes of a large static file, of an empty one
and of a 204, a client that goes while an include is awaited, a mirror of an HTTP/1.0 request without header
lines, a mirror behind realip, $request_body in memory, in a file and absent, a streamed body
(proxy_request_buffering off) that ends with an empty last chunk."""
import socket
import threading

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.process import wait_until


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


BIG = ''.join('line %05d of the big file\n' % i for i in range(8000))


def test_ssi_includes_of_a_large_file_an_empty_one_and_a_204(server):
    srv = server(simple('root {html}; location / { ssi on; } location = /nc { return 204; }'),
                 files={'html/page.html': '[<!--#include virtual="/big.txt" -->]'
                                          '(<!--#include virtual="/empty.txt" -->)'
                                          '{<!--#include virtual="/nc" -->}',
                        'html/big.txt': BIG, 'html/empty.txt': ''})
    r = srv.get('/page.html')
    assert r.status == 200
    assert r.body == ('[' + BIG + ']()' + '{}').encode()


def test_client_gone_while_an_include_is_awaited(server, be):
    gate = threading.Event()
    be.handler = lambda r: [lambda: gate.wait(10), be.reply(200, b'slow part')]
    srv = server(simple('root {html}; location / { ssi on; } location /up/ { proxy_pass http://127.0.0.1:%d; }'
                        % be.port, "log_format st '$request $status'; access_log {tmp}/logs/st.log st;"),
                 files={'html/page.html': 'a<!--#include virtual="/up/x" -->b'})
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'GET /page.html HTTP/1.1\r\nHost: x\r\n\r\n')
    be.wait_requests(1)
    s.close()
    gate.set()
    # the server goes on; the page is logged once
    assert srv.get('/empty-check').status == 404
    srv.stop()
    log = open(srv.tmp + '/logs/st.log').read()
    assert log.count('GET /page.html HTTP/1.1') == 1, log


def test_mirror_of_a_request_without_header_lines(server, be):
    mir = Backend().start()
    try:
        mir.handler = lambda r: mir.reply(200, b'')
        be.handler = lambda r: be.reply(200, b'main')
        srv = server(simple('location / { mirror /m; proxy_pass http://127.0.0.1:%d; } '
                            'location = /m { internal; proxy_pass http://127.0.0.1:%d/mirrored$request_uri; }'
                            % (be.port, mir.port)))
        r = srv.raw(b'GET /h10?a=1 HTTP/1.0\r\n\r\n')
        assert r.status == 200 and r.body == b'main'
        mir.wait_requests(1)
        assert mir.requests[0].target == '/mirrored/h10?a=1'
    finally:
        mir.stop()


def test_mirror_behind_realip(server, be):
    mir = Backend().start()
    try:
        mir.handler = lambda r: mir.reply(200, b'')
        be.handler = lambda r: be.reply(200, b'main')
        srv = server(simple('set_real_ip_from 127.0.0.1; real_ip_header X-Real-IP; '
                            'location / { mirror /m; proxy_pass http://127.0.0.1:%d; } '
                            'location = /m { internal; proxy_set_header X-Addr $remote_addr; '
                            'proxy_pass http://127.0.0.1:%d; }' % (be.port, mir.port)))
        r = srv.get('/', headers=[('X-Real-IP', '192.0.2.7')])
        assert r.status == 200
        mir.wait_requests(1)
        assert mir.requests[0].header('X-Addr') == '192.0.2.7'
    finally:
        mir.stop()


def test_request_body_variable(server, be):
    be.handler = lambda r: be.reply(200, b'ok')
    srv = server(simple('location / { client_body_buffer_size 1k; proxy_pass http://127.0.0.1:%d; }' % be.port,
                        "log_format rb '$request_uri [$request_body]'; access_log {tmp}/logs/rb.log rb;"))
    assert srv.get('/small', method='POST', body=b'abc').status == 200
    assert srv.get('/large', method='POST', body=b'x' * 5000).status == 200
    assert srv.get('/none').status == 200
    srv.stop()
    log = open(srv.tmp + '/logs/rb.log').read().splitlines()
    assert log == ['/small [abc]', '/large [-]', '/none [-]'], log


def test_streamed_body_with_an_empty_last_chunk(server, be):
    be.handler = lambda r: be.reply(200, b'%d:%s' % (len(r.body), r.body[:5]))
    srv = server(simple('location / { proxy_request_buffering off; proxy_http_version 1.1; '
                        'proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
    assert c.still_open(0.3)
    c.send(b'6\r\n world\r\n')
    assert c.still_open(0.3)
    c.send(b'0\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'11:hello'
    c.close()
