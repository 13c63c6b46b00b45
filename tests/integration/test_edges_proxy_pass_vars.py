"""proxy_pass with variables: the evaluated URL names an IPv4 or bracketed IPv6 literal with a port, a unix
socket, or a host name (resolved only with a resolver: without one, 502 and nginx's "no resolver defined to
resolve" line); an upper-case scheme is accepted; an evaluated URL without a host is an error. Backends are
helpers.backend and a small IPv6 peer; they run against Debian's nginx too."""
import socket
import threading

import pytest

from conftest import simple
from helpers.backend import Backend


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda req: b.reply(200, ('v4 ' + req.target).encode())
    yield b
    b.stop()


@pytest.fixture
def be6():
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('::1', 0))
    s.listen(8)

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            buf = b''
            while b'\r\n\r\n' not in buf:
                d = c.recv(4096)
                if not d:
                    break
                buf += d
            c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nv6')
            c.close()
    threading.Thread(target=loop, daemon=True).start()
    yield s.getsockname()[1]
    s.close()


@pytest.fixture
def beu(tmp_path):
    path = str(tmp_path / 'be.sock')
    b = Backend(unix=path).start()
    b.handler = lambda req: b.reply(200, b'unix')
    yield path
    b.stop()


@pytest.fixture
def srv(server):
    s = server(simple('''
        location /v/ { proxy_pass http://$arg_h; }
        location /u/ { proxy_pass HTTP://$arg_h; }
    '''))
    s.ignore_log = r'no resolver defined'
    return s


def test_ipv4_literal(srv, be):
    r = srv.get('/v/x?h=127.0.0.1:%d' % be.port)
    assert r.status == 200 and r.body.startswith(b'v4 /v/x'), r


def test_ipv6_literal(srv, be6):
    r = srv.get('/v/x?h=[::1]:%d' % be6)
    assert r.status == 200 and r.body == b'v6', r


def test_unix_socket(srv, beu):
    r = srv.get('/v/x?h=unix:%s' % beu)
    assert r.status == 200 and r.body == b'unix', r


def test_upper_case_scheme(srv, be):
    r = srv.get('/u/x?h=127.0.0.1:%d' % be.port)
    assert r.status == 200 and r.body.startswith(b'v4 '), r


def test_name_without_resolver(srv):
    r = srv.get('/v/x?h=name.invalid')
    assert r.status == 502
    assert 'no resolver defined to resolve name.invalid' in srv.error_log()


def test_no_host(srv):
    r = srv.get('/v/x?h=')
    assert r.status == 500
