"""How an upstream connection ends once its exchange is over (docs/DIFFERENCES.md, "Reverse proxy"): a TCP backend
that has closed its side first gets a reset instead of a FIN (no FIN/ACK round and no TIME_WAIT socket on the
backend, most of the proxy's CPU per connection after the connect); every other ending is a FIN: a backend that
keeps the connection open (the proxy closes first), a unix-socket backend, and an Upgrade tunnel. The backend sees
which one it got by reading after its own shutdown(SHUT_WR): ECONNRESET for a reset, EOF for a FIN. nginx sends
FINs only, so these tests are hayate's."""
import queue
import socket
import threading

import pytest

from conftest import simple, IS_NGINX
from helpers.rawpeer import RawPeer

pytestmark = pytest.mark.skipif(IS_NGINX, reason="hayate's own behaviour: nginx always closes with a FIN")

BODY = b'x' * 1000


def read_head(c):
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = c.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def ending(c, timeout=5.0):
    """After our shutdown(SHUT_WR): 'reset', 'fin', or 'timeout' (the proxy kept the connection)."""
    c.settimeout(timeout)
    try:
        while True:
            if not c.recv(65536):
                return 'fin'
    except ConnectionResetError:
        return 'reset'
    except socket.timeout:
        return 'timeout'


class Peer(RawPeer):
    """A backend on TCP (or a unix socket at path) answering each connection per `mode`, reporting how each
    connection ended in `endings`:
      close    Content-Length, then shutdown(SHUT_WR) with the last bytes (TCP_CORK: data and FIN in one segment)
      eof      no Content-Length: the body ends with the connection (HTTP/1.0 style)
      open     Content-Length and keep-alive: the backend waits for the proxy to close first
      idle     Content-Length and keep-alive, then after `idle` seconds the backend closes the unused connection"""

    def __init__(self, mode, path=None, idle=0.3):
        self.mode, self.idle, self.unix = mode, idle, path is not None
        self.endings = queue.Queue()
        super().__init__(path=path)

    def serve(self, c):
        try:
            if read_head(c) is None:
                return
            length = b'' if self.mode == 'eof' else b'Content-Length: %d\r\n' % len(BODY)
            resp = b'HTTP/1.1 200 OK\r\n' + length + b'\r\n' + BODY
            if self.mode == 'close' and not self.unix:
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            c.sendall(resp)
            if self.mode == 'open':
                self.endings.put(ending(c))  # no shutdown: whatever ends it is the proxy's
                return
            if self.mode == 'idle':
                c.settimeout(self.idle)
                try:
                    if c.recv(1):
                        return
                except socket.timeout:
                    pass
            c.shutdown(socket.SHUT_WR)
            self.endings.put(ending(c))
        finally:
            c.close()


@pytest.fixture
def peer():
    made = []

    def make(mode, **kw):
        p = Peer(mode, **kw)
        made.append(p)
        return p
    yield make
    for p in made:
        p.stop()


def proxied(server, upstream, keepalive=''):
    return server(simple('''
        location / { proxy_pass http://be; proxy_http_version 1.1; proxy_set_header Connection ""; }''',
                         'upstream be { server %s; %s }' % (upstream, keepalive)))


@pytest.mark.parametrize('mode', ['close', 'eof'])
def test_backend_that_closed_first_gets_a_reset(server, peer, mode):
    p = peer(mode)
    srv = proxied(server, '127.0.0.1:%d' % p.port)
    for _ in range(3):
        r = srv.get('/a')
        assert r.status == 200 and r.body == BODY
        assert p.endings.get(timeout=10) == 'reset'
    assert 'prematurely' not in srv.error_log()


def test_backend_that_keeps_the_connection_gets_a_fin(server, peer):
    p = peer('open')
    srv = proxied(server, '127.0.0.1:%d' % p.port)  # no keepalive: the proxy closes after the response
    for _ in range(2):
        r = srv.get('/a')
        assert r.status == 200 and r.body == BODY
        assert p.endings.get(timeout=10) == 'fin'


def test_unix_socket_backend_gets_a_fin(server, peer, tmp_path):
    path = str(tmp_path / 'be.sock')
    p = peer('close', path=path)
    srv = proxied(server, 'unix:' + path)
    r = srv.get('/a')
    assert r.status == 200 and r.body == BODY
    assert p.endings.get(timeout=10) == 'fin'


def test_idle_pooled_connection_closed_by_the_backend_gets_a_reset(server, peer):
    p = peer('idle')
    srv = proxied(server, '127.0.0.1:%d' % p.port, 'keepalive 4;')
    r = srv.get('/a')
    assert r.status == 200 and r.body == BODY
    assert p.endings.get(timeout=10) == 'reset'  # the pool's watch read the EOF and ended the connection
    r = srv.get('/b')  # the next request takes a fresh connection
    assert r.status == 200 and r.body == BODY
    assert p.endings.get(timeout=10) == 'reset'


def test_pooled_connection_closed_by_the_proxy_gets_a_fin(server, peer):
    p = peer('open')
    srv = proxied(server, '127.0.0.1:%d' % p.port, 'keepalive 4; keepalive_requests 1;')
    r = srv.get('/a')  # keepalive_requests reached: the proxy closes, the backend had not
    assert r.status == 200 and r.body == BODY
    assert p.endings.get(timeout=10) == 'fin'


def test_tunnel_ended_by_the_backend_ends_with_a_fin(server):
    """An Upgrade tunnel that the backend's close ends (either side's close ends both, as nginx) closes with a FIN:
    in a tunnel, bytes may still be queued toward a backend that only half-closed, and a reset would drop them."""
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(4)
    end = queue.Queue()

    def serve():
        c, _ = lsock.accept()
        with c:
            read_head(c)
            c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: upgrade\r\n\r\nhello')
            c.shutdown(socket.SHUT_WR)
            end.put(ending(c))
    threading.Thread(target=serve, daemon=True).start()
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
                     proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; }'''
                        % lsock.getsockname()[1]))
    try:
        s = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
        s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\nConnection: upgrade\r\n\r\n')
        data = b''
        while not data.endswith(b'hello'):
            chunk = s.recv(65536)
            assert chunk, data
            data += chunk
        assert data.startswith(b'HTTP/1.1 101')
        assert end.get(timeout=10) == 'fin'
        s.close()
    finally:
        lsock.close()
