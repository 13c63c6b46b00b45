"""`sticky` (session affinity, nginx's ngx_http_upstream_module): cookie mode (the cookie names the peer by the hex
MD5 of its address or by its route=, with its attributes), route mode (the first non-empty variable, after its last
'.', picks the server of that route=), learn mode (sessions learnt from the upstream's responses, in a shared zone),
the fallback to the balancer when the bound peer cannot serve, and `drain`. Debian's nginx 1.22 has no `sticky`
(it is in the commercial build and newer nginx), so these are hayate_only."""
import hashlib
import os
import re
import signal

import pytest

from conftest import free_port
from helpers.backend import Backend
from helpers.process import master_conf, wait_until, workers_of

pytestmark = pytest.mark.hayate_only


@pytest.fixture
def bes():
    bs = [Backend().start() for _ in range(2)]
    for i, b in enumerate(bs):
        b.handler = (lambda n: (lambda r: Backend.reply(200, n, [('Set-Cookie', 'sid=s' + n.decode())])))(
            b'be%d' % i)
    yield bs
    for b in bs:
        b.stop()


def md5(port):
    return hashlib.md5(b'127.0.0.1:%d' % port).hexdigest()


def conf(upstream, extra=''):
    return '''
http {
    upstream u { %s }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; proxy_next_upstream error; } %s }
}
''' % (upstream, extra)


def sticky_cookie(r, name='srv'):
    for v in r.header_all('Set-Cookie'):
        if v.startswith(name + '='):
            return v
    return None


def test_cookie_names_the_peer_and_binds_the_client(server, bes):
    srv = server(conf('server 127.0.0.1:%d; server 127.0.0.1:%d; sticky cookie srv;' % (bes[0].port, bes[1].port)))
    seen = {}
    for _ in range(4):  # new clients are balanced; each answer names its peer
        r = srv.get('/')
        assert r.status == 200
        c = sticky_cookie(r)
        assert c is not None and c == 'srv=' + md5(bes[int(r.body[-1:])].port)
        seen[r.body] = c
    assert set(seen) == {b'be0', b'be1'}
    for body, c in seen.items():
        for _ in range(5):  # a bound client always goes to its peer, and gets the same cookie again
            r = srv.get('/', headers={'Cookie': 'a=b; ' + c})
            assert r.body == body
            assert sticky_cookie(r) == c


def test_cookie_attributes(server, bes):
    srv = server(conf('server 127.0.0.1:%d; sticky cookie srv expires=1h domain=.example.com path=/p httponly '
                      'secure samesite=lax;' % bes[0].port))
    c = sticky_cookie(srv.get('/'))
    parts = dict((p.split('=', 1) + [None])[:2] for p in c.split('; '))
    assert parts['srv'] == md5(bes[0].port)
    assert parts['max-age'] == '3600'
    assert re.match(r'\w{3}, \d\d-\w{3}-\d\d \d\d:\d\d:\d\d GMT$', parts['expires'])
    assert parts['domain'] == '.example.com' and parts['path'] == '/p' and parts['samesite'] == 'lax'
    assert 'httponly' in parts and 'secure' in parts


def test_cookie_expires_max_and_samesite_variable(server, bes):
    srv = server(conf('server 127.0.0.1:%d; sticky cookie srv expires=max samesite=$arg_s;' % bes[0].port))
    c = sticky_cookie(srv.get('/?s=none'))
    assert 'expires=Thu, 31-Dec-37 23:55:55 GMT' in c and 'max-age=315360000' in c and 'samesite=none' in c
    assert 'samesite=strict' in sticky_cookie(srv.get('/?s=bogus'))  # not one of the three: strict
    assert 'samesite' not in sticky_cookie(srv.get('/'))  # empty: none


def test_cookie_is_the_route_when_given(server, bes):
    srv = server(conf('server 127.0.0.1:%d route=a; server 127.0.0.1:%d route=b; sticky cookie srv;'
                      % (bes[0].port, bes[1].port)))
    vals = {srv.get('/').body: None for _ in range(2)}
    for _ in range(4):
        r = srv.get('/')
        vals[r.body] = sticky_cookie(r)
    assert vals[b'be0'] == 'srv=a' and vals[b'be1'] == 'srv=b'
    assert all(srv.get('/', headers={'Cookie': 'srv=b'}).body == b'be1' for _ in range(4))


def test_cookie_bound_to_a_dead_peer_falls_back(server, bes):
    dead = free_port()
    srv = server(conf('server 127.0.0.1:%d; server 127.0.0.1:%d; sticky cookie srv;' % (dead, bes[0].port)))
    srv.ignore_log = r'connect\(\) failed'
    for _ in range(3):
        r = srv.get('/', headers={'Cookie': 'srv=' + md5(dead)})
        assert r.status == 200 and r.body == b'be0'
        assert sticky_cookie(r) == 'srv=' + md5(bes[0].port)  # the client is bound anew


def test_cookie_with_a_down_server_is_not_honoured(server, bes):
    srv = server(conf('server 127.0.0.1:%d down; server 127.0.0.1:%d; sticky cookie srv;'
                      % (bes[0].port, bes[1].port)))
    assert all(srv.get('/', headers={'Cookie': 'srv=' + md5(bes[0].port)}).body == b'be1' for _ in range(4))


def test_route_picks_the_server_by_the_part_after_the_last_dot(server, bes):
    srv = server(conf('server 127.0.0.1:%d route=a; server 127.0.0.1:%d route=b; sticky route $cookie_r $arg_r;'
                      % (bes[0].port, bes[1].port)))
    assert all(srv.get('/?r=x.y.b').body == b'be1' for _ in range(4))
    assert all(srv.get('/?r=a').body == b'be0' for _ in range(4))
    # the first non-empty variable wins
    assert all(srv.get('/?r=a', headers={'Cookie': 'r=s.b'}).body == b'be1' for _ in range(4))
    # no value, or a route nobody has: the balancer
    assert {srv.get('/').body for _ in range(4)} == {b'be0', b'be1'}
    assert {srv.get('/?r=zz').body for _ in range(4)} == {b'be0', b'be1'}
    assert sticky_cookie(srv.get('/?r=a'), 'a') is None and srv.get('/?r=a').header_all('Set-Cookie') == ['sid=sbe0']


def test_drain_gets_only_bound_requests(server, bes):
    srv = server(conf('server 127.0.0.1:%d route=a drain; server 127.0.0.1:%d route=b; sticky route $arg_r;'
                      % (bes[0].port, bes[1].port)))
    assert all(srv.get('/').body == b'be1' for _ in range(4))
    assert all(srv.get('/?r=a').body == b'be0' for _ in range(4))


def test_learn_binds_sessions_the_upstream_creates(server, bes):
    srv = server(conf('server 127.0.0.1:%d; server 127.0.0.1:%d; '
                      'sticky learn create=$upstream_cookie_sid lookup=$cookie_sid zone=st:1m;'
                      % (bes[0].port, bes[1].port)))
    assert {srv.get('/').body for _ in range(4)} == {b'be0', b'be1'}  # the sessions sbe0 and sbe1 are learnt
    for n in (0, 1):
        assert all(srv.get('/', headers={'Cookie': 'sid=sbe%d' % n}).body == b'be%d' % n for _ in range(5))
    assert {srv.get('/', headers={'Cookie': 'sid=unknown'}).body for _ in range(4)} == {b'be0', b'be1'}


@pytest.mark.parametrize('ups,msg', [
    ('sticky learn create=$upstream_cookie_sid lookup=$cookie_sid;', '"zone" is not specified in "sticky" directive'),
    ('sticky cookie;', 'invalid number of arguments in "sticky" directive'),
    ('sticky cookie s bogus;', 'invalid parameter "bogus"'),
    ('sticky route arg;', 'invalid parameter "arg"'),
    ('sticky cookie a; sticky cookie b;', '"sticky" directive is duplicate'),
    ('sticky learn create=$upstream_cookie_s lookup=$cookie_s zone=z:1m sync;', 'zone synchronization is not supported'),
])
def test_sticky_errors(run_cli, prefix, ups, msg):
    conf = prefix.conf('''
http {
    upstream u { server 127.0.0.1:1; %s }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; } }
}
''' % ups)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0 and msg in res.err, res


def test_route_with_servers_that_have_no_route(server, bes):
    srv = server(conf('server 127.0.0.1:%d; server 127.0.0.1:%d route=b; sticky route $arg_r;'
                      % (bes[0].port, bes[1].port)))
    assert {srv.get('/?r=a').body for _ in range(4)} == {b'be0', b'be1'}  # no server has route a
    assert all(srv.get('/?r=b').body == b'be1' for _ in range(4))


def learn_http(bes, zone='st:1m'):
    return '''
    upstream u1 { server 127.0.0.1:%d; server 127.0.0.1:%d;
                  sticky learn create=$upstream_cookie_sid lookup=$cookie_sid zone=%s; }
    upstream u2 { server 127.0.0.1:%d; server 127.0.0.1:%d;
                  sticky learn create=$upstream_cookie_sid lookup=$cookie_sid zone=%s; }
    server { listen 127.0.0.1:{port}; location /1 { proxy_pass http://u1; } location /2 { proxy_pass http://u2; } }
''' % (bes[0].port, bes[1].port, zone, bes[1].port, bes[0].port, zone)


def test_learn_sessions_are_shared_by_workers_and_kept_by_a_reload(server, bes):
    srv = server(master_conf(learn_http(bes)), full=True)
    assert {srv.get('/1').body for _ in range(4)} == {b'be0', b'be1'}
    # two workers: whichever takes the connection knows the session (the zone is shared)
    assert all(srv.get('/1', headers={'Cookie': 'sid=sbe1'}).body == b'be1' for _ in range(12))
    # u2 shares the zone but not the sessions: u1's sbe1 means nothing to u2 until u2 learns it
    assert {srv.get('/2').body for _ in range(4)} == {b'be0', b'be1'}
    assert all(srv.get('/2', headers={'Cookie': 'sid=sbe0'}).body == b'be0' for _ in range(6))
    old = set(workers_of(srv, 2))
    os.kill(srv.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: (lambda w: len(w) == 2 and not (set(w) & old))(workers_of(srv, 2, 0.2)), 10)
    # the zone is kept: the new workers know sbe1 (had it been lost, each new worker's round robin would send
    # its first request to be0, which names sbe0, not sbe1)
    assert all(srv.get('/1', headers={'Cookie': 'sid=sbe1'}).body == b'be1' for _ in range(12))
