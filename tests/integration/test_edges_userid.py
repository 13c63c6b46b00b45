"""userid edges (ngx_http_userid_module): the uid's first word is the server's address (the last four bytes of
an IPv6 one), the cookie found among others in Cookie fields separated by ";" or "," with spaces around, a
cookie marked with another character sent again with the configured mark. They run against Debian's nginx
too."""
import base64

from conftest import simple


def cookie_value(r):
    sc = r.header('Set-Cookie')
    return None if sc is None else sc.split(';')[0].split('=', 1)[1]


def raw(value):
    return base64.b64decode(value[:22] + '==')


def test_first_word_is_the_local_address(server):
    srv = server(simple('userid on; location / { return 200 "ok"; }',
                        listen='listen 127.0.0.1:{port}; listen [::1]:{port};'))
    v4 = cookie_value(srv.get('/'))
    assert raw(v4)[:4] == bytes([127, 0, 0, 1])
    c = srv.conn(host='::1')
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert raw(cookie_value(r))[:4] == b'\0\0\0\x01'


def test_cookie_among_others(server):
    srv = server(simple('userid on; location / { add_header X-Got $uid_got; return 200 "ok"; }'))
    value = cookie_value(srv.get('/'))
    for cookie in ('a=1; uid=%s; b=2' % value, 'a=1,uid=%s' % value, ' ; uid=%s  ' % value,
                   'UID=%s' % value):  # the name matched case-insensitively, as nginx
        r = srv.get('/', headers={'Cookie': cookie})
        assert r.header('Set-Cookie') is None, cookie
        assert r.header('X-Got', '').startswith('uid='), cookie
    # a name that only ends like it is another cookie
    r = srv.get('/', headers={'Cookie': 'xuid=%s' % value})
    assert r.header('Set-Cookie') is not None


def test_other_mark_is_replaced(server):
    srv = server(simple('userid on; userid_mark t; location / { return 200 "ok"; }'))
    value = cookie_value(srv.get('/'))
    assert value.endswith('t=')
    other = value[:22] + 'q='
    again = cookie_value(srv.get('/', headers={'Cookie': 'uid=' + other}))
    assert again == value[:22] + 't='
