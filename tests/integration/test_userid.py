"""The userid module (nginx's ngx_http_userid_module docs): a visitor cookie with a 16-byte uid (base64), the
cookie attributes userid_name/_domain/_path/_expires/_flags/_p3p, userid_mark, userid_service, the v1 and log
modes, and $uid_got, $uid_set, $uid_reset (set by a map: a new uid; "log" also logs the reset)."""
import base64
import calendar
import re
import struct
import sys
import time

import pytest

from conftest import simple
from helpers.process import wait_until

CONF = simple('''
        root {html};
        add_header X-Got $uid_got;
        add_header X-Set $uid_set;
        userid on;
        location /attrs {
            userid_name visitor;
            userid_domain example.test;
            userid_path /attrs;
            userid_expires 1h;
            userid_flags secure httponly samesite=lax;
            userid_p3p 'CP="CUR ADM"';
        }
        location /max { userid_expires max; }
        location /mark { userid_mark t; }
        location /v1 { userid v1; }
        location /service { userid_service 65534; }
        location /log { userid log; }
        location /off { userid off; }
''', http_extra='map $arg_r $uid_reset { default 0; new 1; log log; }')

FILES = {'html/%s' % n: n for n in ('a', 'attrs', 'max', 'mark', 'v1', 'service', 'log', 'off')}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def cookie_of(r):
    sc = r.header('Set-Cookie')
    if sc is None:
        return None, {}
    first, *attrs = [p.strip() for p in sc.split(';')]
    name, value = first.split('=', 1)
    return (name, value), {a.split('=', 1)[0]: (a.split('=', 1) + [None])[1] for a in attrs}


def words(value):
    """$uid_set/$uid_got's hex: the four 32-bit words as the host reads them, %08X each (nginx's)."""
    raw = base64.b64decode(value[:22] + '==')
    return ''.join('%08X' % w for w in struct.unpack('=4I', raw))


def test_new_visitor_gets_a_cookie(srv):
    r = srv.get('/a')
    (name, value), attrs = cookie_of(r)
    assert name == 'uid' and len(value) == 24 and value.endswith('==')
    assert attrs == {'path': '/'}
    assert r.header('X-Set') == 'uid=' + words(value)
    assert r.header('X-Got') is None
    # v2: the first word is the local IPv4 address in network order
    assert base64.b64decode(value)[:4] == bytes([127, 0, 0, 1])
    # the time word, in network order
    assert abs(struct.unpack('>I', base64.b64decode(value)[4:8])[0] - time.time()) < 60


def test_returning_visitor(srv):
    (_, value), _ = cookie_of(srv.get('/a'))
    r = srv.get('/a', headers={'Cookie': 'other=1; uid=%s' % value})
    assert r.header('Set-Cookie') is None
    assert r.header('X-Got') == 'uid=' + words(value)
    assert r.header('X-Set') is None


def test_each_visitor_differs(srv):
    a = cookie_of(srv.get('/a'))[0][1]
    b = cookie_of(srv.get('/a'))[0][1]
    assert a != b


def test_cookie_attributes(srv):
    r = srv.get('/attrs')
    (name, _), attrs = cookie_of(r)
    assert name == 'visitor'
    assert attrs['domain'] == 'example.test' and attrs['path'] == '/attrs'
    assert 'secure' in attrs and 'httponly' in attrs and attrs['samesite'] == 'lax'
    assert r.header('P3P') == 'CP="CUR ADM"'
    m = re.match(r'\w{3}, (\d\d)-(\w{3})-(\d\d) (\d\d):(\d\d):(\d\d) GMT$', attrs['expires'])
    assert m, attrs['expires']
    months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
    t = calendar.timegm((2000 + int(m.group(3)), months.index(m.group(2)) + 1, int(m.group(1)),
                         int(m.group(4)), int(m.group(5)), int(m.group(6))))
    assert abs(t - (time.time() + 3600)) < 60


def test_expires_max(srv):
    assert cookie_of(srv.get('/max'))[1]['expires'] == 'Thu, 31-Dec-37 23:55:55 GMT'


def test_mark(srv):
    (_, value), _ = cookie_of(srv.get('/mark'))
    assert value.endswith('t=')
    # a cookie without the mark is sent again, the same uid marked
    unmarked = value[:22] + '=='
    (_, again), _ = cookie_of(srv.get('/mark', headers={'Cookie': 'uid=' + unmarked}))
    assert again == value[:22] + 't='
    assert srv.get('/mark', headers={'Cookie': 'uid=' + again}).header('Set-Cookie') is None


def test_v1_and_service(srv):
    (_, v1), _ = cookie_of(srv.get('/v1'))
    assert base64.b64decode(v1[:22] + '==')[:4] == b'\0\0\0\0'
    r = srv.get('/service')
    assert base64.b64decode(cookie_of(r)[0][1])[:4] == struct.pack('>I', 65534)
    if sys.byteorder == 'little':
        assert r.header('X-Set').startswith('uid=FEFF0000')


def test_log_and_off_modes(srv):
    (_, value), _ = cookie_of(srv.get('/a'))
    r = srv.get('/log', headers={'Cookie': 'uid=' + value})
    assert r.header('Set-Cookie') is None and r.header('X-Got') == 'uid=' + words(value)
    assert srv.get('/log').header('Set-Cookie') is None
    r = srv.get('/off', headers={'Cookie': 'uid=' + value})
    assert r.header('X-Got') is None and r.header('Set-Cookie') is None


def test_reset_by_map(srv):
    (_, value), _ = cookie_of(srv.get('/a'))
    (_, new), _ = cookie_of(srv.get('/a?r=new', headers={'Cookie': 'uid=' + value}))
    assert new and new != value
    (_, logged), _ = cookie_of(srv.get('/a?r=log', headers={'Cookie': 'uid=' + value}))
    assert logged and logged != value
    assert wait_until(lambda: 'userid cookie "uid=%s" was reset' % words(value) in srv.error_log())


def test_bad_cookies_logged(srv):
    assert srv.get('/a', headers={'Cookie': 'uid=short'}).header('Set-Cookie')
    assert srv.get('/a', headers={'Cookie': 'uid=!!!!!!!!!!!!!!!!!!!!!!!!'}).header('Set-Cookie')
    assert wait_until(lambda: 'client sent invalid userid cookie "!!!' in srv.error_log())
    assert 'client sent too short userid cookie "short"' in srv.error_log()


@pytest.mark.parametrize('loc,message', [
    ('userid maybe;', 'invalid value "maybe"'),
    ('userid_mark ab;', '"userid_mark" directive value must be "off" or a single letter, digit or "="'),
    ('userid_mark -;', '"userid_mark" directive value must be "off" or a single letter, digit or "="'),
    ('userid_expires soon;', '"userid_expires" directive invalid value'),
    ('userid_flags secure bogus;', 'invalid value "bogus"'),
    ('userid_service x;', '"userid_service" directive invalid number'),
])
def test_conf_errors(prefix, run_cli, loc, message):
    conf = prefix.conf(simple('location / { %s }' % loc))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err, r.err
