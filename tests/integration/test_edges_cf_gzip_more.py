"""gzip_static and gzip_proxied details: a POST to a file that has a .gz variant is not answered by gzip_static
(the static handler refuses the method), gzip_proxied's Cache-Control tokens found among others."""
import zlib

import pytest

from conftest import simple


def test_post_is_not_served_by_gzip_static(server):
    srv = server(simple('location / { root {html}; gzip_static on; }'),
                 files={'html/a.txt': 'plain', 'html/a.txt.gz': zlib.compress(b'x')})
    r = srv.get('/a.txt', method='POST', body='b', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 405
    r = srv.get('/a.txt', method='HEAD', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip'


@pytest.mark.parametrize('cc,compressed', [
    ('max-age=0, private', True), ('private,max-age=0', True), ('no-cachex', False), ('xno-cache', False),
    ('public, no-cache', True), ('public', False),
])
def test_gzip_proxied_cache_control_tokens(server, cc, compressed):
    srv = server(simple('''
        gzip on; gzip_min_length 1; gzip_types text/plain; gzip_proxied no-cache private;
        location / { proxy_pass http://127.0.0.1:{port2}; }''', http_extra='''
    server { listen 127.0.0.1:{port2}; default_type text/plain;
             location / { add_header Cache-Control "%s"; return 200 "%s"; } }''' % (cc, 'z' * 300)))
    r = srv.get('/', headers={'Accept-Encoding': 'gzip', 'Via': '1.1 p'})
    assert (r.header('Content-Encoding') == 'gzip') == compressed
