"""allow/deny (ngx_http_access_module), satisfy and limit_except: first matching rule wins per address family,
an IPv4-mapped client is an IPv4 one when there are IPv4 rules, unix: rules, inheritance of a whole rule list,
403 with "access forbidden by rule"; satisfy any/all against auth_basic; limit_except (GET implies HEAD)."""
import base64
import socket
import time

import pytest

from helpers.process import unix_get


def basic(user, pw):
    return {'Authorization': 'Basic ' + base64.b64encode(('%s:%s' % (user, pw)).encode()).decode()}


CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        listen [::1]:{port};
        listen [::]:{port2} ipv6only=off;
        listen unix:{tmp}/hy.sock;
        root {html};
        location / { return 200 "open\\n"; }
        location /deny4 { deny 127.0.0.1; }
        location /allow-lo { allow 127.0.0.0/8; allow ::1; deny all; }
        location /order { allow 127.0.0.1; deny 127.0.0.0/8; }
        location /order2 { deny 127.0.0.0/24; allow 127.0.0.1; }
        location /v6only { deny ::1/128; }
        location /other-net { allow 10.0.0.0/8; deny all; }
        location /no-match { deny 10.1.2.3; deny 2001:db8::/32; }
        location /mapped6 { deny ::ffff:127.0.0.1; }
        location /unix { deny unix:; }
        location /rewrite-first { deny all; return 200 "returned\\n"; }
        location /parent {
            deny 127.0.0.1;
            deny ::1;
            location /parent/kid { }
            location /parent/own { allow all; }
        }
    }
}
'''


PATHS = ['deny4', 'allow-lo', 'order', 'order2', 'v6only', 'other-net', 'no-match', 'mapped6', 'unix',
         'parent/kid', 'parent/own', 'all-deny', 'all-allow', 'any-deny', 'any-allow', 'any-noauth', 'any-none',
         'lmt', 'lmt-post', 'lmt-auth', 'lmt-static', 'lmt-log']
FILES = {'html/' + p: 'in\n' for p in PATHS}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def status(srv, path, host='127.0.0.1', port=None):
    c = srv.conn(host=host, port=port)
    try:
        r = c.request('GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % path, 'GET')
        return r.status
    finally:
        c.close()


def test_ipv4_rules(srv):
    assert status(srv, '/') == 200
    assert status(srv, '/deny4') == 403
    assert status(srv, '/deny4', host='::1') == 200  # an IPv6 client is not checked against IPv4 rules
    assert status(srv, '/allow-lo') == 200
    assert status(srv, '/allow-lo', host='::1') == 200
    assert status(srv, '/other-net') == 403
    assert status(srv, '/other-net', host='::1') == 403  # "all" is a rule of every family
    assert status(srv, '/no-match') == 200
    assert status(srv, '/no-match', host='::1') == 200


def test_first_match_wins(srv):
    assert status(srv, '/order') == 200
    assert status(srv, '/order2') == 403


def test_ipv6_rules(srv):
    assert status(srv, '/v6only') == 200
    assert status(srv, '/v6only', host='::1') == 403


def test_ipv4_mapped_client(srv):
    # 127.0.0.1 on a dual-stack socket arrives as ::ffff:127.0.0.1: checked against the IPv4 rules
    assert status(srv, '/deny4', port=srv.port2) == 403
    assert status(srv, '/allow-lo', port=srv.port2) == 200
    # with no IPv4 rules at the level, the IPv6 rules see the mapped address as it is
    assert status(srv, '/mapped6', port=srv.port2) == 403
    assert status(srv, '/mapped6') == 200


def test_unix_rules(srv):
    path = srv.tmp + '/hy.sock'
    assert unix_get(path, '/unix')[0] == 403
    assert unix_get(path, '/deny4')[0] == 200
    assert unix_get(path, '/other-net')[0] == 403
    assert status(srv, '/unix') == 200


def test_inheritance(srv):
    assert status(srv, '/parent/kid') == 403
    assert status(srv, '/parent/kid', host='::1') == 403
    assert status(srv, '/parent/own') == 200


def test_rewrite_phase_runs_before_access(srv):
    # nginx's phase order: `return` answers in the rewrite phase, before allow/deny are looked at
    r = srv.get('/rewrite-first')
    assert r.status == 200 and r.body == b'returned\n'


def test_forbidden_is_logged(srv):
    r = srv.get('/deny4')
    assert r.status == 403
    assert b'403 Forbidden' in r.body
    log = srv.error_log()
    assert '[error]' in log and 'access forbidden by rule, client: 127.0.0.1' in log


@pytest.mark.parametrize('rule,msg', [
    ('allow 127.0.0.1/33;', 'invalid parameter "127.0.0.1/33"'),
    ('deny ::1/129;', 'invalid parameter "::1/129"'),
    ('deny foo;', 'invalid parameter "foo"'),
    ('deny 1.2.3.4/x;', 'invalid parameter "1.2.3.4/x"'),
    ('allow;', 'invalid number of arguments in "allow" directive'),
    ('satisfy some;', 'invalid value "some"'),
    ('limit_except FOO { deny all; }', 'invalid method "FOO"'),
    ('limit_except GET { deny all; } limit_except POST { deny all; }', '"limit_except" directive is duplicate'),
    ('limit_except GET { root /x; }', '"root" directive is not allowed here'),
])
def test_bad_config(run_cli, prefix, rule, msg):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % rule)
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc != 0
    assert msg in r.err and 'test.conf:' in r.err


def test_low_bits_warn(run_cli, prefix):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { deny 127.0.0.1/8; } } }')
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 0
    assert '[warn]' in r.err and 'low address bits of 127.0.0.1/8 are meaningless' in r.err


HTPASSWD = 'alice:{PLAIN}wonder\n'

SATISFY = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        auth_basic_user_file {tmp}/conf/htpasswd;
        location /all-deny { deny all; auth_basic "r"; }
        location /all-allow { allow all; auth_basic "r"; }
        location /any-deny { satisfy any; deny all; auth_basic "r"; }
        location /any-allow { satisfy any; allow 127.0.0.1; deny all; auth_basic "r"; }
        location /any-noauth { satisfy any; deny all; }
        location /any-none { satisfy any; }
        location /lmt {
            limit_except GET { deny all; }
        }
        location /lmt-post {
            limit_except post pUt { deny all; }
        }
        location /lmt-auth {
            limit_except GET {
                auth_basic "writers";
            }
        }
        location /lmt-static {
            limit_except GET { deny all; }
        }
        location /lmt-log {
            limit_except GET {
                access_log {tmp}/logs/lmt.log;
            }
        }
    }
}
'''


@pytest.fixture
def ssrv(server):
    return server(SATISFY, files=dict(FILES, **{'conf/htpasswd': HTPASSWD}))


def test_satisfy_all(ssrv):
    r = ssrv.get('/all-deny', headers=basic('alice', 'wonder'))
    assert r.status == 403  # the address is checked first, credentials do not help
    r = ssrv.get('/all-allow')
    assert r.status == 401 and r.header('WWW-Authenticate') == 'Basic realm="r"'
    assert ssrv.get('/all-allow', headers=basic('alice', 'wonder')).status == 200


def test_satisfy_any(ssrv):
    r = ssrv.get('/any-deny')
    assert r.status == 401  # a 401 beats the 403
    assert r.header('WWW-Authenticate') == 'Basic realm="r"'
    assert ssrv.get('/any-deny', headers=basic('alice', 'wonder')).status == 200
    assert ssrv.get('/any-deny', headers=basic('alice', 'bad')).status == 401
    assert ssrv.get('/any-allow').status == 200  # the address alone is enough
    r = ssrv.get('/any-noauth')
    assert r.status == 403
    assert 'access forbidden by rule' in ssrv.error_log()
    assert ssrv.get('/any-none').status == 200


def test_satisfy_any_logs_forbidden_once(ssrv):
    ssrv.get('/any-noauth')
    ssrv.get('/all-deny')
    assert ssrv.error_log().count('access forbidden by rule') == 2


def test_limit_except(ssrv):
    assert ssrv.get('/lmt').status == 200
    assert ssrv.get('/lmt', method='HEAD').status == 200  # GET implies HEAD
    assert ssrv.get('/lmt', method='POST', body=b'x').status == 403
    assert ssrv.get('/lmt', method='DELETE').status == 403
    assert ssrv.get('/lmt', method='PROPFIND').status == 403
    assert ssrv.get('/lmt', method='FOO').status == 403  # unknown methods get the block too
    # allowed through: the static module answers POST and PUT with its own 405
    assert ssrv.get('/lmt-post', method='POST', body=b'x').status == 405
    assert ssrv.get('/lmt-post', method='PUT', body=b'x').status == 405
    assert ssrv.get('/lmt-post').status == 403
    assert ssrv.get('/lmt-post', method='HEAD').status == 403


def test_limit_except_auth(ssrv):
    assert ssrv.get('/lmt-auth').status == 200
    r = ssrv.get('/lmt-auth', method='DELETE')
    assert r.status == 401 and r.header('WWW-Authenticate') == 'Basic realm="writers"'
    assert ssrv.get('/lmt-auth', method='DELETE', headers=basic('alice', 'wonder')).status == 405  # static's


def test_limit_except_keeps_location_settings(ssrv):
    r = ssrv.get('/lmt-static')
    assert r.status == 200 and r.body == b'in\n'
    assert ssrv.get('/lmt-static', method='POST', body=b'x').status == 403


def test_limit_except_access_log(ssrv):
    assert ssrv.get('/lmt-log').status == 200
    assert ssrv.get('/lmt-log', method='DELETE').status == 405
    deadline = time.monotonic() + 5
    while True:
        try:
            with open(ssrv.tmp + '/logs/lmt.log') as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        if lines:
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert len(lines) == 1 and '"DELETE /lmt-log HTTP/1.1" 405' in lines[0]


def test_realip_address_is_checked(server, proto):
    srv = server('''
    http {
        server {
            listen 127.0.0.1:{port};
            root {html};
            set_real_ip_from 127.0.0.1;
            real_ip_header X-Real-IP;
            location / { deny 10.0.0.1; deny 2001:db8::1; allow all; }
        }
    }
    ''', files={'html/index.html': 'in\n'})
    assert srv.get('/').status == 200
    assert srv.get('/', headers={'X-Real-IP': '10.0.0.2'}).status == 200
    assert srv.get('/', headers={'X-Real-IP': '10.0.0.1'}).status == 403
    assert srv.get('/', headers={'X-Real-IP': '2001:db8::1'}).status == 403
    assert 'access forbidden by rule, client: 10.0.0.1' in srv.error_log()
