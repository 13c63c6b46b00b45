"""The response cache while an expired entry is being updated (upstream/cache.c): the lock file marks it updating
with proxy_cache_lock or without (nginx's node "updating"), so `proxy_cache_use_stale updating` gives the others
the stale one (UPDATING) instead of sending them all to the backend; a background update revalidates (a
conditional request) and can start from an SSI include; a 304's new life comes from the stored response's own
fields when the 304 has none (nginx reads them again). nginx-tests proxy_cache_use_stale.t covers the same ground
(its tests 18 and 30 failed here before). Configs are nginx's: HY_BIN=/usr/sbin/nginx runs the same checks."""
import threading
import time

import pytest

from conftest import simple
from helpers.backend import Backend

LM = 'Mon, 01 Jan 2024 00:00:00 GMT'


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def start(server, be, locations, files=None):
    http = 'proxy_cache_path {tmp}/cache levels=1:2 keys_zone=one:1m;\n'
    return server(simple('root {html};\n' + locations.replace('{be}', str(be.port)), http), files=files or {})


LOC = '''location /c/ {
    proxy_pass http://127.0.0.1:{be};
    proxy_cache one;
    %s
    add_header X-Cache $upstream_cache_status always;
}'''


def expire():
    time.sleep(2.1)  # an entry valid for 1 s is valid through its last second (nginx): 2 s later it has expired


def held_backend(be, headers=()):
    """The first request answers 'old' at once; later ones wait for the returned event (at most 10 s), then answer
    'new'. A conditional request gets a 304."""
    release = threading.Event()

    def h(r):
        if r.header('If-Modified-Since') == LM:
            return be.reply(304, b'', [('Last-Modified', LM)], length=False)
        if len(be.requests) == 1:
            return be.reply(200, b'old', [('Last-Modified', LM)] + list(headers))
        release.wait(10)
        return be.reply(200, b'new', [('Last-Modified', LM)] + list(headers))
    be.handler = h
    return release


@pytest.mark.parametrize('use_stale', [True, False])
def test_an_entry_being_updated_is_served_stale_without_the_lock(server, be, use_stale):
    release = held_backend(be)
    srv = start(server, be, LOC % ('proxy_cache_valid 1s;' +
                                   (' proxy_cache_use_stale updating;' if use_stale else '')))
    assert srv.get('/c/x').header('X-Cache') == 'MISS'
    expire()
    out = []
    t = threading.Thread(target=lambda: out.append(srv.get('/c/x')))
    t.start()
    try:
        be.wait_requests(2)  # the first one after expiry is at the backend, held
        if use_stale:
            r = srv.get('/c/x')
            assert (r.header('X-Cache'), r.body) == ('UPDATING', b'old')
            assert len(be.requests) == 2  # it did not go to the backend
        else:
            # not allowed stale: it goes to the backend too (and waits there, as the first one does)
            u = threading.Thread(target=lambda: out.append(srv.get('/c/x')))
            u.start()
            be.wait_requests(3)
    finally:
        release.set()
        t.join()
    if not use_stale:
        u.join()
    assert all((r.header('X-Cache'), r.body) == ('EXPIRED', b'new') for r in out)
    r = srv.get('/c/x')
    assert (r.header('X-Cache'), r.body) == ('HIT', b'new')


def wait_status(srv, path, want, tries=40):
    for _ in range(tries):
        r = srv.get(path)
        if r.header('X-Cache') == want:
            return r
        time.sleep(0.2)
    return r


def test_background_update_revalidates(server, be):
    # the stored response lives 1 s and may be served stale for 30 more; the 304 carries no life of its own
    held_backend(be, [('Cache-Control', 'max-age=1, stale-while-revalidate=30')])
    srv = start(server, be, LOC % 'proxy_cache_revalidate on; proxy_cache_background_update on;')
    assert srv.get('/c/x').header('X-Cache') == 'MISS'
    expire()
    r = srv.get('/c/x')
    assert (r.header('X-Cache'), r.body) == ('STALE', b'old')
    r = wait_status(srv, '/c/x', 'HIT')  # the update's 304 renewed the entry from its stored Cache-Control
    assert (r.header('X-Cache'), r.body) == ('HIT', b'old')
    assert be.requests[1].header('If-Modified-Since') == LM


def test_a_304_renews_the_entry_from_its_stored_fields(server, be):
    held_backend(be, [('Cache-Control', 'max-age=1')])
    srv = start(server, be, LOC % 'proxy_cache_revalidate on;')
    srv.get('/c/x')
    expire()
    r = srv.get('/c/x')
    assert (r.header('X-Cache'), r.body) == ('REVALIDATED', b'old')
    r = srv.get('/c/x')  # max-age=1 counted again from the revalidation: within it (nginx)
    assert (r.header('X-Cache'), r.body) == ('HIT', b'old')
    assert len(be.requests) == 2


def test_an_ssi_include_gets_the_stale_entry_and_updates_it_in_the_background(server, be):
    release = held_backend(be, [('Cache-Control', 'max-age=1, stale-while-revalidate=30')])
    srv = start(server, be, 'location /p/ { ssi on; }\n' + LOC % 'proxy_cache_background_update on;',
                files={'html/p/page.html': '[<!--#include virtual="/c/x" -->]'})
    try:
        assert srv.get('/p/page.html').body == b'[old]'
        expire()
        # the include is answered from the stale entry while its update waits at the backend
        assert srv.get('/p/page.html').body == b'[old]'
        be.wait_requests(2)
    finally:
        release.set()
    r = wait_status(srv, '/c/x', 'HIT')
    assert (r.header('X-Cache'), r.body) == ('HIT', b'new')


def test_a_lock_file_taken_over_by_its_age_makes_this_request_the_updater(server, be, prefix):
    # a mark older than proxy_cache_lock_age (a worker that died while updating): this request takes it over and
    # updates the entry itself, instead of being told UPDATING by the mark it just refreshed
    import hashlib
    import os
    be.handler = lambda r: be.reply(200, ('n=%d' % len(be.requests)).encode())
    srv = start(server, be, LOC % '''proxy_cache_valid 1s; proxy_cache_key k; proxy_cache_lock on;
                                     proxy_cache_use_stale updating;''')
    assert srv.get('/c/x').body == b'n=1'
    h = hashlib.md5(b'k').hexdigest()
    lock = os.path.join(prefix.tmp, 'cache', h[-1], h[-3:-1], h + '.lock')
    with open(lock, 'w'):
        pass
    os.chmod(lock, 0o666)
    os.utime(lock, (time.time() - 60, time.time() - 60))
    expire()
    r = srv.get('/c/x')
    assert (r.header('X-Cache'), r.body) == ('EXPIRED', b'n=2')
    assert srv.get('/c/x').header('X-Cache') == 'HIT'
