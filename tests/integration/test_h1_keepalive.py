"""Keep-alive, keepalive_requests, keepalive_timeout and pipelining."""
import pytest

from conftest import simple
from helpers.http1 import build_request

FILES = {'html/a.txt': 'AAA', 'html/b.txt': 'BBBB', 'html/c.txt': 'CCCCC'}


def req(path, **kw):
    return build_request('GET', path, **kw)


def test_keepalive_reuse(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn()
    for i in range(5):
        r = c.request(req('/a.txt'))
        assert r.status == 200 and r.body == b'AAA'
        assert r.header('Connection').lower() == 'keep-alive'
    # still usable after the fifth response: the proof is a sixth answer on the same socket, not a quiet wait
    assert c.request(req('/a.txt')).status == 200


def test_connection_close_honoured(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn()
    r = c.request(req('/a.txt', headers={'Connection': 'close'}))
    assert r.header('Connection') == 'close'
    assert c.is_closed(5) and c.buf == b''


def test_keepalive_requests(server):
    s = server(simple('root {html};\n        keepalive_requests 3;'), files=FILES)
    c = s.conn()
    r1 = c.request(req('/a.txt'))
    r2 = c.request(req('/a.txt'))
    r3 = c.request(req('/a.txt'))
    assert r1.header('Connection').lower() == 'keep-alive'
    assert r2.header('Connection').lower() == 'keep-alive'
    assert r3.header('Connection') == 'close'
    assert r3.status == 200 and r3.body == b'AAA'
    assert c.is_closed(5)


def test_keepalive_requests_pipelined(server):
    s = server(simple('root {html};\n        keepalive_requests 2;'), files=FILES)
    c = s.conn()
    c.send(req('/a.txt') + req('/b.txt') + req('/c.txt'))
    assert c.read_response().body == b'AAA'
    r = c.read_response()
    assert r.body == b'BBBB' and r.header('Connection') == 'close'
    assert c.is_closed(5)
    assert c.buf == b''


def test_keepalive_timeout(server):
    s = server(simple('root {html};\n        keepalive_timeout 1;'), files=FILES)
    c = s.conn(timeout=15)
    r = c.request(req('/a.txt'))
    assert r.header('Connection').lower() == 'keep-alive'
    assert r.header('Keep-Alive') is None
    assert c.is_closed(10)
    assert c.buf == b''


def test_keepalive_timeout_header(server):
    s = server(simple('root {html};\n        keepalive_timeout 30 25;'), files=FILES)
    r = s.conn().request(req('/a.txt'))
    assert r.header('Keep-Alive') == 'timeout=25'


def test_keepalive_timeout_zero(server):
    s = server(simple('root {html};\n        keepalive_timeout 0;'), files=FILES)
    c = s.conn()
    r = c.request(req('/a.txt'))
    assert r.header('Connection') == 'close'
    assert c.is_closed(5)


def test_keepalive_disabled_pipelined(server):
    s = server(simple('root {html};\n        keepalive_timeout 0;'), files=FILES)
    c = s.conn()
    c.send(req('/a.txt') + req('/b.txt'))
    r = c.read_response()
    assert r.body == b'AAA' and r.header('Connection') == 'close'
    assert c.is_closed(5)
    assert c.buf == b''


def test_pipelining_in_order(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn()
    c.send(req('/a.txt') + req('/missing') + req('/b.txt') + build_request('HEAD', '/c.txt') +
           req('/c.txt', headers={'Connection': 'close'}))
    bodies = []
    for m in ('GET', 'GET', 'GET', 'HEAD', 'GET'):
        r = c.read_response(m)
        bodies.append((r.status, r.body))
    assert bodies[0] == (200, b'AAA')
    assert bodies[1][0] == 404
    assert bodies[2] == (200, b'BBBB')
    assert bodies[3] == (200, b'')
    assert bodies[4] == (200, b'CCCCC')
    assert c.is_closed(5) and c.buf == b''


def test_pipelining_split_across_writes(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn()
    data = req('/a.txt') + req('/b.txt') + req('/c.txt', headers={'Connection': 'close'})
    # send in odd pieces, splitting inside tokens and CRLFs
    for i in range(0, len(data), 7):
        c.send(data[i:i + 7])
    assert [c.read_response().body for _ in range(3)] == [b'AAA', b'BBBB', b'CCCCC']


def test_pipelining_many(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn()
    n = 50
    c.send(req('/a.txt') * (n - 1) + req('/b.txt', headers={'Connection': 'close'}))
    for i in range(n - 1):
        r = c.read_response()
        assert r.status == 200 and r.body == b'AAA', i
    assert c.read_response().body == b'BBBB'
    assert c.is_closed(5)


def test_idle_keepalive_closed_on_quit(server):
    s = server(simple('root {html};'), files=FILES)
    c = s.conn(timeout=10)
    assert c.request(req('/a.txt')).status == 200
    s.proc.send_signal(__import__('signal').SIGQUIT)
    assert c.is_closed(8)
    assert s.proc.wait(5) == 0


def test_many_concurrent_connections(server):
    s = server(simple('root {html};'), files=FILES)
    conns = [s.conn(timeout=10) for _ in range(300)]
    for c in conns:
        c.send(req('/a.txt'))
    for c in conns:
        r = c.read_response()
        assert r.status == 200 and r.body == b'AAA'
    # and all of them are still usable
    for c in conns[::10]:
        assert c.request(req('/b.txt')).body == b'BBBB'
    for c in conns:
        c.close()


def test_client_closes_early(server):
    s = server(simple('root {html};'), files=FILES)
    for _ in range(20):
        c = s.conn()
        c.send(b'GET /a.txt HTTP/1.1\r\nHost: a\r\n')   # half a request, then gone
        c.close()
        c = s.conn()
        c.close()                                       # connect and close at once
    assert s.get('/a.txt').body == b'AAA'
