"""`return` inside an error_page target (https://nginx.org/en/docs/http/ngx_http_rewrite_module.html#return,
https://nginx.org/en/docs/http/ngx_http_core_module.html#error_page): the response goes out with the error's
code, so a `return 204` reached from `error_page 405` answers 405 with a (zero) Content-Length; and a
redirect's Location set before the error_page redirect stays on the response."""
from conftest import simple

CONF = simple('''
        location /return204 { return 204; }
        location /return200text { return 200 "text"; }
        location /error405return204 { error_page 405 /return204; return 405; }
        location /error302return200text { error_page 302 /return200text; return 302 "text"; }
        location /plain204 { return 204; }
''')


def test_return_204_under_error_page_keeps_the_error_code_and_a_length(server):
    s = server(CONF)
    r = s.get('/error405return204')
    assert r.status == 405, r
    assert r.header('Content-Length') == '0', r
    r = s.get('/plain204')
    assert r.status == 204 and r.header('Content-Length') is None, r


def test_location_survives_the_error_page_redirect(server):
    s = server(CONF)
    r = s.get('/error302return200text')
    assert r.status == 302, r
    assert r.header('Location').endswith('text'), r
    assert r.body == b'text', r
