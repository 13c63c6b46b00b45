"""Last edges of issue 18's coverage pass: an HTTP/2 body above client_max_body_size that arrives while the
ACCESS phase waits (auth_request), limit_rate below 20 bytes a second over HTTP/2, log_subrequest for SSI
includes."""
import time

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.h2client import H2
from helpers.process import wait_log, wait_until


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.hayate_only  # nginx 1.22 has no "http2 on"
def test_h2_body_too_large_while_auth_request_waits(server, be):
    be.handler = lambda r: [0.2, be.reply(200, b'')] if r.target == '/auth' else be.reply(200, b'app')
    srv = server(simple('location = /auth { internal; proxy_pass http://127.0.0.1:%d; '
                        'proxy_pass_request_body off; proxy_set_header Content-Length ""; } '
                        'location / { auth_request /auth; client_max_body_size 10; '
                        'proxy_pass http://127.0.0.1:%d; }' % (be.port, be.port), 'http2 on;'))
    c = H2(srv.port)
    try:
        status, _, _ = c.get('/app', method='POST', body=b'q' * 100)
        assert status == 413
        assert wait_log(srv, 'client intended to send too large body: 100 bytes')
        assert [r.target for r in be.requests] == ['/auth']
    finally:
        c.close()


@pytest.mark.hayate_only
def test_h2_limit_rate_of_a_few_bytes(server):
    srv = server(simple('root {html}; location / { limit_rate 10; }', 'http2 on;'), files={'html/t.txt': 'x' * 25})
    c = H2(srv.port)
    try:
        status, _, body = c.response(c.request('/t.txt'), timeout=20)
        assert status == 200 and body == b'x' * 25
    finally:
        c.close()


def test_log_subrequest_for_ssi_includes(server):
    srv = server(simple('root {html}; location / { ssi on; } location /inc/ { log_subrequest on; }',
                        "log_format st '$uri $status'; access_log {tmp}/logs/st.log st;"),
                 files={'html/p.html': '<!--#include virtual="/inc/a.html" -->|<!--#include virtual="/other.html" -->',
                        'html/inc/a.html': 'A', 'html/other.html': 'O'})
    r = srv.get('/p.html')
    assert r.status == 200 and r.body == b'A|O'
    srv.stop()
    lines = open(srv.tmp + '/logs/st.log').read().splitlines()
    assert '/inc/a.html 200' in lines and '/p.html 200' in lines
    assert not any(l.startswith('/other.html') for l in lines)  # log_subrequest is off there
