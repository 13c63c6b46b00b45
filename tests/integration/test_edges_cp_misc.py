"""Odds and ends of the request core and HTTP/2 streams (issue 18's coverage): the debug line naming the location
(exact and prefix), HEAD with add_trailer (no trailers, over HTTP/1.1 and HTTP/2), small (in memory) and large (read
from the file) static files over HTTP/2, limit_rate over HTTP/2 at a low and a high rate."""
import os
import time

import h2.events
import pytest

from conftest import simple
from helpers.h2client import H2
from helpers.process import wait_log

SMALL = b'small file\n'
LARGE = os.urandom(300000)


@pytest.mark.hayate_only  # Debian's nginx is built without --with-debug
def test_debug_line_names_the_location(server):
    srv = server('''
error_log {tmp}/logs/debug.log debug;
http {
    server {
        listen 127.0.0.1:{port};
        location = /exact { return 200 "e"; }
        location /pre { return 200 "p"; }
    }
}''')
    assert srv.get('/exact').body == b'e'
    assert srv.get('/prefix').body == b'p'
    path = srv.tmp + '/logs/debug.log'
    assert wait_log(srv, r'using configuration "=/exact"', path=path)
    assert wait_log(srv, r'using configuration "/pre"', path=path)


def test_head_with_add_trailer_has_no_trailers(server):
    srv = server(simple('location / { add_trailer X-T "v"; return 200 "body"; }'))
    c = srv.conn()
    c.send(b'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response(method='HEAD')
    assert r.status == 200 and r.header('Transfer-Encoding') is None
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.body == b'body'
    c.close()


def h2srv(server, body, http_extra=''):
    return server(simple(body, 'http2 on; ' + http_extra), files={'html/s.txt': SMALL, 'html/l.bin': LARGE})


@pytest.mark.hayate_only  # nginx 1.22 has no "http2 on"
def test_h2_head_with_add_trailer(server):
    srv = h2srv(server, 'location / { add_trailer x-t "v"; return 200 "body"; }')
    c = H2(srv.port)
    try:
        sid = c.request('/', method='HEAD')
        status, _, body = c.response(sid)
        assert status == 200 and body == b''
        assert not [e for e in c.events if isinstance(e, h2.events.TrailersReceived)]
    finally:
        c.close()


@pytest.mark.hayate_only
def test_h2_small_and_large_static_files(server):
    srv = h2srv(server, 'root {html};')
    c = H2(srv.port)
    try:
        for _ in range(2):  # the second time from the open-file cache
            status, _, body = c.get('/s.txt')
            assert status == 200 and body == SMALL
            status, _, body = c.get('/l.bin')
            assert status == 200 and body == LARGE
    finally:
        c.close()


@pytest.mark.hayate_only
@pytest.mark.parametrize('rate', ['40k', '2m'])
def test_h2_limit_rate(server, rate):
    srv = h2srv(server, 'root {html}; location / { limit_rate %s; limit_rate_after 200k; }' % rate)
    c = H2(srv.port)
    try:
        status, _, body = c.response(c.request('/l.bin'), timeout=20)
        assert status == 200 and body == LARGE
    finally:
        c.close()
