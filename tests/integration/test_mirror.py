"""mirror and mirror_request_body (issue 14): background subrequests (http/subrequest.c) whose responses are
ignored and which the request does not wait for. Two Python peers: the application and the mirror target. The
configs are nginx-compatible, so HY_BIN=/usr/sbin/nginx runs the same checks."""
import threading

import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend
from helpers.process import wait_log, wait_until


@pytest.fixture
def app():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, ('app %s %s body=%s' % (r.method, r.target, r.body.decode())).encode())
    yield b
    b.stop()


@pytest.fixture
def mir():
    b = Backend().start()
    b.handler = lambda r: b.reply(500, b'mirror answer, ignored')
    yield b
    b.stop()


def start(server, app, mir, body, http_extra=''):
    body = body.replace('{app}', str(app.port)).replace('{mir}', str(mir.port))
    return server(simple(body, http_extra))


MIRROR_LOCS = '''
        location = /m1 { internal; proxy_pass http://127.0.0.1:{mir}/one$is_args$args; }
        location = /m2 { internal; proxy_pass http://127.0.0.1:{mir}/two$is_args$args; }
        location = /m-nobody {
            internal;
            proxy_pass http://127.0.0.1:{mir}/nobody;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
        }'''


def test_mirror_gets_method_args_and_body(server, app, mir):
    srv = start(server, app, mir, MIRROR_LOCS + '''
        location /api/ { mirror /m1; mirror /m2; proxy_pass http://127.0.0.1:{app}; }''')
    r = srv.get('/api/x?q=1', method='POST', body=b'payload')
    assert r.status == 200  # the mirror's 500 is ignored
    assert r.body == b'app POST /api/x?q=1 body=payload'
    mir.wait_requests(2)
    got = sorted((m.method, m.target, m.body) for m in mir.requests)
    assert got == [('POST', '/one?q=1', b'payload'), ('POST', '/two?q=1', b'payload')]
    assert len(app.requests) == 1


def test_mirror_request_body_off(server, app, mir):
    srv = start(server, app, mir, MIRROR_LOCS + '''
        location /nb/ { mirror /m-nobody; mirror_request_body off; proxy_pass http://127.0.0.1:{app}; }''')
    r = srv.get('/nb/y', method='POST', body=b'0123456789')
    assert r.body == b'app POST /nb/y body=0123456789'
    mir.wait_requests(1)
    assert mir.requests[0].target == '/nobody'
    assert mir.requests[0].body == b''
    assert mir.requests[0].header('Content-Length') is None


def test_mirror_off_and_inheritance(server, app, mir):
    srv = start(server, app, mir, MIRROR_LOCS + '''
        mirror /m1;
        location / { proxy_pass http://127.0.0.1:{app}; location /quiet/ { mirror off; proxy_pass http://127.0.0.1:{app}; } }''')
    assert srv.get('/quiet/a').status == 200
    assert srv.get('/loud?n=2').status == 200
    mir.wait_requests(1)
    assert [m.target for m in mir.requests] == ['/one?n=2']
    assert len(app.requests) == 2


def test_request_does_not_wait_for_a_slow_mirror(server, app, mir):
    release = threading.Event()
    mir.handler = lambda r: [lambda: release.wait(10), mir.reply(200)]
    srv = start(server, app, mir, MIRROR_LOCS + '''
        location /s/ { mirror /m1; proxy_pass http://127.0.0.1:{app}; }''')
    try:
        for i in range(2):  # both answers arrive while the mirrors are still held by their peer
            c = srv.conn()
            r = c.request(b'POST /s/%d HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc' % i)
            assert r.status == 200
            assert r.body == b'app POST /s/%d body=abc' % i
            c.close()  # the client goes: the mirror still finishes
        mir.wait_requests(2)
        assert not release.is_set()
    finally:
        release.set()
    assert wait_until(lambda: mir.open_connections == 0, timeout=5.0)
    assert [m.body for m in mir.requests] == [b'abc', b'abc']
    assert srv.alive()


def test_mirror_of_a_static_request_and_log_subrequest(server, app, mir):
    srv = start(server, app, mir, MIRROR_LOCS.replace('location = /m2 { internal;',
                                                      'location = /m2 { internal; log_subrequest on;') + '''
        location /st/ { mirror /m2; }''', http_extra='''
        log_format t "$uri $status";
        access_log {tmp}/logs/t.log t;''')
    srv.write('html/st/f.txt', 'file')
    r = srv.get('/st/f.txt')
    assert (r.status, r.body) == (200, b'file')
    mir.wait_requests(1)
    assert mir.requests[0].method == 'GET'
    assert wait_log(srv, r'^/m2 500$', path=srv.tmp + '/logs/t.log')
    assert wait_log(srv, r'^/st/f.txt 200$', path=srv.tmp + '/logs/t.log')


def test_mirror_target_down_does_not_matter(server, app, mir):
    srv = start(server, app, mir, '''
        location = /dead { internal; proxy_pass http://127.0.0.1:9/; }
        location /d/ { mirror /dead; proxy_pass http://127.0.0.1:{app}; }''')
    for i in range(3):
        r = srv.get('/d/%d' % i, method='POST', body=b'x' * 100000)
        assert r.status == 200
        assert r.body.endswith(b'x' * 10)
    assert len(app.requests) == 3
    assert wait_log(srv, r'connect\(\) failed')


def test_conf_errors(server, run_cli, prefix):
    for body, msg in (('location / { mirror off; mirror /a; }', '"mirror" directive is duplicate'),
                      ('location / { mirror /a; mirror off; }', '"mirror" directive is duplicate'),
                      ('location / { mirror_request_body maybe; }', 'invalid value "maybe"')):
        prefix.conf(simple(body))
        res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
        assert res.rc != 0, body
        assert msg in res.err, (body, res.err)
        assert 'test.conf:' in res.err


@pytest.mark.skipif(IS_NGINX, reason='nginx holds a keep-alive connection until its mirrors finish')
def test_keepalive_connection_moves_on_while_mirrors_run(server, app, mir):
    """A deliberate difference (DIFFERENCES.md): mirrors are detached, the next request is not held."""
    release = threading.Event()
    mir.handler = lambda r: [lambda: release.wait(10), mir.reply(200)]
    srv = start(server, app, mir, MIRROR_LOCS + '''
        location /s/ { mirror /m1; proxy_pass http://127.0.0.1:{app}; }''')
    try:
        c = srv.conn()
        for i in range(3):
            r = c.request(b'GET /s/%d HTTP/1.1\r\nHost: x\r\n\r\n' % i)
            assert (r.status, r.body) == (200, b'app GET /s/%d body=' % i)
        mir.wait_requests(3)
        assert not release.is_set()
    finally:
        release.set()
    assert wait_until(lambda: mir.open_connections == 0, timeout=5.0)
