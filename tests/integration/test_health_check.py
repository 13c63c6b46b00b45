"""Active health checks (NGINX Plus's health_check and match, ngx_http_upstream_hc_module): a peer that fails
`fails` checks in a row gets no traffic until it passes `passes` checks; `match` blocks (status, header, body);
a peer that refuses connections; `mandatory`; one check per interval with two workers (the lease in the upstream
zone); the log lines of state changes; configuration errors. Backends are real processes (helpers/hcpeer.py)
steered through files. NGINX Plus is not available here: these tests are hayate's (hayate_only)."""
import os
import re
import signal
import time

import pytest

from conftest import simple
from helpers.dnsserver import DnsServer
from helpers.hcpeer import HcPeer
from helpers.hcclient import get, served_by, unhealthy_line, healthy_line
from helpers.process import master_conf, one_server, wait_until, wait_log, workers_of

pytestmark = pytest.mark.hayate_only


@pytest.fixture
def peers(prefix):
    made = []

    def make(*names):
        out = [HcPeer(prefix.tmp, n) for n in names]
        made.extend(out)
        return out
    yield make
    for p in made:
        p.stop()


def conf(a, b, hc, http_extra='', loc_extra=''):
    servers = ''.join('server 127.0.0.1:%d;' % p.port for p in (a, b) if p is not None)
    return simple('''
        location / {
            proxy_pass http://backend;
            health_check %s;
            %s
        }
        location = /metrics { metrics; }''' % (hc, loc_extra), http_extra='''
        upstream backend { zone backend 64k; %s }
        %s''' % (servers, http_extra))


def test_failing_status_takes_peer_out_and_passes_bring_it_back(server, peers):
    a, b = peers('a', 'b')
    srv = server(conf(a, b, 'interval=200ms fails=2 passes=2 uri=/hc'))
    assert wait_until(lambda: len(a.checks()) >= 1 and len(b.checks()) >= 1, 10)
    assert sorted(set(served_by(srv.prefix.port))) == ['a', 'b']
    # the check request: GET uri, HTTP/1.0 (proxy_http_version's default), Host as proxied ($proxy_host)
    first = a.checks()[0]
    assert first[1:4] == ('/hc', 'HTTP/1.0', 'backend')

    a.set(status='500')
    m = wait_log(srv, unhealthy_line(a.port), timeout=10)
    assert m, srv.error_log()
    assert 'status 500' in srv.error_log()[m.start():].splitlines()[0]
    # it took `fails` failing checks (2) to get there
    assert len([e for e in a.checks() if e[4] == 500]) >= 2
    before = len(a.traffic())
    assert served_by(srv.prefix.port, 10) == ['b'] * 10
    assert len(a.traffic()) == before

    a.set(status=None)
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    ok_after = [e for e in a.checks() if e[4] == 200 and e[0] > max(x[0] for x in a.checks() if x[4] == 500)]
    assert len(ok_after) >= 2  # `passes` good checks
    assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)
    assert len(re.findall(unhealthy_line(a.port), srv.error_log())) == 1


def test_all_peers_unhealthy_is_502_no_live_upstreams(server, peers):
    a, = peers('a')
    srv = server(conf(a, None, 'interval=200ms uri=/hc'))
    assert get(srv.prefix.port).body == b'a'
    a.set(status='503')
    assert wait_log(srv, unhealthy_line(a.port), timeout=10), srv.error_log()
    n = len(a.traffic())
    r = get(srv.prefix.port)
    assert r.status == 502
    assert len(a.traffic()) == n
    assert wait_log(srv, r'\[error\] .*no live upstreams while connecting to upstream', timeout=5)
    sample = 'hayate_upstream_peer_healthy{upstream="backend",peer="127.0.0.1:%d"}' % a.port
    assert sample + ' 0' in get(srv.prefix.port, '/metrics').body.decode()
    a.set(status='204')  # 2xx passes without a match block
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    assert wait_until(lambda: get(srv.prefix.port).status == 200, 5)
    assert sample + ' 1' in get(srv.prefix.port, '/metrics').body.decode()


def test_match_status_header_body(server, peers):
    a, b = peers('a', 'b')
    srv = server(conf(a, b, 'interval=200ms uri=/hc/x match=welcome', http_extra='''
        match welcome {
            status 200-299;
            status ! 204;
            header Content-Type = text/html;
            header ! X-Bad;
            header X-Peer ~ "^[ab]$";
            body ~ "ali+ve";
            body !~ "maintenance";
        }'''))
    assert wait_until(lambda: len(a.checks()) >= 2, 10)
    assert 'unhealthy' not in srv.error_log()

    steps = [
        (dict(body='dead'), 'does not match "welcome" (body)'),
        (dict(body='alive but in maintenance'), 'does not match "welcome" (body)'),
        (dict(headers='X-Bad: 1'), 'does not match "welcome" (header X-Bad)'),
        (dict(status='204'), 'does not match "welcome" (status)'),
        (dict(status='302'), 'does not match "welcome" (status)'),
    ]
    for i, (change, reason) in enumerate(steps):
        a.set(**change)
        assert wait_until(lambda: len(re.findall(unhealthy_line(a.port), srv.error_log())) == i + 1, 10), \
            (change, srv.error_log())
        last = [l for l in srv.error_log().splitlines() if re.search(unhealthy_line(a.port), l)][-1]
        assert reason in last, (change, last)
        assert served_by(srv.prefix.port, 6) == ['b'] * 6
        a.set(**{k: None for k in change})
        assert wait_until(lambda: len(re.findall(healthy_line(a.port), srv.error_log())) == i + 1, 10), \
            srv.error_log()
        assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)


def test_peer_refusing_connections_is_unhealthy(server, peers, prefix):
    a, b = peers('a', 'b')
    a.stop()
    srv = server(conf(a, b, 'interval=200ms uri=/hc'))
    m = wait_log(srv, unhealthy_line(a.port) + r'connect\(\) failed \(111: Connection refused\)', timeout=10)
    assert m, srv.error_log()
    assert served_by(srv.prefix.port, 6) == ['b'] * 6
    # no request went to it: passive checks would have logged a failed connect for client requests
    assert 'while connecting to upstream' not in srv.error_log()
    a.start()
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)


def test_check_bounded_by_the_location_timeouts(server, peers):
    a, b = peers('a', 'b')
    a.set(delay='4')  # answers after 4 s: past proxy_send_timeout + proxy_read_timeout
    srv = server(conf(a, b, 'interval=200ms uri=/hc',
                      loc_extra='proxy_read_timeout 500ms; proxy_send_timeout 500ms; proxy_connect_timeout 1s;'))
    m = wait_log(srv, unhealthy_line(a.port) + r'timed out', timeout=10)
    assert m, srv.error_log()
    assert served_by(srv.prefix.port, 6) == ['b'] * 6


def test_mandatory_peer_gets_no_traffic_before_its_first_check_passes(server, peers):
    a, b = peers('a', 'b')
    a.set(delay='5')  # its first check takes 5 s to answer
    srv = server(conf(a, b, 'interval=300ms uri=/hc mandatory'))
    # every peer starts in the "checking" state: b takes traffic once its first check passed
    assert wait_log(srv, r'peer 127\.0\.0\.1:%d of upstream "backend" is healthy \(its first check passed\)'
                    % b.port, timeout=10), srv.error_log()
    t0 = time.monotonic()
    got = []
    while time.monotonic() - t0 < 1.0:
        got += served_by(srv.prefix.port, 4)
    assert got and set(got) == {'b'}, got
    assert not a.checks()  # still in its first check
    assert wait_log(srv, r'peer 127\.0\.0\.1:%d of upstream "backend" is healthy \(its first check passed\)'
                    % a.port, timeout=10), srv.error_log()
    a.set(delay=None)
    assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)


def test_mandatory_failing_first_check_keeps_peer_out(server, peers):
    a, b = peers('a', 'b')
    a.set(status='500')
    srv = server(conf(a, b, 'interval=200ms uri=/hc mandatory'))
    assert wait_log(srv, unhealthy_line(a.port), timeout=10), srv.error_log()
    assert len(a.traffic()) == 0
    # b too starts down until its first check passes (its answer may come after a's failure): no live upstreams
    # (502) until then
    assert wait_until(lambda: served_by(srv.prefix.port, 1) == ['b'], 10), srv.error_log()
    assert served_by(srv.prefix.port, 6) == ['b'] * 6
    assert len(a.traffic()) == 0


def test_port_parameter_checks_another_port(server, peers):
    a, b, c = peers('a', 'b', 'c')
    # the checks of every peer go to c's port: c answers 500, so both are unhealthy
    c.set(status='500')
    srv = server(conf(a, b, 'interval=200ms uri=/hc port=%d' % c.port))
    assert wait_log(srv, unhealthy_line(a.port), timeout=10), srv.error_log()
    assert wait_log(srv, unhealthy_line(b.port), timeout=10), srv.error_log()
    assert not a.checks() and not b.checks() and c.checks()
    assert get(srv.prefix.port).status == 502


def test_two_workers_check_each_peer_once_per_interval_and_after_reload(server, peers):
    a, b = peers('a', 'b')
    http = '''
    upstream backend { zone backend 64k; server 127.0.0.1:%d; server 127.0.0.1:%d; }
    ''' % (a.port, b.port) + one_server('''
        location / { proxy_pass http://backend; health_check interval=250ms uri=/hc; }''')
    srv = server(master_conf(http, workers=2), full=True)
    assert len(workers_of(srv, 2)) == 2
    assert wait_until(lambda: len(a.checks()) >= 2, 10)

    def count_over(p, seconds):
        t0 = time.monotonic()
        start = len(p.checks())
        while time.monotonic() - t0 < seconds:
            time.sleep(0.1)
        return len(p.checks()) - start, time.monotonic() - t0

    n, window = count_over(a, 3.0)
    expected = window / 0.25  # 12: two workers each checking would make about 24
    assert expected * 0.4 <= n <= expected * 1.25 + 1, (n, expected)

    # a state change is logged once, by the worker that saw it
    a.set(status='500')
    assert wait_log(srv, unhealthy_line(a.port), timeout=10), srv.error_log()
    wait_until(lambda: False, 0.8)
    assert len(re.findall(unhealthy_line(a.port), srv.error_log())) == 1
    a.set(status=None)
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()

    # reload: the new workers take the checks over (the old ones stop), still once per interval
    old = set(workers_of(srv, 2))
    os.kill(srv.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: (lambda w: len(w) == 2 and not (set(w) & old))(workers_of(srv, 2, 0.2)), 10)
    n, window = count_over(b, 3.0)
    expected = window / 0.25
    assert expected * 0.4 <= n <= expected * 1.25 + 1, (n, expected)
    assert served_by(srv.prefix.port, 4)


def test_single_process_reload_keeps_checking(server, peers):
    a, b = peers('a', 'b')
    srv = server(conf(a, b, 'interval=200ms uri=/hc'))
    assert wait_until(lambda: len(a.checks()) >= 2, 10)
    a.set(status='500')
    assert wait_log(srv, unhealthy_line(a.port), timeout=10)
    srv.prefix.conf(conf(a, b, 'interval=200ms uri=/hc2'))
    os.kill(srv.proc.pid, signal.SIGHUP)
    assert wait_log(srv, r'reconfigured from', timeout=10)
    # the new generation checks /hc2 (the old one's checks stopped) and starts the peers healthy, then finds a
    # failing again
    assert wait_until(lambda: any(e[1] == '/hc2' for e in a.checks()), 10)
    assert wait_until(lambda: len(re.findall(unhealthy_line(a.port), srv.error_log())) == 2, 10), srv.error_log()
    after = max(e[0] for e in a.checks() if e[1] == '/hc2')
    wait_until(lambda: False, 0.6)
    assert not [e for e in a.checks() if e[1] == '/hc' and e[0] > after]


def test_resolved_peers_are_checked(server, peers):
    # `server NAME resolve`: the peers the workers make from the answers get their health state too
    a, b = peers('a', 'b')
    dns = DnsServer().start()
    try:
        dns.set('app.test', a=['127.0.0.1'], ttl=1)
        srv = server(simple('''
            location / { proxy_pass http://backend; health_check interval=200ms uri=/hc; }
        ''', http_extra='''
            resolver 127.0.0.1:%d valid=1s;
            upstream backend { zone backend 64k; server app.test:%d resolve; server 127.0.0.1:%d; }
        ''' % (dns.port, a.port, b.port)))
        assert wait_until(lambda: a.checks() and 'a' in served_by(srv.prefix.port, 4), 10)
        a.set(status='500')
        assert wait_log(srv, unhealthy_line(a.port), timeout=10), srv.error_log()
        assert served_by(srv.prefix.port, 6) == ['b'] * 6
        a.set(status=None)
        assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    finally:
        dns.stop()


# ---------------------------------------------------------------- configuration errors

def run_t(run_cli, prefix, text):
    path = prefix.conf(text)
    return path, run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])


def line_of(path, needle):
    return [n for n, l in enumerate(open(path), 1) if needle in l][-1]


CONF_ERRORS = [
    ('upstream backend { server 127.0.0.1:1; }', 'health_check;', '',
     'health check requires upstream "backend" to be in shared memory', 'health_check'),
    ('', 'health_check;', '',
     'health check requires upstream "127.0.0.1" to be in shared memory', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check match=nope;', '',
     'match "nope" not found', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check interval=abc;', '',
     'invalid parameter "interval=abc"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check fails=0;', '',
     'invalid parameter "fails=0"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check passes=x;', '',
     'invalid parameter "passes=x"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check uri=hc;', '',
     'invalid parameter "uri=hc"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check port=70000;', '',
     'invalid parameter "port=70000"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check bogus;', '',
     'invalid parameter "bogus"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check persistent;', '',
     'invalid parameter "persistent"', 'health_check'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check;',
     'match m { status abc; }', 'invalid status "abc"', 'match m'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check;',
     'match m { header X ?? y; }', 'invalid parameter "??"', 'match m'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check;',
     'match m { body = x; }', 'invalid parameter "="', 'match m'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check;',
     'match m { body ~ "(x"; }', 'pcre2_compile() failed', 'match m'),
    ('upstream backend { zone z 64k; server 127.0.0.1:1; }', 'health_check;',
     'match m { status 200; } match m { status 200; }', 'duplicate match "m"', 'match m'),
]


@pytest.mark.parametrize('ups,hc,extra,msg,where', CONF_ERRORS, ids=[str(i) for i in range(len(CONF_ERRORS))])
def test_config_errors(run_cli, prefix, ups, hc, extra, msg, where):
    target = 'backend' if ups else '127.0.0.1:1'
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://%s;
            %s
        }''' % (target, hc), http_extra='%s\n    %s' % (ups, extra)))
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    assert emerg and msg in emerg[0], res.err
    assert emerg[0].endswith('%s:%d' % (path, line_of(path, where))), res.err


def test_health_check_needs_an_upstream_group(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('''
        location / { health_check; }'''))
    assert res.rc == 1, res
    assert '"health_check" requires "proxy_pass" to an upstream group in %s:%d' % (
        path, line_of(path, 'health_check')) in res.err, res.err


def test_valid_configuration_passes_t(run_cli, prefix):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass http://backend;
            health_check interval=1s jitter=100ms fails=3 passes=2 uri=/status?full match=ok port=8080
                         mandatory persistent;
        }''', http_extra='''
        upstream backend { zone z 64k; server 127.0.0.1:1; }
        match ok { status 200 204 301-303; status ! 500; header Content-Type != text/plain;
                   header X-A ~ "^v[0-9]"; header X-B !~ x; header Host; header ! X-Accel-Redirect;
                   body ~ "ok"; body !~ "fail"; }'''))
    assert res.rc == 0, res


def test_https_upstream_passes_t(run_cli, prefix):
    # checked over TLS with the location's proxy_ssl_* (test_health_check_tls.py)
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass https://backend;
            proxy_ssl_server_name on;
            health_check;
        }''', http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 0, res


@pytest.mark.parametrize('pass_to,msg', [
    ('http://$host', '"health_check" requires "proxy_pass" to an upstream group'),
])
def test_health_check_unsupported_targets(run_cli, prefix, pass_to, msg):
    path, res = run_t(run_cli, prefix, simple('''
        location / {
            proxy_pass %s;
            health_check;
        }''' % pass_to, http_extra='upstream backend { zone z 64k; server 127.0.0.1:1; }'))
    assert res.rc == 1, res
    assert '%s in %s:%d' % (msg, path, line_of(path, 'health_check')) in res.err, res.err
