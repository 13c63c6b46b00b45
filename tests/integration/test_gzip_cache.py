"""gzip_cache (hayate's compressed-body cache): configuration, Content-Length, invalidation when files change."""
import gzip
import os
import time

import pytest

from conftest import simple
from helpers.http1 import build_request
from test_gzip_filter import text

pytestmark = pytest.mark.hayate_only
AE = {'Accept-Encoding': 'gzip'}


def check(r, want):
    assert r.status == 200 and r.header('Content-Encoding') == 'gzip', r
    assert r.header('Content-Length') == str(len(r.body))
    assert r.header('Transfer-Encoding') is None
    assert gzip.decompress(r.body) == want


@pytest.mark.parametrize('conf', ['', 'gzip_cache off;', 'gzip_cache size=64k;', 'gzip_cache size=1m max_file=2k;',
                                  'gzip_cache max_file=100m;'])
def test_cache_configs(server, conf):
    files = {'html/f%d.html' % i: text(1000 + 977 * i, 200 + i) for i in range(30)}
    s = server(simple('root {html};', http_extra='gzip on; ' + conf), files=files)
    c = s.conn()
    for _ in range(3):
        for i in range(30):
            r = c.request(build_request('GET', '/f%d.html' % i, 'localhost', [('Accept-Encoding', 'gzip')]))
            check(r, text(1000 + 977 * i, 200 + i))
    c.close()


def test_invalidation_same_size_same_mtime(server):
    """A file rewritten in place with the same size, its mtime put back: ctime (ns) still changes, so the
    cached compressed body is not reused. (With open_file_cache the plain bytes are cached too, for
    open_file_cache_valid, as in nginx.)"""
    s = server(simple('root {html};', http_extra='gzip on;'), files={'html/x.html': text(5000, 300)})
    path = os.path.join(s.html, 'x.html')
    check(s.get('/x.html', headers=AE), text(5000, 300))
    check(s.get('/x.html', headers=AE), text(5000, 300))
    st = os.stat(path)
    with open(path, 'r+b') as f:
        f.write(text(5000, 301))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns and os.stat(path).st_size == st.st_size
    check(s.get('/x.html', headers=AE), text(5000, 301))
    check(s.get('/x.html', headers=AE), text(5000, 301))


def test_bad_cache_directive(prefix, run_cli):
    for d in ('gzip_cache size=0;', 'gzip_cache size=abc;', 'gzip_cache foo;', 'gzip_cache off; gzip_cache off;'):
        path = prefix.conf(simple('root {html};', http_extra=d))
        res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
        assert res.rc == 1 and '[emerg]' in res.err, (d, res)
    path = prefix.conf(simple('root {html}; location / { gzip_cache off; }'))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1 and 'not allowed here' in res.err, res


@pytest.mark.parametrize('conf,cached', [('', True), ('gzip_cache off;', False)])
def test_cache_is_used(server, conf, cached):
    """The cache is observable: a HEAD after a GET carries the compressed Content-Length only when the
    compressed body is cached (without the cache hayate, like nginx, does not know it without compressing)."""
    s = server(simple('root {html};', http_extra='gzip on; ' + conf), files={'html/x.html': text(20000, 7)})
    r = s.get('/x.html', headers=AE)
    check(r, text(20000, 7))
    h = s.head('/x.html', headers=AE)
    assert h.status == 200 and h.header('Content-Encoding') == 'gzip'
    if cached:
        assert h.header('Content-Length') == str(len(r.body))
    else:
        assert h.header('Content-Length') is None
