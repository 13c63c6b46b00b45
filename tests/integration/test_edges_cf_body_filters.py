"""Body filters (gzip, sub_filter, charset, gunzip, SSI) on bodies that come as file segments: a static file a
filter reads whole, SSI parts that are static files inside a streamed page, a precompressed file gunzipped for a
client without gzip; gzip_disable without a User-Agent, gzip_proxied no_last_modified on proxied responses."""
import gzip
import zlib

import pytest

from conftest import simple

BIG = ''.join('line %06d of the big file\n' % i for i in range(20000))  # ~540 KB


def gunz(data):
    return zlib.decompress(data, 16 + zlib.MAX_WBITS)


def test_gzip_page_with_static_parts(server):
    srv = server(simple('''
        root {html};
        gzip on; gzip_min_length 1; gzip_types text/plain;
        location / { ssi on; ssi_types text/plain; }''',), files={
        'html/page.txt': 'A<!--# include virtual="/big.txt" -->B<!--# include virtual="/big.txt" -->C',
        'html/big.txt': BIG})
    r = srv.get('/page.txt', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip'
    assert gunz(r.body).decode() == 'A' + BIG + 'B' + BIG + 'C'


def test_sub_filter_and_charset_on_a_big_file(server):
    srv = server(simple('''
        root {html};
        location /s/ { sub_filter 'of the' 'OF THE'; sub_filter_once off; sub_filter_types text/plain; }
        location /c/ { charset windows-1251; source_charset koi8-r; charset_types text/plain; }''',
        http_extra='charset_map koi8-r windows-1251 { C1 E1; C2 E2; }'), files={
        'html/s/big.txt': BIG, 'html/c/big.txt': BIG.encode() + b'\xc1\xc2'})
    r = srv.get('/s/big.txt')
    assert r.status == 200 and r.body.decode() == BIG.replace('of the', 'OF THE')
    r = srv.get('/c/big.txt')
    assert r.status == 200 and r.body[:len(BIG)] == BIG.encode()
    assert r.body[len(BIG):] == b'\xe1\xe2'  # koi8-r "аб" in windows-1251
    assert r.header('Content-Type') == 'text/plain; charset=windows-1251'


def test_gunzip_of_a_big_precompressed_file(server):
    srv = server(simple('''
        root {html};
        location / { gzip_static always; gunzip on; }'''), files={'html/big.txt.gz': gzip.compress(BIG.encode())})
    r = srv.get('/big.txt')
    assert r.status == 200 and r.header('Content-Encoding') is None
    assert r.body.decode() == BIG
    r = srv.get('/big.txt', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip' and gunz(r.body).decode() == BIG


@pytest.mark.parametrize('ua,compressed', [(None, True), ('Mozilla/4.0 (compatible; MSIE 6.0)', False),
                                           ('OldBot/1', False), ('NewBot/2', True)])
def test_gzip_disable(server, ua, compressed):
    srv = server(simple('''
        root {html};
        gzip on; gzip_min_length 1; gzip_types text/plain; gzip_disable msie6 "^OldBot";'''),
        files={'html/a.txt': 'x' * 2000})
    h = {'Accept-Encoding': 'gzip'}
    if ua:
        h['User-Agent'] = ua
    r = srv.get('/a.txt', headers=h)
    assert (r.header('Content-Encoding') == 'gzip') == compressed


@pytest.mark.parametrize('path,compressed', [('/lm', False), ('/nolm', True)])
def test_gzip_proxied_no_last_modified(server, path, compressed):
    srv = server(simple('''
        gzip on; gzip_min_length 1; gzip_types text/plain; gzip_proxied no_last_modified;
        location / { proxy_pass http://127.0.0.1:{port2}; }''', http_extra='''
    server { listen 127.0.0.1:{port2}; default_type text/plain;
             location /lm { add_header Last-Modified "Mon, 01 Jan 2024 00:00:00 GMT"; return 200 "%s"; }
             location /nolm { return 200 "%s"; } }''' % ('y' * 500, 'y' * 500)))
    r = srv.get(path, headers={'Accept-Encoding': 'gzip', 'Via': '1.1 proxy'})
    assert r.status == 200
    assert (r.header('Content-Encoding') == 'gzip') == compressed
    assert (gunz(r.body) if compressed else r.body) == b'y' * 500
