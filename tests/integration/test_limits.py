"""limit_req, limit_conn and limit_rate: limits held in shared zones across workers (issue 14).

Rates of 1r/m make limit_req deterministic: nothing leaks during a test. Everything shared runs with two
workers (SO_REUSEPORT spreads the separate connections over both)."""
import os
import re
import signal
import socket
import time

import pytest

from helpers.http1 import Conn, build_request

MAIN = '''daemon off;
master_process on;
worker_processes 2;
user root;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
events { worker_connections 256; }
'''


def http(body):
    return MAIN + '''http {
    log_format lim '$uri $status $limit_req_status $limit_conn_status $limit_rate';
    access_log {tmp}/logs/access.log lim;
''' + body + '\n}\n'


def access(srv):
    try:
        with open(os.path.join(srv.tmp, 'logs/access.log')) as f:
            return [l.split() for l in f.read().splitlines()]
    except FileNotFoundError:
        return []


def wait_for(cond, timeout=10.0, what='condition'):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    pytest.fail('timed out waiting for ' + what)


def statuses(srv, path, n, headers=None):
    return [srv.get(path, headers=headers).status for _ in range(n)]


def worker_pids(srv):
    return set(re.findall(r'\] (\d+)#\d+: \*\d+ limiting', srv.error_log()))


def test_limit_req_holds_across_workers(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=5 nodelay; }
    }'''), files={'html/a': 'hi'}, full=True)
    got = statuses(srv, '/a', 30)
    assert got.count(200) == 6 and got.count(503) == 24, got
    assert got[:6] == [200] * 6
    wait_for(lambda: len(access(srv)) == 30, what='30 log lines')
    st = [l[2] for l in access(srv)]
    assert st.count('PASSED') == 6 and st.count('REJECTED') == 24, st
    assert re.search(r'\[error\] .*limiting requests, excess: [56]\.\d{3} by zone "one"', srv.error_log())
    assert 'by zone "one"' in srv.error_log()
    assert len(worker_pids(srv)) == 2, 'both workers should have rejected some (reuseport spread)'


def test_limit_req_status_log_level_and_dry_run(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    limit_req_zone $server_name zone=two:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        limit_req_status 429;
        limit_req_log_level warn;
        location /a { limit_req zone=one burst=1 nodelay; }
        location /dry { limit_req zone=two nodelay; limit_req_dry_run on; alias {html}/a; }
    }'''), files={'html/a': 'hi'}, full=True)
    assert statuses(srv, '/a', 4) == [200, 200, 429, 429]
    assert statuses(srv, '/dry', 3) == [200, 200, 200]
    wait_for(lambda: len(access(srv)) == 7, what='log lines')
    # two workers write their own lines: the order in the file is not the order of the requests
    assert sorted(l[2] for l in access(srv) if l[0] == '/dry') == ['PASSED', 'REJECTED_DRY_RUN', 'REJECTED_DRY_RUN']
    log = srv.error_log()
    assert re.search(r'\[warn\] .*limiting requests, excess: 2\.000 by zone "one"', log), log
    assert 'limiting requests, dry run, excess: 1.000 by zone "two"' in log


def test_limit_req_empty_key_is_not_limited(server):
    srv = server(http('''
    limit_req_zone $arg_k zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / { limit_req zone=one nodelay; }
    }'''), files={'html/a': 'hi'}, full=True)
    assert statuses(srv, '/a', 5) == [200] * 5
    assert statuses(srv, '/a?k=1', 2) == [200, 503]
    assert statuses(srv, '/a?k=2', 1) == [200]


def test_limit_req_several_zones_rejected_request_costs_nothing_earlier(server):
    # zone a (burst 5) is checked first and held; zone b (no burst) rejects the 2nd request: a is not charged
    srv = server(http('''
    limit_req_zone $server_name zone=a:1m rate=1r/m;
    limit_req_zone $server_name zone=b:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location /both { limit_req zone=a burst=5 nodelay; limit_req zone=b nodelay; alias {html}/f; }
        location /a { limit_req zone=a burst=5 nodelay; alias {html}/f; }
    }'''), files={'html/f': 'hi'}, full=True)
    assert statuses(srv, '/both', 4) == [200, 503, 503, 503]
    assert 'by zone "b"' in srv.error_log()
    # one request was accounted in a: five more fit in its burst
    assert statuses(srv, '/a', 6) == [200] * 5 + [503]


def test_limit_req_delay_waits_on_a_timer(server):
    # 2r/s, burst 5: the 2nd and 3rd requests of a quick run are delayed (to 500 ms apart), none rejected
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=2r/s;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=5; }
    }'''), files={'html/a': 'hi'}, full=True)
    got = statuses(srv, '/a', 3)
    assert got == [200, 200, 200]
    wait_for(lambda: len(access(srv)) == 3, what='log lines')
    st = [l[2] for l in access(srv)]
    assert st == ['PASSED', 'DELAYED', 'DELAYED'], st
    assert '[warn]' in srv.error_log() and 'delaying request, excess: ' in srv.error_log()


def test_limit_req_delayed_request_notices_client_close(server):
    # 1r/m, delay=2: requests 1-3 go at once, the 4th would wait a minute; the client gives up and the server
    # logs 499 at once (the connection is watched while the request waits), not after the minute
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=5 delay=2; }
    }'''), files={'html/a': 'hi'}, full=True)
    assert statuses(srv, '/a', 3) == [200, 200, 200]
    c = Conn('127.0.0.1', srv.port, timeout=1.0)
    c.send(build_request('GET', '/a', 'x', [('Connection', 'close')]))
    with pytest.raises(socket.timeout):
        c.read_response()
    c.close()
    line = wait_for(lambda: [l for l in access(srv) if l[1] == '499'], timeout=20, what='499 log line')
    assert line[0][2] == 'DELAYED'
    assert 'delaying request, excess: 3.000, by zone "one"' in srv.error_log()
    assert 'client prematurely closed connection while delaying request' in srv.error_log()


def test_limit_req_full_zone_evicts_least_recently_used(server):
    # a zone of 8 pages holds ~100 nodes of 200-byte keys: 400 distinct keys all pass (old nodes evicted, no
    # "could not allocate node"); the oldest key was evicted (passes again), the newest was not (rejected)
    srv = server(http('''
    limit_req_zone $arg_k zone=one:32k rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        root {html};
        access_log off;
        location / { limit_req zone=one nodelay; }
    }'''), files={'html/a': 'hi'}, full=True)
    keys = ['%03d' % i + 'k' * 197 for i in range(400)]
    with Conn('127.0.0.1', srv.port) as c:
        for k in keys:
            c.send(build_request('GET', '/a?k=' + k, 'localhost', []))
            assert c.read_response().status == 200
        c.send(build_request('GET', '/a?k=' + keys[-1], 'localhost', []))
        assert c.read_response().status == 503
        c.send(build_request('GET', '/a?k=' + keys[0], 'localhost', []))
        assert c.read_response().status == 200
    assert 'could not allocate node' not in srv.error_log()


def test_limit_req_zone_survives_reload(server):
    conf = http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=2 nodelay; }
        %s
    }''')
    srv = server(conf % '', files={'html/a': 'hi', 'html/gen': 'g'}, full=True)
    assert statuses(srv, '/a', 3) == [200, 200, 200]
    srv.prefix.conf(conf % 'location /gen { }', full=True)
    srv.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: srv.get('/gen').status == 200, what='the reloaded generation')
    assert srv.get('/a').status == 503  # the zone kept its state


def hold(srv, path):
    """A request whose response is in progress (paced by limit_rate) on a connection left open."""
    c = Conn('127.0.0.1', srv.port, timeout=5.0, rcvbuf=4096)
    c.send(build_request('GET', path, 'x', []))
    assert c.read_head()[1] == 200
    return c


def test_limit_conn_holds_across_workers_and_releases(server):
    srv = server(http('''
    limit_conn_zone $server_name zone=c:1m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_conn c 2; limit_rate 1k; }
        location /dry { limit_conn c 1; limit_conn_dry_run on; alias {html}/s; }
        location /s { limit_conn c 2; limit_conn_status 429; }
    }'''), files={'html/big': b'x' * 262144, 'html/s': 'small'}, full=True)
    a = hold(srv, '/big')
    b = hold(srv, '/big')
    assert statuses(srv, '/s', 10) == [429] * 10  # separate connections: both workers see the 2 held
    wait_for(lambda: len(access(srv)) >= 10, what='log lines')
    rej = [l for l in access(srv) if l[0] == '/s']
    assert len(rej) == 10 and all(l[1] == '429' and l[3] == 'REJECTED' for l in rej), rej
    assert srv.get('/dry').status == 200
    wait_for(lambda: any(l[0] == '/dry' for l in access(srv)), what='dry log line')
    assert [l[3] for l in access(srv) if l[0] == '/dry'] == ['REJECTED_DRY_RUN']
    assert 'limiting connections by zone "c"' in srv.error_log()
    assert 'limiting connections, dry run, by zone "c"' in srv.error_log()
    a.close()
    b.close()
    # the counts are given back when the held requests end (the server notices the closes as it writes)
    wait_for(lambda: srv.get('/s').status == 200, what='limit_conn release')


def test_limit_rate_paces_the_response(server):
    srv = server(http('''
    server {
        listen 127.0.0.1:{port};
        root {html};
        location /r { limit_rate 16k; alias {html}/f; }
        location /v { set $limit_rate $arg_r; alias {html}/f; }
        location /after { limit_rate 16k; limit_rate_after 1m; alias {html}/f; }
    }'''), files={'html/f': os.urandom(65536)}, full=True)
    for path in ('/r', '/v?r=16k'):
        t0 = time.monotonic()
        r = srv.get(path)
        took = time.monotonic() - t0
        assert r.status == 200 and len(r.body) == 65536
        assert took > 2.0, (path, took)  # 16 KiB at once, then 48 KiB at 16 KiB/s
    r = srv.get('/after')
    assert r.status == 200 and len(r.body) == 65536
    wait_for(lambda: len(access(srv)) == 3, what='log lines')
    assert [l[4] for l in access(srv)] == ['16384', '16384', '16384']


@pytest.mark.parametrize('body,msg', [
    ('limit_req_zone $a zone=one:1m rate=x;', 'invalid rate "rate=x"'),
    ('limit_req_zone $a rate=1r/s rate=2r/s;', '"limit_req_zone" must have "zone" parameter'),
    ('limit_req_zone $a zone=one:1m;', 'invalid number of arguments in "limit_req_zone" directive'),
    ('limit_req_zone $a zone=one:1m rate=1r/s sync;', 'invalid parameter "sync"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; limit_req_zone $b zone=one:1m rate=1r/s;',
     'limit_req_zone "one" is already bound to key "$a"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one burst=0; } }',
     'invalid burst value "burst=0"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one; limit_req zone=one; } }',
     '"limit_req" directive is duplicate'),
    ('limit_req_status 200;', 'value must be between 400 and 599'),
    ('limit_conn_zone $a zone=c:1m; server { limit_conn c 0; }', 'invalid number of connections "0"'),
    ('limit_conn_zone $a zone=c:1m; server { limit_conn c 70000; }', 'connection limit must be less 65536'),
    ('limit_conn_zone $a zone=one:1m; limit_req_zone $b zone=one:1m rate=1r/s;',
     'is already declared for a different use'),
    ('limit_rate abc;', '"limit_rate" directive invalid value'),
])
def test_bad_config(prefix, run_cli, body, msg):
    conf = prefix.conf('http {\n%s\n}\n' % body)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert msg in res.err and 'test.conf:' in res.err, res.err


def test_unsized_zone(prefix, run_cli):
    conf = prefix.conf('http { server { location / { limit_req zone=nosuch; } } }\n')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0 and 'zero size shared memory zone "nosuch"' in res.err, res.err


def test_limit_rate_over_tls(server, tmp_path):
    from helpers.tls import make_cert, https_get
    crt, key = make_cert(str(tmp_path), 'rsa', 'localhost')[:2]
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        root {html};
        location /r { limit_rate 16k; alias {html}/f; }
    }
}
''' % (crt, key), files={'html/f': b'y' * 65536})
    t0 = time.monotonic()
    st, _, body, _ = https_get(srv.prefix.port, '/r')
    took = time.monotonic() - t0
    assert st == 200 and len(body) == 65536
    assert took > 2.0, took  # the TLS records are cut at the rate's cap too


def test_set_limit_rate_invalid_is_logged_and_ignored(server):
    # nginx: the request goes on unpaced, with `invalid $limit_rate "abc"` at [error]
    srv = server(http('''
    server {
        listen 127.0.0.1:{port};
        location /bad { set $limit_rate abc; return 200 "ok"; }
    }'''), full=True)
    r = srv.get('/bad')
    assert r.status == 200 and r.body == b'ok'
    wait_for(lambda: 'invalid $limit_rate "abc"' in srv.error_log(), what='the error line')
    assert re.search(r'\[error\].*invalid \$limit_rate "abc"', srv.error_log())
