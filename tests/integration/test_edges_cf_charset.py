"""charset beyond test_charset*.py: charsets named by variables that no charset_map knows (the same name on both
sides only names it, different ones are "no charset_map" errors), a proxied body with a Content-Encoding is not
recoded, 301/302 responses get no charset. nginx's ngx_http_charset_module; these run against nginx too."""
import pytest

from conftest import simple

MAP = 'charset_map koi8-r windows-1251 { C1 E1; C2 E2; }'


@pytest.mark.parametrize('args,ct,logged', [
    ('?d=foo&s=foo', 'text/plain; charset=foo', False),
    ('?d=foo&s=koi8-r', 'text/plain', True),
    ('?d=windows-1251&s=bar', 'text/plain', True),
    ('?d=windows-1251&s=koi8-r', 'text/plain; charset=windows-1251', False),
])
def test_charsets_from_variables(server, args, ct, logged):
    srv = server(simple('''
        root {html};
        location / { charset $arg_d; source_charset $arg_s; charset_types text/plain; }''', http_extra=MAP),
        files={'html/a.txt': b'\xc1\xc2'})
    r = srv.get('/a.txt' + args)
    assert r.status == 200 and r.header('Content-Type') == ct
    assert r.body == (b'\xe1\xe2' if ct.endswith('windows-1251') else b'\xc1\xc2')
    assert ('no "charset_map" between the charsets' in srv.error_log()) == logged


def test_encoded_proxied_body_is_not_recoded(server):
    srv = server(simple('''
        location / { charset windows-1251; source_charset koi8-r; charset_types text/plain;
                     proxy_pass http://127.0.0.1:{port2}; }''', http_extra=MAP + '''
    server { listen 127.0.0.1:{port2}; default_type text/plain;
             location /enc { add_header Content-Encoding x-custom; return 200 "\\xc1"; }
             location /plain { return 200 "\\xc1"; } }'''))
    r = srv.get('/enc')
    assert r.header('Content-Encoding') == 'x-custom' and r.header('Content-Type') == 'text/plain'
    r = srv.get('/plain')
    assert r.header('Content-Type') == 'text/plain; charset=windows-1251'


@pytest.mark.parametrize('code', [301, 302, 307])
def test_redirects_get_no_charset(server, code):
    srv = server(simple('''
        location / { charset utf-8; return %d /x; }''' % code))
    r = srv.get('/')
    assert r.status == code
    assert r.header('Content-Type') == ('text/html' if code in (301, 302) else 'text/html; charset=utf-8')
