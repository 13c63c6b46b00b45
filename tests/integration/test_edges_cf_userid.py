"""userid beyond test_userid.py / test_edges_userid.py: $uid_reset ("0", non-empty, "log"), userid_service in the
identifier, "userid log" (the variables, no cookie), "userid v1", userid_expires off / max and userid_mark off,
userid_domain / userid_p3p "none". All as nginx's ngx_http_userid_module documents them; they run against nginx."""
import base64
import re
import struct

import pytest

from conftest import simple


def cookie_value(r):
    sc = r.header('Set-Cookie')
    return None if sc is None else sc.split(';')[0].split('=', 1)[1]


def words(value):
    return struct.unpack('<4I', base64.b64decode(value[:22] + '=='))


@pytest.mark.parametrize('reset,renewed,logged', [('0', False, False), ('', False, False), ('1', True, False),
                                                  ('yes', True, False), ('log', True, True)])
def test_uid_reset(server, reset, renewed, logged):
    srv = server(simple('''
        userid on;
        location / { set $uid_reset $arg_r; add_header X-Set $uid_set; return 200 "ok"; }'''))
    value = cookie_value(srv.get('/'))
    r = srv.get('/?r=' + reset, headers={'Cookie': 'uid=' + value})
    again = cookie_value(r)
    if renewed:
        assert again is not None and again != value
        assert r.header('X-Set', '').startswith('uid=')
    else:
        assert again is None
    got = re.search(r'\[notice\].*userid cookie "uid=([0-9A-F]{32})" was reset', srv.error_log())
    if logged:
        assert got and got.group(1) == ''.join('%08X' % w for w in words(value))
    else:
        assert got is None


def test_service_is_the_first_word_and_v1(server):
    srv = server(simple('''
        location /s { userid on; userid_service 4660; return 200 "ok"; }
        location /v1 { userid v1; userid_service 4661; return 200 "ok"; }'''))
    # v2: the service in network byte order; v1: in the host's
    assert struct.unpack('>I', base64.b64decode(cookie_value(srv.get('/s'))[:22] + '==')[:4])[0] == 4660
    assert words(cookie_value(srv.get('/v1')))[0] == 4661


def test_userid_log_sets_no_cookie(server):
    srv = server(simple('''
        location / { userid log; add_header X-Got "[$uid_got]"; add_header X-Set "[$uid_set]"; return 200 "ok"; }
        location /on { userid on; return 200 "ok"; }
        location /off { userid off; add_header X-Got "[$uid_got]"; return 200 "ok"; }'''))
    r = srv.get('/')
    assert r.header('Set-Cookie') is None and r.header('X-Got') == '[]' and r.header('X-Set') == '[]'
    value = cookie_value(srv.get('/on'))
    r = srv.get('/', headers={'Cookie': 'uid=' + value})
    assert r.header('X-Got') == '[uid=%s]' % ''.join('%08X' % w for w in words(value))
    assert r.header('Set-Cookie') is None
    r = srv.get('/off', headers={'Cookie': 'uid=' + value})
    assert r.header('X-Got') == '[]'


def test_expires_mark_domain_p3p_variants(server):
    srv = server(simple('''
        location /max { userid on; userid_expires max; userid_mark off; userid_domain none; return 200 "ok"; }
        location /off { userid on; userid_expires off; userid_p3p none; userid_path /off; return 200 "ok"; }
        location /sec { userid on; userid_expires 1h; userid_domain example.org; userid_p3p 'CP="X"'; return 200 "ok"; }'''))
    sc = srv.get('/max').header('Set-Cookie')
    assert 'expires=Thu, 31-Dec-37 23:55:55 GMT' in sc and 'domain=' not in sc
    assert cookie_value(srv.get('/max')).endswith('==')
    r = srv.get('/off')
    assert 'expires=' not in r.header('Set-Cookie') and 'path=/off' in r.header('Set-Cookie')
    assert r.header('P3P') is None
    r = srv.get('/sec')
    assert re.search(r'; expires=\w{3}, \d\d-\w{3}-\d\d \d\d:\d\d:\d\d GMT; domain=example.org; path=/$',
                     r.header('Set-Cookie')), r.header('Set-Cookie')
    assert r.header('P3P') == 'CP="X"'
