"""upstream{} configuration errors, each reported with the file:line of the directive (nginx's
ngx_http_upstream_module: server addresses and parameters, zone, hash, random, resolver inside upstream), and the
valid forms that share their code (a port given to an upstream group's name, one implicit group used twice,
IPv6 servers, the same address on two server lines)."""
import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend


def run_t(run_cli, prefix, text):
    path = prefix.conf(text)
    return path, run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])


def line_of(path, needle):
    return [n for n, l in enumerate(open(path), 1) if needle in l][-1]


H = pytest.mark.hayate_only

ERRORS = [
    # (upstream body, message, needle for the line, marks)
    ('server [::1;', 'invalid host in upstream "[::1"', 'server [', H),
    ('server :80;', 'no host in upstream ":80"', 'server :', None),
    ('server 127.0.0.1:0;', 'invalid port in upstream "127.0.0.1:0"', 'server 127', None),
    ('server 127.0.0.1:70000;', 'invalid port in upstream "127.0.0.1:70000"', 'server 127', None),
    ('server no-such-host.invalid;', 'host not found in upstream "no-such-host.invalid"', 'server no', None),
    ('server 127.0.0.1 weight=0;', 'invalid parameter "weight=0"', 'weight', None),
    ('server 127.0.0.1 weight=1000001;', 'invalid parameter "weight=1000001"', 'weight', H),
    ('server 127.0.0.1 max_fails=x;', 'invalid parameter "max_fails=x"', 'max_fails', None),
    ('server 127.0.0.1 max_conns=-1;', 'invalid parameter "max_conns=-1"', 'max_conns', None),
    ('server 127.0.0.1 fail_timeout=abc;', 'invalid parameter "fail_timeout=abc"', 'fail_timeout', None),
    ('server 127.0.0.1 service=http;', 'service upstream "127.0.0.1" requires "resolve" parameter', 'service', H),
    ('server 127.0.0.1 slow_start=10s;', 'invalid parameter "slow_start=10s"', 'slow_start', H),
    ('zone z 64k; resolver 127.0.0.1; server bad..name:80 resolve;', 'invalid host in upstream "bad..name:80"',
     'resolve;', H),
    ('zone z 64k; resolver 127.0.0.1; resolver 127.0.0.1; server 127.0.0.1;',
     '"resolver" directive is duplicate', 'resolver 127.0.0.1; resolver', H),
    ('zone z 64k; resolver_timeout 1s; resolver_timeout 2s; server 127.0.0.1;',
     '"resolver_timeout" directive is duplicate', 'resolver_timeout 2s', H),
    ('hash $uri bogus; server 127.0.0.1;', 'invalid parameter "bogus"', 'hash', None),
    ('random bogus; server 127.0.0.1;', 'invalid parameter "bogus"', 'random', None),
    ('random two bogus; server 127.0.0.1;', 'invalid parameter "bogus"', 'random', None),
    ('zone "" 64k; server 127.0.0.1;', 'invalid zone name ""', 'zone', H),
    ('zone z abc; server 127.0.0.1;', 'invalid zone size "abc"', 'zone', None),
    ('zone z 4k; server 127.0.0.1;', 'zone "z" is too small', 'zone', None),
    ('server unix:/%s;' % ('p' * 200), 'is too long in upstream', 'server unix', H),
]


@pytest.mark.parametrize('body,msg,needle', [
    pytest.param(b, m, n, marks=mk) if mk else (b, m, n) for b, m, n, mk in ERRORS], ids=[str(i) for i in range(len(ERRORS))])
def test_upstream_errors(run_cli, prefix, body, msg, needle):
    path, res = run_t(run_cli, prefix, simple('location / { proxy_pass http://u; }', http_extra='''
    upstream u {
        %s
    }''' % body.replace('; ', ';\n        ')))
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    assert emerg and msg in emerg[0], res.err
    assert emerg[0].endswith('%s:%d' % (path, line_of(path, needle.split('; ')[-1]))), res.err


def test_hash_key_with_bad_variable(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('location / { proxy_pass http://u; }', http_extra='''
    upstream u {
        hash $no_such_variable_here;
        server 127.0.0.1;
    }'''))
    assert res.rc == 1, res
    assert 'unknown "no_such_variable_here" variable' in res.err, res.err


def test_upstream_name_may_not_have_a_port(run_cli, prefix):
    """nginx: the name of an upstream{} takes no port in proxy_pass (upstream "u" may not have port N)."""
    path, res = run_t(run_cli, prefix, simple('''
        location / { proxy_pass http://grp:8080; }''', http_extra='''
    upstream grp { server 127.0.0.1:1; }'''))
    assert res.rc == 1, res
    assert 'upstream "grp" may not have port 8080 in %s:%d' % (path, line_of(path, 'proxy_pass')) in res.err, res.err


def test_upstream_defined_after_a_proxy_pass_with_port(run_cli, prefix):
    path, res = run_t(run_cli, prefix, '''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass http://grp:8080; }
    }
    upstream grp { server 127.0.0.1:1; }
}
''')
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    # nginx names where the port was given
    assert emerg and emerg[0].endswith('upstream "grp" may not have port 8080 in %s:%d' % (
        path, line_of(path, 'proxy_pass'))), res.err


def test_implicit_groups_shared_and_ipv6(server):
    be = Backend().start()
    try:
        srv = server(simple('''
        location /a { proxy_pass http://127.0.0.1:%d; }
        location /b { proxy_pass http://127.0.0.1:%d; }
        location /c { proxy_pass http://u; }''' % (be.port, be.port), http_extra='''
    upstream u { server 127.0.0.1:%d; server 127.0.0.1:%d; server [::1]:9 backup; }''' % (be.port, be.port)))
        for p in ('/a', '/b', '/c', '/c'):
            r = srv.get(p)
            assert r.status == 200, (p, r)
        assert [q.target for q in be.requests] == ['/a', '/b', '/c', '/c']
    finally:
        be.stop()


def test_zone_without_size_shares_a_zone(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('location / { proxy_pass http://u1; }', http_extra='''
    upstream u1 { zone z 64k; server 127.0.0.1:1; }
    upstream u2 { zone z; server 127.0.0.1:2; }'''))
    assert res.rc == 0, res
