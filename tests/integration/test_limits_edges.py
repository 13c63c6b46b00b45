"""limit_req / limit_conn beyond test_limits.py: a reload that changes a zone's key fails with nginx's message and
the old generation keeps serving; a key longer than the limit is logged and not limited; delayed requests in dry-run
mode; more configuration errors (rates, zone=, delay=, parameters)."""
import signal

import pytest

from test_limits import http, statuses, wait_for


@pytest.mark.parametrize('kind', ['limit_req', 'limit_conn'])
def test_reload_with_a_changed_key_is_refused(server, kind):
    if kind == 'limit_req':
        zone, use = 'limit_req_zone %s zone=one:1m rate=1r/m;', 'limit_req zone=one burst=5 nodelay;'
    else:
        zone, use = 'limit_conn_zone %s zone=one:1m;', 'limit_conn one 5;'
    conf = http('''
    %s
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { %s }
    }''')
    srv = server(conf % (zone % '$server_name', use), files={'html/a': 'hi'}, full=True)
    assert srv.get('/a').status == 200
    srv.prefix.conf(conf % (zone % '$remote_addr', use), full=True)
    srv.proc.send_signal(signal.SIGHUP)
    # nginx names the zone "limit_req" in one message and "limit_conn_zone" in the other
    msg = '%s "one" uses the "$remote_addr" key while previously it used the "$server_name" key' % (
        'limit_req' if kind == 'limit_req' else 'limit_conn_zone')
    wait_for(lambda: msg in srv.error_log(), what='the refused reload')
    assert srv.get('/a').status == 200  # the old generation serves on
    assert srv.alive()


def test_overlong_keys_are_not_limited(server):
    big = 'k' * 70000
    srv = server(http('''
    large_client_header_buffers 4 128k;
    limit_req_zone $http_x_k zone=r:1m rate=1r/m;
    limit_conn_zone $http_x_c zone=c:1m;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / { limit_req zone=r; limit_conn c 1; }
    }'''), files={'html/a': 'hi'}, full=True)
    for _ in range(3):  # 1r/m would refuse the second one
        assert srv.get('/a', headers=[('X-K', big)]).status == 200
    wait_for(lambda: 'the value of the "$http_x_k" key is more than 65535 bytes' in srv.error_log(), what='log')
    assert srv.get('/a', headers=[('X-C', 'c' * 300)]).status == 200
    wait_for(lambda: 'the value of the "$http_x_c" key is more than 255 bytes' in srv.error_log(), what='log')


def test_delayed_dry_run(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=5; limit_req_dry_run on; }
    }'''), files={'html/a': 'hi'}, full=True)
    assert statuses(srv, '/a', 3) == [200, 200, 200]  # nothing waits: dry run
    wait_for(lambda: 'delaying request, dry run, excess: 1.000, by zone "one"' in srv.error_log(), what='log')
    wait_for(lambda: len(open(srv.tmp + '/logs/access.log').read().splitlines()) == 3, what='access log')
    lines = open(srv.tmp + '/logs/access.log').read().splitlines()
    # two workers write their own lines: the order in the file is not the order of the requests
    assert sorted(l.split()[2] for l in lines) == ['DELAYED_DRY_RUN', 'DELAYED_DRY_RUN', 'PASSED']


@pytest.mark.parametrize('body,msg', [
    ('limit_req_zone $a zone=one:1m rate=0r/s;', 'invalid rate "rate=0r/s"'),
    ('limit_req_zone $a zone=one:1m rate=1r/h;', 'invalid rate "rate=1r/h"'),
    ('limit_req_zone $a zone=one:1m rate=1x/s;', 'invalid rate "rate=1x/s"'),
    ('limit_req_zone $a zone=one:1m bogus;', 'invalid parameter "bogus"'),
    ('limit_req_zone $a zone=one rate=1r/s;', 'invalid zone size "zone=one"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one delay=0; } }',
     'invalid delay value "delay=0"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one bogus; } }',
     'invalid parameter "bogus"'),
    ('server { location / { limit_req burst=5; } }', '"limit_req" must have "zone" parameter'),
    ('limit_conn_zone $a zone=c:1m bogus;', 'invalid number of arguments in "limit_conn_zone" directive'),
    ('limit_conn_zone $a bogus=1;', 'invalid parameter "bogus=1"'),
    ('limit_conn_zone $a zone=c;', 'invalid zone size "zone=c"'),
    ('limit_conn_zone $a zone=c:1m; limit_conn_zone $b zone=c:1m;', 'limit_conn_zone "c" is already bound to key "$a"'),
    ('limit_conn_zone $a zone=c:1m; server { limit_conn c 1; limit_conn c 2; }', '"limit_conn" directive is duplicate'),
])
def test_bad_config(prefix, run_cli, body, msg):
    conf = prefix.conf('http {\n%s\n}\n' % body)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert msg in res.err and 'test.conf:' in res.err, res.err
