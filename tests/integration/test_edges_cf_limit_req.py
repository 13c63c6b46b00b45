"""limit_req beyond test_limits*.py: several limits in one location (a later one refusing gives the earlier ones'
nodes back; the longest delay wins), a key too large for its zone, a client gone while its request is delayed,
limit_req_log_level's "one level lower" for delays, subrequests of a limited request, HTTP/2 streams delayed, and
the remaining configuration errors of limit_req_zone / limit_req, each with nginx's message and file:line."""
import re
import socket

import pytest

from conftest import IS_NGINX, simple
from test_limits import access, http, statuses, wait_for


def test_second_limit_refusing_gives_the_first_ones_node_back(server):
    # "a" limits by a header (a fresh key each request), "b" by the server name at 1r/m without burst: the second
    # request is refused by b after a had held its node; a must not count it (its own burst is 0 as well)
    srv = server(http('''
    limit_req_zone $server_name zone=b:1m rate=1r/m;
    limit_req_zone $http_x_k zone=a:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=a; limit_req zone=b; }
    }'''), files={'html/f': 'hi'}, full=True)
    assert srv.get('/f', headers=[('X-K', 'k1')]).status == 200
    assert srv.get('/f', headers=[('X-K', 'k2')]).status == 503
    wait_for(lambda: 'limiting requests, excess: 1.000 by zone "b"' in srv.error_log(), what='the refusal')
    assert 'by zone "a"' not in srv.error_log()


def test_two_limits_both_delaying_the_longest_wins(server):
    # with burst, the next requests wait; zone "slow" (1r/s) asks for a longer delay than "fast" (2r/s)
    srv = server(http('''
    limit_req_zone $server_name zone=fast:1m rate=2r/s;
    limit_req_zone $server_name zone=slow:1m rate=1r/s;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=slow burst=5; limit_req zone=fast burst=5; }
    }'''), files={'html/f': 'hi'}, full=True)
    c = srv.conn()
    for _ in range(3):  # one connection: the requests follow each other closely
        c.send(b'GET /f HTTP/1.1\r\nHost: x\r\n\r\n')
        assert c.read_response().status == 200
    wait_for(lambda: re.search(r'\[warn\].*delaying request, excess: \d\.\d{3}, by zone "slow"', srv.error_log()),
             what='a delay by the slower zone')
    assert 'by zone "fast"' not in srv.error_log()


@pytest.mark.hayate_only  # nginx's slab takes a 60000-byte node in a 32k zone's spare pages differently
def test_key_larger_than_the_zone_is_an_error(server):
    srv = server(http('''
    large_client_header_buffers 4 128k;
    limit_req_zone $http_x_k zone=tiny:32k rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / { limit_req zone=tiny; }
    }'''), files={'html/f': 'hi'}, full=True)
    srv.ignore_log = r'could not allocate node in limit_req zone "tiny"'
    assert srv.get('/f', headers=[('X-K', 'k' * 60000)]).status == 503
    wait_for(lambda: '[alert]' in srv.error_log() and 'could not allocate node in limit_req zone "tiny"'
             in srv.error_log(), what='the alert')
    assert srv.get('/f', headers=[('X-K', 'small')]).status == 200


def test_client_gone_while_delayed_is_499(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { limit_req zone=one burst=5; }
    }'''), files={'html/f': 'hi'}, full=True)
    assert srv.get('/f').status == 200
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'GET /f HTTP/1.1\r\nHost: x\r\n\r\n')  # waits a minute for its turn
    wait_for(lambda: 'delaying request, excess: 1.000, by zone "one"' in srv.error_log(), what='the delay')
    s.close()
    wait_for(lambda: 'client prematurely closed connection' in srv.error_log(),
             what='the close noticed')
    wait_for(lambda: any(l[:3] == ['/f', '499', 'DELAYED'] for l in access(srv)), what='the 499 line')


def test_log_level_warn_logs_delays_at_notice(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        limit_req_log_level warn;
        location / { limit_req zone=one burst=1 nodelay; }
        location /d { limit_req zone=one burst=5; limit_req_dry_run on; }
    }'''), files={'html/f': 'hi', 'html/d': 'hi'}, full=True)
    assert statuses(srv, '/f', 3) == [200, 200, 503]
    wait_for(lambda: re.search(r'\[warn\].*limiting requests, excess: 2\.\d{3} by zone "one"', srv.error_log()),
             what='the refusal at warn')
    assert srv.get('/d').status == 200
    wait_for(lambda: re.search(r'\[notice\].*delaying request, dry run, excess: \d\.\d{3}, by zone "one"',
                               srv.error_log()), what='the delay one level lower')


def test_subrequest_of_a_limited_request_is_not_limited_again(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=1r/m;
    server {
        listen 127.0.0.1:{port};
        server_name x;
        root {html};
        location / { ssi on; limit_req zone=one burst=5 nodelay; }
        location /part { limit_req zone=one; }
    }'''), files={'html/page.html': 'A<!--# include virtual="/part" -->B<!--# include virtual="/part" -->C',
                   'html/part': 'p'}, full=True)
    r = srv.get('/page.html')
    assert r.status == 200 and r.body == b'ApBpC'  # /part alone would be refused the second time
    assert srv.get('/part').status == 503


@pytest.mark.skipif(IS_NGINX, reason='Debian 12 nginx has no "http2" directive')
def test_delayed_subrequest_and_http2_stream(server):
    srv = server(http('''
    limit_req_zone $server_name zone=one:1m rate=20r/s;
    server {
        listen 127.0.0.1:{port};
        http2 on;
        server_name x;
        root {html};
        location / { ssi on; }
        location /part { limit_req zone=one burst=5; }
    }'''), files={'html/page.html': '<!--# include virtual="/part" -->,<!--# include virtual="/part" -->',
                   'html/part': 'p'}, full=True)
    r = srv.get('/page.html')
    assert r.status == 200 and r.body == b'p,p'
    from helpers.h2client import H2
    c = H2(srv.port)
    try:
        ids = [c.request('/part', authority='x') for _ in range(3)]
        got = [c.response(i) for i in ids]
    finally:
        c.close()
    assert [g[0] for g in got] == [200, 200, 200] and all(g[2] == b'p' for g in got)
    wait_for(lambda: 'delaying request, excess:' in srv.error_log(), what='a delayed request')


@pytest.mark.parametrize('body,msg', [
    ('limit_req_zone $a zone=one:1m rate=r/s;', 'invalid rate "rate=r/s"'),
    pytest.param('limit_req_zone $a zone=one:1m rate=99999999999999r/s;', 'invalid rate "rate=99999999999999r/s"',
                 marks=pytest.mark.hayate_only),  # nginx takes it (and overflows)
    ('limit_req_zone $a zone=one:1m rate=1/s;', 'invalid rate "rate=1/s"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one burst=x; } }',
     'invalid burst value "burst=x"'),
    pytest.param('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one burst=9999999999; } }',
                 'invalid burst value "burst=9999999999"', marks=pytest.mark.hayate_only),
    pytest.param('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one delay=9999999999; } }',
                 'invalid delay value "delay=9999999999"', marks=pytest.mark.hayate_only),
    ('limit_req_zone $a zone=one:1m rate=1r/s; limit_req_zone $b zone=one:1m rate=1r/s;',
     'limit_req_zone "one" is already bound to key "$a"'),
    ('limit_req_zone $a zone=one:1m rate=1r/s; server { location / { limit_req zone=one; limit_req zone=one; } }',
     '"limit_req" directive is duplicate'),
])
def test_more_conf_errors(prefix, run_cli, body, msg):
    path = prefix.conf(simple('return 204;', http_extra=body))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    line = [i for i, l in enumerate(open(path).read().split('\n'), 1) if body in l][0]
    assert re.search(re.escape(msg) + r' in %s:%d' % (re.escape(path), line), r.err), r.err


def test_limit_req_before_its_zone_and_default_rate(server):
    # a limit_req naming a zone declared further down, and a zone with no rate= (nginx's 1r/s)
    srv = server(simple('''
        root {html};
        location / { limit_req zone=later; }''', http_extra='''
    server { listen 127.0.0.1:{port2}; location / { limit_req zone=later; } }
    limit_req_zone $server_name zone=later:1m zone=later:1m;'''), files={'html/f': 'hi'})
    assert srv.get('/f').status == 200
