"""brotli and zstd (hayate only: nginx 1.22 has neither): negotiation with gzip, directives, *_static."""
import gzip
import os

import brotli
import pytest
import zstandard

from conftest import simple
from test_gzip_filter import text

pytestmark = pytest.mark.hayate_only


def unzstd(b):
    return zstandard.ZstdDecompressor().decompressobj().decompress(b)


DECODE = {'gzip': gzip.decompress, 'br': brotli.decompress, 'zstd': unzstd}


def assert_coded(r, coding, want):
    assert r.status == 200, r
    assert r.header('Content-Encoding') == coding, r
    assert r.header('Content-Length') == str(len(r.body)), r  # whole static bodies: a correct length
    assert DECODE[coding](r.body) == want


def assert_plain(r, want):
    assert r.status == 200 and r.header('Content-Encoding') is None and r.body == want, r


SIZES = [20, 249, 250, 4096, 65536, 1048576 + 17]


@pytest.fixture
def srv(server):
    files = {'html/s%d.html' % n: text(n, n) for n in SIZES}
    files.update({'html/a.txt': text(2000, 60), 'html/a.css': text(2000, 61), 'html/t.html': 'short',
                  'html/lv/a.html': text(9000, 62), 'html/gzonly/a.html': text(2000, 63),
                  'html/m/a.html': text(500, 64)})
    return server(simple('''root {html};
        location /lv/ { brotli_comp_level 11; zstd_comp_level 19; }
        location /gzonly/ { brotli off; zstd off; }
        location /m/ { brotli_min_length 1000; }''',
                         http_extra='gzip on; brotli on; zstd on; gzip_vary on; brotli_types text/plain; '
                                    'zstd_types text/css;'), files=files)


@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('coding', ['br', 'zstd', 'gzip'])
def test_sizes(srv, n, coding):
    assert_coded(srv.get('/s%d.html' % n, headers={'Accept-Encoding': coding}), coding, text(n, n))


@pytest.mark.parametrize('ae,coding', [
    ('gzip, deflate, br, zstd', 'br'),       # server preference br > zstd > gzip
    ('zstd, gzip', 'zstd'),
    ('gzip, br;q=0', 'gzip'),
    ('gzip;q=1, br;q=0.5, zstd;q=0.8', 'gzip'),  # the client's q first
    ('br;q=0.2, zstd;q=0.9', 'zstd'),
    ('*', 'br'),
    ('*, br;q=0', 'zstd'),
    ('identity', None),
])
def test_negotiation(srv, ae, coding):
    r = srv.get('/s4096.html', headers={'Accept-Encoding': ae})
    if coding:
        assert_coded(r, coding, text(4096, 4096))
        assert r.header('Vary') == 'Accept-Encoding'
        assert r.header('ETag').startswith('W/"')
    else:
        assert_plain(r, text(4096, 4096))


def test_types_per_coding(srv):
    ae = {'Accept-Encoding': 'gzip, br, zstd'}
    assert_coded(srv.get('/a.txt', headers=ae), 'br', text(2000, 60))     # only brotli_types has text/plain
    assert_coded(srv.get('/a.css', headers=ae), 'zstd', text(2000, 61))   # only zstd_types has text/css
    assert_plain(srv.get('/t.html', headers=ae), b'short')                # below every min_length


def test_levels_and_off(srv):
    ae = {'Accept-Encoding': 'gzip, br, zstd'}
    assert_coded(srv.get('/lv/a.html', headers=ae), 'br', text(9000, 62))
    assert_coded(srv.get('/lv/a.html', headers={'Accept-Encoding': 'zstd'}), 'zstd', text(9000, 62))
    assert_coded(srv.get('/gzonly/a.html', headers=ae), 'gzip', text(2000, 63))
    assert_coded(srv.get('/m/a.html', headers=ae), 'zstd', text(500, 64))  # br needs 1000 bytes here


def test_repeated_requests_same_bytes(srv):
    """The second answer comes from the cache: same bytes."""
    for coding in ('br', 'zstd', 'gzip'):
        a = srv.get('/s65536.html', headers={'Accept-Encoding': coding})
        b = srv.get('/s65536.html', headers={'Accept-Encoding': coding})
        assert a.body == b.body
        assert_coded(b, coding, text(65536, 65536))


def test_static_variants(server):
    br_bytes = brotli.compress(b'from br file')
    zst_bytes = zstandard.ZstdCompressor().compress(b'from zst file')
    gz_bytes = gzip.compress(b'from gz file')
    s = server(simple('''root {html}; gzip_static on; brotli_static on; zstd_static on;
        location /al/ { brotli_static always; gzip_static off; zstd_static off; }'''),
               files={'html/a.html': 'orig', 'html/a.html.br': br_bytes, 'html/a.html.zst': zst_bytes,
                      'html/a.html.gz': gz_bytes, 'html/b.html': 'orig b', 'html/b.html.gz': gz_bytes,
                      'html/al/a.html': 'orig', 'html/al/a.html.br': br_bytes})
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip, br, zstd'})
    assert r.header('Content-Encoding') == 'br' and r.body == br_bytes
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip, zstd'})
    assert r.header('Content-Encoding') == 'zstd' and r.body == zst_bytes
    r = s.get('/a.html', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip' and r.body == gz_bytes
    r = s.get('/b.html', headers={'Accept-Encoding': 'br, zstd, gzip'})  # only .gz exists
    assert r.header('Content-Encoding') == 'gzip' and r.body == gz_bytes
    r = s.get('/a.html')
    assert r.header('Content-Encoding') is None and r.body == b'orig'
    r = s.get('/al/a.html')
    assert r.header('Content-Encoding') == 'br' and r.body == br_bytes


def test_big_file_streamed_through_codec(server):
    """Above 8 MiB a complete body is compressed batch by batch as the connection drains (test_gzip_stream.py):
    sent chunked, without a Content-Length; not cached (max_file)."""
    data = text(9 * 1048576 + 5, 70)
    s = server(simple('root {html};', http_extra='gzip on; brotli on; brotli_comp_level 1; zstd on;'),
               files={'html/big.html': data})
    for coding in ('gzip', 'br', 'zstd'):
        r = s.get('/big.html', headers={'Accept-Encoding': coding})
        assert r.status == 200 and r.header('Content-Encoding') == coding, r
        assert r.header('Content-Length') is None and r.header('Transfer-Encoding') == 'chunked', r
        assert DECODE[coding](r.body) == data


def test_bad_levels(prefix, run_cli):
    for d in ('brotli_comp_level 12;', 'zstd_comp_level 23;', 'brotli_static maybe;', 'zstd_types;'):
        path = prefix.conf(simple('root {html};', http_extra=d))
        res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
        assert res.rc == 1 and '[emerg]' in res.err, (d, res)
