"""The upstream engine behind proxy_pass (issue 12): errors as nginx answers them (502/504 and its log lines),
keep-alive pools counted at the backend (reuse, limits, idle connections closed by the backend, the reused-
connection race), balancing (weights, backup, next_upstream), unix sockets, unbuffered streaming (SSE), and
real backends (nginx itself, gunicorn). nginx-compatible configs: HY_BIN=/usr/sbin/nginx runs them too."""
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import simple, free_port, IS_NGINX
from helpers.backend import Backend
from helpers.http1 import Conn
from helpers.process import master_conf, wait_until


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.fixture
def be2():
    b = Backend().start()
    yield b
    b.stop()


def closed_port():
    return free_port()  # nobody listens there


def wait_log(srv, text, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in srv.error_log():
            return True
        time.sleep(0.02)
    return False


# ---------------------------------------------------------------- errors

def test_connection_refused_is_502(server):
    port = closed_port()
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % port))
    r = srv.get('/x')
    assert r.status == 502
    assert wait_log(srv, 'connect() failed (111: Connection refused) while connecting to upstream')
    assert 'upstream: "http://127.0.0.1:%d/x"' % port in srv.error_log() or IS_NGINX is False


def test_read_timeout_is_504(server, be):
    be.handler = lambda r: [1.5, be.reply(200, b'late')]
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_read_timeout 200ms; }' % be.port))
    r = srv.get('/')
    assert r.status == 504
    assert wait_log(srv, 'upstream timed out (110: Connection timed out) while reading response header from upstream')


def test_invalid_header_is_502(server, be):
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n'
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    assert srv.get('/').status == 502
    assert wait_log(srv, 'upstream sent invalid header')


def test_close_before_response_is_502(server, be):
    be.handler = lambda r: None
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    assert srv.get('/').status == 502
    assert wait_log(srv, 'upstream prematurely closed connection while reading response header from upstream')


def test_premature_close_in_body_truncates(server, be):
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789'
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    head = c.read_head()
    assert head[1] == 200
    with pytest.raises(Exception):
        c._read_exact(100)
    assert wait_log(srv, 'upstream prematurely closed connection while reading upstream')


@pytest.mark.parametrize('spill', ['temp file', 'memory only'])
def test_premature_close_to_a_slow_client_delivers_all_that_came(server, be, spill):
    """nginx-tests proxy_unfinished.t "big unfinished": the backend announces 1,000,100 bytes, sends 1,000,012 and
    closes. A client that reads late still gets every byte that came (from the buffers and the temp file), then
    the close. hayate used to cut it off at what was already on the wire when the close found a send in flight."""
    body = b''.join(b'X' * 98 + b'\r\n' for _ in range(10000)) + b'unfinished\r\n'
    be.handler = lambda r: (b'HTTP/1.1 200 OK\r\nContent-Length: 1000100\r\nConnection: close\r\n\r\n' + body)
    extra = 'proxy_max_temp_file_size 0;' if spill == 'memory only' else ''
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; %s }' % (be.port, extra),
                        listen='listen 127.0.0.1:{port} sndbuf=32k;'))
    c = srv.conn(rcvbuf=16384, timeout=10)
    c.send(b'GET /big HTTP/1.0\r\nHost: x\r\n\r\n')
    time.sleep(0.3)  # a slow reader: hayate's output fills up
    assert c.read_head()[1] == 200
    while c._fill():  # to the close
        pass
    got = c.buf
    assert len(got) == len(body)
    assert got.endswith(b'unfinished\r\n')
    assert wait_log(srv, 'upstream prematurely closed connection while reading upstream')


# ---------------------------------------------------------------- keep-alive

KA = '''upstream ka { server 127.0.0.1:%d; keepalive 4; %s }'''
KA_LOC = 'location / { proxy_pass http://ka; proxy_http_version 1.1; proxy_set_header Connection ""; }'


def test_keepalive_reuses_one_connection(server, be):
    srv = server(simple(KA_LOC, KA % (be.port, '')))
    for i in range(10):
        assert srv.get('/%d' % i).status == 200
    assert be.connections == 1
    assert len(be.requests) == 10


def test_without_keepalive_each_request_connects(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % be.port))
    for i in range(5):
        assert srv.get('/%d' % i).status == 200
    assert be.connections == 5


def test_keepalive_requests_limit(server, be):
    srv = server(simple(KA_LOC, KA % (be.port, 'keepalive_requests 3;')))
    for i in range(7):
        assert srv.get('/%d' % i).status == 200
    assert be.connections == 3


def test_idle_connection_closed_by_backend_leaves_the_pool(server, be):
    be.close_after = 1  # answers keep-alive, then closes the idle connection
    srv = server(simple(KA_LOC, KA % (be.port, '')))
    assert srv.get('/1').status == 200
    be.wait_open(0)
    # the pool saw the close at once: the next request connects anew without a failed try
    assert srv.get('/2').status == 200
    assert be.connections == 2
    assert 'prematurely closed' not in srv.error_log()


def test_reused_connection_closed_without_answer_is_retried(server, be):
    be.close_reused = True  # the second request on a connection is read, then the connection is closed
    srv = server(simple(KA_LOC, KA % (be.port, '')))
    for i in range(4):
        r = srv.get('/%d' % i)
        assert r.status == 200, r
    assert be.connections >= 4


@pytest.mark.hayate_only
def test_reused_race_post_without_body_is_retried(server, be):
    # hayate retries any method whose body was not sent (none here); nginx never retries a sent POST
    be.close_reused = True
    srv = server(simple(KA_LOC, KA % (be.port, '')))
    assert srv.get('/a').status == 200
    r = srv.get('/b', method='POST', body=b'')
    assert r.status == 200
    assert be.requests[-1].method == 'POST'


def test_reused_race_post_with_body_sent_is_not_retried(server, be):
    be.close_reused = True
    srv = server(simple(KA_LOC, KA % (be.port, '')))
    assert srv.get('/a').status == 200
    r = srv.get('/b', method='POST', body=b'payload')
    assert r.status == 502
    assert len([q for q in be.requests if q.method == 'POST']) == 1


def test_keepalive_timeout_closes_idle(server, be):
    srv = server(simple(KA_LOC, KA % (be.port, 'keepalive_timeout 200ms;')))
    assert srv.get('/').status == 200
    be.wait_open(0, timeout=5)


# ---------------------------------------------------------------- balancing

def test_weighted_round_robin(server, be, be2):
    be.handler = lambda r: be.reply(200, b'one')
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { server 127.0.0.1:%d weight=3; server 127.0.0.1:%d; }' % (be.port, be2.port)))
    bodies = [srv.get('/').body for _ in range(8)]
    assert bodies.count(b'one') == 6 and bodies.count(b'two') == 2
    assert bodies[:4] != [b'one'] * 4  # smooth: the light server is not starved for a run


def test_failed_peer_next_upstream_and_backup(server, be):
    dead = closed_port()
    srv = server(simple('location / { proxy_pass http://g; add_header X-A $upstream_addr; }',
                        'upstream g { server 127.0.0.1:%d; server 127.0.0.1:%d backup; }' % (dead, be.port)))
    r = srv.get('/')
    assert r.status == 200
    assert r.header('X-A') == '127.0.0.1:%d, 127.0.0.1:%d' % (dead, be.port)


def test_next_upstream_http_500(server, be, be2):
    be.handler = lambda r: be.reply(500, b'bad')
    be2.handler = lambda r: be2.reply(200, b'good')
    srv = server(simple('''
        location /retry { proxy_pass http://g; proxy_next_upstream error http_500; }
        location /plain { proxy_pass http://g2; }''',
                        '''upstream g { server 127.0.0.1:%d; server 127.0.0.1:%d; }
                           upstream g2 { server 127.0.0.1:%d; server 127.0.0.1:%d; }'''
                        % (be.port, be2.port, be.port, be2.port)))
    assert all(srv.get('/retry').body == b'good' for _ in range(4))
    assert sorted(srv.get('/plain').status for _ in range(2)) == [200, 500]


def test_next_upstream_off_and_post_not_retried(server, be):
    dead = closed_port()
    srv = server(simple('''
        location /off { proxy_pass http://g; proxy_next_upstream off; }''',
                        'upstream g { server 127.0.0.1:%d max_fails=0; server 127.0.0.1:%d max_fails=0; }'
                        % (dead, be.port)))
    statuses = sorted(srv.get('/off').status for _ in range(2))
    assert statuses == [200, 502]


def test_down_server_takes_no_traffic(server, be, be2):
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { server 127.0.0.1:%d down; server 127.0.0.1:%d; }' % (be.port, be2.port)))
    assert all(srv.get('/').body == b'two' for _ in range(4))
    assert be.requests == []


def test_unknown_host_is_a_config_error(run_cli, prefix):
    prefix.conf(simple('location / { proxy_pass http://no-such-host.invalid; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0
    assert 'host not found in upstream "no-such-host.invalid"' in res.err
    assert 'test.conf:' in res.err


def test_empty_upstream_is_a_config_error(run_cli, prefix):
    prefix.conf(simple('location / { proxy_pass http://g; }', 'upstream g { keepalive 2; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0 and 'no servers are inside upstream' in res.err


# ---------------------------------------------------------------- unix sockets and streaming

def test_unix_socket_backend(server, tmp_path):
    path = str(tmp_path / 'be.sock')
    b = Backend(unix=path).start()
    try:
        b.handler = lambda r: b.reply(200, ('%s %s' % (r.target, r.header('Host'))).encode())
        srv = server(simple('''
            location /u/ { proxy_pass http://unix:%s:/x/; }
            location /g/ { proxy_pass http://ug/; proxy_http_version 1.1; proxy_set_header Connection ""; }''' % path,
                            'upstream ug { server unix:%s; keepalive 2; }' % path))
        assert srv.get('/u/a?b').body == b'/x/a?b localhost'
        assert srv.get('/g/c').body == b'/c ug'
        assert srv.get('/g/d').body == b'/d ug'
        assert b.connections == 2  # one for the implicit upstream, one kept alive for ug
    finally:
        b.stop()


def test_sse_unbuffered_arrives_event_by_event(server, be):
    go = threading.Event()

    def handler(r):
        head = b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n'
        ev1 = b'data: one\n\n'
        ev2 = b'data: two\n\n'
        return [head + b'%x\r\n%s\r\n' % (len(ev1), ev1), lambda: go.wait(10),
                b'%x\r\n%s\r\n0\r\n\r\n' % (len(ev2), ev2)]
    be.handler = handler
    srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_buffering off;
                           proxy_http_version 1.1; }''' % be.port))
    c = srv.conn()
    c.send(b'GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    head = c.read_head()
    assert head[1] == 200
    data, c.buf = bytes(c.buf), b''
    while b'data: one' not in data:  # must arrive before the backend sends the second event
        d = c.sock.recv(4096)
        assert d, 'closed before the first event'
        data += d
    assert b'data: two' not in data
    go.set()
    while b'data: two' not in data:
        d = c.sock.recv(4096)
        assert d
        data += d


def test_slow_client_large_body_byte_exact(server, be):
    data = os.urandom(3 * 1024 * 1024)
    be.handler = lambda r: be.reply(200, data)
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_buffers 4 8k; }' % be.port))
    c = srv.conn(rcvbuf=8192)
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    time.sleep(0.3)  # let the buffers fill: the proxy must hold back, not lose or grow without bound
    r = c.read_response()
    assert r.status == 200 and r.body == data


# ---------------------------------------------------------------- real backends

def start_nginx_backend(tmp_path, listen, html):
    os.makedirs(tmp_path / 'ngx' / 'logs', exist_ok=True)
    conf = tmp_path / 'ngx' / 'nginx.conf'
    conf.write_text('''daemon off; master_process off; pid %s/ngx/nginx.pid; error_log %s/ngx/logs/error.log;
events { worker_connections 128; }
http { access_log off; client_body_temp_path %s/ngx/cbt; proxy_temp_path %s/ngx/pt;
       fastcgi_temp_path %s/ngx/ft; uwsgi_temp_path %s/ngx/ut; scgi_temp_path %s/ngx/st;
       server { listen %s; root %s; keepalive_requests 1000; } }
''' % ((tmp_path,) * 7 + (listen, html)))
    p = subprocess.Popen(['/usr/sbin/nginx', '-p', str(tmp_path / 'ngx'), '-c', str(conf)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p


@pytest.mark.skipif(not os.path.exists('/usr/sbin/nginx'), reason='nginx not installed')
@pytest.mark.parametrize('transport', ['tcp', 'unix'])
def test_nginx_as_backend(server, tmp_path, transport):
    html = tmp_path / 'bhtml'
    html.mkdir()
    payload = os.urandom(200000)
    (html / 'f.bin').write_bytes(payload)
    if transport == 'tcp':
        port = free_port()
        listen, target = '127.0.0.1:%d' % port, 'server 127.0.0.1:%d;' % port
    else:
        sock = str(tmp_path / 'ngx.sock')
        listen, target = 'unix:' + sock, 'server unix:%s;' % sock
    p = start_nginx_backend(tmp_path, listen, html)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if transport == 'tcp':
                    socket.create_connection(('127.0.0.1', port), 0.2).close()
                else:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(sock)
                    s.close()
                break
            except OSError:
                time.sleep(0.05)
        srv = server(simple(KA_LOC.replace('ka', 'ngx'), 'upstream ngx { %s keepalive 8; }' % target))
        for _ in range(3):
            r = srv.get('/f.bin')
            assert r.status == 200 and r.body == payload
        r = srv.get('/missing')
        assert r.status == 404
        r = srv.head('/f.bin')
        assert r.status == 200 and r.header('Content-Length') == str(len(payload))
    finally:
        p.terminate()
        p.wait(5)


@pytest.mark.skipif(not os.path.exists('/usr/bin/gunicorn'), reason='gunicorn not installed')
def test_gunicorn_on_unix_socket(server, tmp_path):
    app = tmp_path / 'app.py'
    app.write_text('''
def app(environ, start_response):
    body = ("hello %s %s" % (environ["REQUEST_METHOD"], environ["PATH_INFO"])).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
''')
    sock = str(tmp_path / 'app.sock')
    p = subprocess.Popen(['/usr/bin/gunicorn', '--chdir', str(tmp_path), '-w', '1', '-b', 'unix:' + sock, 'app:app'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.exists(sock)
        srv = server(simple('location / { proxy_pass http://unix:%s; }' % sock))
        r = srv.get('/x/y')
        assert r.status == 200 and r.body == b'hello GET /x/y'
        r = srv.get('/p', method='POST', body=b'abc')
        assert r.body == b'hello POST /p'
    finally:
        p.terminate()
        p.wait(10)


# ---------------------------------------------------------------- balancing methods

def names_of(srv, n, path='/', headers=None):
    return [srv.get(path, headers=headers).body for _ in range(n)]


def test_least_conn_avoids_the_busy_server(server, be, be2):
    import threading as th
    release = th.Event()
    be.handler = lambda r: [lambda: release.wait(10) if r.target == '/slow' else None, be.reply(200, b'one')]
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { least_conn; server 127.0.0.1:%d; server 127.0.0.1:%d; }' % (be.port, be2.port)))
    c = srv.conn()
    c.send(b'GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    be.wait_requests(1)
    try:
        assert names_of(srv, 4) == [b'two'] * 4  # round robin would send two of them to the busy one
    finally:
        release.set()
    assert c.read_response().body == b'one'


ZONE_GROUP = '''upstream g { zone g 64k; %s server 127.0.0.1:%d; server 127.0.0.1:%d; }
server { listen 127.0.0.1:{port}; location / { proxy_pass http://g; } }'''


@pytest.mark.parametrize('method', ['least_conn;', 'random two;', 'random two least_conn;'])
def test_zone_shares_the_connection_counts_of_the_workers(server, be, be2, method):
    """With `zone` the workers balance on one count of each peer's connections (nginx keeps peer state in the
    zone; nginx-tests upstream_random.t "random wait"): while a request holds one backend, requests on new
    connections, which either worker may take, all go to the other. Counted per worker, the worker that did not
    take the slow request would send about half of its requests to the busy backend."""
    release = threading.Event()
    for b, name in ((be, b'one'), (be2, b'two')):
        b.handler = (lambda b, name: lambda r: [lambda: release.wait(10) if r.target == '/slow' else None,
                                                 b.reply(200, name)])(b, name)
    srv = server(master_conf(ZONE_GROUP % (method, be.port, be2.port), workers=2), full=True)
    c = srv.conn()
    c.send(b'GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert wait_until(lambda: any(r.target == '/slow' for r in be.requests + be2.requests), 5)
    busy = b'one' if any(r.target == '/slow' for r in be.requests) else b'two'
    try:
        got = names_of(srv, 16)  # a new connection each: the kernel spreads them over the two workers
    finally:
        release.set()
    assert c.read_response().body == busy
    assert busy not in got


def test_ip_hash_sticks(server, be, be2):
    be.handler = lambda r: be.reply(200, b'one')
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { ip_hash; server 127.0.0.1:%d; server 127.0.0.1:%d; }' % (be.port, be2.port)))
    got = names_of(srv, 6)
    assert len(set(got)) == 1


@pytest.mark.parametrize('consistent', ['', ' consistent'])
def test_hash_key(server, be, be2, consistent):
    be.handler = lambda r: be.reply(200, b'one')
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { hash $arg_k%s; server 127.0.0.1:%d; server 127.0.0.1:%d; }'
                        % (consistent, be.port, be2.port)))
    seen = set()
    for k in range(12):
        first = srv.get('/?k=key%d' % k).body
        assert all(srv.get('/?k=key%d' % k).body == first for _ in range(2))
        seen.add(first)
    assert seen == {b'one', b'two'}


def test_random_two_uses_all(server, be, be2):
    be.handler = lambda r: be.reply(200, b'one')
    be2.handler = lambda r: be2.reply(200, b'two')
    srv = server(simple('location / { proxy_pass http://g; }',
                        'upstream g { random two least_conn; zone z 64k; server 127.0.0.1:%d; server 127.0.0.1:%d; }'
                        % (be.port, be2.port)))
    got = set(names_of(srv, 30))
    assert got == {b'one', b'two'}


# ---------------------------------------------------------------- Upgrade (WebSocket)

def upgrade_echo_backend():
    """Answers an Upgrade request with 101, sends b'hello' at once, then echoes every byte back upper-cased."""
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(8)
    seen = []

    def serve(c):
        buf = b''
        while b'\r\n\r\n' not in buf:
            d = c.recv(4096)
            if not d:
                return
            buf += d
        head, rest = buf.split(b'\r\n\r\n', 1)
        seen.append(head.decode())
        c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                  b'Sec-WebSocket-Accept: x\r\n\r\nhello')
        if rest:
            c.sendall(rest.upper())
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d.upper())
        c.close()

    def loop():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return ls, seen


def test_websocket_tunnel(server):
    ls, seen = upgrade_echo_backend()
    port = ls.getsockname()[1]
    try:
        srv = server(simple('''location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection "upgrade"; }''' % port,
            'log_format up "$status $bytes_sent $body_bytes_sent $sent_http_connection";'
            ' access_log {tmp}/logs/up.log up;'))
        c = srv.conn()
        c.send(b'GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        version, status, reason, headers, raw = c.read_head()
        assert status == 101
        hd = {k.lower(): v for k, v in headers}
        assert hd.get('upgrade') == 'websocket' and hd.get('connection', '').lower() == 'upgrade'
        assert 'content-length' not in hd and 'transfer-encoding' not in hd
        assert 'Upgrade: websocket' in seen[0] and 'Connection: upgrade' in seen[0]
        data = bytes(c.buf)
        c.buf = b''
        while len(data) < 5:
            data += c.sock.recv(100)
        assert data == b'hello'
        for msg in (b'abc', b'x' * 200000):  # both ways, and more than one buffer
            c.sock.sendall(msg)
            got = b''
            while len(got) < len(msg):
                d = c.sock.recv(65536)
                assert d, 'tunnel closed'
                got += d
            assert got == msg.upper()
        c.sock.shutdown(socket.SHUT_WR)
        assert c.sock.recv(10) == b''  # the close goes through
        # the log counts what the tunnel carried to the client as body, and names the connection "upgrade" (nginx)
        log = os.path.join(srv.tmp, 'logs/up.log')
        assert wait_until(lambda: os.path.exists(log) and open(log).read().endswith('\n'), 5)
        st, sent, body, conn = open(log).read().split()
        assert st == '101' and int(body) == 5 + 3 + 200000 and int(sent) > int(body) + 60, (sent, body)  # + the 101 head
        assert conn == 'upgrade'
    finally:
        ls.close()


@pytest.mark.hayate_only
def test_101_without_upgrade_request_is_502(server):
    # nginx 1.22 waits for a body after such a 101 until proxy_read_timeout; hayate refuses it at once
    ls, seen = upgrade_echo_backend()
    try:
        srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; }' % ls.getsockname()[1]))
        assert srv.get('/').status == 502
    finally:
        ls.close()


def test_proxy_limit_rate(server, be):
    # the rate shows in the time the server itself measured for the upstream response (no client clock)
    data = os.urandom(60000)
    be.handler = lambda r: be.reply(200, data)
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_limit_rate 20000; }' % be.port,
                        'log_format rt "$upstream_response_time"; access_log {tmp}/logs/rt.log rt;'))
    r = srv.get('/')
    assert r.status == 200 and r.body == data
    srv.stop()
    rt = float(open(srv.tmp + '/logs/rt.log').read().split()[0])
    assert rt >= 1.5, rt  # 60000 bytes at 20000 bytes/s: about 3 s, at least 2 s after the first read


def test_proxy_bind(server, be):
    be.handler = lambda r: be.reply(200, b'ok')
    seen = []
    orig = be._serve

    def serve(c, no):
        seen.append(c.getpeername()[0])
        return orig(c, no)
    be._serve = serve
    srv = server(simple('''
        location /b { proxy_pass http://127.0.0.1:%d; proxy_bind 127.0.0.2; }
        location /v { set $a 127.0.0.3; proxy_pass http://127.0.0.1:%d; proxy_bind $a; }
        location /off { proxy_pass http://127.0.0.1:%d; proxy_bind off; }''' % (be.port, be.port, be.port)))
    assert srv.get('/b').status == 200
    assert srv.get('/v').status == 200
    assert srv.get('/off').status == 200
    assert seen == ['127.0.0.2', '127.0.0.3', '127.0.0.1']


def test_backend_killed_and_restarted_under_load_loses_no_request(server, be, be2):
    """Two backends behind a keep-alive pool; one is killed (its connections reset) in the middle of the load and
    started again on the same port: every idempotent request still gets its 200 (with proxy_next_upstream off,
    some get 502: the retries are what this checks)."""
    be.handler = lambda r: be.reply(200, b'one')
    be2.handler = lambda r: be2.reply(200, b'two')
    port = be.port
    srv = server(simple(KA_LOC, 'upstream ka { server 127.0.0.1:%d max_fails=0; server 127.0.0.1:%d; keepalive 8; }'
                        % (be.port, be2.port)))
    results, lock = [], threading.Lock()

    def client(n):
        c = None
        for i in range(n):
            for attempt in range(2):  # the client's own connection may be closed between requests: reconnect
                try:
                    if c is None:
                        c = Conn('127.0.0.1', srv.port)
                    c.send(b'GET /%d HTTP/1.1\r\nHost: x\r\n\r\n' % i)
                    r = c.read_response()
                    break
                except Exception:
                    c = None
                    if attempt:
                        raise
            with lock:
                results.append(r.status)
        if c:
            c.close()

    threads = [threading.Thread(target=client, args=(150,)) for _ in range(4)]
    for t in threads:
        t.start()
    be.wait_requests(40)
    be.kill()
    be2.wait_requests(len(be2.requests) + 40)
    nb = Backend(port=port)
    nb.handler = lambda r: nb.reply(200, b'one again')
    nb.start()
    for t in threads:
        t.join(60)
    nb.stop()
    assert len(results) == 600
    assert results.count(200) == 600, [s for s in results if s != 200][:5]
