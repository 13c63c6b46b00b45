"""The response cache (proxy_cache & co., upstream/cache.c): a backend that counts its requests makes a HIT observable
as the backend NOT being called. Configs are nginx's: HY_BIN=/usr/sbin/nginx runs the same checks."""
import subprocess
import threading
import time

import pytest

from conftest import HY_BIN, simple
from helpers.backend import Backend
from helpers.apppeers import fcgi_peer


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def start(server, be, locations, extra=''):
    http = 'proxy_cache_path {tmp}/cache levels=1:2 keys_zone=one:1m;\n' + extra
    body = locations.replace('{be}', str(be.port))
    return server(simple(body, http))


def counting(be, status=200, headers=(), body=None):
    def h(r):
        n = len(be.requests)
        return be.reply(status, body if body is not None else ('n=%d %s' % (n, r.target)).encode(), list(headers))
    be.handler = h


LOC = '''location / {
    proxy_pass http://127.0.0.1:{be};
    proxy_cache one;
    %s
    add_header X-Cache $upstream_cache_status always;
}'''


def test_miss_then_hit_backend_not_called(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 200 1m;')
    r1 = srv.get('/a')
    assert r1.status == 200 and r1.header('X-Cache') == 'MISS'
    r2 = srv.get('/a')
    assert r2.status == 200 and r2.header('X-Cache') == 'HIT'
    assert r2.body == r1.body
    assert len(be.requests) == 1
    r3 = srv.get('/b')  # another key
    assert r3.header('X-Cache') == 'MISS' and len(be.requests) == 2


def test_valid_codes_and_any(server, be):
    counting(be, status=404)
    srv = start(server, be, LOC % 'proxy_cache_valid 200 1m;')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'MISS'
    assert len(be.requests) == 2


def test_valid_any_caches_404(server, be):
    counting(be, status=404)
    srv = start(server, be, LOC % 'proxy_cache_valid any 1m;')
    srv.get('/x')
    r = srv.get('/x')
    assert r.status == 404 and r.header('X-Cache') == 'HIT'
    assert len(be.requests) == 1


def test_no_valid_no_store(server, be):
    counting(be)
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'MISS'


@pytest.mark.parametrize('hdr', [('Cache-Control', 'no-cache'), ('Cache-Control', 'private'),
                                 ('Cache-Control', 'max-age=0'), ('Set-Cookie', 'a=b'),
                                 ('X-Accel-Expires', '0'), ('Vary', '*')])
def test_upstream_fields_forbid_storing(server, be, hdr):
    counting(be, headers=[hdr])
    srv = start(server, be, LOC % 'proxy_cache_valid 200 1m;')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'MISS'
    assert len(be.requests) == 2


def test_max_age_caches_without_valid(server, be):
    counting(be, headers=[('Cache-Control', 'public, max-age=60')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'HIT'


def test_ignore_headers_cache_control_and_set_cookie(server, be):
    counting(be, headers=[('Cache-Control', 'no-store'), ('Set-Cookie', 'a=b')])
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_ignore_headers Cache-Control Set-Cookie;')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'HIT'


def test_bypass_and_no_cache(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_bypass $arg_bp; proxy_no_cache $arg_nc;')
    assert srv.get('/x?nc=1').header('X-Cache') == 'MISS'
    assert srv.get('/x?nc=1').header('X-Cache') == 'MISS'  # not stored
    assert srv.get('/y').header('X-Cache') == 'MISS'
    assert srv.get('/y').header('X-Cache') == 'HIT'
    assert srv.get('/z?bp=1').header('X-Cache') == 'BYPASS'
    assert srv.get('/z?bp=1').header('X-Cache') == 'BYPASS'  # still to the backend
    assert len(be.requests) == 5
    assert srv.get('/z?bp=1', ).header('X-Cache') == 'BYPASS'


def test_min_uses(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_min_uses 2;')
    assert srv.get('/x').header('X-Cache') == 'MISS'
    assert srv.get('/x').header('X-Cache') == 'MISS'
    assert srv.get('/x').header('X-Cache') == 'HIT'
    assert len(be.requests) == 2


def test_key_shares_entries(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_key $uri;')
    srv.get('/x?a=1')
    r = srv.get('/x?a=2')
    assert r.header('X-Cache') == 'HIT' and b'a=1' in r.body


def wait_status(srv, path, want, timeout=6.0):
    deadline = time.monotonic() + timeout
    while True:
        r = srv.get(path)
        if r.header('X-Cache') == want or time.monotonic() > deadline:
            return r
        time.sleep(0.2)


def test_expired_then_stale_on_error(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1s; proxy_cache_use_stale error timeout;')
    r1 = srv.get('/x')
    assert r1.header('X-Cache') == 'MISS'
    r = wait_status(srv, '/x', 'EXPIRED')
    assert r.header('X-Cache') == 'EXPIRED'
    be.stop()
    r = wait_status(srv, '/x', 'STALE')
    assert r.status == 200 and r.header('X-Cache') == 'STALE'
    srv.ignore_log = True


def test_stale_on_http_500(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 200 1s; proxy_cache_use_stale http_500;')
    body = srv.get('/x').body
    counting(be, status=500)
    r = wait_status(srv, '/x', 'STALE')
    assert r.status == 200 and r.body == body


def test_revalidate_304(server, be):
    lm = 'Mon, 01 Jan 2024 00:00:00 GMT'

    def h(r):
        if r.header('If-Modified-Since') == lm:
            return be.reply(304, b'', [('Last-Modified', lm)], length=False)
        return be.reply(200, b'full body', [('Last-Modified', lm), ('ETag', '"e1"')])
    be.handler = h
    srv = start(server, be, LOC % 'proxy_cache_valid 1s; proxy_cache_revalidate on;')
    srv.get('/x')
    r = wait_status(srv, '/x', 'REVALIDATED')
    assert r.header('X-Cache') == 'REVALIDATED' and r.body == b'full body' and r.status == 200
    assert be.requests[-1].header('If-None-Match') == '"e1"'
    assert srv.get('/x').header('X-Cache') == 'HIT'


def test_client_conditionals_not_sent_upstream(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    srv.get('/x', headers={'If-Modified-Since': 'Mon, 01 Jan 2024 00:00:00 GMT', 'Range': 'bytes=0-1',
                           'If-None-Match': '"a"'})
    req = be.requests[0]
    assert req.header('If-Modified-Since') is None and req.header('Range') is None
    assert req.header('If-None-Match') is None


def test_range_and_not_modified_from_cache(server, be):
    be.handler = lambda r: be.reply(200, b'0123456789', [('ETag', '"v"'), ('Accept-Ranges', 'bytes')])
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    r = srv.get('/x', headers={'Range': 'bytes=1-2'})
    assert r.status == 206 and r.body == b'12' and r.header('X-Cache') == 'MISS'
    r = srv.get('/x', headers={'Range': 'bytes=2-4'})
    assert r.status == 206 and r.body == b'234' and r.header('X-Cache') == 'HIT'
    assert len(r.header_all('Accept-Ranges')) <= 1  # the upstream's gives way to the range filter's
    r = srv.get('/x', headers={'If-None-Match': '"v"'})
    assert r.status == 304
    assert len(be.requests) == 1


def test_no_ranges_without_upstream_accept_ranges(server, be):
    be.handler = lambda r: be.reply(200, b'0123456789')
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    srv.get('/x')
    r = srv.get('/x', headers={'Range': 'bytes=2-4'})
    assert r.status == 200 and r.header('X-Cache') == 'HIT' and r.body == b'0123456789'


def test_force_ranges_without_cache(server, be):
    be.handler = lambda r: be.reply(200, b'0123456789')
    srv = start(server, be, 'location / { proxy_pass http://127.0.0.1:{be}; proxy_force_ranges on; }')
    r = srv.get('/x', headers={'Range': 'bytes=2-4'})
    assert r.status == 206 and r.body == b'234'


def test_not_modified_only_for_cacheable(server, be):
    be.handler = lambda r: be.reply(200, b'x', [('ETag', '"v"')])
    srv = start(server, be, 'location / { proxy_pass http://127.0.0.1:{be}; }')
    assert srv.get('/x', headers={'If-None-Match': '"v"'}).status == 200


def test_head_converted_to_get(server, be):
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    r = srv.head('/x')
    assert r.status == 200 and r.body == b''
    assert be.requests[0].method == 'GET'
    r = srv.get('/x')
    assert r.header('X-Cache') == 'HIT' and r.body.startswith(b'n=')


def test_unfinished_response_not_stored(server, be):
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort'
    be.close_after = 1
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    srv.ignore_log = True
    try:
        srv.get('/x')
    except Exception:
        pass
    be.handler = lambda r: be.reply(200, b'whole')
    r = srv.get('/x')
    assert r.header('X-Cache') == 'MISS' and r.body == b'whole'


def test_lock_one_request_to_backend(server, be):
    def h(r):
        time.sleep(0.8)
        return be.reply(200, b'locked body')
    be.handler = h
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_lock on;')
    out = []
    ts = [threading.Thread(target=lambda: out.append(srv.get('/x'))) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert [r.body for r in out] == [b'locked body'] * 3
    assert len(be.requests) == 1


def test_files_under_levels(server, be, prefix):
    import glob
    import hashlib
    counting(be)
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_key k$uri;')
    srv.get('/x')
    md5 = hashlib.md5(b'k/x').hexdigest()
    assert glob.glob('%s/cache/%s/%s/%s' % (prefix.tmp, md5[-1], md5[-3:-1], md5))


def test_fastcgi_cache_without_key_warns(server, run_cli, prefix):
    prefix.conf(simple('location / { fastcgi_pass 127.0.0.1:9; fastcgi_cache one; }',
                       'fastcgi_cache_path {tmp}/c keys_zone=one:1m;'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc == 0 and 'no "fastcgi_cache_key" for "fastcgi_cache"' in res.err  # a warning, as nginx


def test_unknown_zone_is_an_error(server, run_cli, prefix):
    prefix.conf(simple('location / { proxy_pass http://127.0.0.1:9; proxy_cache nope; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0


def test_fastcgi_cache_hit(server, prefix):
    peer = fcgi_peer(prefix.tmp, 'a')
    try:
        srv = server(simple('''location / {
            fastcgi_pass %s;
            fastcgi_param REQUEST_URI $request_uri;
            fastcgi_cache one;
            fastcgi_cache_key $request_uri;
            fastcgi_cache_valid 1m;
            add_header X-Cache $upstream_cache_status;
        }''' % peer.addr, 'fastcgi_cache_path {tmp}/fc levels=2 keys_zone=one:1m;'))
        r1 = srv.get('/conn')
        r2 = srv.get('/conn')
        r3 = srv.get('/conn?other')
        assert r1.header('X-Cache') == 'MISS' and r2.header('X-Cache') == 'HIT'
        assert r1.body == r2.body and r1.body.startswith(b'conn=')
        assert r3.body != r1.body  # another key: to the peer, a new connection
    finally:
        peer.stop()


def test_version_has_the_cache():
    p = subprocess.run([HY_BIN, '-V'], capture_output=True, text=True)
    assert '--without-http-cache' not in p.stderr
