"""Shared upstream settings (upstream/uconf.c) past the proxy tests: *_buffers and *_bind errors at -t,
proxy_bind from a variable that is no address (logged, not bound), X-Accel-Redirect to a named location (and for HEAD),
X-Accel-Limit-Rate values that are not numbers, X-Accel-Charset (the charset filter's destination, nginx's
headers_out.override_charset: nginx-tests range_charset.t)."""
import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend
from helpers.process import wait_log


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.parametrize('stmt,msg', [
    ('proxy_buffers 4 8k; proxy_buffers 8 8k;', '"proxy_buffers" directive is duplicate'),
    ('proxy_buffers 0 8k;', '"proxy_buffers" directive invalid value'),
    ('proxy_buffers 4 x;', '"proxy_buffers" directive invalid value'),
    ('proxy_bind 127.0.0.1; proxy_bind 127.0.0.2;', '"proxy_bind" directive is duplicate'),
    ('proxy_bind 127.0.0.1 bogus;', 'invalid parameter "bogus"'),
    ('proxy_bind 1.2.3;', 'invalid address "1.2.3"'),
])
def test_setting_errors(run_cli, prefix, stmt, msg):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { proxy_pass http://127.0.0.1:1; %s } } }'
                       % stmt)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = [n for n, l in enumerate(open(conf), 1) if 'proxy_pass http://127.0.0.1:1;' in l][0]
    assert '%s in %s:%d' % (msg, conf, line) in res.err, res.err


@pytest.mark.hayate_only
def test_bind_transparent_is_not_supported(run_cli, prefix):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { proxy_pass http://127.0.0.1:1; '
                       'proxy_bind 127.0.0.1 transparent; } } }')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1 and '"proxy_bind ... transparent" is not supported by hayate yet' in res.err, res


def test_bind_variable_that_is_no_address(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_bind $arg_b; }' % be.port))
    assert srv.get('/?b=127.0.0.1').status == 200
    # nginx: logged, and the connection is made without binding
    assert srv.get('/?b=not-an-address').status == 200
    wait_log(srv, 'invalid local address "not-an-address"')
    assert len(be.requests) == 2


def test_accel_redirect_to_a_named_location(server, be):
    be.handler = lambda r: be.reply(200, b'from backend', [('X-Accel-Redirect', '@named')])
    srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; }
        location @named { return 200 "named $request_method\\n"; }''' % be.port))
    r = srv.get('/x')
    assert r.status == 200 and r.body == b'named GET\n'
    r = srv.get('/x', method='HEAD')
    assert r.status == 200 and r.body == b''
    r = srv.get('/x', method='POST', body=b'b')
    assert r.status == 200 and r.body == b'named POST\n'  # a named location keeps the method (a URI: GET)


def test_accel_limit_rate_not_a_number(server, be):
    be.handler = lambda r: be.reply(200, b'x' * 1000, [('X-Accel-Limit-Rate', 'fast')])
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'x' * 1000  # ignored, not applied
    be.handler = lambda r: be.reply(200, b'y' * 1000, [('X-Accel-Limit-Rate', 'off')])
    assert srv.get('/').body == b'y' * 1000
    if not IS_NGINX:
        assert 'upstream sent invalid "X-Accel-Limit-Rate" header' in srv.error_log()


@pytest.mark.parametrize('loc,body,charset', [
    ('', b'Y0YY', 'A'),                                           # recoded B -> A, though no `charset` is set here
    ('proxy_ignore_headers X-Accel-Charset;', b'X0XX', 'B'),      # ignored: left alone
    ('charset B; override_charset on;', b'Y0YY', 'A'),            # the field wins over the location's charset
])
def test_accel_charset_is_the_destination(server, be, loc, body, charset):
    be.handler = lambda r: be.reply(200, b'X0XX', [('Content-Type', 'text/html; charset=B'),
                                                   ('X-Accel-Charset', 'A')])
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; %s }' % (be.port, loc),
                        'charset_map B A { 58 59; }'))
    r = srv.get('/')
    assert (r.body, r.header('Content-Type'), r.header('X-Accel-Charset')) == (body, 'text/html; charset=' + charset,
                                                                                None)


def test_accel_charset_unknown_is_logged(server, be):
    be.handler = lambda r: be.reply(200, b'X0XX', [('Content-Type', 'text/html; charset=B'),
                                                   ('X-Accel-Charset', 'nope')])
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port, 'charset_map B A { 58 59; }'))
    r = srv.get('/')
    assert (r.body, r.header('Content-Type')) == (b'X0XX', 'text/html; charset=B')
    assert wait_log(srv, 'unknown charset "nope" to override')


@pytest.mark.parametrize('stmt', ['proxy_send_lowat 1k;', 'fastcgi_send_lowat 1k;', 'send_lowat 1k;'])
def test_send_lowat_is_warned_and_ignored(run_cli, prefix, stmt):
    # Linux has no SO_SNDLOWAT: nginx warns ("... is not supported, ignored") and goes on; so does hayate
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % stmt)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 0 and '[warn]' in res.err and stmt.split()[0] in res.err, res
