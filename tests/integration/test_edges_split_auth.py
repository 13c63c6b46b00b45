"""split_clients, auth_request_set and mirror edges (nginx's module docs): the percent forms split_clients takes
and rejects, auth_request_set of $args and $limit_rate, a mirrored request whose body is malformed, and the
values these directives reject at -t."""
import os
import re
import time

import pytest

from conftest import simple
from helpers.conf_t import fails_at, passes, http_srv


SPLIT_ERRORS = [
    ('split_clients "$remote_addr" $s { % a; }', 'invalid percent value "%"'),
    ('split_clients "$remote_addr" $s { 1.2.3% a; }', 'invalid percent value "1.2.3%"'),
    ('split_clients "$remote_addr" $s { 1.234% a; }', 'invalid percent value "1.234%"'),
    ('split_clients "$remote_addr" $s { 1x% a; }', 'invalid percent value "1x%"'),
    ('split_clients "$remote_addr" $s { 10 a; }', 'invalid percent value "10"'),
    # docs/DIFFERENCES.md: nginx 1.22 takes a line of three words
    pytest.param('split_clients "$remote_addr" $s { 10% a b; }', 'invalid number of the split_clients parameters',
                 marks=pytest.mark.hayate_only),
    ('split_clients "$remote_addr" $ { 10% a; }', 'invalid variable name "$"'),
    ('split_clients "$remote_addr" $s { 101% a; }', 'percent total is greater than 100%'),
]


@pytest.mark.parametrize('block,message', SPLIT_ERRORS, ids=[str(i) for i in range(len(SPLIT_ERRORS))])
def test_split_clients_rejected_at_t(prefix, run_cli, block, message):
    fails_at(prefix, run_cli, 'http {\n    %s\n}\n' % block, block if '{ 101%' not in block else '101%', message)


@pytest.mark.parametrize('key,value', [('a', 'low'), ('b', 'mid'), ('c', 'rest')])
def test_split_clients_decimal_percents(server, key, value):
    # MurmurHash2 of "a", "b", "c" (the key nginx hashes) fall in different parts of the split
    s = server(simple('location / { return 200 "$s"; }', http_extra='''
    split_clients "$arg_k" $s {
        0.5% low;
        99.4% mid;
        * rest;
    }'''))
    got = s.get('/?k=' + key).text
    assert got in ('low', 'mid', 'rest')
    # the same key always gets the same part
    assert all(s.get('/?k=' + key).text == got for _ in range(3))


AUTH = simple('''
        root {html};
        location = /ok { internal; return 204; }
        location /args/ {
            auth_request /ok;
            auth_request_set $args "from=auth&u=$uri";
            add_header X-Args $args always;
        }
        location /rate/ {
            auth_request /ok;
            auth_request_set $limit_rate "abc";
            auth_request_set $who "sub $uri";
            add_header X-Who $who always;
        }
        location /rate2/ {
            auth_request /ok;
            auth_request_set $who "two";
            add_header X-Who $who always;
        }
''')


def test_auth_request_set_args(server):
    s = server(AUTH, files={'html/args/f.txt': 'file'})
    r = s.get('/args/f.txt?orig=1')
    assert r.status == 200 and r.text == 'file'
    assert r.header('X-Args') == 'from=auth&u=/ok'  # evaluated in the subrequest


def test_auth_request_set_bad_limit_rate_is_logged(server):
    s = server(AUTH, files={'html/rate/f.txt': 'file', 'html/rate2/f.txt': 'file2'})
    r = s.get('/rate/f.txt')
    assert r.status == 200 and r.text == 'file'
    assert r.header('X-Who') == 'sub /ok'
    deadline = time.monotonic() + 5
    while 'invalid $limit_rate "abc"' not in s.error_log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert re.search(r'\[error\].*invalid \$limit_rate "abc"', s.error_log())
    # the same variable set in another location
    assert s.get('/rate2/f.txt').header('X-Who') == 'two'


@pytest.mark.parametrize('directive,message', [
    ('auth_request_set who 1;', 'invalid variable name "who"'),
    ('auth_request_set $ 1;', 'invalid variable name "$"'),
    ('auth_request_set $uri 1;', 'the duplicate "uri" variable'),
    # nginx finds unknown variables after the whole file is read, and names no line
    pytest.param('auth_request_set $x "$nosuchvar";', 'unknown "nosuchvar" variable', marks=pytest.mark.hayate_only),
])
def test_auth_request_set_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv('location / {\n            %s\n        }' % directive), directive, message)


def test_mirror_with_a_malformed_chunked_body(server):
    s = server(simple('''
        location / { mirror /m; mirror_request_body on; return 204; }
        location = /m { internal; return 204; }
    '''))
    r = s.raw(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n'
              b'zz\r\nabc\r\n0\r\n\r\n')
    assert r.status == 400
