"""proxy_cookie_domain / proxy_cookie_path / proxy_redirect on the values a backend sends: regex and plain rules,
leading dots and case in domains, attribute names in any case and spacing, cookies without attributes, Refresh
headers, rules with variables. The backend is a second server block echoing the header it is asked for."""
import urllib.parse

import pytest

from conftest import simple

BACKEND = '''
    %s
    map $arg_k $refresh { 1 "5; url=http://a/x"; 2 "5;URL=http://a/x"; 3 "5; url=http://other/x"; 4 "5"; }
    server {
        listen 127.0.0.1:{port2};
        location /c { add_header Set-Cookie $ck; return 200 ok; }
        location /r { add_header Refresh $refresh; return 200 ok; }
        location /l { return 302 $arg_l; }
    }'''


def front(server, rules):
    return server(simple('''
        location / { proxy_pass http://127.0.0.1:{port2}; %s }''' % rules, http_extra=BACKEND % COOKIE_MAP))


COOKIE_RULES = '''
    proxy_cookie_domain ~^(.+)\\.example\\.net$ $1.local;
    proxy_cookie_domain .Example.com target.org;
    proxy_cookie_domain other.com .dot.org;
    proxy_cookie_domain $arg_from $arg_to;
    proxy_cookie_path /p/ /q/;
    proxy_cookie_path ~^/re/(.*)$ /R/$1;
    proxy_cookie_path $arg_pf $arg_pt;'''


COOKIES = [
    ('a=1; Domain=example.com; Path=/p/x', 'a=1; Domain=target.org; Path=/q/x'),
    ('a=1; Domain=.EXAMPLE.com', 'a=1; Domain=.target.org'),
    ('a=1; domain=other.com', 'a=1; domain=dot.org'),
    ('a=1; Domain=www.example.net; Path=/re/deep/er', 'a=1; Domain=www.local; Path=/R/deep/er'),
    ('a=1; Domain=nomatch.org; Path=/nomatch/', 'a=1; Domain=nomatch.org; Path=/nomatch/'),
    ('a=1; PATH=/p/; Secure; HttpOnly', 'a=1; PATH=/q/; Secure; HttpOnly'),
    ('a=1; Secure; Max-Age=5; Domainx=example.com; Pathy=/p/', 'a=1; Secure; Max-Age=5; Domainx=example.com; Pathy=/p/'),
    ('a=1', 'a=1'),
    ('b=2; Domain=var.org; Path=/v/1', 'b=2; Domain=new.org; Path=/w/1'),
    ('x=1; Domain=a.org; Path=/s', None),
]
COOKIE_MAP = 'map $arg_k $ck { %s }' % ' '.join('%d "%s";' % (i, c[0]) for i, c in enumerate(COOKIES))


@pytest.mark.parametrize('k', range(8))
def test_cookie_rewrites(server, k):
    srv = front(server, COOKIE_RULES)
    r = srv.get('/c?k=%d' % k)
    assert r.status == 200, r
    assert r.header('Set-Cookie') == COOKIES[k][1]


def test_cookie_rules_with_variables(server):
    srv = front(server, COOKIE_RULES)
    r = srv.get('/c?from=var.org&to=new.org&pf=/v/&pt=/w/&k=8')
    assert r.header('Set-Cookie') == COOKIES[8][1]


def test_cookie_path_only_and_domain_only(server):
    srv = server(simple('''
        location /p { proxy_pass http://127.0.0.1:{port2}/c; proxy_cookie_path / /pre/; }
        location /d { proxy_pass http://127.0.0.1:{port2}/c; proxy_cookie_domain a.org b.org; }''',
                        http_extra=BACKEND % COOKIE_MAP))
    assert srv.get('/p?k=9').header('Set-Cookie') == 'x=1; Domain=a.org; Path=/pre/s'
    assert srv.get('/d?k=9').header('Set-Cookie') == 'x=1; Domain=b.org; Path=/s'


@pytest.mark.parametrize('rules,sent,want', [
    # the default: proxy_pass's URL becomes the location's prefix
    ('', 'http://127.0.0.1:{port2}/x/y', '/x/y'),
    ('proxy_redirect http://127.0.0.1:{port2}/ /z/;', 'http://127.0.0.1:{port2}/x/y', '/z/x/y'),
    ('proxy_redirect ~*^HTTP://([^/]+)/up/(.*)$ /down/$2;', 'http://h/up/a/b', '/down/a/b'),
    ('proxy_redirect ~^http://([^/]+)/up/(.*)$ /down/$2;', 'HTTP://h/up/a/b', 'HTTP://h/up/a/b'),
    ('proxy_redirect $scheme://$arg_h/ /v/;', 'http://hh/q', '/v/q'),
    ('proxy_redirect http://a/ /b/; proxy_redirect http://c/ /d/;', 'http://c/e', '/d/e'),
])
def test_location_rewrites(server, prefix, rules, sent, want):
    # a relative Location is made absolute with the request's Host (absolute_redirect on), as nginx does
    sent, want = prefix.render(sent), prefix.render(want)
    if want.startswith('/'):
        want = 'http://localhost:%d%s' % (prefix.port, want)
    srv = front(server, rules)
    r = srv.get('/l?h=hh&l=' + urllib.parse.quote(sent, safe=':/'))
    assert r.status == 302
    assert r.header('Location') == want


@pytest.mark.parametrize('k,want', [
    (1, '5; url=/b/x'),
    (2, '5;URL=/b/x'),
    (3, '5; url=http://other/x'),
    (4, '5'),
])
def test_refresh_rewrites(server, k, want):
    srv = front(server, 'proxy_redirect http://a/ /b/;')
    r = srv.get('/r?k=%d' % k)
    assert r.status == 200
    assert r.header('Refresh') == want
