"""gzip_static (ngx_http_gzip_static_module): file.gz served in place of file, with nginx's rules."""
import email.utils
import gzip
import os

import pytest

from conftest import simple
from test_gzip_filter import text, assert_gzipped, assert_plain

AE = {'Accept-Encoding': 'gzip'}
ORIG = text(3000, 50)
GZ = gzip.compress(text(3000, 51), mtime=0)   # deliberately not the gzip of ORIG: shows which file was sent


def etag_of(path):
    st = os.stat(path)
    return '"%x-%x"' % (int(st.st_mtime), st.st_size)


@pytest.fixture
def srv(server):
    files = {
        'html/a.html': ORIG, 'html/a.html.gz': GZ,
        'html/b.html': ORIG,                          # no .gz
        'html/only.html.gz': GZ,                      # no original
        'html/dir.html': ORIG, 'html/dir.html.gz/x': 'x',  # the .gz is a directory
        'html/t.txt': ORIG, 'html/t.txt.gz': GZ,      # type not in gzip_types: gzip_static does not care
        'html/al/a.html': ORIG, 'html/al/a.html.gz': GZ,
        'html/vary/a.html': ORIG, 'html/vary/a.html.gz': GZ, 'html/vary/b.html': ORIG,
        'html/both/a.html': ORIG, 'html/both/a.html.gz': GZ,
    }
    return server(simple('''root {html};
        gzip_static on;
        location /al/ { gzip_static always; }
        location /vary/ { gzip_vary on; }
        location /both/ { gzip on; }''', http_extra=''), files=files)


def test_serves_gz(srv):
    r = srv.get('/a.html', headers=AE)
    assert r.status == 200
    assert r.header('Content-Encoding') == 'gzip'
    assert r.body == GZ  # the file's bytes, as is
    assert r.header('Content-Length') == str(len(GZ))
    assert r.header('Content-Type') == 'text/html'
    gz = os.path.join(srv.html, 'a.html.gz')
    assert r.header('ETag') == etag_of(gz)  # the .gz file's own, strong
    assert r.header('Last-Modified') == email.utils.formatdate(int(os.stat(gz).st_mtime), usegmt=True)
    assert r.header('Accept-Ranges') is None  # nginx 1.22's gzip_static does not allow ranges
    assert r.header('Vary') is None  # gzip_vary off


def test_client_without_gzip_gets_original(srv):
    assert_plain(srv.get('/a.html'), ORIG)
    assert_plain(srv.get('/a.html', headers={'Accept-Encoding': 'gzip;q=0'}), ORIG)
    assert srv.get('/only.html').status == 404


def test_no_gz_serves_original(srv):
    assert_plain(srv.get('/b.html', headers=AE), ORIG)


def test_gz_without_original(srv):
    r = srv.get('/only.html', headers=AE)
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip' and r.body == GZ


def test_gz_directory_ignored(srv):
    assert_plain(srv.get('/dir.html', headers=AE), ORIG)


def test_any_type(srv):
    r = srv.get('/t.txt', headers=AE)
    assert r.header('Content-Encoding') == 'gzip' and r.body == GZ


def test_always(srv):
    for h in ({}, AE, {'Accept-Encoding': 'deflate'}):
        r = srv.get('/al/a.html', headers=h)
        assert r.status == 200 and r.header('Content-Encoding') == 'gzip' and r.body == GZ, h
        assert r.header('Vary') is None


def test_vary(srv):
    r = srv.get('/vary/a.html', headers=AE)
    assert r.body == GZ and r.header('Vary') == 'Accept-Encoding'
    # the .gz exists: the original is sent with Vary too
    r = srv.get('/vary/a.html')
    assert_plain(r, ORIG)
    assert r.header('Vary') == 'Accept-Encoding'
    # no .gz and no gzip filter: no Vary
    r = srv.get('/vary/b.html', headers=AE)
    assert_plain(r, ORIG)
    assert r.header('Vary') is None


def test_static_wins_over_filter(srv):
    r = srv.get('/both/a.html', headers=AE)
    assert r.header('Content-Encoding') == 'gzip'
    assert r.body == GZ  # not compressed again, not the filter's output
    assert r.header('ETag') == etag_of(os.path.join(srv.html, 'both/a.html.gz'))


def test_head(srv):
    r = srv.head('/a.html', headers=AE)
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip'
    assert r.header('Content-Length') == str(len(GZ))


def test_range_on_gz_ignored(srv):
    r = srv.get('/a.html', headers={'Accept-Encoding': 'gzip', 'Range': 'bytes=0-9'})
    assert r.status == 200
    assert r.body == GZ
    assert r.header('Content-Encoding') == 'gzip'


def test_conditional(srv):
    gz = os.path.join(srv.html, 'a.html.gz')
    r = srv.get('/a.html', headers={'Accept-Encoding': 'gzip', 'If-None-Match': etag_of(gz)})
    assert r.status == 304


def test_post_not_static(srv):
    r = srv.get('/a.html', headers=AE, method='POST')
    assert r.status == 405


def test_index_then_gz(server):
    s = server(simple('root {html}; gzip_static on;'),
               files={'html/index.html': ORIG, 'html/index.html.gz': GZ})
    r = s.get('/', headers=AE)
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip' and r.body == GZ


def test_gz_replaced(server):
    s = server(simple('root {html}; gzip_static on;'), files={'html/a.html': ORIG, 'html/a.html.gz': GZ})
    assert s.get('/a.html', headers=AE).body == GZ
    gz2 = gzip.compress(text(3000, 52), mtime=0)
    s.write('html/a.html.gz', gz2)
    r = s.get('/a.html', headers=AE)
    assert r.body == gz2
    os.unlink(os.path.join(s.html, 'a.html.gz'))
    assert_plain(s.get('/a.html', headers=AE), ORIG)


def test_filter_and_static_with_gzip_vary_and_filter(server):
    s = server(simple('root {html}; gzip on; gzip_static on; gzip_vary on;'),
               files={'html/a.html': ORIG, 'html/b.html': ORIG, 'html/b.html.gz': GZ})
    r = s.get('/a.html', headers=AE)
    assert_gzipped(r, ORIG)  # no .gz: the filter compresses
    assert r.header_all('Vary') == ['Accept-Encoding']
    r = s.get('/b.html', headers=AE)
    assert r.body == GZ
    assert r.header_all('Vary') == ['Accept-Encoding']
