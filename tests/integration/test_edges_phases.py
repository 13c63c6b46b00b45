"""Request phases edges (nginx's ngx_http_core_module docs): "/x" for a "location /x/" that proxies is a 301 to
"/x/" keeping the arguments; a rewrite loop ends in 500 after 10 cycles with nginx's log line; If-Match on a
static file; CONNECT with a port that is no number."""
import re
import time

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        location /app/ { proxy_pass http://127.0.0.1:9/; }
        location /loop { rewrite ^ /again; }
        location /again { rewrite ^ /loop; }
    }
}
'''


@pytest.fixture
def srv(server):
    return server(CONF, files={'html/f.txt': 'file'})


def test_auto_redirect_keeps_arguments(srv):
    r = srv.get('/app?x=1&y=2', host='h.test')
    assert r.status == 301
    assert r.header('Location') == 'http://h.test:%d/app/?x=1&y=2' % srv.port


def test_rewrite_cycle(srv):
    assert srv.get('/loop').status == 500
    deadline = time.monotonic() + 5
    while 'rewrite or internal redirection cycle' not in srv.error_log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert re.search(r'\[error\].*rewrite or internal redirection cycle while processing "/(loop|again)"',
                     srv.error_log())


def test_if_match(srv):
    etag = srv.get('/f.txt').header('ETag')
    assert srv.get('/f.txt', headers={'If-Match': '"nope"'}).status == 412
    assert srv.get('/f.txt', headers={'If-Match': etag}).status == 200
    assert srv.get('/f.txt', headers={'If-Match': '*'}).status == 200


@pytest.mark.hayate_only  # nginx 1.22 takes no authority-form target at all
@pytest.mark.parametrize('target', [b'h.test:44x', b'h.test:', b':443'])
def test_connect_without_a_numeric_port(srv, target):
    r = srv.raw(b'CONNECT ' + target + b' HTTP/1.1\r\nHost: h.test\r\n\r\n')
    assert r.status == 400
