"""proxy_store / proxy_store_access (nginx's ngx_http_proxy_module): a proxied 200 response is saved to a file —
`on`: the path root/alias gives the URI, a string: that path (variables) — written to a temp file in
proxy_temp_path first and renamed, with the directories made as needed, the mode of proxy_store_access (default
user:rw) and the mtime of Last-Modified. Other statuses, HEAD and a body shorter than announced are not saved,
and no temp file stays behind."""
import os
import socket
import stat
import time

import pytest

from conftest import simple
from helpers.backend import Backend

LM = 'Wed, 01 Jan 2020 10:20:30 GMT'
LM_T = 1577874030


def backend():
    be = Backend().start()

    def handle(req):
        if req.target.startswith('/missing'):
            return Backend.reply(404, b'nope')
        if req.target.startswith('/short'):  # announces 100 bytes, sends 5 and closes
            return Backend.reply(200, b'short', [('Content-Length', '100')], length=False)
        if req.target.startswith('/chunked'):
            return Backend.chunked(200, [b'chu', b'nked'])
        body = ('body of %s' % req.target).encode()
        head = Backend.reply(200, body, [('Last-Modified', LM)])
        return head[:len(head) - len(body)] if req.method == 'HEAD' else head
    be.handler = handle
    return be


def saved(path, timeout=5.0):
    """The stored file's bytes (nginx may rename it just after the client has the response)."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    with open(path, 'rb') as f:
        return f.read()


def temp_files(tmp):
    out = []
    for d, _, files in os.walk(os.path.join(tmp, 'proxy_temp')):
        out += [os.path.join(d, f) for f in files]
    return out


@pytest.fixture
def store_srv(server):
    be = backend()
    srv = server(simple('''
        root {html};
        proxy_temp_path {tmp}/proxy_temp;
        location /on/ {
            proxy_pass http://127.0.0.1:%d;
            proxy_store on;
        }
        location /str/ {
            proxy_pass http://127.0.0.1:%d;
            proxy_store {tmp}/saved$uri;
            proxy_store_access user:rw group:rw all:r;
        }
        location /grp/ {
            proxy_pass http://127.0.0.1:%d;
            proxy_store {tmp}/saved$uri;
            proxy_store_access group:r;
        }
        location /off/ {
            proxy_pass http://127.0.0.1:%d;
            proxy_store off;
        }
        location / {
            proxy_pass http://127.0.0.1:%d;
            proxy_store on;
        }''' % ((be.port,) * 5)))
    yield srv
    be.stop()


def test_store_on_saves_under_root_with_dirs_mode_and_mtime(store_srv):
    r = store_srv.get('/on/a/b.txt')
    assert r.status == 200 and r.body == b'body of /on/a/b.txt'
    p = os.path.join(store_srv.html, 'on/a/b.txt')
    assert saved(p) == b'body of /on/a/b.txt'
    st = os.stat(p)
    assert stat.S_IMODE(st.st_mode) == 0o600  # default user:rw
    assert int(st.st_mtime) == LM_T  # Last-Modified
    assert temp_files(store_srv.tmp) == []


def test_store_string_path_and_access(store_srv):
    r = store_srv.get('/str/x/y.html')
    assert r.status == 200 and r.body == b'body of /str/x/y.html'
    p = os.path.join(store_srv.tmp, 'saved/str/x/y.html')
    assert saved(p) == b'body of /str/x/y.html'
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o664
    r = store_srv.get('/grp/z')
    assert r.status == 200
    saved(os.path.join(store_srv.tmp, 'saved/grp/z'))
    # "If any group or all access permissions are specified then user permissions may be omitted"
    assert stat.S_IMODE(os.stat(os.path.join(store_srv.tmp, 'saved/grp/z')).st_mode) == 0o640


def test_store_chunked_response(store_srv):
    r = store_srv.get('/chunked/c')
    assert r.status == 200 and r.body == b'chunked'
    assert saved(os.path.join(store_srv.html, 'chunked/c')) == b'chunked'


def test_not_stored_404_head_short_off(store_srv):
    assert store_srv.get('/missing/m').status == 404
    assert store_srv.head('/on/h').status == 200
    assert store_srv.get('/off/o').status == 200
    s = socket.create_connection(('127.0.0.1', store_srv.port))
    s.sendall(b'GET /short/s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    s.settimeout(10)
    while s.recv(65536):
        pass
    s.close()
    assert store_srv.get('/on/last').status == 200  # stored after the others ended
    saved(os.path.join(store_srv.html, 'on/last'))
    for rel in ('missing/m', 'on/h', 'off/o', 'short/s'):
        assert not os.path.exists(os.path.join(store_srv.html, rel)), rel
    assert temp_files(store_srv.tmp) == []
    store_srv.ignore_log = r'upstream prematurely closed'


def test_store_access_invalid(prefix, run_cli):
    conf = prefix.conf(simple('location / { proxy_pass http://127.0.0.1:1; proxy_store_access user:rx; }'))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc != 0
    assert 'invalid value "user:rx" in ' in r.err


def test_fastcgi_store(server, prefix):
    from helpers.apppeers import fcgi_peer
    peer = fcgi_peer(prefix.tmp, unix=False)
    try:
        srv = server(simple('''
            fastcgi_temp_path {tmp}/fastcgi_temp;
            location / {
                fastcgi_pass %s;
                fastcgi_param REQUEST_URI /status/200;
                fastcgi_store {tmp}/fsaved$uri;
                fastcgi_store_access all:r;
            }''' % peer.addr))
        r = srv.get('/f/one')
        assert r.status == 200
        p = os.path.join(prefix.tmp, 'fsaved/f/one')
        assert saved(p) == r.body
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o604
    finally:
        peer.stop()


def test_store_needs_buffering(server):
    # nginx stores through its buffered path only: with proxy_buffering off nothing is saved
    be = backend()
    try:
        srv = server(simple('''
            root {html};
            location /nb/ {
                proxy_pass http://127.0.0.1:%d;
                proxy_buffering off;
                proxy_store on;
            }
            location / {
                proxy_pass http://127.0.0.1:%d;
                proxy_store on;
            }''' % (be.port, be.port)))
        assert srv.get('/nb/x').status == 200
        assert srv.get('/b/last').status == 200  # stored after the other ended
        saved(os.path.join(srv.html, 'b/last'))
        assert not os.path.exists(os.path.join(srv.html, 'nb/x'))
    finally:
        be.stop()
