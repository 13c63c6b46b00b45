"""How an upstream connection ends once its exchange is over (docs/DIFFERENCES.md, "Reverse proxy"): a TCP backend
that has closed its side first gets a reset instead of a FIN (no FIN/ACK round and no TIME_WAIT socket on the
backend: a tenth to a sixth of the proxy's CPU per request on loopback without keep-alive); every other ending is a
FIN: a backend that keeps the connection open (the proxy closes first) and a unix-socket backend here, an Upgrade
tunnel in test_edges_tunnel.py. The backend sees which one it got by reading after its own shutdown(SHUT_WR)
(helpers/rawpeer.py: ending). nginx sends FINs only, so these tests are hayate's."""
import queue
import socket

import pytest

from conftest import simple, IS_NGINX
from helpers.rawpeer import RawPeer, ending, recv_head

pytestmark = pytest.mark.skipif(IS_NGINX, reason="hayate's own behaviour: nginx always closes with a FIN")

BODY = b'x' * 1000


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
            if recv_head(c) is None:
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
