"""add_header (inheritance, always, variables, empty values), expires, charset, server_tokens, etag."""
import calendar
import email.utils
import time

import pytest

from conftest import simple

FILES = {'html/varmod': 'vm', 'html/a.html': '<p>a</p>', 'html/in/a.html': 'in', 'html/own/a.html': 'own', 'html/x.bin': 'bin',
         'html/exp/a.html': 'e', 'html/cs/a.html': 'cs', 'html/cs/a.txt': 'cs', 'html/cs/a.bin': 'b'}

CONF = simple('''
        root {html};
        add_header X-Server srv;
        add_header X-Always yes always;
        add_header X-Var "u=$uri";
        add_header X-Empty $arg_none;
        location /in/ { }
        location /own/ { add_header X-Own own; }
        location = /redir { return 302 /a.html; }
        location = /gone { return 410; }
        location /exp/ {
            location /exp/a.html { expires 1h; }
        }
        location = /epoch { expires epoch; return 200 "e"; }
        location = /max { expires max; return 200 "m"; }
        location = /neg { expires -1; return 200 "n"; }
        location = /zero { expires 0; return 200 "z"; }
        location = /mod { expires modified 1d; }
        location /var { expires $arg_e; return 200 "v";
            location /var/in { return 200 "i"; }
        }
        location /varmod { expires modified $arg_e; }
        location /cs/ { charset utf-8; }
        location = /cs-return { charset koi8-r; return 200 "t"; }
        location = /cs-404 { charset utf-8; return 404; }
        location = /cs-star { charset utf-8; charset_types *; return 200 "x"; }
''', http_extra='add_header X-Http http;')


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def test_server_headers(srv):
    r = srv.get('/a.html?q=1')
    assert r.header('X-Server') == 'srv'
    assert r.header('X-Always') == 'yes'
    assert r.header('X-Var') == 'u=/a.html'
    assert r.header('X-Empty') is None          # empty value: not added
    assert r.header('X-Http') is None           # server level has its own add_header: http's not inherited


def test_inherited_by_location_without_own(srv):
    r = srv.get('/in/a.html')
    assert r.header('X-Server') == 'srv'


def test_location_with_own_drops_parent(srv):
    r = srv.get('/own/a.html')
    assert r.header('X-Own') == 'own'
    assert r.header('X-Server') is None
    assert r.header('X-Always') is None


def test_error_status_only_always(srv):
    r = srv.get('/missing')
    assert r.status == 404
    assert r.header('X-Server') is None
    assert r.header('X-Always') == 'yes'
    r = srv.get('/gone')
    assert r.status == 410
    assert r.header('X-Always') == 'yes'


def test_redirect_status_gets_headers(srv):
    r = srv.get('/redir')
    assert r.status == 302
    assert r.header('X-Server') == 'srv'


def test_304_gets_headers(srv):
    r = srv.get('/a.html')
    r2 = srv.get('/a.html', headers={'If-Modified-Since': r.header('Last-Modified')})
    assert r2.status == 304
    assert r2.header('X-Server') == 'srv'


def test_expires_time(srv):
    r = srv.get('/exp/a.html')
    assert r.header('Cache-Control') == 'max-age=3600'
    exp = calendar.timegm(email.utils.parsedate(r.header('Expires')))
    assert abs(exp - (time.time() + 3600)) < 5


@pytest.mark.parametrize('path,expires,cc', [
    ('/epoch', 'Thu, 01 Jan 1970 00:00:01 GMT', 'no-cache'),
    ('/max', 'Thu, 31 Dec 2037 23:55:55 GMT', 'max-age=315360000'),
    ('/neg', None, 'no-cache'),
    ('/zero', None, 'max-age=0'),
])
def test_expires_forms(srv, path, expires, cc):
    r = srv.get(path)
    assert r.header('Cache-Control') == cc
    if expires:
        assert r.header('Expires') == expires
    else:
        assert r.has('Expires')


def test_expires_modified(srv, server):
    r = srv.get('/mod', headers={})
    # /mod has no file: 404 → no Expires
    assert r.status == 404
    assert not r.has('Expires')


@pytest.mark.parametrize('path,cc,expires', [
    ('/var?e=2048', 'max-age=2048', True),
    ('/var/in?e=2048', 'max-age=2048', True),   # inherited
    ('/var?e=-5', 'no-cache', True),
    ('/var?e=epoch', 'no-cache', True),
    ('/var?e=max', 'max-age=315360000', True),
    ('/var?e=off', None, False),
    ('/var', None, False),                      # empty: no Expires
    ('/var?e=bad', None, False),                # not a time: logged, no Expires
    ('/varmod?e=epoch', None, False),           # "modified" cannot apply to epoch
])
def test_expires_with_variables(srv, path, cc, expires):
    r = srv.get(path)
    assert r.status == 200
    assert r.header('Cache-Control') == cc
    assert r.has('Expires') == expires


def test_expires_modified_with_variable(srv):
    r = srv.get('/varmod?e=1h')
    lm = calendar.timegm(email.utils.parsedate(r.header('Last-Modified')))
    exp = calendar.timegm(email.utils.parsedate(r.header('Expires')))
    assert r.status == 200 and exp == lm + 3600


def test_expires_not_on_404(srv):
    r = srv.get('/exp/missing.html')
    assert r.status == 404
    assert not r.has('Expires')


@pytest.mark.parametrize('path,ctype', [
    ('/cs/a.html', 'text/html; charset=utf-8'),
    ('/cs/a.txt', 'text/plain; charset=utf-8'),
    ('/cs/a.bin', 'application/octet-stream'),
    ('/cs-return', 'application/octet-stream'),
    ('/cs-404', 'text/html; charset=utf-8'),
    ('/cs-star', 'application/octet-stream; charset=utf-8'),
])
def test_charset(srv, path, ctype):
    assert srv.get(path).header('Content-Type') == ctype


def test_server_tokens_off(server, prog, proto):
    srv = server(simple('server_tokens off; location / { return 404; }'))
    r = srv.get('/')
    assert r.header('Server') == prog
    assert b'<hr><center>%s</center>' % prog.encode() in r.body


def test_etag_off(server, proto):
    srv = server(simple('root {html}; etag off;'), files={'html/a.html': 'x'})
    r = srv.get('/a.html')
    assert r.status == 200
    assert not r.has('ETag')


def test_msie_padding_accepted(server, proto):
    srv = server(simple('msie_padding on; msie_refresh off; location / { return 200 "ok"; }'))
    assert srv.get('/').text == 'ok'


@pytest.mark.parametrize('conf,msg', [
    ('add_header X y sometimes;', 'invalid parameter "sometimes"'),
    ('add_trailer X y sometimes;', 'invalid parameter "sometimes"'),
    ('add_trailer X;', 'invalid number of arguments in "add_trailer" directive'),
    ('expires 1h; expires 2h;', '"expires" directive is duplicate'),
    ('expires @25h;', 'daily time value must be less than 24 hours'),
])
def test_config_errors(run_cli, prefix, conf, msg):
    path = prefix.conf(simple(conf))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', path])
    assert res.rc != 0
    assert msg in res.err


# ---- repeated response fields: $sent_http_* and $upstream_http_* join them; expires replaces proxied ones

MULTI = simple('''
        location /s {
            add_header Cache-Control foo;
            add_header Cache-Control bar;
            add_header Link foo;
            add_header Link bar;
            add_header Foo foo;
            add_header Foo bar;
            add_header X-Sent-CC $sent_http_cache_control;
            add_header X-Sent-Link $sent_http_link;
            add_header X-Sent-Foo $sent_http_foo;
            return 204;
        }
        location /set {
            add_header Cache-Control max-age=3600;
            add_header Cache-Control private;
            add_header Expires "Thu, 01 Jan 2037 00:00:00 GMT";
            add_header Bar foo;
            add_header Bar bar;
            return 200 "OK";
        }
        location /redefine {
            expires epoch;
            proxy_pass http://127.0.0.1:{port}/set;
        }
        location /u {
            add_header X-Up-Bar $upstream_http_bar;
            add_header X-Up-CC $upstream_http_cache_control;
            proxy_pass http://127.0.0.1:{port}/set;
        }
''', http_extra='log_format cc "$uri: $sent_http_cache_control"; access_log {tmp}/logs/cc.log cc;')


def test_sent_http_joined_cache_control_link(server):
    s = server(MULTI)
    r = s.get('/s')
    assert r.header('X-Sent-CC') == 'foo, bar'
    assert r.header('X-Sent-Link') == 'foo, bar'


@pytest.mark.hayate_only  # nginx 1.22 joins only Cache-Control and Link; 1.23+ every field, as hayate
def test_sent_http_joined_any_field(server):
    s = server(MULTI)
    assert s.get('/s').header('X-Sent-Foo') == 'foo, bar'


def test_sent_http_joined_in_log(server):
    s = server(MULTI)
    assert s.get('/set').status == 200
    s.stop()
    with open(s.tmp + '/logs/cc.log') as f:
        assert '/set: max-age=3600, private' in f.read().splitlines()


def test_expires_replaces_proxied_fields(server):
    s = server(MULTI)
    r = s.get('/redefine')
    assert r.status == 200 and r.body == b'OK'
    assert r.header_all('Cache-Control') == ['no-cache']
    assert r.header_all('Expires') == ['Thu, 01 Jan 1970 00:00:01 GMT']
    s.stop()
    with open(s.tmp + '/logs/cc.log') as f:
        assert '/redefine: no-cache' in f.read().splitlines()


@pytest.mark.hayate_only  # nginx 1.22: the first line (Cache-Control joined); 1.23+ joins every field, as hayate
def test_upstream_http_joined(server):
    s = server(MULTI)
    r = s.get('/u')
    assert r.header('X-Up-Bar') == 'foo, bar'
    assert r.header('X-Up-CC') == 'max-age=3600, private'
