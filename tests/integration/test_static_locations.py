"""location matching, alias, named locations, server_name selection, and path traversal."""
import os

import pytest

from conftest import simple

LOC_CONF = '''http {
    default_type text/plain;
    server {
        listen 127.0.0.1:{port};
        root {html}/L_root;

        location / { root {html}/L_prefix_slash; }
        location /docs/ { root {html}/L_docs; }
        location /docs/deep/ { root {html}/L_deep; }
        location ^~ /static/ { root {html}/L_static; }
        location = /exact.txt { root {html}/L_exact; }
        location = / { root {html}/L_exact_root; index idx.txt; }
        location ~ ^/order/ { root {html}/L_order1; }
        location ~ \\.txt$ { root {html}/L_regex_txt; }
        location ~* \\.JPG$ { root {html}/L_regex_jpg; }
        location /nest/ {
            root {html}/L_nest_outer;
            location ~ \\.css$ { root {html}/L_nest_inner; }
            location /nest/sub/ { root {html}/L_nest_sub; }
        }
        location @named { root {html}/L_named; }
        location /caseless/ { root {html}/L_caseless; }
    }
}
'''


def loc_files():
    f = {}

    def put(label, path):
        f['html/%s%s' % (label, path)] = label
    put('L_exact', '/exact.txt')
    put('L_regex_txt', '/exact.txt/')   # never used; makes sure "/exact.txt/" is not the exact match
    put('L_regex_txt', '/docs/a.txt')
    put('L_docs', '/docs/a.html')
    put('L_deep', '/docs/deep/a.html')
    put('L_static', '/static/a.txt')
    put('L_regex_jpg', '/pics/a.JPG')
    put('L_regex_jpg', '/pics/b.jpg')
    put('L_prefix_slash', '/other/a.html')
    put('L_order1', '/order/a.txt')
    put('L_regex_txt', '/order2/a.txt')
    put('L_nest_inner', '/nest/a.css')
    put('L_nest_outer', '/nest/a.html')
    put('L_nest_sub', '/nest/sub/a.html')
    put('L_prefix_slash', '/exact.txtx')
    put('L_prefix_slash', '/@named')
    put('L_named', '/@named')
    put('L_exact_root', '/idx.txt')
    put('L_regex_txt', '/idx.txt')
    put('L_prefix_slash', '/CASELESS/a.html')
    put('L_caseless', '/caseless/a.html')
    del f['html/L_regex_txt/exact.txt/']
    return f


@pytest.fixture(scope='function')
def loc(server):
    return server(LOC_CONF, files=loc_files(), full=False)


@pytest.mark.parametrize('path,label', [
    ('/exact.txt', 'L_exact'),              # = beats regex
    ('/docs/a.txt', 'L_regex_txt'),         # regex beats prefix
    ('/docs/a.html', 'L_docs'),             # prefix
    ('/docs/deep/a.html', 'L_deep'),        # longest prefix, not first
    ('/static/a.txt', 'L_static'),          # ^~ stops regex search
    ('/pics/a.JPG', 'L_regex_jpg'),         # ~* case-insensitive
    ('/pics/b.jpg', 'L_regex_jpg'),
    ('/other/a.html', 'L_prefix_slash'),
    ('/order/a.txt', 'L_order1'),           # first matching regex in config order
    ('/order2/a.txt', 'L_regex_txt'),
    ('/nest/a.css', 'L_nest_inner'),        # nested regex
    ('/nest/a.html', 'L_nest_outer'),
    ('/nest/sub/a.html', 'L_nest_sub'),     # nested prefix
    ('/exact.txtx', 'L_prefix_slash'),      # = is exact only (and no .txt suffix here)
    ('/CASELESS/a.html', 'L_prefix_slash'),  # prefix locations are case-sensitive on Linux
    ('/caseless/a.html', 'L_caseless'),
])
def test_location_match(loc, path, label):
    r = loc.get(path)
    assert r.status == 200, (path, r)
    assert r.body.decode() == label


def test_exact_root_location(loc):
    # "location = /" gets "/" and its index lookup is an internal redirect to /idx.txt, which then goes
    # through matching again and ends in the "\.txt$" regex location
    r = loc.get('/')
    assert r.status == 200
    assert r.body == b'L_regex_txt'


def test_named_location_not_reachable(loc):
    r = loc.get('/@named')
    assert r.body != b'L_named'
    assert r.status == 200 and r.body == b'L_prefix_slash'


def test_regex_captures_do_not_break_prefix(server, proto):
    s = server(simple('root {html};\n        location ~ ^/(a|b)/ { root {html}/re; }'),
               files={'html/re/a/x': 'RE', 'html/c/x': 'PLAIN'})
    assert s.get('/a/x').body == b'RE'
    assert s.get('/c/x').body == b'PLAIN'


def test_location_percent_decoded(loc):
    # matching is done on the decoded, normalised URI
    assert loc.get('/%64ocs/a.html').body == b'L_docs'
    assert loc.get('/x/../docs/deep/a.html').body == b'L_deep'
    assert loc.get('//docs//deep//a.html').body == b'L_deep'


# ---------------------------------------------------------------- alias

def test_alias(server, proto):
    body = simple('root {html};\n'
                  '        location /al/ { alias {tmp}/aliased/; }\n'
                  '        location = /one { alias {tmp}/aliased/file.txt; }\n'
                  '        location /ald/ { alias {tmp}/aliased/; autoindex on; }')
    s = server(body, files={'aliased/file.txt': 'aliased', 'aliased/sub/index.html': 'sub index',
                            'html/al/file.txt': 'root, not alias'})
    assert s.get('/al/file.txt').body == b'aliased'
    assert s.get('/al/sub/').body == b'sub index'
    assert s.get('/one').body == b'aliased'
    r = s.get('/al/sub')
    assert r.status == 301 and r.header('Location').endswith(':%d/al/sub/' % s.port)
    assert s.get('/al/missing').status == 404
    assert b'href="file.txt"' in s.get('/ald/').body


def test_alias_regex_location_without_capture_is_prefix_like(server, proto):
    # alias inside a prefix location nested in another
    body = simple('root {html};\n        location /outer/ {\n            location /outer/in/ { alias {tmp}/x/; }\n        }')
    s = server(body, files={'x/f': 'nested alias'})
    assert s.get('/outer/in/f').body == b'nested alias'


# ---------------------------------------------------------------- traversal

@pytest.fixture
def trav(server):
    return server(simple('root {html}/site;\n        location /al/ { alias {html}/site/aliased/; }'),
                  files={'html/site/ok.txt': 'ok', 'html/secret.txt': 'TOP-SECRET',
                         'html/site/aliased/in.txt': 'in', 'html/site/sub/x': 'x'})


@pytest.mark.parametrize('path', [
    '/../secret.txt', '/%2e%2e/secret.txt', '/%2E%2E/secret.txt', '/sub/../../secret.txt',
    '/sub/%2e%2e/%2e%2e/secret.txt', '/..%2fsecret.txt', '/%2e%2e%2fsecret.txt', '/sub/..%2f..%2fsecret.txt',
    '/..\\secret.txt', '/.%2e/secret.txt', '/%2e./secret.txt', '/al/../../secret.txt', '/al/..%2f..%2fsecret.txt',
    '/al/%2e%2e/%2e%2e/secret.txt', '/./../secret.txt', '/sub/./../../secret.txt', '/%252e%252e/secret.txt',
    '/..', '/sub/../..', '/%00/../secret.txt', '/ok.txt%00/../../secret.txt',
])
def test_traversal_never_escapes_root(trav, path):
    r = trav.raw(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    assert b'TOP-SECRET' not in r.body
    # nginx 1.22's answers, path by path: a ".." above the root (decoded or not) is 400; what stays a file
    # name ("..\\secret.txt", a double-encoded "%2e") is looked up and not found
    want = 404 if path in ('/..\\secret.txt', '/%252e%252e/secret.txt') else 400
    assert r.status == want, r


def test_traversal_absolute_form(trav):
    r = trav.raw(b'GET http://a/../secret.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    assert b'TOP-SECRET' not in r.body and r.status != 200


def test_dotdot_inside_root_ok(trav):
    assert trav.get('/sub/../ok.txt').body == b'ok'
    assert trav.get('/sub/%2e%2e/ok.txt').body == b'ok'
    assert trav.get('/al/../ok.txt').body == b'ok'


# ---------------------------------------------------------------- server_name

SN_CONF = '''http {
    default_type text/plain;
    server { listen 127.0.0.1:{port}; server_name first.test; root {html}/first; }
    server { listen 127.0.0.1:{port} default_server; server_name _; root {html}/default; }
    server { listen 127.0.0.1:{port}; server_name exact.test www.exact.test; root {html}/exact; }
    server { listen 127.0.0.1:{port}; server_name *.wild.test; root {html}/wild; }
    server { listen 127.0.0.1:{port}; server_name .dot.test; root {html}/dot; }
    server { listen 127.0.0.1:{port}; server_name mail.*; root {html}/tail; }
    server { listen 127.0.0.1:{port}; server_name ~^www\\d+\\.re\\.test$; root {html}/regex; }
    server { listen 127.0.0.1:{port}; server_name a.wild.test; root {html}/exact_in_wild; }
    server { listen 127.0.0.1:{port2}; server_name other.test; root {html}/port2_first; }
    server { listen 127.0.0.1:{port2}; server_name exact.test; root {html}/port2_exact; }
}
'''


@pytest.fixture
def sn(server):
    labels = ['first', 'default', 'exact', 'wild', 'dot', 'tail', 'regex', 'exact_in_wild', 'port2_first',
              'port2_exact']
    return server(SN_CONF, files={'html/%s/who' % l: l for l in labels})


@pytest.mark.parametrize('host,label', [
    ('exact.test', 'exact'),
    ('www.exact.test', 'exact'),
    ('EXACT.Test', 'exact'),
    ('exact.test.', 'exact'),
    ('exact.test:8080', 'exact'),
    ('first.test', 'first'),
    ('x.wild.test', 'wild'),
    ('y.x.wild.test', 'wild'),
    ('a.wild.test', 'exact_in_wild'),   # exact beats wildcard
    ('wild.test', 'default'),
    ('dot.test', 'dot'),
    ('sub.dot.test', 'dot'),
    ('mail.example.org', 'tail'),
    ('www12.re.test', 'regex'),
    ('wwwx.re.test', 'default'),
    ('unknown.test', 'default'),
    ('127.0.0.1', 'default'),
])
def test_server_name(sn, host, label):
    r = sn.get('/who', host=host)
    assert r.status == 200, (host, r)
    assert r.body.decode() == label, host


def test_server_name_no_host_http10(sn):
    r = sn.raw(b'GET /who HTTP/1.0\r\n\r\n')
    assert r.body == b'default'


def test_first_server_is_default_without_default_server(sn):
    from conftest import wait_port
    assert wait_port(sn.port2, sn.proc)
    assert sn.get('/who', host='nomatch', port=sn.port2).body == b'port2_first'
    assert sn.get('/who', host='exact.test', port=sn.port2).body == b'port2_exact'


def test_server_name_priority_wildcard_over_regex(server, proto):
    body = '''http {
    server { listen 127.0.0.1:{port}; server_name ~^www\\.; root {html}/regex; }
    server { listen 127.0.0.1:{port}; server_name www.*; root {html}/tail; }
    server { listen 127.0.0.1:{port}; server_name *.pri.test; root {html}/head; }
}
'''
    s = server(body, files={'html/regex/who': 'regex', 'html/tail/who': 'tail', 'html/head/who': 'head'})
    assert s.get('/who', host='www.pri.test').body == b'head'   # leading wildcard before trailing
    assert s.get('/who', host='www.other').body == b'tail'      # trailing wildcard before regex
