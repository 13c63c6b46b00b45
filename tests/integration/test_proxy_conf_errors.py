"""Configuration errors of the proxy module's directives (proxy_pass, proxy_redirect, proxy_cookie_domain/_path,
proxy_set_body), each with nginx's message and the file:line of the offending directive, checked by `-t` on a
small config. Written from nginx's behaviour (HY_BIN=/usr/sbin/nginx runs them too)."""
import pytest

from conftest import IS_NGINX


def check(run_cli, prefix, loc, needle, msg):
    conf = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            %s
        }
    }
}
''' % loc)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = None
    with open(conf) as f:
        for n, l in enumerate(f, 1):
            if needle in l:
                line = n  # the last line holding the needle
    assert line is not None
    want = '%s in %s:%d' % (msg, conf, line)
    if IS_NGINX and 'variable' in msg:
        want = msg  # nginx reports an unknown variable without its place
    assert '[emerg]' in res.err and want in res.err, (want, res.err)


CASES = [
    ('proxy_pass http://127.0.0.1:1;\n proxy_pass http://127.0.0.1:2;', 'http://127.0.0.1:2',
     '"proxy_pass" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1$nope;', '$nope', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect /a /b;\n proxy_redirect off;', 'proxy_redirect off',
     '"proxy_redirect" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect off;\n proxy_redirect /a /b;', 'proxy_redirect /a',
     '"proxy_redirect" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect off;\n proxy_redirect off;', 'proxy_redirect off',
     '"proxy_redirect" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect false;', 'proxy_redirect false',
     'invalid parameter "false"'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect bogus;', 'proxy_redirect bogus',
     'invalid parameter "bogus"'),
    ('proxy_pass http://127.0.0.1:1$uri;\n proxy_redirect default;', 'proxy_redirect default',
     '"proxy_redirect default" cannot be used with "proxy_pass" directive with variables'),
    ('proxy_redirect default;\n proxy_pass http://127.0.0.1:1;', 'proxy_redirect default',
     '"proxy_redirect default" should be placed after the "proxy_pass" directive'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect /a $nope;', 'proxy_redirect /a', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_redirect $nope /a;', 'proxy_redirect $nope', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_domain bogus;', 'proxy_cookie_domain', 'invalid parameter "bogus"'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_path a b;\n proxy_cookie_path off;', 'proxy_cookie_path off',
     '"proxy_cookie_path" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_domain off;\n proxy_cookie_domain a b;', 'proxy_cookie_domain a',
     '"proxy_cookie_domain" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_path /a $nope;', 'proxy_cookie_path', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_path $nope /a;', 'proxy_cookie_path', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_flags a bogus;', 'proxy_cookie_flags', 'invalid parameter "bogus"'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_flags a secure;\n proxy_cookie_flags off;', 'proxy_cookie_flags off',
     '"proxy_cookie_flags" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_flags off;\n proxy_cookie_flags a secure;', 'proxy_cookie_flags a',
     '"proxy_cookie_flags" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_cookie_flags $nope secure;', 'proxy_cookie_flags', 'unknown "nope" variable'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_set_body a;\n proxy_set_body b;', 'proxy_set_body b',
     '"proxy_set_body" directive is duplicate'),
    ('proxy_pass http://127.0.0.1:1;\n proxy_set_header X-A $nope;', 'proxy_set_header', 'unknown "nope" variable'),
]


@pytest.mark.parametrize('loc,needle,msg', CASES, ids=[str(i) for i in range(len(CASES))])
def test_proxy_directive_errors(run_cli, prefix, loc, needle, msg):
    check(run_cli, prefix, loc, needle, msg)


@pytest.mark.parametrize('directive', ['proxy_redirect ~(a /b;', 'proxy_cookie_path ~(a /b;',
                                       'proxy_cookie_domain ~(a b;'])
def test_proxy_bad_regex(run_cli, prefix, directive):
    conf = prefix.conf('''
http { server { listen 127.0.0.1:{port}; location / { proxy_pass http://127.0.0.1:1;
    %s } } }
''' % directive)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    assert 'pcre2_compile() failed: missing closing parenthesis in "(a"' in res.err, res.err
    line = [n for n, l in enumerate(open(conf), 1) if '~(a' in l][0]
    assert '"(a" in %s:%d' % (conf, line) in res.err, res.err


@pytest.mark.hayate_only
@pytest.mark.parametrize('url', ['ftp://127.0.0.1', 'http://[::1/', 'http://[::1]x/', 'http://:80/',
                                 'http://127.0.0.1:0/', 'http://127.0.0.1:99999/', 'http:///a'])
def test_proxy_pass_bad_urls(run_cli, prefix, url):
    # nginx names the fault ("invalid port in upstream ..."); hayate says "invalid URL prefix" for all of them
    conf = prefix.conf('''
http { server { listen 127.0.0.1:{port}; location / { proxy_pass %s; } } }
''' % url)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = [n for n, l in enumerate(open(conf), 1) if 'proxy_pass %s;' % url in l][0]
    assert '[emerg] invalid URL prefix in "%s" in %s:%d' % (url, conf, line) in res.err, res.err
