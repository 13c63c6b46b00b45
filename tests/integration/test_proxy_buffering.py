"""proxy_buffering with temp files (issue 12): when the memory buffers (proxy_buffers) are full and the client is
slower than the upstream, the rest of the response goes to a temp file under proxy_temp_path (unlinked at once),
up to proxy_max_temp_file_size (0: no file, reading the upstream pauses); the client gets it from the file.
Also $upstream_trailer_NAME and a client's abort while the upstream answers (499, proxy_ignore_client_abort).
The backend is a raw socket peer that records when its whole answer was sent and whether the proxy closed its
connection first. The configs are nginx's: HY_BIN=/usr/sbin/nginx runs the same checks."""
import os
import re
import select
import socket
import threading
import time

import pytest

from conftest import HY_BIN, simple

MIB = 1024 * 1024


def _sanitized():
    try:
        with open(HY_BIN, 'rb') as f:
            return b'__asan_init' in f.read()
    except OSError:
        return False


SANITIZED = _sanitized()


class Peer:
    """An HTTP/1.1 upstream answering each request with `body` (Content-Length, or chunked with `trailers`),
    after `delay` seconds (during which a close by the proxy is noticed), sending as fast as the proxy reads."""

    def __init__(self, body, chunked=False, trailers=(), delay=0.0, scgi=False):
        self.body, self.chunked, self.trailers, self.delay, self.scgi = body, chunked, trailers, delay, scgi
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.got_request = threading.Event()
        self.sent = threading.Event()          # the whole answer went out
        self.closed_early = threading.Event()  # the proxy closed the connection before the end
        self.progress = 0                      # body bytes handed to the kernel so far
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        buf = b''
        while not self._complete(buf):
            d = c.recv(65536)
            if not d:
                c.close()
                return
            buf += d
        self.got_request.set()
        try:
            end = time.monotonic() + self.delay
            while time.monotonic() < end:
                r, _, _ = select.select([c], [], [], max(0.0, end - time.monotonic()))
                if r and c.recv(1) == b'':
                    self.closed_early.set()
                    c.close()
                    return
            if self.scgi:  # a CGI head; the body ends with the connection
                head = b'Status: 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n'
            elif self.chunked:
                head = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n'
            else:
                head = b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' % len(self.body)
            c.sendall(head)
            step = 65536
            for i in range(0, len(self.body), step):
                piece = self.body[i:i + step]
                c.sendall(b'%x\r\n%s\r\n' % (len(piece), piece) if self.chunked else piece)
                self.progress = i + len(piece)
            if self.chunked:
                c.sendall(b'0\r\n' + b''.join(b'%s: %s\r\n' % t for t in self.trailers) + b'\r\n')
            self.sent.set()
        except OSError:
            self.closed_early.set()
        finally:
            c.close()

    def _complete(self, buf):
        if not self.scgi:
            return b'\r\n\r\n' in buf
        n, colon, rest = buf.partition(b':')  # SCGI: a netstring of the headers (a GET has no body)
        return bool(colon) and len(rest) > int(n)

    def stop(self):
        self.stopping = True
        self.sock.close()


def wait_for(cond, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def stalled(peer, limit=15.0, quiet=0.6):
    """Wait until the peer's progress stops moving (it is blocked), or its answer is all sent."""
    end = time.monotonic() + limit
    last, since = -1, time.monotonic()
    while time.monotonic() < end and not peer.sent.is_set():
        if peer.progress != last:
            last, since = peer.progress, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return True
        time.sleep(0.05)
    return False


class SlowClient:
    """A client with a small receive window that sends one request and reads only when told to."""

    def __init__(self, port, path='/'):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        self.sock.connect(('127.0.0.1', port))
        self.sock.sendall(b'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % path.encode())
        self.buf = b''

    def read_head(self):
        self.sock.settimeout(10)
        while b'\r\n\r\n' not in self.buf:
            d = self.sock.recv(4096)
            assert d, 'closed before the head'
            self.buf += d
        head, self.buf = self.buf.split(b'\r\n\r\n', 1)
        return head.decode('latin-1')

    def read_all(self):
        self.sock.settimeout(30)
        out = [self.buf]
        while True:
            d = self.sock.recv(1 << 20)
            if not d:
                break
            out.append(d)
        self.sock.close()
        return b''.join(out)


def dechunk(data):
    out, rest = [], data
    while True:
        line, rest = rest.split(b'\r\n', 1)
        n = int(line.split(b';')[0], 16)
        if n == 0:
            return b''.join(out)
        out.append(rest[:n])
        rest = rest[n + 2:]


def deleted_temp_files(pid, tmpdir):
    """Files under tmpdir the process holds open though they were removed."""
    found = []
    fddir = '/proc/%d/fd' % pid
    for fd in os.listdir(fddir):
        try:
            target = os.readlink(os.path.join(fddir, fd))
        except OSError:
            continue
        if target.startswith(tmpdir + '/') and target.endswith(' (deleted)'):
            found.append(target)
    return found


def rss_kib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def conf(peer, extra='', log=''):
    return simple('''
        location / {
            proxy_pass http://127.0.0.1:%d;
            proxy_buffers 4 8k;
            proxy_temp_path {tmp}/ptemp 1 2;
            %s
        }''' % (peer.port, extra), log, listen='listen 127.0.0.1:{port} sndbuf=32k;')


@pytest.fixture
def peers():
    made = []

    def make(*a, **kw):
        p = Peer(*a, **kw)
        made.append(p)
        return p
    yield make
    for p in made:
        p.stop()


# ---------------------------------------------------------------- temp files

def test_a_slow_client_gets_the_rest_from_an_unlinked_temp_file(server, peers):
    body = os.urandom(8 * MIB)
    peer = peers(body)
    srv = server(conf(peer))
    pid = srv.proc.pid
    rss0 = rss_kib(pid)
    cl = SlowClient(srv.port)
    head = cl.read_head()
    assert head.startswith('HTTP/1.1 200')
    # the upstream is read to its end although the client took next to nothing
    assert peer.sent.wait(20), 'the backend is still blocked: no temp file'
    files = deleted_temp_files(pid, srv.tmp + '/ptemp')
    assert files, 'no unlinked temp file open under proxy_temp_path'
    # levels 1 2: ptemp/X/YZ/NNNNNNNNNN
    assert re.match(re.escape(srv.tmp) + r'/ptemp/\d/\d\d/\d{10} \(deleted\)$', files[0]), files
    assert not os.listdir(srv.tmp + '/ptemp/' + os.listdir(srv.tmp + '/ptemp')[0] + '/' +
                          os.listdir(srv.tmp + '/ptemp/' + os.listdir(srv.tmp + '/ptemp')[0])[0])
    if not SANITIZED:  # ASan's quarantine keeps freed blocks: RSS says nothing there
        assert rss_kib(pid) - rss0 < 4 * 1024, 'the response was kept in memory'
    got = cl.read_all()
    assert len(got) == len(body) and got == body
    assert 'an upstream response is buffered to a temporary file' in srv.error_log()
    assert wait_for(lambda: not deleted_temp_files(pid, srv.tmp + '/ptemp'))


def test_chunked_response_through_the_temp_file_is_byte_exact(server, peers):
    body = os.urandom(6 * MIB + 12345)
    peer = peers(body, chunked=True)
    srv = server(conf(peer, 'proxy_temp_file_write_size 64k;'))
    cl = SlowClient(srv.port)
    cl.read_head()
    assert peer.sent.wait(20)
    assert deleted_temp_files(srv.proc.pid, srv.tmp + '/ptemp')
    got = cl.read_all()
    assert dechunk(got) == body  # the client's framing is chunked


def test_scgi_temp_file_through_the_shared_settings(server, peers):
    body = os.urandom(8 * MIB)
    peer = peers(body, scgi=True)
    srv = server(simple('''
        location / {
            scgi_param REQUEST_METHOD $request_method;
            scgi_pass 127.0.0.1:%d;
            scgi_buffers 4 8k;
            scgi_temp_path {tmp}/stemp 2;
        }''' % peer.port, listen='listen 127.0.0.1:{port} sndbuf=32k;'))
    cl = SlowClient(srv.port)
    assert cl.read_head().startswith('HTTP/1.1 200')
    assert peer.sent.wait(20), 'the app is still blocked: no temp file'
    files = deleted_temp_files(srv.proc.pid, srv.tmp + '/stemp')
    assert files and re.match(re.escape(srv.tmp) + r'/stemp/\d\d/\d{10} \(deleted\)$', files[0]), files
    got = cl.read_all()
    assert dechunk(got) == body  # the app's close ends the body: the client's framing is chunked


def test_max_temp_file_size_0_pauses_the_upstream_until_the_client_reads(server, peers):
    body = os.urandom(32 * MIB)
    peer = peers(body)
    srv = server(conf(peer, 'proxy_max_temp_file_size 0;'))
    cl = SlowClient(srv.port)
    cl.read_head()
    assert stalled(peer), 'the backend was never blocked'
    assert not peer.sent.is_set()
    assert not deleted_temp_files(srv.proc.pid, srv.tmp + '/ptemp')
    got = cl.read_all()
    assert got == body
    assert peer.sent.wait(10)


def test_a_limit_smaller_than_the_body_streams_the_rest_after_the_file(server, peers):
    body = os.urandom(32 * MIB)
    peer = peers(body)
    srv = server(conf(peer, 'proxy_max_temp_file_size 1m;'))
    cl = SlowClient(srv.port)
    cl.read_head()
    assert stalled(peer), 'the backend was never blocked'
    assert not peer.sent.is_set()
    assert deleted_temp_files(srv.proc.pid, srv.tmp + '/ptemp')
    got = cl.read_all()
    assert got == body
    assert peer.sent.wait(10)


def test_buffering_off_writes_no_temp_file(server, peers):
    body = os.urandom(32 * MIB)
    peer = peers(body)
    srv = server(conf(peer, 'proxy_buffering off;'))
    cl = SlowClient(srv.port)
    cl.read_head()
    assert stalled(peer)
    assert not deleted_temp_files(srv.proc.pid, srv.tmp + '/ptemp')
    assert cl.read_all() == body


def test_temp_file_settings_are_checked_as_nginx(server, run_cli, prefix):
    prefix.conf(simple('location / { proxy_pass http://127.0.0.1:9; proxy_buffers 4 8k; '
                       'proxy_max_temp_file_size 4k; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0
    assert '"proxy_max_temp_file_size" must be equal to zero to disable temporary files usage' in res.err
    prefix.conf(simple('location / { proxy_pass http://127.0.0.1:9; proxy_buffers 4 8k; '
                       'proxy_temp_file_write_size 4k; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0
    assert '"proxy_temp_file_write_size" must be equal to or greater than the maximum of the value' in res.err
    prefix.conf(simple('location / { proxy_pass http://127.0.0.1:9; proxy_temp_path t 1 0; }'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', prefix.conf_path])
    assert res.rc != 0


# ---------------------------------------------------------------- $upstream_trailer_*

@pytest.mark.hayate_only  # nginx fills it from an HTTP/1.1 upstream since 1.27 (Debian 12 has 1.22: gRPC only)
def test_upstream_trailer_variables_are_logged(server, peers):
    peer = peers(b'x' * 100000, chunked=True, trailers=((b'X-Trailer', b'foo'), (b'X-Another', b'bar baz')))
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; }''' % peer.port,
                        '''log_format tr "$status t=$upstream_trailer_x_trailer a=$upstream_trailer_X_Another "
                                      "n=$upstream_trailer_none h=$upstream_http_transfer_encoding";
                           access_log {tmp}/logs/tr.log tr;'''))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'x' * 100000
    path = srv.tmp + '/logs/tr.log'
    assert wait_for(lambda: os.path.exists(path) and open(path).read().strip())
    assert open(path).read().strip() == '200 t=foo a=bar baz n=- h=chunked'


# ---------------------------------------------------------------- the client's abort

def abort_conf(peer, extra=''):
    return simple('''
        location / { proxy_pass http://127.0.0.1:%d; %s }''' % (peer.port, extra),
                  '''log_format st "$status $upstream_status";
                     access_log {tmp}/logs/st.log st;''')


def close_after_request(srv, peer):
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    assert peer.got_request.wait(10)
    s.close()


def logged(srv):
    path = srv.tmp + '/logs/st.log'
    assert wait_for(lambda: os.path.exists(path) and open(path).read().strip())
    return open(path).read().strip()


def test_client_abort_closes_the_upstream_and_logs_499(server, peers):
    peer = peers(b'late answer', delay=30)
    srv = server(abort_conf(peer))
    close_after_request(srv, peer)
    assert peer.closed_early.wait(10), 'the upstream connection was kept'
    assert logged(srv) == '499 -'
    assert 'client prematurely closed connection, so upstream connection is closed too' in srv.error_log()


def test_client_half_close_is_an_abort_too(server, peers):
    # the client asked, then half-closed its side: nginx treats it as an abort too
    peer = peers(b'late answer', delay=30)
    srv = server(abort_conf(peer))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    assert peer.got_request.wait(10)
    s.shutdown(socket.SHUT_WR)
    assert peer.closed_early.wait(10)
    assert s.recv(100) == b''
    s.close()
    assert logged(srv) == '499 -'


def test_ignore_client_abort_lets_the_upstream_answer(server, peers):
    # on: the client's close is not watched; the upstream answers (what cannot be written to the client then ends
    # the exchange, as nginx does)
    peer = peers(b'answer', delay=1.5)
    srv = server(abort_conf(peer, 'proxy_ignore_client_abort on;'))
    close_after_request(srv, peer)
    assert peer.sent.wait(10), 'the upstream was not let answer'
    assert not peer.closed_early.is_set()
    assert 'client prematurely closed connection, so upstream' not in srv.error_log()


def test_a_client_that_stays_gets_its_answer(server, peers):
    peer = peers(b'answer', delay=0.5)
    srv = server(abort_conf(peer))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'answer'
    assert logged(srv) == '200 200'


def test_an_http2_client_gets_the_temp_file_too(server, peers):
    from helpers.h2client import H2
    import h2.events
    body = os.urandom(3 * MIB)
    peer = peers(body)
    srv = server(conf(peer).replace('sndbuf=32k;', 'sndbuf=32k http2;'))
    c = H2(srv.port, rcvbuf=16384)
    sid = c.request('/')
    assert c.wait_for(h2.events.ResponseReceived, timeout=10)
    # nothing is acknowledged: the stream's window stops the data at 64 KiB
    assert peer.sent.wait(20), 'the backend is still blocked: no temp file'
    assert deleted_temp_files(srv.proc.pid, srv.tmp + '/ptemp')
    status, _, got = c.response(sid, timeout=60)
    c.close()
    assert status == 200 and got == body
