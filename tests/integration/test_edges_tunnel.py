"""Upgraded (WebSocket) tunnels through proxy_pass: the backend closing first reaches the client, an idle
tunnel ends after proxy_read_timeout, data the backend sends right after the 101 head and data the client
sends before reading it both pass, and a tunnel the backend ends closes the upstream side with a FIN (a reset
could drop bytes still queued toward a backend that only half-closed; test_proxy_close_reset.py has the
connections that end with one). The backend is a small raw upgrade peer in this file; they run against Debian's
nginx too."""
import socket
import threading

import pytest

from conftest import simple
from helpers.rawpeer import RawPeer, ending, recv_head


class UpgradePeer(RawPeer):
    """Answers 101, then per connection: mode 'close' sends "bye" and closes; 'half' sends "bye", shuts down its
    write side and records in `end` how the proxy ended the connection (helpers/rawpeer.py: ending); 'echo'
    echoes upper-cased; 'silent' reads and says nothing."""

    def __init__(self, mode):
        self.mode = mode
        self.closed = threading.Event()
        self.end = None
        super().__init__(16)

    def serve(self, c):
        try:
            if recv_head(c) is None:
                return
            c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
            if self.mode == 'close':
                c.sendall(b'bye')
                return
            if self.mode == 'half':
                c.sendall(b'bye')
                c.shutdown(socket.SHUT_WR)
                self.end = ending(c, 10)
                return
            while True:
                d = c.recv(65536)
                if not d:
                    break
                if self.mode == 'echo':
                    c.sendall(d.upper())
        except OSError:
            pass
        finally:
            c.close()
            self.closed.set()


def open_tunnel(server, peer, extra=''):
    srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; %s }''' % (peer.port, extra)))
    c = srv.conn()
    c.send(b'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    head = c.read_head()
    assert head[1] == 101
    return srv, c


def read_until_close(c):
    data = bytes(c.buf)
    c.buf = b''
    c.sock.settimeout(10)
    while True:
        d = c.sock.recv(65536)
        if not d:
            return data
        data += d


@pytest.fixture
def peers():
    made = []

    def make(mode):
        p = UpgradePeer(mode)
        made.append(p)
        return p
    yield make
    for p in made:
        p.stop()


def test_backend_closing_first_reaches_the_client(server, peers):
    srv, c = open_tunnel(server, peers('close'))
    assert read_until_close(c) == b'bye'


def test_tunnel_ended_by_the_backend_closes_the_upstream_with_a_fin(server, peers):
    peer = peers('half')
    srv, c = open_tunnel(server, peer)
    assert read_until_close(c) == b'bye'
    assert peer.closed.wait(10), 'the backend side was not closed'
    assert peer.end == 'fin'


def test_idle_tunnel_ends_after_read_timeout(server, peers):
    peer = peers('silent')
    srv, c = open_tunnel(server, peer, 'proxy_read_timeout 1s;')
    assert read_until_close(c) == b''
    assert peer.closed.wait(10), 'the backend side was not closed'


def test_client_data_sent_with_the_request(server, peers):
    peer = peers('echo')
    srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; }''' % peer.port))
    c = srv.conn()
    c.send(b'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    head = c.read_head()
    assert head[1] == 101
    c.sock.sendall(b'ping')
    got = bytes(c.buf)
    while len(got) < 4:
        d = c.sock.recv(100)
        assert d
        got += d
    assert got == b'PING'
    c.sock.close()
    assert peer.closed.wait(10), 'the client close did not reach the backend'
