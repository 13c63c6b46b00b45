"""The cache manager (upstream/cache_manager.c): `inactive=` removes entries nobody asked for that long, `max_size=`
removes the least recently used above it. The disk is observed directly (one file per key, named by md5 of the key
under levels=1:2); a backend that counts its requests shows a removed entry being fetched again. Configs are nginx's:
HY_BIN=/usr/sbin/nginx runs the same checks (master_process on: nginx's manager is a process of its own)."""
import hashlib
import os
import re
import time

import pytest

from conftest import IS_NGINX
from helpers.backend import Backend

CONF = '''daemon off;
master_process on;
worker_processes 2;
user root;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
events { worker_connections 256; }
http {
    access_log {tmp}/logs/access.log;
    proxy_cache_path {tmp}/cache levels=1:2 keys_zone=one:1m %s;
    server {
        listen 127.0.0.1:{port};
        location / {
            proxy_pass http://127.0.0.1:%d;
            proxy_cache one;
            proxy_cache_key $uri;
            proxy_cache_valid 200 1h;
            add_header X-Cache $upstream_cache_status always;
        }
    }
}
'''

HEX32 = re.compile(r'^[0-9a-f]{32}$')


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def counting(be, size=None):
    def h(r):
        body = ('n=%d %s' % (len(be.requests), r.target)).encode()
        if size:
            body = body.ljust(size, b'.')
        return be.reply(200, body)
    be.handler = h


def start(server, be, params):
    if os.geteuid() != 0:
        pytest.skip('the config runs workers as root')
    return server(CONF % (params, be.port), full=True)


def entry_file(srv, key):
    h = hashlib.md5(key.encode()).hexdigest()
    return os.path.join(srv.prefix.path('cache'), h[-1], h[-3:-1], h)


def entries(srv):
    out = {}
    for d, _, files in os.walk(srv.prefix.path('cache')):
        for f in files:
            if HEX32.match(f):
                p = os.path.join(d, f)
                try:
                    out[p] = os.stat(p).st_size
                except FileNotFoundError:
                    pass
    return out


def wait_exists(paths, timeout=5.0):
    # nginx renames its temporary file into place just after the response's last byte
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths) and time.monotonic() < deadline:
        time.sleep(0.02)
    return all(os.path.exists(p) for p in paths)


def hits(be, target):
    return sum(1 for r in be.requests if r.target == target)


def test_inactive_removes_unused_entry_keeps_used_one(server, be):
    counting(be)
    srv = start(server, be, 'inactive=2s')
    assert srv.get('/old').header('X-Cache') == 'MISS'
    assert srv.get('/kept').header('X-Cache') == 'MISS'
    old, kept = entry_file(srv, '/old'), entry_file(srv, '/kept')
    assert wait_exists([old, kept])
    deadline = time.monotonic() + 25
    while os.path.exists(old) and time.monotonic() < deadline:
        assert srv.get('/kept').header('X-Cache') == 'HIT'  # used every ~0.3 s: stays
        time.sleep(0.3)
    assert not os.path.exists(old), 'the entry unused for longer than inactive= is still on disk'
    assert os.path.exists(kept)
    assert srv.get('/kept').header('X-Cache') == 'HIT'
    assert hits(be, '/kept') == 1
    r = srv.get('/old')
    assert r.status == 200 and r.header('X-Cache') == 'MISS'
    assert hits(be, '/old') == 2


def test_max_size_removes_least_recently_used(server, be):
    counting(be, size=8000)
    srv = start(server, be, 'max_size=20k')
    for i in range(1, 6):
        r = srv.get('/e%d' % i)
        assert r.status == 200 and r.header('X-Cache') == 'MISS'
    assert wait_exists([entry_file(srv, '/e%d' % i) for i in range(1, 6)])
    time.sleep(0.05)  # file times tick coarsely (a few ms): the access below must come out later than the stores
    assert srv.get('/e1').header('X-Cache') == 'HIT'  # now the most recently used
    deadline = time.monotonic() + 25
    while sum(entries(srv).values()) > 20 * 1024 and time.monotonic() < deadline:
        time.sleep(0.2)
    total = sum(entries(srv).values())
    assert total <= 20 * 1024, 'cache still holds %d bytes' % total
    assert os.path.exists(entry_file(srv, '/e1'))
    assert not os.path.exists(entry_file(srv, '/e2'))  # the least recently used went first
    assert srv.get('/e1').header('X-Cache') == 'HIT'
    assert hits(be, '/e1') == 1
    assert srv.get('/e2').header('X-Cache') == 'MISS'
    assert hits(be, '/e2') == 2


def test_max_size_zero_keeps_nothing(server, be):
    counting(be)
    srv = start(server, be, 'max_size=0')
    srv.ignore_log = r'ignore long locked inactive cache entry'  # nginx, about the entry being (re)stored
    for i in range(3):
        assert srv.get('/z%d' % i).header('X-Cache') == 'MISS'
    assert wait_exists([entry_file(srv, '/z%d' % i) for i in range(3)])
    deadline = time.monotonic() + 25
    while entries(srv) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not entries(srv), 'max_size=0: entries still on disk'
    assert srv.get('/z0').header('X-Cache') == 'MISS' and hits(be, '/z0') == 2
