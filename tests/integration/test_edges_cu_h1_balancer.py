"""What an HTTP/1.x backend answers, the cases test_edges_h1_upstream.py leaves out (heads ending LF CR LF,
versions and statuses out of range, conflicting framing fields, chunk sizes in upper case, too long or with a
broken data end, a kept-alive HTTP/1.0 answer), and load balancing as nginx documents it (weights of round robin,
backup servers with least_conn, max_conns, hash consistent and random past a server marked down)."""
import threading

import pytest

from conftest import simple, free_port
from helpers.backend import Backend

RAW = {
    '/lfcrlf': b'HTTP/1.1 200 OK\nContent-Length: 2\n\r\nok',
    '/v2': b'HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
    '/s600': b'HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nok',
    '/s2x': b'HTTP/1.1 2x0 Odd\r\nContent-Length: 2\r\n\r\nok',
    '/twocl': b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok',
    '/te-cl': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    '/te-gzip': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok',
    '/negcl': b'HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok',
    '/ctl': b'HTTP/1.1 200 OK\r\nX-Bad: a\x01b\r\nContent-Length: 2\r\n\r\nok',
    '/upperhex': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
                 b'1A\r\n' + b'abcdefghijklmnopqrstuvwxyz' + b'\r\n0\r\n\r\n',
    '/lfchunks': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
                 b'3\nabc\n2 \nde\n0\n\n',
    '/trailers': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
                 b'2\r\nok\r\n0\r\nX-T1: a\r\nnot a field\r\nX-T2: b\n\r\n',
    '/http10ka': b'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok',
    '/closed-token': b'HTTP/1.1 200 OK\r\nConnection: closed,xclose\r\nContent-Length: 2\r\n\r\nok',
}
CUT = {
    '/longsize': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n1000000000000000\r\nx',
    '/nocrlf': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX\r\n0\r\n\r\n',
    '/badcrlf': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\rX0\r\n\r\n',
    '/sizecr': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\rXok\r\n0\r\n\r\n',
    '/sizejunk': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2x\r\nok\r\n0\r\n\r\n',
}


@pytest.fixture
def be():
    b = Backend().start()
    raw = dict(RAW, **CUT)
    b.handler = lambda req: raw.get(req.target.split('?')[0], b'HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n')
    yield b
    b.stop()


@pytest.fixture
def srv(server, be):
    return server('''
http {
    upstream ka { server 127.0.0.1:%d; keepalive 4; }
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; }
        location /k/ { proxy_pass http://ka/; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
''' % (be.port, be.port))


@pytest.mark.parametrize('uri,body', [
    ('/lfcrlf', b'ok'), ('/upperhex', b'abcdefghijklmnopqrstuvwxyz'), ('/lfchunks', b'abcde'),
    ('/trailers', b'ok')])
def test_answers_read(srv, uri, body):
    r = srv.get(uri)
    assert r.status == 200 and r.body == body, r


@pytest.mark.hayate_only  # nginx 1.22 lets most of these through (newer nginx refuses the framing conflicts)
@pytest.mark.parametrize('uri', ['/v2', '/s600', '/s2x', '/twocl', '/te-cl', '/te-gzip', '/negcl', '/ctl'])
def test_invalid_heads_are_502(srv, uri):
    assert srv.get(uri).status == 502


@pytest.mark.parametrize('uri', sorted(CUT))
def test_broken_chunks_cut_the_response(srv, uri):
    """The client never sees a complete response: the connection is closed."""
    c = srv.conn()
    c.send(b'GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % uri.encode())
    while c._fill():
        pass
    assert not c.buf.endswith(b'0\r\n\r\n'), c.buf
    assert b'XX' not in c.buf and b'\rX' not in c.buf


def test_http10_keepalive_answer_is_not_reused(srv, be):
    """nginx keeps no connection after an HTTP/1.0 answer, whatever its Connection field says."""
    for _ in range(3):
        r = srv.get('/k/http10ka')
        assert r.status == 200 and r.body == b'ok'
    assert be.connections == 3


@pytest.mark.hayate_only  # nginx 1.22 looks for "close" anywhere in the field
def test_closed_is_not_the_close_token(srv, be):
    for _ in range(2):
        assert srv.get('/k/closed-token').body == b'ok'
    assert be.connections == 1


# ---------------------------------------------------------------- balancing

@pytest.fixture
def named():
    made = []

    def make(*names):
        out = []
        for n in names:
            b = Backend().start()
            b.handler = (lambda n: (lambda r: Backend.reply(200, n.encode())))(n)
            out.append(b)
        made.extend(out)
        return out
    yield make
    for b in made:
        b.stop()


def ups_conf(body, loc=''):
    return '''
http {
    upstream u { %s }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; %s } }
}
''' % (body, loc)


def test_round_robin_weights(server, named):
    a, b = named('a', 'b')
    srv = server(ups_conf('server 127.0.0.1:%d weight=3; server 127.0.0.1:%d;' % (a.port, b.port)))
    got = [srv.get('/').body for _ in range(8)]
    assert got.count(b'a') == 6 and got.count(b'b') == 2, got


@pytest.mark.parametrize('method', ['least_conn;', 'random;', 'hash $arg_k consistent;', 'random two;'])
def test_backup_serves_when_primaries_fail(server, named, method):
    bk, = named('backup')
    srv = server(ups_conf('%s server 127.0.0.1:%d; server 127.0.0.1:%d backup;' % (
        method, free_port(), bk.port) if 'hash' not in method and 'random' not in method else
        '%s server 127.0.0.1:%d; server 127.0.0.1:%d;' % (method, free_port(), bk.port)))
    srv.ignore_log = r'connect\(\) failed'
    for k in range(4):
        r = srv.get('/?k=%d' % k)
        assert r.status == 200 and r.body == b'backup', r


@pytest.mark.parametrize('method', ['', 'least_conn;', 'hash $arg_k consistent;', 'random;', 'random two;',
                                    'ip_hash;'])
def test_server_marked_down_gets_nothing(server, named, method):
    a, b, c = named('a', 'b', 'c')
    srv = server(ups_conf('%s server 127.0.0.1:%d; server 127.0.0.1:%d down; server 127.0.0.1:%d;' % (
        method, a.port, b.port, c.port)))
    got = {srv.get('/?k=%d' % k).body for k in range(10)}
    assert got and b'b' not in got and got <= {b'a', b'c'}, got
    assert b.requests == []


def test_max_conns_sends_the_second_request_elsewhere(server, named):
    slow, other = named('slow', 'other')
    gate = threading.Event()
    slow.handler = lambda r: [gate.wait, Backend.reply(200, b'slow')]
    srv = server(ups_conf('server 127.0.0.1:%d max_conns=1; server 127.0.0.1:%d backup;' % (slow.port, other.port)))
    first = []
    t = threading.Thread(target=lambda: first.append(srv.get('/').body))
    t.start()
    slow.wait_requests(1)
    try:
        assert srv.get('/').body == b'other'
    finally:
        gate.set()
        t.join(10)
    assert first == [b'slow']


def test_failed_peer_skipped_for_fail_timeout(server, named):
    a, = named('a')
    dead = free_port()
    srv = server(ups_conf('server 127.0.0.1:%d max_fails=1 fail_timeout=30s; server 127.0.0.1:%d;' % (
        dead, a.port)))
    srv.ignore_log = r'connect\(\) failed'
    assert [srv.get('/').body for _ in range(6)] == [b'a'] * 6
    srv.stop()
    assert srv.error_log().count('connect() failed') == 1  # tried once, then skipped
