"""valid_referers and $invalid_referer (nginx's ngx_http_referer_module docs): "" when the Referer is valid (or the
level has no valid_referers), "1" otherwise; none = no Referer, blocked = a Referer without "http://"/"https://",
server_names = the server's names, names with a leading/trailing "*" and an optional URI prefix, ~regex."""
import pytest

from conftest import simple

CONF = simple('''
        server_name localhost *.local.test;
        location /all {
            valid_referers none blocked server_names *.example.com example.* www.site.com/galleries/
                           ~\\.google\\.;
            return 200 "[$invalid_referer]";
        }
        location /strict { valid_referers server_names; return 200 "[$invalid_referer]"; }
        location /open { return 200 "[$invalid_referer]"; }
        location /deny {
            valid_referers www.example.org;
            if ($invalid_referer) { return 403; }
            return 200 ok;
        }
''')


@pytest.fixture
def srv(server):
    return server(CONF)


@pytest.mark.parametrize('referer,invalid', [
    (None, ''),                                       # none
    ('foo', ''),                                      # blocked: no scheme
    ('//host/', ''),                                  # blocked
    ('http://localhost/page', ''),                    # server_names
    ('http://a.local.test/', ''),                     # server_names, a wildcard name
    ('http://www.example.com/x', ''),                 # *.example.com
    ('https://WWW.EXAMPLE.COM/x', ''),                # host case does not matter
    ('http://notexample.com/', '1'),                  # *.example.com needs a dot before example.com
    ('http://example.org/a', ''),                     # example.*
    ('http://www.site.com/galleries/one.jpg', ''),    # the URI prefix
    ('http://www.site.com/other/', '1'),
    ('http://www.site.com:8080/galleries/x', ''),     # a port is not part of the host
    ('http://www.google.de/search', ''),              # ~regex, against the text after the scheme
    ('http://evil.test/', '1'),
    ('http://' + 'a' * 300 + '.example.com/', '1'),   # hosts past 256 bytes are invalid
])
def test_invalid_referer(srv, referer, invalid):
    headers = {'Referer': referer} if referer is not None else {}
    assert srv.get('/all', headers=headers).text == '[%s]' % invalid


def test_no_none_means_a_missing_referer_is_invalid(srv):
    assert srv.get('/strict').text == '[1]'
    assert srv.get('/strict', headers={'Referer': 'http://localhost/'}).text == '[]'


def test_level_without_valid_referers(srv):
    assert srv.get('/open', headers={'Referer': 'http://evil.test/'}).text == '[]'


def test_used_to_deny(srv):
    assert srv.get('/deny', headers={'Referer': 'http://evil.test/'}).status == 403
    assert srv.get('/deny', headers={'Referer': 'http://www.example.org/'}).status == 200


@pytest.mark.parametrize('loc,message', [
    ('valid_referers none;', 'the "none" or "blocked" referers are specified in the "valid_referers" directive '
                             'without any valid referer'),
    ('valid_referers a.*.b;', 'invalid hostname or wildcard "a.*.b"'),
    ('valid_referers ~(;', 'pcre2_compile() failed'),
    ('referer_hash_max_size x;', '"referer_hash_max_size" directive invalid number'),
])
def test_conf_errors(prefix, run_cli, loc, message):
    conf = prefix.conf(simple('location / { %s }' % loc))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err, r.err
