"""uwsgi_pass to a real uWSGI (python3 plugin) from Debian, over a unix socket and over TCP (issue 13).

Written from nginx's ngx_http_uwsgi_module documentation and checked against Debian's nginx
(HY_BIN=/usr/sbin/nginx); uwsgi_params comes from the binary's conf/ (nginx: /etc/nginx).
"""
import hashlib
import http.client
import json
import os
import shutil
import threading

import pytest

from conftest import IS_NGINX, REPO
from helpers.appservers import UWSGI, uwsgi

pytestmark = pytest.mark.skipif(not os.path.exists(UWSGI), reason='uwsgi missing')

APP = r'''
import hashlib, json, time

KEYS = ['REQUEST_METHOD', 'QUERY_STRING', 'REQUEST_URI', 'PATH_INFO', 'DOCUMENT_ROOT', 'SERVER_PROTOCOL',
        'REQUEST_SCHEME', 'REMOTE_ADDR', 'SERVER_PORT', 'SERVER_NAME', 'CONTENT_TYPE', 'CONTENT_LENGTH',
        'HTTP_HOST', 'HTTP_X_TEST', 'X_EXTRA', 'UWSGI_EMPTY']

def application(env, start_response):
    path = env['PATH_INFO']
    if path == '/env':
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [json.dumps({k: env.get(k) for k in KEYS}).encode()]
    if path == '/post':
        body = env['wsgi.input'].read()
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return [b'%d %s' % (len(body), hashlib.md5(body).hexdigest().encode())]
    if path.startswith('/status/'):
        code = path.split('/')[2]
        start_response(code + ' Whatever', [('X-App', 'wsgi'), ('Set-Cookie', 'a=1'), ('Set-Cookie', 'b=2')])
        return [b'status body']
    if path == '/big':
        start_response('200 OK', [('Content-Type', 'application/octet-stream')])
        return [b'0123456789abcdef' * 4096 for _ in range(32)]
    if path == '/stream':
        def gen():
            for i in range(5):
                yield b'line %d\n' % i
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return gen()
    if path == '/slow':
        time.sleep(3)
        start_response('200 OK', [])
        return [b'late']
    start_response('404 Not Found', [('Content-Type', 'text/plain')])
    return [b'no such page']
'''


def params(prefix, name):
    src = os.path.join('/etc/nginx', name) if IS_NGINX else os.path.join(REPO, 'conf', name)
    shutil.copy(src, prefix.path('conf/' + name))


CONF = '''
http {
    upstream app {
        server %s;
    }
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / {
            include uwsgi_params;
            uwsgi_param HTTP_X_TEST from-conf;
            uwsgi_param X_EXTRA $arg_extra if_not_empty;
            uwsgi_param UWSGI_EMPTY $arg_nothing if_not_empty;
            uwsgi_read_timeout 10s;
            uwsgi_pass app;
        }
        location = /slow {
            include uwsgi_params;
            uwsgi_read_timeout 1s;
            uwsgi_pass app;
        }
    }
}
'''


@pytest.fixture(params=['unix', 'tcp'])
def app(request, prefix):
    b = uwsgi(prefix.tmp, APP, unix=request.param == 'unix')
    yield b
    b.stop()


@pytest.fixture
def srv(server, prefix, app):
    params(prefix, 'uwsgi_params')
    return server(CONF % app.addr)


def test_get_passes_uwsgi_params(srv, prefix):
    r = srv.get('/env?a=1&extra=yes', headers={'X-Test': 'client'})
    assert r.status == 200
    v = json.loads(r.body)
    assert v['REQUEST_METHOD'] == 'GET'
    assert v['QUERY_STRING'] == 'a=1&extra=yes'
    assert v['REQUEST_URI'] == '/env?a=1&extra=yes'
    assert v['PATH_INFO'] == '/env'
    assert v['DOCUMENT_ROOT'] == prefix.html
    assert v['SERVER_PROTOCOL'] == 'HTTP/1.1'
    assert v['REMOTE_ADDR'] == '127.0.0.1'
    assert v['SERVER_PORT'] == str(prefix.port)
    assert v['HTTP_HOST'] == 'localhost'
    assert v['HTTP_X_TEST'] == 'from-conf'
    assert v['X_EXTRA'] == 'yes'
    assert v['UWSGI_EMPTY'] is None  # if_not_empty leaves an empty value out


def test_post_1mib_body(srv):
    body = os.urandom(1 << 20)
    r = srv.get('/post', method='POST', body=body, headers={'Content-Type': 'application/octet-stream'})
    assert r.status == 200
    assert r.body == b'%d %s' % (len(body), hashlib.md5(body).hexdigest().encode())


def test_chunked_request_body(srv):
    c = srv.conn()
    c.sock.sendall(b'POST /post HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n'
                   b'5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n')
    r = c.read_response()
    assert r.status == 200
    assert r.body == b'11 ' + hashlib.md5(b'hello world').hexdigest().encode()


@pytest.mark.parametrize('code', [200, 201, 404, 503])
def test_status_headers_cookies(srv, code):
    r = srv.get('/status/%d' % code)
    assert r.status == code
    assert r.header('x-app') == 'wsgi'
    assert r.header_all('set-cookie') == ['a=1', 'b=2']
    assert r.body == b'status body'


def test_large_response(srv):
    r = srv.get('/big')
    assert r.status == 200
    assert r.body == b'0123456789abcdef' * 4096 * 32


def test_streamed_response(srv):
    r = srv.get('/stream')
    assert r.status == 200
    assert r.body == b''.join(b'line %d\n' % i for i in range(5))


def test_app_404_passes_through(srv):
    r = srv.get('/nothing-here')
    assert r.status == 404
    assert r.body == b'no such page'


def test_slow_app_is_504(srv):
    assert srv.get('/slow').status == 504


UNIX_CONNECT_FAILED = r'\[crit\].*connect\(\) to unix:.*failed \((2: No such file or directory|111: Connection refused)\)'


def test_app_down_is_502(srv, app):
    srv.ignore_log = UNIX_CONNECT_FAILED
    app.stop()
    assert srv.get('/env').status == 502


def test_app_restarted_under_load_no_failed_get(srv, app, prefix):
    srv.ignore_log = UNIX_CONNECT_FAILED
    stop = threading.Event()
    bad = []

    def load():
        while not stop.is_set():
            try:
                c = http.client.HTTPConnection('127.0.0.1', prefix.port, timeout=10)
                c.request('GET', '/env')
                st = c.getresponse().status
                c.close()
                if st not in (200, 502):
                    bad.append(st)
            except Exception as e:  # noqa: BLE001
                bad.append(repr(e))

    ts = [threading.Thread(target=load) for _ in range(4)]
    for t in ts:
        t.start()
    try:
        app.restart()
    finally:
        stop.set()
        for t in ts:
            t.join(30)
    assert bad == []
    for _ in range(20):
        assert srv.get('/env').status == 200
