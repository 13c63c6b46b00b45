"""Active health checks (health_check, match): how a check response is judged (every `match` condition kind and
its negation, chunked bodies, malformed and missing responses), the check request's HTTP version, peers marked
`down`, two checks of one group, the hayate_upstream_peer_healthy metric, and the `-t` errors of each invalid
health_check parameter and match condition with its file:line. NGINX Plus is not available here: hayate only.

Each response test uses `mandatory`: the peer starts held down and its first check decides, so the log shows
either "is healthy (its first check passed)" or "is unhealthy: <why>" exactly once."""
import re

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.hcclient import get
from helpers.process import wait_log, wait_until

pytestmark = pytest.mark.hayate_only

R = Backend.reply


@pytest.fixture
def backends():
    made = []

    def make(n=1):
        out = [Backend().start() for _ in range(n)]
        made.extend(out)
        return out
    yield make
    for b in made:
        b.stop()


def steer(be, hc_answer):
    """/hc* paths answer hc_answer (bytes, a list, or None: close without answering); others 200 'ok'."""
    be.handler = lambda req: hc_answer if req.target.startswith('/hc') else R(200, b'ok')


def healthy(port):
    return r'peer 127\.0\.0\.1:%d of upstream "backend" is healthy \(its first check passed\)' % port


def unhealthy(port):
    return r'peer 127\.0\.0\.1:%d of upstream "backend" is unhealthy: (.*) \(health_check in ' % port


def hc_conf(be, hc='', match='', loc_extra='', ups_extra=''):
    return simple('''
        location / {
            proxy_pass http://backend;
            health_check interval=200ms uri=/hc mandatory %s;
            %s
        }
        location = /metrics { metrics; }''' % (hc, loc_extra), http_extra='''
        upstream backend { zone backend 64k; server 127.0.0.1:%d; %s }
        %s''' % (be.port, ups_extra, match))


CHUNKED_HW = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
              b'6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n')
CHUNKED_HEX = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'
               b'1A;ext=1\r\n' + b'abcdefghijklmnopqrstuvwxyz' + b'\r\n0\r\n\r\n')

# (match block or '', the check's answer, None when the peer is healthy else the reason logged)
CASES = [
    ('', b'garbage\r\n\r\n', 'invalid response'),
    ('', b'HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n', 'invalid response'),
    ('', b'HTTP/1.1 200', 'invalid response'),
    ('', b'HTTP/1.1 200 OK\r\nBad Header Line\r\nContent-Length: 0\r\n\r\n', 'invalid response'),
    ('', None, 'the upstream closed the connection without a response'),
    ('', R(404, b'no'), 'status 404'),
    ('', R(302, b'', [('Location', '/x')]), None),
    ('match m { status ! 500 502-504; }', R(503, b''),
     'the response (status 503) does not match "m" (status)'),
    ('match m { status ! 500 502-504; }', R(501, b''), None),
    ('match m { status 200-204 301; }', R(301, b''), None),
    ('match m { header X-A = v; }', R(200, b'', [('X-A', 'w'), ('X-A', 'v')]), None),
    ('match m { header X-A = v; }', R(200, b'', [('X-A', 'w')]),
     'the response (status 200) does not match "m" (header X-A)'),
    ('match m { header X-A != v; }', R(200, b'', [('X-A', 'v')]),
     'the response (status 200) does not match "m" (header X-A)'),
    ('match m { header X-A != v; }', R(200, b'', [('X-A', 'q')]), None),
    ('match m { header X-A ~ "^v[0-9]$"; }', R(200, b'', [('x-a', 'v7')]), None),
    ('match m { header X-A !~ "^v"; }', R(200, b'', [('X-A', 'v1')]),
     'the response (status 200) does not match "m" (header X-A)'),
    ('match m { header ! X-Bad; }', R(200, b'', [('X-Bad', '1')]),
     'the response (status 200) does not match "m" (header X-Bad)'),
    ('match m { header ! X-Bad; }', R(200, b''), None),
    ('match m { header X-Need; }', R(200, b''),
     'the response (status 200) does not match "m" (header X-Need)'),
    ('match m { body ~ "hello world"; }', CHUNKED_HW, None),
    ('match m { body ~ "^abcdefghijklmnopqrstuvwxyz$"; }', CHUNKED_HEX, None),
    ('match m { body !~ "fail"; }', R(200, b'it failed'),
     'the response (status 200) does not match "m" (body)'),
    ('', b'HTTP/1.1x200 OK\r\nContent-Length: 0\r\n\r\n', 'invalid response'),
    ('', R(199, b''), 'status 199'),
    ('match m { body ~ "^abcdef$"; }',
     b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n3\ndef\n0\n\n', None),
    ('match m { body ~ "^abc$"; }',  # a chunk cut short: what came of it is judged
     b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n5\r\nxy', 'the response (status 200) '
     'does not match "m" (body)'),
    ('match m { body ~ "^abc"; }',
     b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nffffffff\r\nxy', None),
    ('match m { body ~ "^x"; }', b'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: x\r\n\r\nxyz', None),
    ('match m { header X-110 = v; }',
     b'HTTP/1.1 200 OK\r\n' + b''.join(b'X-%d: v\r\n' % i for i in range(120)) + b'\r\n',
     'the response (status 200) does not match "m" (header X-110)'),
    ('match m { body ~ "^a+$"; }', R(200, b'a' * 300000), None),
    ('match m { body !~ "b"; }', R(200, b'a' * (256 * 1024) + b'b'), None),
    ('match m { status 200; body ~ ok; header Content-Type = text/plain; }',
     R(200, b'all ok', [('Content-Type', 'text/plain')]), None),
]


@pytest.mark.parametrize('match,answer,why', CASES, ids=[str(i) for i in range(len(CASES))])
def test_check_response_judged(server, backends, match, answer, why):
    be, = backends()
    steer(be, answer)
    srv = server(hc_conf(be, 'match=m' if match else '', match))
    if why is None:
        assert wait_log(srv, healthy(be.port), timeout=10), srv.error_log()
        assert get(srv.prefix.port).body == b'ok'
        assert not re.search(unhealthy(be.port), srv.error_log())
    else:
        m = wait_log(srv, unhealthy(be.port), timeout=10)
        assert m, srv.error_log()
        assert m.group(1) == why, m.group(1)
        assert get(srv.prefix.port).status == 502  # the only peer is held down
        assert not re.search(healthy(be.port), srv.error_log())


def test_read_timeout_fails_the_check(server, backends):
    be, = backends()
    steer(be, [b'HTTP/1.1 200 OK\r\n', 3.0])
    srv = server(hc_conf(be, loc_extra='proxy_read_timeout 300ms; proxy_send_timeout 100ms;'))
    m = wait_log(srv, unhealthy(be.port), timeout=10)
    assert m and m.group(1) == 'timed out (110: Connection timed out) while reading the response', srv.error_log()


def test_content_length_completes_without_close(server, backends):
    """The response is judged once Content-Length bytes are in, the upstream keeping the connection open."""
    be, = backends()
    steer(be, [R(200, b'0123456789', [('X-Pad', 'p' * 20)]), 4.0])
    srv = server(hc_conf(be, 'match=m', 'match m { body ~ "^0123456789$"; }',
                         loc_extra='proxy_read_timeout 2s;'))
    assert wait_log(srv, healthy(be.port), timeout=3), srv.error_log()


def test_check_uses_proxy_http_version_and_host(server, backends):
    be, = backends()
    steer(be, R(200, b'fine'))
    srv = server(hc_conf(be, 'jitter=50ms', loc_extra='proxy_http_version 1.1;'))
    assert wait_log(srv, healthy(be.port), timeout=10), srv.error_log()
    hc = [r for r in be.requests if r.target == '/hc']
    assert hc and hc[0].version == 'HTTP/1.1' and hc[0].header('Host') == 'backend', [
        (r.target, r.version) for r in be.requests]
    assert hc[0].header('Connection') == 'close'


def test_down_peer_not_checked_and_metric(server, backends):
    be, off = backends(2)
    steer(be, R(200, b''))
    steer(off, R(200, b''))
    srv = server(hc_conf(be, ups_extra='server 127.0.0.1:%d down;' % off.port))
    assert wait_log(srv, healthy(be.port), timeout=10), srv.error_log()
    body = get(srv.prefix.port, '/metrics').body.decode()
    assert 'hayate_upstream_peer_healthy{upstream="backend",peer="127.0.0.1:%d"} 1' % be.port in body, body
    healthy_lines = [l for l in body.splitlines() if l.startswith('hayate_upstream_peer_healthy{')]
    # the `down` peer is never checked: `mandatory` holds it out from the start
    assert sorted(healthy_lines) == sorted([
        'hayate_upstream_peer_healthy{upstream="backend",peer="127.0.0.1:%d"} 1' % be.port,
        'hayate_upstream_peer_healthy{upstream="backend",peer="127.0.0.1:%d"} 0' % off.port]), healthy_lines
    assert not [r for r in off.requests if r.target.startswith('/hc')]


def test_two_checks_of_one_group_both_hold_the_peer(server, backends):
    """Two locations check the same group: a peer is down while either check fails it."""
    be, = backends()
    be.handler = lambda req: (R(500, b'') if req.target == '/hc2' else R(200, b'ok'))
    srv = server(simple('''
        location / {
            proxy_pass http://backend;
            health_check interval=200ms uri=/hc1;
        }
        location /two {
            proxy_pass http://backend;
            health_check interval=200ms uri=/hc2;
        }
        location = /metrics { metrics; }''', http_extra='''
        upstream backend { zone backend 64k; server 127.0.0.1:%d; }''' % be.port))
    m = wait_log(srv, unhealthy(be.port), timeout=10)
    assert m and m.group(1) == 'status 500', srv.error_log()
    assert get(srv.prefix.port).status == 502
    assert wait_until(lambda: [r for r in be.requests if r.target == '/hc1'], 5)
    body = get(srv.prefix.port, '/metrics').body.decode()
    assert 'hayate_upstream_peer_healthy{upstream="backend",peer="127.0.0.1:%d"} 0' % be.port in body, body
    be.handler = lambda req: R(200, b'ok')
    assert wait_log(srv, r'peer 127\.0\.0\.1:%d of upstream "backend" is healthy again' % be.port, 10)
    assert get(srv.prefix.port).body == b'ok'


# ---------------------------------------------------------------- -t errors

def run_t(run_cli, prefix, text):
    path = prefix.conf(text)
    return path, run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])


def line_of(path, needle):
    return [n for n, l in enumerate(open(path), 1) if needle in l][-1]


HC_ERRORS = [
    ('health_check jitter=abc;', 'invalid parameter "jitter=abc"'),
    ('health_check fails=1000001;', 'invalid parameter "fails=1000001"'),
    ('health_check passes=0;', 'invalid parameter "passes=0"'),
    ('health_check passes=1000001;', 'invalid parameter "passes=1000001"'),
    ('health_check interval=0;', 'invalid parameter "interval=0"'),
    ('health_check uri=;', 'invalid parameter "uri="'),
    ('health_check "uri=/a b";', 'invalid parameter "uri=/a b"'),
    ('health_check match=;', 'invalid parameter "match="'),
    ('health_check port=0;', 'invalid parameter "port=0"'),
    ('health_check type=grpc;',
     'the "type" parameter of "health_check" is not supported by hayate yet'),
    ('health_check keepalive_time=60s;',
     'the "keepalive_time" parameter of "health_check" is not supported by hayate yet'),
    ('health_check grpc_service=x;',
     'the "grpc_service" parameter of "health_check" is not supported by hayate yet'),
    ('health_check grpc_status=12;',
     'the "grpc_status" parameter of "health_check" is not supported by hayate yet'),
]


@pytest.mark.parametrize('hc,msg', HC_ERRORS, ids=[str(i) for i in range(len(HC_ERRORS))])
def test_health_check_parameter_errors(run_cli, prefix, hc, msg):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://backend;
            %s
        }''' % hc, http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 1, res
    assert '%s in %s:%d' % (msg, path, line_of(path, 'health_check')) in res.err, res.err


MATCH_ERRORS = [
    ('status;', 'invalid number of arguments in "status" directive'),
    ('status !;', 'invalid number of arguments in "status" directive'),
    ('status 99;', 'invalid status "99"'),
    ('status 1000;', 'invalid status "1000"'),
    ('status 300-200;', 'invalid status "300-200"'),
    ('status 200-x;', 'invalid status "200-x"'),
    ('header X y;', 'invalid number of arguments in "header" directive'),
    ('header X = y z;', 'invalid number of arguments in "header" directive'),
    ('header "" = y;', 'invalid header name ""'),
    ('header ! "";', 'invalid header name ""'),
    ('header X ~ "(y";', 'pcre2_compile() failed'),
    ('body ~;', 'invalid number of arguments in "body" directive'),
    ('body == x;', 'invalid parameter "=="'),
    ('require $x;', '"require" in "match" is not supported by hayate yet'),
    ('bogus 1;', 'unknown directive "bogus"'),
]


@pytest.mark.parametrize('cond,msg', MATCH_ERRORS, ids=[str(i) for i in range(len(MATCH_ERRORS))])
def test_match_condition_errors(run_cli, prefix, cond, msg):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://backend;
            health_check match=m;
        }''', http_extra='''upstream backend { zone z 64k; server 127.0.0.1:1; }
    match m {
        %s
    }''' % cond))
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    assert emerg and msg in emerg[0], res.err
    assert emerg[0].endswith('%s:%d' % (path, line_of(path, cond))), res.err


def test_too_many_checks_of_one_group(run_cli, prefix):
    locs = ''.join('location /l%d { proxy_pass http://backend; health_check; }\n' % i for i in range(33))
    path, res = run_t(run_cli, prefix, simple(locs, http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 1, res
    assert 'too many health checks of upstream "backend" in %s:%d' % (path, line_of(path, '/l32 ')) in res.err, res.err


def test_thirty_two_checks_are_accepted(run_cli, prefix):
    locs = ''.join('location /l%d { proxy_pass http://backend; health_check; }\n' % i for i in range(32))
    path, res = run_t(run_cli, prefix, simple(locs, http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 0, res


def test_duplicate_match_among_several(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://backend;
            health_check match=m2;
        }''', http_extra='''upstream backend { zone z 64k; server 127.0.0.1:1; }
    match m1 { status 200; }
    match m2 { status 200; }
    match m2 { status 204; }'''))
    assert res.rc == 1, res
    assert 'duplicate match "m2" in %s:%d' % (path, line_of(path, 'status 204')) in res.err, res.err


def test_uri_with_a_control_character(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://backend;
            health_check uri=/a\x7fb;
        }''', http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 1, res
    assert 'invalid parameter "uri=/a' in res.err, res.err


def test_zone_too_small_for_every_peer(server, backends):
    """A zone without room for a peer's health state: logged once, that peer is neither checked nor held down."""
    be, = backends()
    steer(be, R(200, b''))
    servers = ''.join('server 127.0.0.1:%d down;' % (20000 + i) for i in range(60))
    srv = server(hc_conf(be, ups_extra=servers).replace('zone backend 64k', 'zone backend 32k'))
    assert wait_log(srv, r'\[error\] .*no room in zone "backend" for the health state of peer', 10), srv.error_log()
    assert len(re.findall('no room in zone', srv.error_log())) == 1


def test_port_parameter_on_an_ipv6_peer(server, backends):
    """port= checks another port of the same address, IPv6 too."""
    import socket
    import threading
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('::1', 0))
    ls.listen(8)
    hits = []

    def serve():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            try:
                req = c.recv(4096)
                hits.append(req.split(b'\r\n', 1)[0])
                c.sendall(R(200, b'up'))
            finally:
                c.close()
    threading.Thread(target=serve, daemon=True).start()
    try:
        srv = server(simple('''
        location / {
            proxy_pass http://backend;
            health_check interval=200ms uri=/hc6 port=%d mandatory;
        }''' % ls.getsockname()[1], http_extra='''
        upstream backend { zone backend 64k; server [::1]:9; }'''))
        assert wait_log(srv, r'peer \[::1\]:9 of upstream "backend" is healthy \(its first check passed\)', 10), \
            srv.error_log()
        assert hits and hits[0] == b'GET /hc6 HTTP/1.0', hits
    finally:
        ls.close()


@pytest.mark.parametrize('persistent', [True, False])
def test_mandatory_persistent_across_a_reload(server, backends, persistent):
    """After a reload, `mandatory` holds every peer down again until its first check, unless `persistent` and the
    peer was healthy before."""
    import os
    import signal
    be, = backends()
    be.handler = lambda req: R(200, b'ok', [('X-Path', req.target)])
    extra = 'persistent' if persistent else ''
    srv = server(hc_conf(be, extra))
    assert wait_log(srv, healthy(be.port), timeout=10), srv.error_log()
    srv.prefix.conf(hc_conf(be, extra).replace('uri=/hc ', 'uri=/hc2 '))
    os.kill(srv.proc.pid, signal.SIGHUP)
    assert wait_log(srv, r'reconfigured from', timeout=10), srv.error_log()
    # two checks of the new generation: its first one ended (the second starts an interval after it)
    assert wait_until(lambda: len([r for r in be.requests if r.target == '/hc2']) >= 2, 10)
    # "its first check passed" is logged again only without persistent
    assert wait_until(lambda: len(re.findall(healthy(be.port), srv.error_log())) == (1 if persistent else 2), 5), \
        srv.error_log()
    assert len(re.findall(healthy(be.port), srv.error_log())) == (1 if persistent else 2), srv.error_log()
