"""The gzip filter (ngx_http_gzip_module): what is compressed, the headers, each directive's effect.
Bodies are decompressed with Python's gzip and compared to the file bytes. Where nginx and hayate may
differ by design, the test accepts both: a compressed response has no Content-Length (nginx) or a correct
one (hayate, when the whole body is known)."""
import gzip
import os
import random
import re
import time
import zlib

import pytest

from conftest import IS_NGINX, simple
from helpers.http1 import build_request

WORDS = ('static file server compression gzip brotli zstd request response header body chunk cache worker '
         'location alpha beta gamma delta <div> </div> <p class="x"> lorem ipsum dolor sit amet').split()


def text(n, seed=1):
    """n bytes of compressible pseudo-random text."""
    rnd = random.Random(seed)
    out = []
    size = 0
    while size < n:
        w = rnd.choice(WORDS) + (' ' if rnd.random() < 0.9 else '\n')
        out.append(w)
        size += len(w)
    return ''.join(out).encode()[:n]


def gunzip(body):
    return gzip.decompress(body)


def assert_gzipped(r, want):
    assert r.status == 200, r
    assert r.header('Content-Encoding') == 'gzip', r
    cl = r.header('Content-Length')
    assert cl is None or int(cl) == len(r.body), r
    assert r.body[:2] == b'\x1f\x8b'
    assert gunzip(r.body) == want


def assert_plain(r, want):
    assert r.status == 200, r
    assert r.header('Content-Encoding') is None, r
    assert r.body == want


AE = {'Accept-Encoding': 'gzip'}
HTTP = 'gzip on;'

SIZES = [0, 1, 19, 20, 249, 250, 4096, 32768, 32769, 65536, 1048576 + 17]


@pytest.fixture
def srv(server):
    files = {'html/s%d.html' % n: text(n, n) for n in SIZES}
    files.update({
        'html/a.txt': text(1000, 2),
        'html/a.css': text(1000, 3),
        'html/a.json': text(1000, 4),
        'html/i.png': text(1000, 5),
        'html/a.bin': text(1000, 6),
        'html/small/x.html': text(999, 7),
        'html/small/y.html': text(1000, 8),
        'html/off/x.html': text(1000, 9),
        'html/lvl/x.html': text(5000, 10),
    })
    return server(simple('''root {html};
        location /small/ { gzip_min_length 1000; }
        location /off/ { gzip off; }
        location /lvl/ { gzip_comp_level 9; }''', http_extra=HTTP), files=files)


@pytest.mark.parametrize('n', SIZES)
def test_sizes(srv, n):
    want = text(n, n)
    r = srv.get('/s%d.html' % n, headers=AE)
    if n < 20:  # gzip_min_length 20 by default
        assert_plain(r, want)
        assert r.header('Content-Length') == str(n)
    else:
        assert_gzipped(r, want)


def test_no_accept_encoding(srv):
    r = srv.get('/s4096.html')
    assert_plain(r, text(4096, 4096))
    assert r.header('Content-Length') == '4096'
    assert r.header('Vary') is None  # gzip_vary is off by default


def test_types_default_only_html(srv):
    for path in ('/a.txt', '/a.css', '/a.json', '/i.png', '/a.bin'):
        r = srv.get(path, headers=AE)
        assert r.status == 200 and r.header('Content-Encoding') is None, (path, r)


def test_min_length_directive(srv):
    assert_plain(srv.get('/small/x.html', headers=AE), text(999, 7))
    assert_gzipped(srv.get('/small/y.html', headers=AE), text(1000, 8))


def test_gzip_off_in_location(srv):
    assert_plain(srv.get('/off/x.html', headers=AE), text(1000, 9))


def test_comp_level_9(srv):
    assert_gzipped(srv.get('/lvl/x.html', headers=AE), text(5000, 10))


def test_headers_of_compressed_response(srv):
    plain = srv.get('/s4096.html')
    r = srv.get('/s4096.html', headers=AE)
    assert_gzipped(r, text(4096, 4096))
    assert r.header('Accept-Ranges') is None
    assert plain.header('Accept-Ranges') == 'bytes'
    etag = plain.header('ETag')
    assert etag and etag.startswith('"')
    assert r.header('ETag') == 'W/' + etag
    assert r.header('Last-Modified') == plain.header('Last-Modified')
    assert r.header('Content-Type') == 'text/html'
    assert r.header('Vary') is None


@pytest.mark.parametrize('ae,compressed', [
    ('gzip', True),
    ('GZIP', True),
    ('gzip, deflate, br', True),
    ('deflate, gzip', True),
    ('gzip;q=0.5', True),
    ('gzip; q=1.0', True),
    ('gzip;q=0.001', True),
    ('gzip;q=0', False),
    ('gzip;q=0.000', False),
    ('deflate', False),
    ('identity', False),
    ('', False),
    ('br', False),
])
def test_accept_encoding(srv, ae, compressed):
    r = srv.get('/s4096.html', headers={'Accept-Encoding': ae})
    if compressed:
        assert_gzipped(r, text(4096, 4096))
    else:
        assert_plain(r, text(4096, 4096))


@pytest.mark.hayate_only
@pytest.mark.parametrize('ae,compressed', [
    ('x-gzip', True),          # RFC 9110 §8.4.1.3: x-gzip is gzip (nginx only looks for "gzip")
    ('*', True),               # "*" covers codings not listed
    ('*;q=0, gzip', True),
    ('*, gzip;q=0', False),
])
def test_accept_encoding_rfc(srv, ae, compressed):
    r = srv.get('/s4096.html', headers={'Accept-Encoding': ae})
    if compressed:
        assert_gzipped(r, text(4096, 4096))
    else:
        assert_plain(r, text(4096, 4096))


def test_head_has_get_headers(srv):
    """nginx decides header_only after its filters: HEAD gets the headers GET would get."""
    get = srv.get('/s4096.html', headers=AE)
    r = srv.head('/s4096.html', headers=AE)
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Encoding') == 'gzip'
    assert r.header('ETag') == get.header('ETag') and r.header('ETag').startswith('W/')
    assert r.header('Accept-Ranges') is None
    cl = r.header('Content-Length')
    assert cl is None or int(cl) == len(get.body)
    r = srv.head('/s4096.html')
    assert r.header('Content-Encoding') is None and r.header('Content-Length') == '4096'


def test_conditional_304_with_weak_etag(srv):
    r = srv.get('/s4096.html', headers=AE)
    etag = r.header('ETag')
    assert etag.startswith('W/"')
    r2 = srv.get('/s4096.html', headers={'Accept-Encoding': 'gzip', 'If-None-Match': etag})
    assert r2.status == 304
    assert r2.body == b''
    assert r2.header('Content-Encoding') is None


def test_range_ignored_when_compressing(srv):
    """nginx clears Accept-Ranges when gzipping, so a Range request gets the whole compressed body."""
    r = srv.get('/s4096.html', headers={'Accept-Encoding': 'gzip', 'Range': 'bytes=0-99'})
    assert_gzipped(r, text(4096, 4096))
    assert r.header('Content-Range') is None
    # without Accept-Encoding the range is served
    r = srv.get('/s4096.html', headers={'Range': 'bytes=0-99'})
    assert r.status == 206 and r.body == text(4096, 4096)[:100]


def test_error_page_compressed(srv):
    """404 pages are text/html and longer than 20 bytes: nginx gzips them."""
    r = srv.get('/nope.html', headers=AE)
    assert r.status == 404
    assert r.header('Content-Encoding') == 'gzip'
    assert b'404 Not Found' in gunzip(r.body)
    r = srv.get('/nope.html')
    assert r.status == 404 and r.header('Content-Encoding') is None and b'404 Not Found' in r.body


def test_keepalive_several_compressed(srv):
    c = srv.conn()
    for n in (4096, 65536, 250, 4096):
        r = c.request(build_request('GET', '/s%d.html' % n, 'localhost', [('Accept-Encoding', 'gzip')]))
        assert_gzipped(r, text(n, n))
    r = c.request(build_request('GET', '/s4096.html', 'localhost', []))
    assert_plain(r, text(4096, 4096))
    c.close()


def test_http10_not_compressed_by_default(srv):
    r = srv.get('/s4096.html', headers=AE, version='HTTP/1.0')
    assert_plain(r, text(4096, 4096))


def test_http10_with_gzip_http_version(server, proto):
    s = server(simple('root {html};', http_extra='gzip on; gzip_http_version 1.0;'),
               files={'html/x.html': text(50000, 11)})
    r = s.get('/x.html', headers=AE, version='HTTP/1.0')
    assert r.header('Transfer-Encoding') is None
    assert_gzipped(r, text(50000, 11))


def test_vary(server, proto):
    s = server(simple('''root {html};
        location /novary/ { gzip_vary off; }''', http_extra='gzip on; gzip_vary on;'),
               files={'html/x.html': text(1000, 12), 'html/i.png': text(1000, 13), 'html/t.html': 'tiny',
                      'html/novary/x.html': text(1000, 14)})
    r = s.get('/x.html', headers=AE)
    assert_gzipped(r, text(1000, 12))
    assert r.header('Vary') == 'Accept-Encoding'
    # an eligible response gets Vary whether or not the client accepts gzip
    r = s.get('/x.html')
    assert_plain(r, text(1000, 12))
    assert r.header('Vary') == 'Accept-Encoding'
    r = s.get('/x.html', headers={'Accept-Encoding': 'deflate'})
    assert r.header('Vary') == 'Accept-Encoding'
    # not eligible: wrong type, too short
    assert s.get('/i.png', headers=AE).header('Vary') is None
    assert s.get('/t.html', headers=AE).header('Vary') is None
    assert s.head('/x.html', headers=AE).header('Vary') == 'Accept-Encoding'
    assert s.head('/x.html').header('Vary') == 'Accept-Encoding'
    r = s.get('/novary/x.html', headers=AE)
    assert_gzipped(r, text(1000, 14))
    assert r.header('Vary') is None


def test_types_directive(server, proto):
    s = server(simple('''root {html};
        location /all/ { gzip_types *; }''', http_extra='gzip on; gzip_types text/plain application/json;'),
               files={'html/a.txt': text(1000, 15), 'html/a.json': text(1000, 16), 'html/a.html': text(1000, 17),
                      'html/a.css': text(1000, 18), 'html/all/i.png': text(1000, 19),
                      'html/all/a.bin': text(1000, 20)})
    assert_gzipped(s.get('/a.txt', headers=AE), text(1000, 15))
    assert_gzipped(s.get('/a.json', headers=AE), text(1000, 16))
    assert_gzipped(s.get('/a.html', headers=AE), text(1000, 17))  # text/html always
    assert_plain(s.get('/a.css', headers=AE), text(1000, 18))
    assert_gzipped(s.get('/all/i.png', headers=AE), text(1000, 19))
    assert_gzipped(s.get('/all/a.bin', headers=AE), text(1000, 20))


def test_seed_003_config(server, proto):
    """The tuned config of seed 003: level 6 and the usual text types."""
    s = server(simple('root {html};', http_extra='gzip on; gzip_comp_level 6; gzip_types text/plain text/css '
                      'application/json application/javascript text/xml application/xml application/xml+rss '
                      'text/javascript;'),
               files={'html/p.html': text(40960, 21), 'html/s.css': text(3000, 22), 'html/j.js': text(3000, 23)})
    assert_gzipped(s.get('/p.html', headers={'Accept-Encoding': 'gzip, deflate'}), text(40960, 21))
    assert_gzipped(s.get('/s.css', headers=AE), text(3000, 22))
    assert_gzipped(s.get('/j.js', headers=AE), text(3000, 23))


# ---------------------------------------------------------------- gzip_proxied, gzip_disable

PROXIED_FILES = {'html/x.html': text(1000, 30)}


@pytest.mark.parametrize('value,headers,compressed', [
    (None, {}, True),                                    # no Via: not a proxied request
    (None, {'Via': '1.1 proxy'}, False),                 # default off
    ('off', {'Via': '1.1 proxy'}, False),
    ('any', {'Via': '1.1 proxy'}, True),
    ('auth', {'Via': '1.1 proxy'}, True),                # no Authorization: nothing declines either
    ('auth no_etag', {'Via': '1.1 proxy'}, False),
    ('auth', {'Via': '1.1 proxy', 'Authorization': 'Basic eDp5'}, True),
    ('no_etag', {'Via': '1.1 proxy'}, False),            # static files have an ETag
    ('no_last_modified', {'Via': '1.1 proxy'}, True),    # only a proxied Last-Modified counts (nginx)
    ('expired', {'Via': '1.1 proxy'}, True),             # no Expires, no Cache-Control, no LM/ETag test
    ('no-cache no-store private', {'Via': '1.1 proxy'}, True),
    ('off any', {'Via': '1.1 proxy'}, False),            # off wins
])
def test_gzip_proxied(server, value, headers, compressed, proto):
    extra = 'gzip on;' + (' gzip_proxied %s;' % value if value else '')
    s = server(simple('root {html};', http_extra=extra), files=PROXIED_FILES)
    h = dict(AE)
    h.update(headers)
    r = s.get('/x.html', headers=h)
    if compressed:
        assert_gzipped(r, text(1000, 30))
    else:
        assert_plain(r, text(1000, 30))


def test_gzip_proxied_no_etag_without_etag(server):
    s = server(simple('root {html}; etag off;', http_extra='gzip on; gzip_proxied no_etag;'), files=PROXIED_FILES)
    assert_gzipped(s.get('/x.html', headers={'Accept-Encoding': 'gzip', 'Via': 'p'}), text(1000, 30))


@pytest.mark.parametrize('ua,compressed', [
    ('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)', False),
    ('Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)', False),
    ('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)', True),
    ('Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)', True),
    ('curl/7.88.1', False),
    ('CURL/8', False),        # the regex is case-insensitive
    ('Wget/1.21', True),
])
def test_gzip_disable(server, ua, compressed):
    s = server(simple('root {html};', http_extra='gzip on; gzip_disable msie6 "^curl/";'), files=PROXIED_FILES)
    r = s.get('/x.html', headers={'Accept-Encoding': 'gzip', 'User-Agent': ua})
    if compressed:
        assert_gzipped(r, text(1000, 30))
    else:
        assert_plain(r, text(1000, 30))


# ---------------------------------------------------------------- rewritten files

def test_file_rewritten_same_size(server, proto):
    s = server(simple('root {html};', http_extra='gzip on;'), files={'html/x.html': text(5000, 40)})
    for _ in range(2):
        assert_gzipped(s.get('/x.html', headers=AE), text(5000, 40))
    path = os.path.join(s.html, 'x.html')
    with open(path, 'r+b') as f:  # same inode, same size, new bytes, most likely the same second
        f.write(text(5000, 41))
    assert_gzipped(s.get('/x.html', headers=AE), text(5000, 41))
    with open(path, 'wb') as f:
        f.write(text(7000, 42))
    assert_gzipped(s.get('/x.html', headers=AE), text(7000, 42))
    os.rename(path, path + '.old')
    with open(path, 'wb') as f:  # a new inode
        f.write(text(7000, 43))
    assert_gzipped(s.get('/x.html', headers=AE), text(7000, 43))


def test_many_files_and_repeats(server):
    files = {'html/f%d.html' % i: text(3000 + i * 37, 100 + i) for i in range(40)}
    s = server(simple('root {html};', http_extra='gzip on;'), files=files)
    c = s.conn()
    for rnd in range(3):
        for i in range(40):
            r = c.request(build_request('GET', '/f%d.html' % i, 'localhost', [('Accept-Encoding', 'gzip')]))
            assert_gzipped(r, text(3000 + i * 37, 100 + i))
    c.close()


# ---------------------------------------------------------------- configuration errors

@pytest.mark.parametrize('directive,message', [
    ('gzip maybe;', 'invalid value "maybe" in "gzip" directive, it must be "on" or "off"'),
    ('gzip_vary maybe;', 'invalid value "maybe" in "gzip_vary" directive, it must be "on" or "off"'),
    ('gzip_comp_level 10;', 'value must be between 1 and 9'),
    ('gzip_comp_level 0;', 'value must be between 1 and 9'),
    ('gzip_http_version 2.0;', 'invalid value "2.0"'),
    ('gzip_proxied sometimes;', 'invalid value "sometimes"'),
    ('gzip_disable "(";', 'pcre2_compile() failed: missing closing parenthesis in "("'),
    ('gzip_buffers 0 4k;', '"gzip_buffers" directive invalid value'),
    ('gzip_buffers 4 abc;', '"gzip_buffers" directive invalid value'),
    ('gzip_buffers 4 4k; gzip_buffers 4 4k;', '"gzip_buffers" directive is duplicate'),
    ('gzip_static sometimes;', 'invalid value "sometimes"'),
    ('gzip_min_length abc;', '"gzip_min_length" directive invalid value'),
])
def test_bad_directive(prefix, run_cli, directive, message):
    """nginx 1.22's words (checked with its -t) at the directive's line."""
    path = prefix.conf(simple('root {html};', http_extra=directive + '\n'))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    line = [i for i, l in enumerate(open(path), 1) if directive in l][0]
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(message), re.escape(path), line),
                     res.err), res.err


def test_duplicate_proxied_value_warns(prefix, run_cli):
    path = prefix.conf(simple('root {html};', http_extra='gzip_proxied any expired;\n    gzip_proxied any;\n'))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 0, res
    line = [i for i, l in enumerate(open(path), 1) if 'gzip_proxied any;' in l][0]
    assert re.search(r'\[warn\] (\d+#\d+: )?duplicate value "any" in %s:%d\n' % (re.escape(path), line), res.err), \
        (open(path).read(), res.err)


def test_second_types_and_proxied_directives_add_to_the_first(server, proto):
    """As nginx: a second gzip_types adds its types, a second gzip_proxied its values."""
    s = server(simple('root {html};', http_extra='gzip on; gzip_min_length 1; gzip_types text/css;\n'
                                                 '    gzip_types text/xml;\n    gzip_proxied auth;\n'
                                                 '    gzip_proxied expired;\n'
                                                 '    types { text/css css; text/xml xml; text/plain txt; }'),
               files={'html/a.css': 'c' * 500, 'html/a.xml': 'x' * 500, 'html/a.txt': 't' * 500})
    ae = {'Accept-Encoding': 'gzip'}
    assert s.get('/a.css', headers=ae).header('Content-Encoding') == 'gzip'
    assert s.get('/a.xml', headers=ae).header('Content-Encoding') == 'gzip'
    assert s.get('/a.txt', headers=ae).header('Content-Encoding') is None
    via = dict(ae, Via='1.1 p')
    assert s.get('/a.css', headers=dict(via, Authorization='Basic eDp5')).header('Content-Encoding') == 'gzip'
    assert s.get('/a.css', headers=via).header('Content-Encoding') == 'gzip'  # expired: no Expires at all


def test_good_directives(prefix, run_cli):
    path = prefix.conf(simple('root {html}; location /x/ { gzip off; gzip_static on; }', http_extra='''
        gzip on; gzip_comp_level 6; gzip_min_length 1k; gzip_buffers 16 8k; gzip_http_version 1.0;
        gzip_proxied expired no-cache no-store private no_last_modified no_etag auth; gzip_vary on;
        gzip_disable msie6 "Opera Mini"; gzip_types text/plain application/json *;'''))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 0, res
