"""listen parameters are applied to the sockets, seen from outside with ss(8) (iproute2): rcvbuf/sndbuf on
the listening socket, so_keepalive on accepted connections, deferred (TCP_DEFER_ACCEPT) keeping a silent
client out of the accept queue. Each assertion is compared with the same listen line without the option."""
import re
import socket
import subprocess

import pytest

from conftest import simple
from helpers.process import wait_until


def ss(*args):
    return subprocess.run(['ss'] + list(args), stdout=subprocess.PIPE, universal_newlines=True, timeout=10).stdout


def skmem(port):
    m = re.search(r'skmem:\(([^)]*)\)', ss('-ltnm', 'sport = :%d' % port))
    assert m, 'no listening socket on %d' % port
    return dict(re.match(r'([a-z_]+)(\d+)', kv).groups() for kv in m.group(1).split(','))


def server_side(port):
    """{peer port: (state, timer text)} for the server's end of every connection on `port`."""
    out = {}
    for line in ss('-tnoa', 'sport = :%d' % port).splitlines()[1:]:
        f = line.split()
        if f and f[0] != 'LISTEN':
            out[int(f[4].rsplit(':', 1)[1])] = (f[0], line)
    return out


class Listener:
    def __init__(self, srv, port):
        self.srv, self.port = srv, port


@pytest.fixture
def listening(server):
    """One server with the options on {port} and the same listen line without them on {port2}."""
    def start(params):
        s = server(simple('root {html};', listen='listen 127.0.0.1:{port} %s;\n        listen 127.0.0.1:{port2};'
                          % params), files={'html/a.txt': 'A'})
        return Listener(s, s.port), Listener(s, s.port2)
    return start


def test_rcvbuf_sndbuf(listening):
    s, plain = listening('rcvbuf=64k sndbuf=96k')
    mem = skmem(s.port)
    assert (mem['rb'], mem['tb']) == ('131072', '196608')      # the kernel doubles what was set
    other = skmem(plain.port)
    assert (other['rb'], other['tb']) != ('131072', '196608')


def keepalive_timer(s):
    c = socket.create_connection(('127.0.0.1', s.port))
    try:
        c.sendall(b'GET /a.txt HTTP/1.1\r\nHost: a\r\n\r\n')
        assert c.recv(100).startswith(b'HTTP/1.1 200')
        me = c.getsockname()[1]
        return server_side(s.port)[me][1]
    finally:
        c.close()


def test_so_keepalive(listening):
    s, plain = listening('so_keepalive=on')
    assert 'timer:(keepalive' in keepalive_timer(s)
    assert 'timer:(keepalive' not in keepalive_timer(plain)


def silent_client_state(s):
    c = socket.create_connection(('127.0.0.1', s.port))
    try:
        me = c.getsockname()[1]
        return wait_until(lambda: server_side(s.port).get(me, (None,))[0], 5)
    finally:
        c.close()


def test_deferred(listening):
    # TCP_DEFER_ACCEPT: a client that sent nothing is not a connection the server can accept yet
    s, plain = listening('deferred')
    assert silent_client_state(s) == 'SYN-RECV'
    assert silent_client_state(plain) == 'ESTAB'
