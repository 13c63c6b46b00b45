"""HTTP/2 conformance (issues 11 and 16) at frame level over h2c with prior knowledge, written from RFC 9113 and
nginx's behaviour: stream identifiers that go backward or are reused (§5.1.1), a client whose first frame is a
SETTINGS ACK, SETTINGS_MAX_FRAME_SIZE, client_header_timeout and client_body_timeout inside a stream, the HTTP/2
$request_length, and the preface sent where HTTP/2 is not spoken. Most run against nginx too (`listen ... http2`,
which both read)."""
import os
import socket
import struct
import time

import hpack
import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.process import wait_log

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
LISTEN = 'listen 127.0.0.1:{port} http2;'


def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


class Raw:
    """Raw frames over a socket. settings=None sends no SETTINGS of the client's own: the client reads the server's
    and answers with an ACK, as nginx's test client does; ack=False leaves the server's SETTINGS unacknowledged."""

    def __init__(self, port, settings=b'', ack=True):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=5)
        self.buf = b''
        self.closed = False
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()  # every header block is decoded as read, to keep the table in step
        self.dec.max_header_list_size = 1 << 20
        self.block = None
        self.sock.sendall(PREFACE + (frame(SETTINGS, 0, 0, settings) if settings is not None else b''))
        got = self.read_until(lambda f: f[0] == SETTINGS and not f[1] & ACK)
        assert any(f[0] == SETTINGS for f in got), got
        if ack:
            self.send(frame(SETTINGS, ACK, 0))

    def send(self, data):
        self.sock.sendall(data)

    def headers(self, sid, path='/', method='GET', end=True, extra=(), split=None):
        block = self.enc.encode([(':method', method), (':scheme', 'http'), (':path', path),
                                 (':authority', 'localhost')] + list(extra), huffman=False)
        f = frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), sid, block)
        if split is None:
            self.send(f)
            return len(block)
        return f[:split], f[split:]

    def read_until(self, pred, timeout=5.0):
        """Frames (type, flags, sid, payload) read until one satisfies pred, the connection closes or the deadline."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            while len(self.buf) >= 9:
                n = int.from_bytes(self.buf[:3], 'big')
                if len(self.buf) < 9 + n:
                    break
                f = (self.buf[3], self.buf[4], int.from_bytes(self.buf[5:9], 'big') & 0x7fffffff,
                     self.buf[9:9 + n])
                self.buf = self.buf[9 + n:]
                if f[0] == HEADERS and not f[1] & END_HEADERS:  # the block goes on in CONTINUATION frames
                    self.block = [f[1] | END_HEADERS, f[2], f[3]]
                    f = ('HEADERS part',) + f[1:]
                elif f[0] == CONTINUATION and self.block:
                    self.block[2] += f[3]
                    if f[1] & END_HEADERS:  # the whole block, as one HEADERS frame, after its last piece
                        out.append(f)
                        f = (HEADERS, self.block[0], self.block[1], self.block[2])
                        self.block = None
                if f[0] == HEADERS:
                    f += (self.dec.decode(f[3]),)
                out.append(f)
                if pred(f):
                    return out
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return out
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                return out
            except ConnectionResetError:
                data = b''
            if not data:
                self.closed = True
            self.buf += data

    def response(self, sid, timeout=5.0):
        """(status, body, frames) of stream sid, read until its END_STREAM."""
        frames = self.read_until(lambda f: f[2] == sid and f[0] in (DATA, HEADERS) and f[1] & END_STREAM or
                                 f[0] in (RST_STREAM, GOAWAY), timeout)
        status, body = None, b''
        for f in frames:
            if f[2] == sid and f[0] == HEADERS:
                status = int(dict(f[4])[':status'])
            elif f[2] == sid and f[0] == DATA:
                body += f[3]
        return status, body, frames

    def close(self):
        self.sock.close()


def goaway_of(frames):
    g = [f for f in frames if f[0] == GOAWAY]
    assert g, frames
    last, code = struct.unpack('>II', g[0][3][:8])
    return last & 0x7fffffff, code


@pytest.fixture
def srv(server):
    return server(simple('location / { return 200 "body"; }', listen=LISTEN))


def test_backward_stream_id_is_a_connection_error(srv):
    # RFC 9113 §5.1.1: a new stream's id must be above all the client used; stream 1 is closed once 3 was used
    c = Raw(srv.port)
    try:
        c.headers(3)
        assert c.response(3)[0] == 200
        c.headers(1)
        assert goaway_of(c.read_until(lambda f: f[0] == GOAWAY)) == (3, 1)  # last stream 3, PROTOCOL_ERROR
    finally:
        c.close()


def test_reused_stream_id_is_a_connection_error(srv):
    c = Raw(srv.port)
    try:
        c.headers(1)
        assert c.response(1)[0] == 200
        c.headers(1)
        assert goaway_of(c.read_until(lambda f: f[0] == GOAWAY)) == (1, 1)
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 answers these late trailers with GOAWAY too
def test_trailers_on_a_stream_we_reset_are_ignored(srv):
    # RFC 9113 §5.1 (closed): frames a client sent before our RST_STREAM reached it are ignored, not an error
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        frames = c.read_until(lambda f: f[0] == RST_STREAM and f[2] == 1)
        rst = [f for f in frames if f[0] == RST_STREAM]
        assert rst and struct.unpack('>I', rst[0][3])[0] == 0, frames  # response done: NO_ERROR
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, c.enc.encode([('x-trailer', '1')], huffman=False)))
        c.headers(3)
        status, body, frames = c.response(3)
        assert status == 200 and body == b'body', frames
        assert not any(f[0] == GOAWAY for f in frames)
    finally:
        c.close()


def test_no_ack_for_settings_the_client_did_not_send(srv):
    # the client's first frame is its ACK of ours: there is nothing of its own to acknowledge; an invalid SETTINGS
    # later (SETTINGS_MAX_FRAME_SIZE below 16384, RFC 9113 §6.5.2) is answered by GOAWAY PROTOCOL_ERROR, no ACK
    c = Raw(srv.port, settings=None)
    try:
        c.send(frame(PING, 0, 0, b'SEE-THIS'))
        frames = c.read_until(lambda f: f[0] == PING and f[1] & ACK)
        assert any(f[0] == PING for f in frames), frames
        c.send(frame(SETTINGS, 0, 0, struct.pack('>HI', 5, 42)))
        frames += c.read_until(lambda f: f[0] == GOAWAY)
        assert not [f for f in frames if f[0] == SETTINGS], frames
        assert goaway_of(frames)[1] == 1
    finally:
        c.close()


def test_data_frames_as_large_as_the_clients_max_frame_size(server):
    # SETTINGS_MAX_FRAME_SIZE 32768 and http2_chunk_size 64k: DATA frames of 32768 (nghttp2 alone stops at 16384)
    s = server(simple('location / { root {html}; http2_chunk_size 64k; }', listen=LISTEN),
               files={'html/big.bin': os.urandom(100000)})
    c = Raw(s.port, settings=struct.pack('>HIHI', 4, 1 << 20, 5, 32768))
    try:
        c.send(frame(WINDOW_UPDATE, 0, 0, struct.pack('>I', 1 << 20)))
        c.headers(1, path='/big.bin')
        status, body, frames = c.response(1)
        assert status == 200 and len(body) == 100000
        sizes = [len(f[3]) for f in frames if f[0] == DATA]
        assert sizes[0] == 32768 and max(sizes) == 32768, sizes
    finally:
        c.close()


def test_client_header_timeout_resets_the_stream(server):
    # a HEADERS frame that stops half-way: client_header_timeout resets its stream (PROTOCOL_ERROR, as nginx);
    # the connection goes on, and the header block's end, when it comes, keeps HPACK in step
    s = server(simple('client_header_timeout 1s; location / { return 200 "body"; }', listen=LISTEN))
    c = Raw(s.port)
    try:
        head, rest = c.headers(1, extra=[('x-foo', 'a-value-to-index')], split=20)
        c.send(head)
        frames = c.read_until(lambda f: f[0] == RST_STREAM, timeout=10)
        rst = [f for f in frames if f[0] == RST_STREAM]
        assert rst and rst[0][2] == 1 and struct.unpack('>I', rst[0][3])[0] == 1, frames
        c.send(rest)
        c.send(frame(PING, 0, 0, b'SEE-THIS'))
        assert any(f[0] == PING and f[1] & ACK for f in c.read_until(lambda f: f[0] == PING))
        c.headers(3, extra=[('x-foo', 'a-value-to-index')])  # an indexed field now
        assert c.response(3)[0] == 200
    finally:
        c.close()


def test_client_body_timeout_resets_the_stream(server):
    # a body that stops coming: no 408 goes out, the stream is reset with PROTOCOL_ERROR (nginx); the connection
    # goes on
    be = Backend().start()
    try:
        s = server(simple('location / { client_body_timeout 1s; proxy_pass http://127.0.0.1:%d; }' % be.port,
                          listen=LISTEN))
        c = Raw(s.port)
        try:
            c.headers(1, method='POST', end=False, extra=[('content-length', '100')])
            c.send(frame(DATA, 0, 1, b'part'))
            frames = c.read_until(lambda f: f[0] == RST_STREAM, timeout=10)
            rst = [f for f in frames if f[0] == RST_STREAM]
            assert rst and struct.unpack('>I', rst[0][3])[0] == 1, frames
            assert not [f for f in frames if f[0] == HEADERS], frames
            c.send(frame(PING, 0, 0, b'SEE-THIS'))
            assert any(f[0] == PING and f[1] & ACK for f in c.read_until(lambda f: f[0] == PING))
            wait_log(s, r'client timed out')
            assert be.requests == []
        finally:
            c.close()
    finally:
        be.stop()


def test_request_length_is_the_header_block(server):
    # $request_length of an HTTP/2 request: the HEADERS (and CONTINUATION) payload as it came, without padding and
    # priority fields
    s = server(simple('location / { return 200 "$request_length"; }', listen=LISTEN))
    c = Raw(s.port)
    try:
        block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'), (':authority', 'localhost'),
                              (':path', '/rl')], huffman=False)
        # padded, with a priority field: 1 pad length byte + 5 priority bytes + block + 3 bytes of padding
        payload = bytes([3]) + struct.pack('>IB', 0, 15) + block + b'\0\0\0'
        c.send(frame(HEADERS, END_HEADERS | END_STREAM | 0x8 | 0x20, 1, payload))
        status, body, _ = c.response(1)
        assert status == 200 and body == str(len(block)).encode()
        # split across HEADERS and CONTINUATION
        block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'), (':authority', 'localhost'),
                              (':path', '/rl2'), ('x-long', 'v' * 40)], huffman=False)
        c.send(frame(HEADERS, END_STREAM, 3, block[:10]) + frame(CONTINUATION, END_HEADERS, 3, block[10:]))
        status, body, _ = c.response(3)
        assert status == 200 and body == str(len(block)).encode()
    finally:
        c.close()


@pytest.mark.parametrize('tls', [False, True])
def test_preface_where_http2_is_not_spoken_is_400(server, tls):
    # "PRI * HTTP/2.0" read as HTTP/1.x: a plain listener without http2, and TLS (h2c is cleartext only): 400
    import ssl
    from helpers.tls import make_cert
    cert = make_cert(server.prefix.tmp, 'rsa', 'localhost')
    s = server(simple('ssl_certificate %s; ssl_certificate_key %s; location / { return 200 "body"; }' % cert,
                      listen='listen 127.0.0.1:{port}; listen 127.0.0.1:{port2} ssl http2;'))
    raw = socket.create_connection(('127.0.0.1', s.port2 if tls else s.port), timeout=5)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        raw = ctx.wrap_socket(raw, server_hostname='localhost')
    try:
        raw.sendall(PREFACE)
        data = b''
        while b'\r\n' not in data:
            chunk = raw.recv(4096)
            if not chunk:
                break
            data += chunk
        assert data.startswith(b'HTTP/1.1 400 '), data
    finally:
        raw.close()


@pytest.mark.hayate_only  # nginx 1.22 refuses any Host field next to :authority; later versions only a different one
def test_authority_and_host_that_differ_are_400(srv):
    c = Raw(srv.port)
    try:
        c.headers(1, extra=[('host', 'localhost')])
        assert c.response(1)[0] == 200
        c.headers(3, extra=[('host', 'other')])
        assert c.response(3)[0] == 400
    finally:
        c.close()


def test_body_before_settings_ack_is_refused_with_a_small_preread(server):
    # http2_body_preread_size below the default window: a stream with a body, before the client acknowledged our
    # smaller window, is refused (REFUSED_STREAM) as nginx does; without a body it is served
    s = server(simple('http2_body_preread_size 10; location / { return 200 "body"; }', listen=LISTEN))
    c = Raw(s.port, ack=False)  # the client's own SETTINGS, and no ACK of the server's
    try:
        c.headers(1)
        assert c.response(1)[0] == 200
        c.headers(3, method='POST', end=False)
        frames = c.read_until(lambda f: f[0] == RST_STREAM)
        rst = [f for f in frames if f[0] == RST_STREAM]
        assert rst and rst[0][2] == 3 and struct.unpack('>I', rst[0][3])[0] == 7, frames
    finally:
        c.close()


def test_refused_streams_under_a_small_concurrency_limit_keep_the_connection(server):
    # http2_max_concurrent_streams 1 and a client that has not acknowledged it: the streams past it are refused
    # (REFUSED_STREAM), a few of them are no flood, and HPACK stays in step for the streams served after
    s = server(simple('http2_max_concurrent_streams 1; location / { root {html}; } '
                      'location = /small { return 200 "small"; }', listen=LISTEN),
               files={'html/big.bin': os.urandom(200000)})
    c = Raw(s.port, ack=False)
    try:
        c.headers(1, path='/big.bin')
        c.read_until(lambda f: f[0] == DATA and f[2] == 1)
        for i, sid in enumerate((3, 5, 7)):
            c.headers(sid, extra=[('x-foo-%d' % i, 'v')])
            frames = c.read_until(lambda f: f[0] in (RST_STREAM, GOAWAY) and f[2] in (0, sid))
            rst = [f for f in frames if f[0] == RST_STREAM and f[2] == sid]
            assert rst and struct.unpack('>I', rst[0][3])[0] == 7, frames
        c.send(frame(WINDOW_UPDATE, 0, 0, struct.pack('>I', 1 << 20)) +
               frame(WINDOW_UPDATE, 0, 1, struct.pack('>I', 1 << 20)))
        frames = c.read_until(lambda f: f[2] == 1 and f[0] == DATA and f[1] & END_STREAM or f[0] == GOAWAY)
        assert not [f for f in frames if f[0] == GOAWAY], frames
        c.headers(9, path='/small', extra=[('x-foo-%d' % i, 'v') for i in range(3)])  # indexed now
        assert c.response(9)[:2] == (200, b'small')
    finally:
        c.close()


def test_header_size_limits_as_nginx_counts_them(server):
    # large_client_header_buffers 1 512: names and values of all fields together (pseudo-headers too) up to 512
    s = server(simple('large_client_header_buffers 1 512; location / { return 200 "body"; }', listen=LISTEN))
    base = len(':methodGET:schemehttp:path/:authoritylocalhost')
    for n, ok in ((512 - base - 8, True), (512 - base - 8 + 1, False)):
        c = Raw(s.port)
        try:
            c.headers(1, extra=[('longname', 'x' * n)])
            status, _, frames = c.response(1)
            assert (status == 200) == ok, (n, frames)
        finally:
            c.close()


def test_data_frames_of_one_read_reach_the_upstream_as_one_chunk(server):
    # proxy_request_buffering off, no content-length: the DATA frames that arrived together are passed on as one
    # chunk (as nginx), not one chunk per frame
    import threading
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    got = {}
    head = threading.Event()

    def backend():
        conn, _ = ls.accept()
        conn.settimeout(10)
        data = b''
        try:
            while b'\r\n\r\n' not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            head.set()
            while b'\r\n\r\n' in data and data.count(b'\r\n', data.index(b'\r\n\r\n') + 4) < 2:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        got['raw'] = data
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
        conn.close()

    t = threading.Thread(target=backend, daemon=True)
    t.start()
    try:
        s = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; '
                          'proxy_request_buffering off; }' % ls.getsockname()[1], listen=LISTEN))
        c = Raw(s.port)
        try:
            c.headers(1, method='POST', end=False)
            assert head.wait(10)  # the upstream has the request head: the body goes on as it comes
            c.send(frame(DATA, 0, 1, b'01234') + frame(DATA, 0, 1, b'many'))
            t.join(10)
            raw = got.get('raw', b'')
            body = raw[raw.index(b'\r\n\r\n') + 4:]
            assert body.startswith(b'9\r\n01234many\r\n'), raw
        finally:
            c.close()
    finally:
        ls.close()


def test_cookie_crumbs_are_one_field_again_for_the_upstream(server):
    # RFC 9113 §8.2.3: the cookie fields of an HTTP/2 request are joined by "; " before an HTTP/1.1 hop
    be = Backend().start()
    try:
        be.handler = lambda r: be.reply(200, b'ok')
        s = server(simple('location / { proxy_pass http://127.0.0.1:%d; } '
                          'location /v { return 200 "$http_cookie|$cookie_c"; }' % be.port, listen=LISTEN))
        c = Raw(s.port)
        try:
            c.headers(1, extra=[('cookie', 'a=b'), ('x-mid', '1'), ('cookie', 'c=d')])
            assert c.response(1)[:2] == (200, b'ok')
            r = be.requests[0]
            assert r.header_all('cookie') == ['a=b; c=d'], r.headers
            assert r.header_all('x-mid') == ['1']
            c.headers(3, path='/v', extra=[('cookie', 'a=b'), ('cookie', 'c=d')])
            assert c.response(3)[:2] == (200, b'a=b; c=d|d')
        finally:
            c.close()
    finally:
        be.stop()


def send_split(c, sid, path):
    """A request whose header block is larger than one frame: HEADERS then CONTINUATION frames of 16000 bytes."""
    block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'), (':path', path), (':authority', 'localhost')],
                         huffman=False)
    parts = [block[i:i + 16000] for i in range(0, len(block), 16000)]
    out = b''
    for i, part in enumerate(parts):
        flags = (END_STREAM if i == 0 else 0) | (END_HEADERS if i == len(parts) - 1 else 0)
        out += frame(HEADERS if i == 0 else CONTINUATION, flags, sid, part)
    c.send(out)


def test_response_head_above_64k_in_continuation_frames(server):
    # a 96 KiB response head goes out as HEADERS and CONTINUATION frames of at most 16384 bytes (nghttp2 alone
    # drops a head above 64 KiB and leaves the stream waiting)
    s = server(simple('large_client_header_buffers 2 64k; location / { add_header X-Long $arg_h; '
                      'add_header X-Long $arg_h; add_header X-Long $arg_h; return 200 "body"; }', listen=LISTEN))
    c = Raw(s.port)
    try:
        send_split(c, 1, '/?h=' + 'x' * 32768)
        status, body, frames = c.response(1)
        assert status == 200 and body == b'body'
        pieces = [len(f[3]) for f in frames if f[0] in ('HEADERS part', CONTINUATION)]
        assert len(pieces) >= 2 and max(pieces) <= 16384, pieces
        head = [f for f in frames if f[0] == HEADERS][0][4]
        assert [len(v) for k, v in head if k == 'x-long'] == [32768] * 3
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx has no bound on a response head
def test_response_head_above_the_bound_resets_the_stream(server):
    s = server(simple('large_client_header_buffers 2 64k; location / { %s return 200 "body"; }'
                      % ('add_header X-Long $arg_h; ' * 40), listen=LISTEN))
    c = Raw(s.port)
    try:
        send_split(c, 1, '/?h=' + 'x' * 32768)
        frames = c.read_until(lambda f: f[0] in (RST_STREAM, GOAWAY) or f[0] == HEADERS)
        rst = [f for f in frames if f[0] == RST_STREAM and f[2] == 1]
        assert rst and struct.unpack('>I', rst[0][3])[0] == 2, frames  # INTERNAL_ERROR
        wait_log(s, r'could not send the response header')
        c.headers(3, path='/?h=short')
        assert c.response(3)[0] == 200
    finally:
        c.close()
