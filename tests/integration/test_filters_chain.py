"""The response pipeline as filters and a chain of content handlers (nginx's model): conditional requests and
ranges are decided after the handler, on whatever it answered, so they apply to index redirects, gzip_static
variants and error_page as in nginx. Every test also runs against nginx (HY_BIN=/usr/sbin/nginx)."""
import gzip
import os

from conftest import simple

DATA = bytes(range(256)) * 4  # 1024 bytes
MTIME = 1600000000


def test_range_416_goes_through_error_page(server):
    s = server(simple('root {html}; error_page 416 /416.html;'),
                 files={'html/r.bin': DATA, 'html/416.html': 'custom 416\n'})
    r = s.get('/r.bin', headers={'Range': 'bytes=5000-'})
    assert r.status == 416 and r.body == b'custom 416\n'


def test_412_goes_through_error_page(server):
    s = server(simple('root {html}; error_page 412 /412.html;'),
                 files={'html/r.bin': DATA, 'html/412.html': 'custom 412\n'})
    r = s.get('/r.bin', headers={'If-Match': '"nope"'})
    assert r.status == 412 and r.body == b'custom 412\n'


def test_range_and_304_after_an_index_redirect(server):
    s = server(simple('root {html};'), files={'html/d/index.html': 'abcdefghij'})
    r = s.get('/d/', headers={'Range': 'bytes=2-4'})
    assert r.status == 206 and r.body == b'cde' and r.header('Content-Range') == 'bytes 2-4/10'
    etag = s.get('/d/').header('ETag')
    r = s.get('/d/', headers={'If-None-Match': etag})
    assert r.status == 304 and r.body == b''


def test_head_range(server):
    s = server(simple('root {html};'), files={'html/r.bin': DATA})
    r = s.head('/r.bin', headers={'Range': 'bytes=10-19'})
    assert r.status == 206 and r.header('Content-Length') == '10' and r.body == b''
    assert r.header('Content-Range') == 'bytes 10-19/1024'


def test_gzip_static_variant_gets_conditionals(server):
    gz = gzip.compress(b'hello ' * 100)
    s = server(simple('root {html}; gzip_static on;'), files={'html/a.html': 'hello ' * 100, 'html/a.html.gz': gz})
    os.utime(os.path.join(s.html, 'a.html.gz'), (MTIME, MTIME))
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip' and r.body == gz
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip', 'If-None-Match': r.header('ETag')})
    assert r.status == 304 and r.body == b''
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip', 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT'})
    assert r.status == 412


def test_directory_without_index_is_forbidden_and_logged(server):
    s = server(simple('root {html};'), files={'html/d/x.txt': 'x'})
    r = s.get('/d/')
    assert r.status == 403
    assert 'directory index of "%s/d/" is forbidden' % s.html in s.error_log()
    r = s.get('/d/', method='POST')  # nginx: the index module looks, finds none, and the chain ends in 403
    assert r.status == 403
    r = s.get('/d/', method='DELETE')  # static answers 405 before it declines a directory URI
    assert r.status == 405


def test_autoindex_is_get_and_head_only(server):
    s = server(simple('root {html}; autoindex on;'), files={'html/d/x.txt': 'x'})
    assert b'x.txt' in s.get('/d/').body
    assert s.get('/d/', method='POST').status == 403  # autoindex declines POST, static declines '/'


def test_if_match_without_etag(server):
    """nginx's not_modified filter: If-Match "*" holds for any current representation; a tag needs an ETag."""
    s = server(simple('root {html}; etag off;'), files={'html/r.bin': DATA})
    r = s.get('/r.bin', headers={'If-Match': '*'})
    assert r.status == 200 and r.header('ETag') is None
    assert s.get('/r.bin', headers={'If-Match': '"x"'}).status == 412


def test_416_headers_as_nginx(server):
    """The 416 replaces a 200 whose headers the filters before range already set: nginx keeps them and runs the
    header filters again for the error response, so an `always` header appears twice (nginx 1.22 does this)."""
    s = server(simple('root {html}; add_header X-A 1 always; add_header X-B 2;'), files={'html/r.bin': DATA})
    r = s.get('/r.bin', headers={'Range': 'bytes=5000-'})
    assert r.status == 416 and r.header('Content-Range') == 'bytes */1024'
    assert r.header_all('X-A') == ['1', '1'] and r.header_all('X-B') == ['2']
