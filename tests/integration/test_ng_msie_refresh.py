"""msie_refresh (https://nginx.org/en/docs/http/ngx_http_core_module.html#msie_refresh): for MSIE clients a
301/302 redirect becomes a 200 page with a <meta http-equiv="Refresh"> to the location (escaped), without a
Location header; error_page's redirects refresh whatever their code; other browsers get the redirect."""
from conftest import simple

MSIE = 'Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1)'

CONF = simple('''
        msie_refresh on;
        location / { return 301 text; }
        location /space { return 302 "sp ace\\"'%"; }
        location /error_page { error_page 404 text; return 404; }
        location /error_page301 { error_page 404 =301 text; return 404; }
        location /error_page307 { error_page 404 =307 text; return 404; }
        location /off { msie_refresh off; return 301 text; }
        location /r307 { return 307 text; }
''')


def test_msie_gets_a_refresh_page(server):
    s = server(CONF)
    r = s.get('/', headers={'User-Agent': MSIE})
    assert r.status == 200, r
    assert r.header('Location') is None, r
    assert r.header('Content-Type').startswith('text/html'), r
    assert r.body == b'<html><head><meta http-equiv="Refresh" content="0; URL=text"></head><body></body></html>\r\n'


def test_refresh_url_is_escaped(server):
    s = server(CONF)
    r = s.get('/space', headers={'User-Agent': MSIE})
    assert r.status == 200, r
    assert b'URL=sp%20ace%22%27%"' in r.body, r.body


def test_error_page_redirects_refresh(server):
    s = server(CONF)
    r = s.get('/error_page', headers={'User-Agent': MSIE})
    assert r.status == 200 and b'URL=text"' in r.body, r
    r = s.get('/error_page301', headers={'User-Agent': MSIE})
    assert r.status == 200 and b'URL=text"' in r.body, r
    r = s.get('/error_page307', headers={'User-Agent': MSIE})
    assert r.status == 200 and b'URL=text"' in r.body, r


def test_other_browsers_and_off_get_the_redirect(server):
    s = server(CONF)
    r = s.get('/', headers={'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0'})
    assert r.status == 301 and r.header('Location').endswith('text'), r
    r = s.get('/', headers={'User-Agent': 'Opera/9.80 (MSIE 6.0; Windows)'})
    assert r.status == 301, r
    r = s.get('/r307', headers={'User-Agent': MSIE})
    assert r.status == 307, r
    r = s.get('/off', headers={'User-Agent': MSIE})
    assert r.status == 301 and 'Refresh' not in r.body.decode(), r
