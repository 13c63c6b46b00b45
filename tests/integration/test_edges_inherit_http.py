"""Core settings written once at the http level reach every server and location that does not set them (nginx's
ngx_http_core_module docs: the directives' http context). Each check is the directive's own effect, seen through
a server and a location that say nothing about it."""
import os
import re
import time

import pytest

CONF = '''
http {
    include mime.types;
    default_type text/x-inherited;
    client_max_body_size 5;
    etag off;
    max_ranges 0;
    if_modified_since before;
    keepalive_requests 1;
    absolute_redirect off;
    log_not_found off;
    sendfile on;
    tcp_nopush on;
    merge_slashes off;
    underscores_in_headers on;
    large_client_header_buffers 2 1k;

    server {
        listen 127.0.0.1:{port};
        root {html};
        location = /a { return 200 "a"; }
        location = /u { return 200 "[$http_x_a]"; }
        location /files/ { }
    }
}
'''

FILES = {'html/files/f.txt': 'hello world', 'html/files/f.unknownext': 'x', 'html/files/dir/i.txt': 'i'}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES, full=False)


def test_body_size_etag_ranges(srv):
    assert srv.get('/files/f.txt', method='POST', body=b'0123456789').status == 413
    r = srv.get('/files/f.txt', headers={'Range': 'bytes=0-1'})
    assert r.status == 200 and r.body == b'hello world'   # max_ranges 0: ranges ignored
    assert r.header('ETag') is None


def test_if_modified_since_before(srv):
    future = 'Wed, 01 Jan 2070 00:00:00 GMT'
    assert srv.get('/files/f.txt', headers={'If-Modified-Since': future}).status == 304


def test_keepalive_requests_one(srv):
    r = srv.get('/files/f.txt', headers={'Connection': 'keep-alive'})
    assert r.status == 200
    assert (r.header('Connection') or '').lower() == 'close'


def test_relative_redirect(srv):
    r = srv.get('/files/dir')
    assert r.status == 301 and r.header('Location') == '/files/dir/'


def test_not_found_not_logged(srv):
    assert srv.get('/files/missing.txt').status == 404
    assert srv.get('/files/f.txt').status == 200  # a later request: the 404's log line would be written by now
    assert 'missing.txt' not in srv.error_log()


def test_default_type(srv):
    assert srv.get('/files/f.unknownext').header('Content-Type') == 'text/x-inherited'


def test_merge_slashes_off(srv):
    assert srv.get('/a').text == 'a'
    assert srv.get('//a').status == 404   # "//a" is not "/a" and no other location takes it


def test_underscores_in_headers(srv):
    assert srv.get('/u', headers={'X_A': 'v'}).text == '[v]'


def test_large_header_buffers(srv):
    assert srv.get('/a?' + 'x' * 1500).status == 414
