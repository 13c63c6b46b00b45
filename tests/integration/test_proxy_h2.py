"""proxy_http_version 2: HTTP/2 to upstream servers (h2c with prior knowledge, or ALPN "h2" over TLS), against a
python3-h2 backend (helpers/h2backend.py) that records what it got and counts connections."""
import os
import socket
import time

import pytest

from conftest import simple, free_port
from helpers.h2backend import H2Backend, H2Reply
from helpers.tls import make_cert


@pytest.fixture
def be():
    backends = []

    def make(**kw):
        b = H2Backend(**kw).start()
        backends.append(b)
        return b
    yield make
    for b in backends:
        b.stop()


def conf(port, extra='', http_extra='', keepalive=''):
    return simple('''
        proxy_http_version 2;
        location / {
            proxy_pass http://up;
            %s
        }''' % extra, http_extra='''
    upstream up { server 127.0.0.1:%d; %s }
    log_format tr "$uri $upstream_trailer_x_t $upstream_status";
    access_log {tmp}/logs/tr.log tr;
    %s''' % (port, keepalive, http_extra))


def read_all(port, data, c=None):
    """Send data (on a new connection to port, or on c) and read until the server closes."""
    c = c or socket.create_connection(('127.0.0.1', port), timeout=10)
    c.sendall(data)
    resp = b''
    while True:
        d = c.recv(65536)
        if not d:
            break
        resp += d
    c.close()
    return resp


def wait_for(cond, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_get_head_and_fields_both_ways(server, be):
    b = be()
    b.handler = lambda req: H2Reply(200, b'' if req.header(':method') == 'HEAD' else b'SEE-THIS',
                                    headers=[('x-from-up', 'yes'), ('content-type', 'text/x')])
    srv = server(conf(b.port, 'proxy_set_header X-Custom "v1";'))
    r = srv.get('/path?a=1', headers={'X-Client': 'c1', 'Connection': 'close'})
    assert r.status == 200 and r.body == b'SEE-THIS'
    assert r.header('x-from-up') == 'yes' and r.header('content-type') == 'text/x'
    req = b.requests[-1]
    assert req.header(':method') == 'GET' and req.header(':path') == '/path?a=1'
    assert req.header(':scheme') == 'http' and req.header(':authority') == 'up'
    assert req.header('x-custom') == 'v1' and req.header('x-client') == 'c1'
    for hop in ('connection', 'host', 'keep-alive', 'transfer-encoding', 'upgrade'):
        assert req.header(hop) is None, hop
    h = srv.head('/h')
    assert h.status == 200 and h.body == b''
    assert b.requests[-1].header(':method') == 'HEAD'


def test_status_and_not_found_pass_through(server, be):
    b = be()
    b.handler = lambda req: H2Reply(404, b'nope')
    srv = server(conf(b.port))
    r = srv.get('/x')
    assert r.status == 404 and r.body == b'nope'


@pytest.mark.parametrize('buffering', ['on', 'off'])
def test_request_bodies_with_flow_control(server, be, buffering):
    b = be()  # past the initial 64k window: the body must wait for WINDOW_UPDATEs
    b.handler = lambda req: H2Reply(200, b'got %d' % len(req.body))
    srv = server(conf(b.port, 'proxy_request_buffering %s; client_body_buffer_size 16k;' % buffering))
    small = srv.get('/p', method='POST', body=b'hello')
    assert small.status == 200 and small.body == b'got 5'
    assert b.requests[-1].body == b'hello' and b.requests[-1].header('content-length') == '5'
    big = os.urandom(200000)  # past the buffer: a temp file when buffered
    r = srv.get('/p', method='POST', body=big)
    assert r.status == 200 and r.body == b'got 200000'
    assert b.requests[-1].body == big


def test_unbuffered_chunked_request_body(server, be):
    b = be()
    b.handler = lambda req: H2Reply(200, b'got %d' % len(req.body))
    srv = server(conf(b.port, 'proxy_request_buffering off;'))
    c = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
    c.sendall(b'POST /c HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n')
    body = b''
    for i in range(5):
        part = bytes([65 + i]) * 30000
        body += part
        c.sendall(b'%x\r\n%s\r\n' % (len(part), part))
    resp = read_all(None, b'0\r\n\r\n', c)
    assert resp.startswith(b'HTTP/1.1 200') and b'\r\ngot 150000\r\n' in resp, resp
    req = b.requests[-1]
    assert req.body == body and req.header('content-length') is None


def test_large_response_body_over_many_windows(server, be):
    b = be()
    data = os.urandom(1 << 20)
    b.handler = lambda req: H2Reply(200, data, chunk=16384)
    srv = server(conf(b.port, 'proxy_buffering off;'))
    r = srv.get('/big')
    assert r.status == 200 and r.body == data


def test_keepalive_reuses_one_connection(server, be):
    b = be()
    b.handler = lambda req: H2Reply(200, b'n%d' % req.conn_no)
    srv = server(conf(b.port, keepalive='keepalive 4;'))
    for _ in range(4):
        r = srv.get('/k')
        assert r.status == 200 and r.body == b'n1'
    r = srv.get('/k', method='POST', body=b'xyz')
    assert r.status == 200 and r.body == b'n1'
    assert b.connections == 1
    assert [q.header(':path') for q in b.requests] == ['/k'] * 5


def test_idle_pooled_connection_answers_ping_and_stays(server, be):
    """A PING from the backend while the connection waits in the keep-alive pool is answered (RFC 9113 6.7) and
    the connection is used again; before, any byte on an idle connection closed it."""
    b = be()
    b.handler = lambda req: H2Reply(200, b'n%d' % req.conn_no)
    srv = server(conf(b.port, keepalive='keepalive 4;'))
    assert srv.get('/p').body == b'n1'
    assert wait_for(lambda: b.open_connections == 1)
    for i in range(1, 3):
        assert b.ping_all() == 1
        assert wait_for(lambda: b.ping_acks == i), 'no PING ACK from the idle connection'
    r = srv.get('/p')
    assert r.status == 200 and r.body == b'n1'
    assert b.connections == 1


def test_without_keepalive_each_request_connects(server, be):
    b = be()
    srv = server(conf(b.port))
    for _ in range(3):
        assert srv.get('/n').status == 200
    assert wait_for(lambda: b.connections == 3)


def test_goaway_connection_is_not_reused(server, be):
    b = be()
    b.handler = lambda req: H2Reply(200, b'bye' if req.conn_no == 1 else b'again', action='goaway' if req.conn_no == 1 else None)
    srv = server(conf(b.port, keepalive='keepalive 4;'))
    assert srv.get('/g').body == b'bye'
    r = srv.get('/g')
    assert r.status == 200 and r.body == b'again'
    assert b.connections == 2


def test_trailers_reach_upstream_trailer_variable(server, be):
    b = be()
    b.handler = lambda req: H2Reply(200, b'body', trailers=[('x-t', 'tval')])
    srv = server(conf(b.port))
    r = srv.get('/t')
    assert r.status == 200 and r.body == b'body'
    path = os.path.join(srv.tmp, 'logs', 'tr.log')
    assert wait_for(lambda: os.path.exists(path) and '/t tval 200' in open(path).read()), open(path).read()


def test_reset_before_head_is_502(server, be):
    b = be()
    b.handler = lambda req: H2Reply(action='rst', code=2)
    srv = server(conf(b.port))
    r = srv.get('/r')
    assert r.status == 502
    assert 'upstream rejected request with error 2' in srv.error_log()


def test_reset_after_body_with_error_fails_response(server, be):
    b = be()
    b.handler = lambda req: (H2Reply(200, b'PARTIAL', action='rst', code=8, after_body=True)
                             if req.header(':path') == '/e' else H2Reply(200, b'fine'))
    srv = server(conf(b.port, keepalive='keepalive 4;'))
    resp = read_all(srv.port, b'GET /e HTTP/1.1\r\nHost: localhost\r\n\r\n')
    assert not resp.endswith(b'0\r\n\r\n')  # no end of the chunked body: the client sees it cut
    ok = srv.get('/e2')  # the reset stream's connection is not reused
    assert ok.status == 200 and ok.body == b'fine' and b.connections == 2


def test_upstream_close_and_refused_are_502(server, be):
    b = be()
    b.handler = lambda req: H2Reply(action='close')
    dead = free_port()  # nothing listens there: refused
    srv = server(simple('''
        proxy_http_version 2;
        location /closed { proxy_pass http://127.0.0.1:%d; }
        location /refused { proxy_pass http://127.0.0.1:%d; }''' % (b.port, dead)))
    assert srv.get('/closed').status == 502
    assert srv.get('/refused').status == 502
    assert 'upstream prematurely closed connection' in srv.error_log()


def test_not_http2_backend_is_502(server):
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:{port2}; proxy_http_version 2; }''', http_extra='''
    server { listen 127.0.0.1:{port2}; return 200 "h1 only"; }'''))
    assert srv.get('/').status == 502


def test_tls_with_alpn_h2(server, be, tmp_path):
    crt, key = make_cert(str(tmp_path), 'up', 'localhost')
    b = be(tls=(crt, key))
    b.handler = lambda req: H2Reply(200, b'over tls ' + req.header(':scheme').encode())
    srv = server(simple('''
        proxy_http_version 2;
        location / { proxy_pass https://127.0.0.1:%d; }''' % b.port))
    r = srv.get('/s')
    assert r.status == 200 and r.body == b'over tls https'
    assert b.alpn == ['h2']


@pytest.mark.parametrize('version', ['2', '1.1'])
def test_proxy_pass_trailers(server, be, version):
    b = be()
    b.handler = lambda req: H2Reply(200, b'SEE-THIS', trailers=[('x-trailer', 'foo'), ('x-another', 'bar')])
    srv = server(simple('''
        location /on { proxy_pass http://127.0.0.1:%d; proxy_http_version 2; proxy_pass_trailers on; }
        location /off { proxy_pass http://127.0.0.1:%d; proxy_http_version 2; }
        location /h1 { proxy_pass http://127.0.0.1:{port2}; proxy_http_version 1.1; proxy_pass_trailers on; }'''
                        % (b.port, b.port), http_extra='''
    server { listen 127.0.0.1:{port2}; root {html}; add_trailer X-Trailer foo; add_trailer X-Another bar; }'''),
                 files={'html/h1': 'SEE-THIS'})
    path = '/on' if version == '2' else '/h1'
    on = read_all(srv.port, b'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % path.encode())
    assert b'\r\n8\r\nsee-this\r\n0\r\nx-trailer: foo\r\nx-another: bar\r\n\r\n' in on.lower(), on
    off = read_all(srv.port, b'GET /off HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    assert off.endswith(b'SEE-THIS') or off.endswith(b'0\r\n\r\n')
    assert b'X-Trailer' not in off


@pytest.fixture
def nginx_h2(tmp_path):
    """Debian's nginx as a real HTTP/2 backend (h2c with prior knowledge): a static root and an access log that
    names the connection of each request."""
    if not os.path.exists('/usr/sbin/nginx'):
        pytest.skip('no /usr/sbin/nginx')
    d = tmp_path / 'nginx-up'
    (d / 'logs').mkdir(parents=True)
    (d / 'html').mkdir()
    port = free_port()
    (d / 'nginx.conf').write_text('''
daemon off; master_process off; error_log %(d)s/logs/error.log; pid %(d)s/logs/nginx.pid;
events { worker_connections 64; }
http {
    log_format c "$request_uri $connection $server_protocol";
    access_log %(d)s/logs/access.log c;
    client_body_temp_path %(d)s; proxy_temp_path %(d)s; fastcgi_temp_path %(d)s; uwsgi_temp_path %(d)s;
    scgi_temp_path %(d)s;
    server { listen 127.0.0.1:%(port)d http2; root %(d)s/html;
             location /echo { return 200 "$http_x_sent $request_method"; } }
}''' % {'d': d, 'port': port})
    import subprocess
    p = subprocess.Popen(['/usr/sbin/nginx', '-p', str(d) + '/', '-c', str(d / 'nginx.conf')],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ok = wait_for(lambda: socket.socket().connect_ex(('127.0.0.1', port)) == 0, 5)
    if not ok:
        p.kill()
        pytest.skip('nginx backend did not start')
    yield port, d
    p.terminate()
    p.wait(5)


def test_real_nginx_http2_backend(server, nginx_h2):
    port, d = nginx_h2
    data = os.urandom(300000)
    (d / 'html' / 'big.bin').write_bytes(data)
    srv = server(simple('''
        proxy_http_version 2;
        location / { proxy_pass http://up; proxy_set_header X-Sent "hello"; }''', http_extra='''
    upstream up { server 127.0.0.1:%d; keepalive 2; }''' % port))
    r = srv.get('/big.bin')
    assert r.status == 200 and r.body == data
    e = srv.get('/echo', method='POST', body=b'x' * 100000)
    assert e.status == 200 and e.body == b'hello POST'
    assert srv.get('/missing').status == 404
    log = d / 'logs' / 'access.log'
    assert wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 3)
    lines = [l.split() for l in log.read_text().splitlines()]
    assert [l[0] for l in lines] == ['/big.bin', '/echo', '/missing']
    assert {l[2] for l in lines} == {'HTTP/2.0'}
    # the kept-alive connection of the first carried the second; the POST's may close when nginx answers before
    # the whole body went out (the connection is then not reused), so the third may come on a new one
    assert lines[0][1] == lines[1][1]
