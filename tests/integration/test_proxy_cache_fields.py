"""The response cache, second part: how upstream fields set a stored response's life (X-Accel-Expires, repeated
*_ignore_headers), *_cache with variables, HEAD with proxy_cache_convert_head off, and the engine behaviours the
cache tests needed: a body cut short reaches the client with its head, FastCGI bounds a body by its
Content-Length. Configs are nginx's: HY_BIN=/usr/sbin/nginx runs the same checks."""
import socket
import struct
import threading

import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def start(server, be, locations, extra=''):
    http = ('proxy_cache_path {tmp}/cache keys_zone=one:1m;\n'
            'proxy_cache_path {tmp}/cache2 keys_zone=two:1m;\n' + extra)
    return server(simple(locations.replace('{be}', str(be.port)), http))


# nginx 1.23 reworked the upstream's header handling (the first X-Accel-Expires counts and overrides
# Cache-Control, an overflowing max-age caches): nginx-tests' proxy_cache_control.t checks it; Debian has 1.22
NEW_NGINX = pytest.mark.skipif(IS_NGINX, reason='nginx >= 1.23 behaviour (Debian ships 1.22)')

LOC = '''location / {
    proxy_pass http://127.0.0.1:{be};
    proxy_cache one;
    %s
    add_header X-Cache $upstream_cache_status always;
}'''


def reply_with(be, headers):
    be.handler = lambda r: be.reply(200, ('n=%d' % len(be.requests)).encode(), list(headers))


@NEW_NGINX
def test_x_accel_expires_first_wins(server, be):
    reply_with(be, [('X-Accel-Expires', '60'), ('X-Accel-Expires', '0')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'HIT'


def test_x_accel_expires_at_past_is_stored_expired(server, be):
    reply_with(be, [('X-Accel-Expires', '@60')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'EXPIRED'


@NEW_NGINX
def test_x_accel_expires_overrides_cache_control(server, be):
    reply_with(be, [('Cache-Control', 'no-cache'), ('X-Accel-Expires', '60')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'HIT'


@NEW_NGINX
def test_max_age_overflow_still_caches(server, be):
    reply_with(be, [('Cache-Control', 'max-age=9223372036854775808')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'HIT'


def test_repeated_ignore_headers_add_up(server, be):
    reply_with(be, [('Cache-Control', 'max-age=60'), ('Expires', 'Thu, 31 Dec 2037 23:55:55 GMT')])
    srv = start(server, be, LOC % 'proxy_ignore_headers Cache-Control; proxy_ignore_headers Expires;')
    srv.get('/x')
    assert srv.get('/x').header('X-Cache') == 'MISS'  # both ignored, no proxy_cache_valid: not stored


def test_cache_zone_from_a_variable(server, be):
    reply_with(be, [])
    srv = start(server, be, LOC.replace('proxy_cache one;', 'proxy_cache $arg_c;') % 'proxy_cache_valid 1m;')
    assert srv.get('/x?c=one').header('X-Cache') == 'MISS'
    assert srv.get('/x?c=one').header('X-Cache') == 'HIT'
    assert srv.get('/x?c=two').header('X-Cache') == 'MISS'  # another zone: another key space
    r = srv.get('/x')
    assert r.status == 200 and r.header('X-Cache') is None  # empty: no cache
    assert srv.get('/x?c=nope').status == 500
    srv.ignore_log = True


@NEW_NGINX
def test_head_not_converted_is_stored_without_body(server, be):
    reply_with(be, [])
    srv = start(server, be, LOC % 'proxy_cache_valid 1m; proxy_cache_convert_head off;')
    assert srv.head('/x').header('X-Cache') == 'MISS'
    assert be.requests[0].method == 'HEAD'
    assert srv.head('/x').header('X-Cache') == 'HIT'
    r = srv.get('/x')
    assert r.header('X-Cache') == 'HIT' and r.body == b''


def raw_get(port, path):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(('GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % path).encode())
    data = b''
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        data += d
    s.close()
    return data


def test_body_cut_short_gets_head_then_close(server, be):
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial'
    be.close_after = 1
    srv = start(server, be, 'location / { proxy_pass http://127.0.0.1:{be}; }')
    srv.ignore_log = True
    data = raw_get(srv.port, '/x')
    assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'partial')
    assert b'Content-Length: 100' in data


class FcgiOnce:
    """A FastCGI peer answering every request with `out` (the STDOUT stream) then END_REQUEST."""

    def __init__(self, out):
        self.out = out
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.run, daemon=True).start()

    @staticmethod
    def rec(t, content):
        return struct.pack('>BBHHBB', 1, t, 1, len(content), 0, 0) + content

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            buf = b''
            while True:  # until the empty STDIN record
                d = c.recv(65536)
                if not d:
                    break
                buf += d
                if b'\x01\x05\x00\x01\x00\x00' in buf:
                    break
            c.sendall(self.rec(6, self.out) + self.rec(6, b'') + self.rec(3, b'\0' * 8))
            c.close()


@pytest.mark.parametrize('out,want', [
    (b'Content-Type: text/plain\r\nContent-Length: 8\r\n\r\nSEE-THISNOT-THIS', b'SEE-THIS'),
    (b'Content-Type: text/plain\r\nContent-Length: 0\r\n\r\nNOT-THIS', b''),
])
def test_fastcgi_body_bounded_by_content_length(server, out, want):
    peer = FcgiOnce(out)
    srv = server(simple('location / { fastcgi_pass 127.0.0.1:%d; }' % peer.port))
    r = srv.get('/x')
    assert r.status == 200 and r.body == want
    srv.ignore_log = True


def test_fastcgi_body_shorter_than_content_length_is_cut(server):
    peer = FcgiOnce(b'Content-Type: text/plain\r\nContent-Length: 100\r\n\r\nSHORT')
    srv = server(simple('location / { fastcgi_pass 127.0.0.1:%d; }' % peer.port))
    srv.ignore_log = True
    data = raw_get(srv.port, '/x')
    assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'SHORT')


def test_vary_keeps_one_entry_per_variant(server, be):
    be.handler = lambda r: be.reply(200, ('n=%d ae=%s' % (len(be.requests), r.header('Accept-Encoding'))).encode(),
                                    [('Vary', 'Accept-Encoding')])
    srv = start(server, be, LOC % 'proxy_cache_valid 1m;')
    for ae in ('gzip', 'deflate', 'foo, bar'):
        assert srv.get('/x', headers={'Accept-Encoding': ae}).header('X-Cache') == 'MISS'
        assert srv.get('/x', headers={'Accept-Encoding': ae}).header('X-Cache') == 'HIT'
    r = srv.get('/x', headers={'Accept-Encoding': 'gzip'})
    assert r.header('X-Cache') == 'HIT' and r.body.endswith(b'ae=gzip')
    r = srv.get('/x', headers={'Accept-Encoding': 'foo,bar'})  # whitespace does not make another variant
    assert r.header('X-Cache') == 'HIT' and r.body.endswith(b'ae=foo, bar')
    assert len(be.requests) == 3


def test_max_range_offset_and_min_uses_pass_the_range(server, be):
    be.handler = lambda r: be.reply(200, ('range=%s' % r.header('Range')).encode())
    srv = start(server, be, '''
        location / { proxy_pass http://127.0.0.1:{be}; proxy_cache one; proxy_cache_valid 1m;
                     proxy_cache_max_range_offset 2; }
        location /mu/ { proxy_pass http://127.0.0.1:{be}; proxy_cache one; proxy_cache_valid 1m;
                        proxy_cache_min_uses 3; }''')
    assert srv.get('/a', headers={'Range': 'bytes=1-'}).body == b'range=None'   # below: cached, Range cleared
    assert srv.get('/b', headers={'Range': 'bytes=3-'}).body == b'range=bytes=3-'  # beyond: passed
    assert srv.get('/c', headers={'Range': 'bytes=-1'}).body == b'range=bytes=-1'  # a suffix: passed
    assert srv.get('/mu/d', headers={'Range': 'bytes=0-1'}).body == b'range=bytes=0-1'  # not to be stored: passed


def wait_status(srv, path, want, timeout=8.0):
    import time
    deadline = time.monotonic() + timeout
    while True:
        r = srv.get(path)
        if r.header('X-Cache') == want or time.monotonic() > deadline:
            return r
        time.sleep(0.2)


def test_background_update_serves_stale_then_fresh(server, be):
    reply_with(be, [])
    srv = start(server, be, LOC % '''proxy_cache_valid 1s; proxy_cache_use_stale updating;
                                     proxy_cache_background_update on;''')
    first = srv.get('/x').body
    r = wait_status(srv, '/x', 'STALE')
    assert r.header('X-Cache') == 'STALE' and r.body == first  # the stale one at once
    r = wait_status(srv, '/x', 'HIT')
    assert r.header('X-Cache') == 'HIT' and r.body != first  # the background update stored the fresh one


def test_stale_if_error_extension(server, be):
    reply_with(be, [('Cache-Control', 'max-age=1, stale-if-error=60')])
    srv = start(server, be, LOC % '')
    srv.get('/x')
    assert wait_status(srv, '/x', 'EXPIRED').header('X-Cache') == 'EXPIRED'
    be.stop()
    r = wait_status(srv, '/x', 'STALE')
    assert r.header('X-Cache') == 'STALE' and r.body != b'' and r.status == 200
    srv.ignore_log = True


def test_pass_header_date_and_server_replace_the_own(server, be):
    be.handler = lambda r: (be.reply(200, b'x') if 'no' in r.target else
                            be.reply(200, b'x', [('Date', 'passed'), ('Server', 'passed')]))
    srv = start(server, be, '''location / { proxy_pass http://127.0.0.1:{be};
                                           proxy_pass_header Date; proxy_pass_header Server; }''')
    r = srv.get('/yes')
    assert r.header_all('Date') == ['passed'] and r.header_all('Server') == ['passed']
    r = srv.get('/no')
    assert r.header_all('Date') == [] and r.header_all('Server') == []
