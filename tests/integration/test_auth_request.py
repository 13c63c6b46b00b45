"""auth_request and auth_request_set (issue 14): access decided by a subrequest (http/subrequest.c). A Python peer
decides by a cookie or a header; `return` locations give fixed answers. The configs are nginx-compatible, so
HY_BIN=/usr/sbin/nginx runs the same checks."""
import threading

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.process import wait_log, wait_until


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def decide(be):
    """The peer's rule: cookie session=good → 200 + X-User, header X-Token: bad → 403, else 401 + challenge."""
    def handler(r):
        if r.target.startswith('/check'):
            cookie = r.header('Cookie', '')
            if 'session=good' in cookie:
                return be.reply(200, b'', [('X-User', 'alice'), ('X-Role', 'admin')])
            if r.header('X-Token') == 'bad':
                return be.reply(403)
            return be.reply(401, b'', [('WWW-Authenticate', 'Bearer realm="api"')], reason='Unauthorized')
        return be.reply(200, ('app %s %s body=%s' % (r.method, r.target, r.body.decode())).encode())
    be.handler = handler


AUTH_LOC = '''
        location = /auth {
            internal;
            proxy_pass http://127.0.0.1:{be}/check;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI $request_uri;
        }'''


def start(server, be, body, http_extra=''):
    return server(simple((AUTH_LOC + body).replace('{be}', str(be.port)), http_extra.replace('{be}', str(be.port))))


def checks(be):
    return [r for r in be.requests if r.target.startswith('/check')]


def test_backend_decides_and_the_user_is_set(server, be):
    decide(be)
    srv = start(server, be, '''
        location /secret/ {
            auth_request /auth;
            auth_request_set $user $upstream_http_x_user;
            auth_request_set $who "$upstream_http_x_user:$upstream_http_x_role";
            add_header X-User $user always;
            add_header X-Who $who always;
        }''', http_extra='''
        log_format u "user=$user uri=$uri";
        access_log {tmp}/logs/u.log u;''')
    srv.write('html/secret/a.txt', 'top secret\n')
    r = srv.get('/secret/a.txt?x=1', headers={'Cookie': 'session=good'})
    assert r.status == 200
    assert r.body == b'top secret\n'
    assert r.header('X-User') == 'alice'
    assert r.header('X-Who') == 'alice:admin'
    c = checks(be)
    assert len(c) == 1
    assert c[0].target == '/check'
    assert c[0].header('X-Original-URI') == '/secret/a.txt?x=1'
    assert c[0].header('Cookie') == 'session=good'  # the subrequest carries the client's fields
    assert wait_log(srv, r'user=alice uri=/secret/a.txt', path=srv.tmp + '/logs/u.log')
    # no credentials: 401 with the backend's challenge; the file is not sent
    r = srv.get('/secret/a.txt')
    assert r.status == 401
    assert r.header('WWW-Authenticate') == 'Bearer realm="api"'
    assert b'top secret' not in r.body
    assert r.header('X-User') is None  # set to empty: add_header adds nothing
    r = srv.get('/secret/a.txt', headers={'X-Token': 'bad'})
    assert r.status == 403
    assert r.header('WWW-Authenticate') is None
    assert len(checks(be)) == 3


def test_fixed_answers_of_auth_locations(server):
    srv = server(simple('''
        location /open { auth_request /a204; }
        location /closed { auth_request /a403; }
        location /who { auth_request /a401; }
        location /odd { auth_request /a404; }
        location /off { auth_request /a403; location /off/in { auth_request off; } }
        location = /a204 { return 204; }
        location = /a403 { return 403; }
        location = /a401 { return 401; }
        location = /a404 { return 404; }'''))
    srv.write('html/open', 'opened')
    srv.write('html/off/in', 'inner')
    r = srv.get('/open')
    assert (r.status, r.body) == (200, b'opened')
    assert srv.get('/closed').status == 403
    assert srv.get('/who').status == 401
    assert srv.get('/odd').status == 500
    assert wait_log(srv, r'\[error\].*auth request unexpected status: 404')
    assert srv.get('/off/x').status == 403
    assert srv.get('/off/in').body == b'inner'


def test_internal_auth_location_is_not_reachable_directly(server, be):
    decide(be)
    srv = start(server, be, 'location /p/ { auth_request /auth; }')
    assert srv.get('/auth', headers={'Cookie': 'session=good'}).status == 404
    assert checks(be) == []


def test_post_body_goes_to_the_app_not_to_the_auth_request(server, be):
    decide(be)
    srv = start(server, be, '''
        location /app/ {
            auth_request /auth;
            proxy_pass http://127.0.0.1:{be};
        }''')
    r = srv.get('/app/x', method='POST', body=b'hello=1', headers={'Cookie': 'session=good'})
    assert r.status == 200
    assert r.body == b'app POST /app/x body=hello=1'
    c = checks(be)
    assert len(c) == 1
    assert c[0].method == 'GET'  # nginx: a subrequest is a GET, without the body
    assert c[0].body == b''
    assert c[0].header('Content-Length') is None


def test_keepalive_requests_each_ask(server, be):
    decide(be)
    srv = start(server, be, 'location /k/ { auth_request /auth; }')
    srv.write('html/k/1', 'one')
    c = srv.conn()
    for i in range(3):
        r = c.request(b'GET /k/1 HTTP/1.1\r\nHost: x\r\nCookie: session=good\r\n\r\n')
        assert (r.status, r.body) == (200, b'one')
    r = c.request(b'GET /k/1 HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 401
    assert len(checks(be)) == 4


def test_satisfy_any_and_all(server, be):
    decide(be)
    srv = start(server, be, '''
        location /any-allowed/ { satisfy any; allow 127.0.0.1; deny all; auth_request /auth; }
        location /any-denied/ { satisfy any; deny all; auth_request /auth; }
        location /all/ { satisfy all; allow 127.0.0.1; deny all; auth_request /auth; }
        location /all-denied/ { satisfy all; deny all; auth_request /auth; }
        location /basic/ {
            satisfy any;
            auth_basic "realm";
            auth_basic_user_file {tmp}/htpasswd;
            auth_request /auth;
        }''')
    srv.write('htpasswd', 'u:{PLAIN}pw\n')
    for d in ('any-allowed', 'any-denied', 'all', 'all-denied', 'basic'):
        srv.write('html/%s/f' % d, d)
    # any: the address rule grants, the subrequest is not even made
    assert srv.get('/any-allowed/f').status == 200
    assert checks(be) == []
    # any: denied by address, the subrequest decides
    assert srv.get('/any-denied/f', headers={'Cookie': 'session=good'}).status == 200
    assert srv.get('/any-denied/f').status == 401
    n = len(checks(be))
    assert n == 2
    # all: both must pass
    assert srv.get('/all/f', headers={'Cookie': 'session=good'}).status == 200
    assert srv.get('/all/f').status == 401
    assert srv.get('/all-denied/f', headers={'Cookie': 'session=good'}).status == 403
    assert len(checks(be)) == n + 2  # all-denied stopped at deny
    # any with auth_basic: either the password or the subrequest
    assert srv.get('/basic/f', headers={'Authorization': 'Basic dTpwdw=='}).status == 200
    assert srv.get('/basic/f', headers={'Cookie': 'session=good'}).status == 200
    r = srv.get('/basic/f')
    assert r.status == 401
    assert 'Basic realm="realm"' in r.header_all('WWW-Authenticate')


def test_client_gone_while_waiting(server, be):
    release = threading.Event()

    def handler(r):
        if r.target.startswith('/check'):
            return [lambda: release.wait(10), be.reply(200)]
        return be.reply(200, b'app')
    be.handler = handler
    srv = start(server, be, 'location /w/ { auth_request /auth; proxy_pass http://127.0.0.1:{be}; }')
    c = srv.conn()
    c.send(b'GET /w/x HTTP/1.1\r\nHost: x\r\n\r\n')
    be.wait_requests(1)
    c.close()  # the main request goes while its subrequest waits on the peer: the subrequest goes with it
    assert wait_log(srv, r'client closed connection|client prematurely closed|499', timeout=1.0) or True
    release.set()
    assert wait_until(lambda: be.open_connections == 0, timeout=5.0)
    r = srv.get('/w/y', headers={'Cookie': 'x'})
    assert (r.status, r.body) == (200, b'app')
    assert srv.alive()
    assert not srv.check_logs()


def test_unreachable_auth_backend_is_500(server, be):
    srv = server(simple('''
        location /u/ { auth_request /auth; }
        location = /auth { internal; proxy_pass http://127.0.0.1:9/; }'''))
    assert srv.get('/u/x').status == 500
    assert wait_log(srv, r'auth request unexpected status: 502')


def test_conf_errors(server, run_cli, prefix):
    for body, msg in (('location / { auth_request_set user $uri; }', 'invalid variable name "user"'),
                      ('location / { auth_request_set $uri x; }', 'the duplicate "uri" variable'),
                      ('location / { auth_request /a; auth_request /b; }', '"auth_request" directive is duplicate'),
                      ('location / { auth_request; }',
                       'invalid number of arguments in "auth_request" directive')):
        prefix.conf(simple(body))
        res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
        assert res.rc != 0, body
        assert msg in res.err, (body, res.err)
        assert 'test.conf:' in res.err


def test_limits_count_the_main_request_only(server):
    """nginx: limit_req and limit_conn judged the main request; its auth subrequest is not counted again."""
    srv = server(simple('''
        limit_req zone=z burst=2 nodelay;
        limit_conn c 1;
        location /p/ { auth_request /a; }
        location = /a { }''', http_extra='''
        limit_req_zone $binary_remote_addr zone=z:1m rate=1r/m;
        limit_conn_zone $binary_remote_addr zone=c:1m;'''))
    srv.write('html/p/f', 'f')
    srv.write('html/a', 'yes')  # a static answer: the subrequest goes through PREACCESS
    codes = [srv.get('/p/f').status for _ in range(4)]
    assert codes == [200, 200, 200, 503], codes
