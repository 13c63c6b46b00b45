"""upstream{} block errors and warnings at -t (server parameters, addresses, keepalive*, balancing methods, zone),
each with nginx's message and the file:line of the directive; checked against nginx too (HY_BIN=/usr/sbin/nginx)."""
import pytest


def run_t(run_cli, prefix, ups, http_extra=''):
    conf = prefix.conf('''
http {
    %s
    upstream u {
        %s
    }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; } }
}
''' % (http_extra, ups))
    return conf, run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])


def line_of(conf, needle):
    return [n for n, l in enumerate(open(conf), 1) if needle in l][-1]


ERRORS = [
    ('server 127.0.0.1:1 weight=0;', 'invalid parameter "weight=0"'),
    ('server 127.0.0.1:1 weight=x;', 'invalid parameter "weight=x"'),
    ('server 127.0.0.1:1 max_fails=-1;', 'invalid parameter "max_fails=-1"'),
    ('server 127.0.0.1:1 max_conns=x;', 'invalid parameter "max_conns=x"'),
    ('server 127.0.0.1:1 fail_timeout=zz;', 'invalid parameter "fail_timeout=zz"'),
    ('server 127.0.0.1:1 bogus;', 'invalid parameter "bogus"'),
    ('server [::1:80;', 'invalid host in upstream "[::1:80"'),
    ('server :80;', 'no host in upstream ":80"'),
    ('server 127.0.0.1:0;', 'invalid port in upstream "127.0.0.1:0"'),
    ('server 127.0.0.1:70000;', 'invalid port in upstream "127.0.0.1:70000"'),
    # nginx: 'too long path in the unix domain socket in upstream "unix:/ppp..."' (hayate words it differently)
    pytest.param('server unix:/' + 'p' * 120 + ';', 'is too long in upstream "unix:/ppp', marks=pytest.mark.hayate_only),
    ('server 127.0.0.1:1; keepalive 4; keepalive 8;', '"keepalive" directive is duplicate'),
    ('server 127.0.0.1:1; keepalive 0;', 'invalid value "0" in "keepalive" directive'),
    ('server 127.0.0.1:1; keepalive_requests x;', '"keepalive_requests" directive invalid number'),
    ('server 127.0.0.1:1; keepalive_timeout x;', '"keepalive_timeout" directive invalid value'),
    ('server 127.0.0.1:1; keepalive_time 1y1;', '"keepalive_time" directive invalid value'),
    ('server 127.0.0.1:1; hash $uri bogus;', 'invalid parameter "bogus"'),
    ('server 127.0.0.1:1; hash $nope;', 'unknown "nope" variable'),
    ('server 127.0.0.1:1; random one;', 'invalid parameter "one"'),
    ('server 127.0.0.1:1; random two most_conn;', 'invalid parameter "most_conn"'),
    ('server 127.0.0.1:1; zone z x;', 'invalid zone size "x"'),
    ('server 127.0.0.1:1; zone z 4k;', 'zone "z" is too small'),
]


@pytest.mark.parametrize('ups,msg', ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_upstream_errors(run_cli, prefix, ups, msg):
    conf, res = run_t(run_cli, prefix, ups)
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    assert emerg and msg in emerg[0], res.err
    if 'variable' not in msg:  # nginx names no place for an unknown variable
        assert emerg[0].endswith('%s:%d' % (conf, line_of(conf, 'upstream u') + 1)), res.err


def test_duplicate_upstream(run_cli, prefix):
    conf, res = run_t(run_cli, prefix, 'server 127.0.0.1:1;', 'upstream u { server 127.0.0.1:2; }')
    assert res.rc == 1, res
    assert 'duplicate upstream "u" in %s:%d' % (conf, line_of(conf, 'upstream u {')) in res.err, res.err


def test_balancing_method_redefined_is_a_warning(run_cli, prefix):
    conf, res = run_t(run_cli, prefix, 'server 127.0.0.1:1;\n least_conn;\n ip_hash;')
    assert res.rc == 0, res
    assert 'load balancing method redefined in %s:%d' % (conf, line_of(conf, 'ip_hash')) in res.err, res.err


def test_valid_variants(run_cli, prefix):
    conf, res = run_t(run_cli, prefix, '''server 127.0.0.1:1 weight=5 max_fails=0 max_conns=10 fail_timeout=1m;
        server [::1]:2 backup; server unix:/tmp/hy-x.sock down; server localhost:3;
        random two least_conn; keepalive 2; keepalive_requests 10; keepalive_time 1h; keepalive_timeout 5s;
        zone z 64k;''')
    assert res.rc == 0, res
