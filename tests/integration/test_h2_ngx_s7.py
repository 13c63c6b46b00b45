"""HTTP/2 behaviours nginx's test suite checks (h2_request_body.t, h2_priority.t, h2.t, h2_headers.t), from
nginx's documentation of ngx_http_v2_module and RFC 9113, at frame level (python3-h2 and raw frames):
- a request body that is one empty DATA frame with END_STREAM reaches a proxied upstream as a body of length 0
  ("Content-Length: 0"), and client_body_in_file_only writes an (empty) file for it;
- a PRIORITY frame whose stream depends on itself is a connection error PROTOCOL_ERROR (RFC 7540 §5.3.1; nginx
  makes it a connection error), while hayate otherwise schedules by RFC 9218 and ignores PRIORITY frames;
- a connection on an "http2 on" plain listener that starts with bytes that are neither the HTTP/2 preface nor an
  HTTP/1 method is answered "400 Bad Request" at once;
- a header block of one frame that ends inside a field is FRAME_SIZE_ERROR, unless something before the cut is
  already wrong (COMPRESSION_ERROR: nginx answers the first fault, reading in order).
Runs against Debian's nginx 1.22 too (listen ... http2)."""
import os
import socket
import struct
import time

import h2.events
import pytest

from conftest import IS_NGINX, simple
from helpers.apppeers import fcgi_peer
from helpers.backend import Backend
from helpers.h2client import H2

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
LISTEN = 'listen 127.0.0.1:{port} http2;' if IS_NGINX else 'listen 127.0.0.1:{port};'
HTTP_EXTRA = '' if IS_NGINX else 'http2 on;'


def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def h2srv(server, body, http_extra=''):
    return server(simple(body, HTTP_EXTRA + http_extra, listen=LISTEN))


def test_empty_data_frame_body_reaches_upstream_with_content_length_0(server, be):
    be.handler = lambda r: be.reply(200, ('cl=%s body=%d' % (r.header('content-length'), len(r.body))).encode())
    srv = h2srv(server, '''
        location / {
            add_header X-Body-File $request_body_file;
            client_body_in_file_only on;
            proxy_pass http://127.0.0.1:%d;
        }''' % be.port)
    c = H2(srv.port)
    try:
        sid = c.request('/empty', method='POST', body=b'')  # HEADERS, then DATA of 0 bytes with END_STREAM
        status, hdrs, body = c.response(sid)
        assert status == 200
        assert body == b'cl=0 body=0'
        path = hdrs.get('x-body-file')
        assert path, 'client_body_in_file_only: no body file for an empty body'
        assert os.path.exists(path) and os.path.getsize(path) == 0
    finally:
        c.close()


def test_buffered_body_opens_the_stream_window_beyond_preread(server, be):
    # the body is read whole (proxy_request_buffering on, client_body_in_file_only): once the preread window's bytes
    # came, the stream's WINDOW_UPDATE reopens at least the whole 64k window at once (nginx), not half of it
    be.handler = lambda r: be.reply(200, b'%d' % len(r.body))
    srv = h2srv(server, '''
        location / {
            client_body_in_file_only on;
            proxy_pass http://127.0.0.1:%d;
        }''' % be.port)
    c = H2(srv.port)
    try:
        deadline = time.monotonic() + 5
        while not any(isinstance(e, h2.events.RemoteSettingsChanged) for e in c.events):  # the 64k window known
            assert time.monotonic() < deadline and not c.closed, 'no SETTINGS from the server'
            c.read(0.5)
        sid = c.request('/big', method='POST', end=False)
        for _ in range(4):  # the whole initial window of the stream, as nginx's h2_request_body.t sends it
            c.conn.send_data(sid, b'01234567' * 2048)
            c.flush()
        deltas = []
        while not deltas:
            assert time.monotonic() < deadline + 5 and not c.closed, 'no WINDOW_UPDATE for the stream'
            evs = c.read(0.5)
            deltas += [e.delta for e in evs if isinstance(e, h2.events.WindowUpdated) and e.stream_id == sid]
        assert deltas[0] >= 65536
        c.send_body(sid, b'01234567' * 2048)
        status, _, body = c.response(sid)
        assert status == 200 and body == b'81920'
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22's "listen ... http2" takes HTTP/2 only; 1.25's "http2 on" as here
@pytest.mark.parametrize('data', [b'x' * 16, b'get / HTTP/1.1'])
def test_not_a_preface_nor_a_method_is_answered_400_at_once(server, data):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    try:
        s.sendall(data)  # no line end: nginx answers a method byte outside A-Z, '_', '-' as it arrives
        got = b''
        while b'\r\n\r\n' not in got:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
        assert got.startswith(b'HTTP/1.1 400 Bad Request\r\n')
    finally:
        s.close()


def goaway(c, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for e in c.events:
            if isinstance(e, h2.events.ConnectionTerminated):
                return e
        if c.closed:
            break
        c.read(0.5)
    return next((e for e in c.events if isinstance(e, h2.events.ConnectionTerminated)), None)


@pytest.mark.parametrize('split', [False, True])
def test_priority_frame_depending_on_its_own_stream_is_a_connection_error(server, split):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        sid = c.request('/')
        assert c.response(sid)[0] == 200
        f = frame(0x2, 0, sid, struct.pack('>IB', sid, 15))  # PRIORITY: stream 1 depends on stream 1
        if split:  # the frame in two reads: its header, then its payload
            c.send_raw(f[:11])
            assert not c.read(0.3)
            f = f[11:]
        c.send_raw(f)
        g = goaway(c)
        assert g is not None and g.error_code == 1 and g.last_stream_id == sid  # PROTOCOL_ERROR
    finally:
        c.close()


def test_priority_frames_on_other_streams_are_accepted(server):
    # RFC 7540 PRIORITY frames are read and let be (hayate schedules by RFC 9218): the connection goes on
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        c.send_raw(frame(0x2, 0, 3, struct.pack('>IB', 0x80000001, 255)) + frame(0x2, 0, 5, struct.pack('>IB', 3, 0)))
        sid = c.request('/')
        assert c.response(sid)[0] == 200
        c.send_raw(frame(0x2, 0, sid, struct.pack('>IB', 5, 7)))
        sid = c.request('/')
        assert c.response(sid)[0] == 200
        assert goaway(c, 0.3) is None
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 bounds the list by http2_max_header_size; 1.25 by large_client_header_buffers
def test_header_list_larger_than_the_buffers_is_a_connection_error(server):
    # large_client_header_buffers 1 512: each field fits, the two together (one of them from the HPACK table) do not
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'large_client_header_buffers 1 512;')
    c = H2(srv.port)
    try:
        assert c.get('/', headers=[('longname', 'x' * 400)])[0] == 200  # indexed by python-h2's encoder
        c.request("/", headers=[("longname", "x" * 400), ("longname", "x" * 400)])
        g = goaway(c)
        assert g is not None and g.error_code == 0xb  # ENHANCE_YOUR_CALM
    finally:
        c.close()


def test_unbuffered_fastcgi_gets_the_end_of_stdin_with_the_end_of_stream(server, prefix):
    # content-length: 0 on a stream not ended yet, fastcgi_request_buffering off: the empty STDIN record (the end of
    # the body) goes to the application when the client's END_STREAM comes, not with the request (the peer answers
    # only once it has it)
    peer = fcgi_peer(prefix.tmp, unix=False)
    try:
        srv = h2srv(server, 'location / { fastcgi_request_buffering off; fastcgi_pass %s; '
                            'fastcgi_param REQUEST_URI /body; }' % peer.addr)
        c = H2(srv.port)
        try:
            sid = c.request('/', method='POST', headers=[('content-length', '0')], end=False)
            with pytest.raises(TimeoutError):
                c.response(sid, timeout=1.0)  # no answer while the stream is open
            c.conn.end_stream(sid)
            c.flush()
            status, _, body = c.response(sid)
            assert status == 200 and body.startswith(b'0 ')
        finally:
            c.close()
    finally:
        peer.stop()


@pytest.mark.parametrize('block,code', [
    # an index, a string length, a string, a name cut by the end of the block (END_HEADERS): nginx's "header block
    # with incorrect length", FRAME_SIZE_ERROR
    (b'\xff', 0x6), (b'\x42\xff', 0x6), (b'\x42\x05abc', 0x6), (b'\x40\x03ab', 0x6),
    # the same cut blocks, but what comes first is already wrong: index 0, a name index past the tables, a Huffman
    # name with EOS, a table size update above 4096. nginx reads the block in order and answers the first fault:
    # COMPRESSION_ERROR, not the incorrect length behind it
    (b'\x80\xff', 0x9), (b'\x1f\x3c\x05', 0x9), (b'\x82\x40\x84\xff\xff\xff\xff', 0x9),
    (b'\x3f\xe2\x1f\x82\xff', 0x9)])
def test_header_block_cut_inside_a_field(server, block, code):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        c.send_raw(frame(0x1, 0x5, 1, block))
        g = goaway(c)
        assert g is not None and g.error_code == code
    finally:
        c.close()


def test_header_blocks_that_end_on_a_field_are_read(server):
    # the same scan lets whole blocks through: literal names and values, indexed fields, padding, priority block
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        block = (b'\x82\x86\x84'  # :method GET, :scheme http, :path /
                 b'\x41\x09localhost'  # :authority, literal with indexing
                 b'\x00\x05x-foo\x03bar')  # a literal name and value without indexing
        c.send_raw(frame(0x1, 0x5 | 0x8 | 0x20, 1, b'\x02' + struct.pack('>IB', 0, 15) + block + b'\x00\x00'))
        # read as raw frames: python-h2 knows nothing of a stream it did not open
        buf, status, deadline = b'', None, time.monotonic() + 5
        while status is None:
            assert time.monotonic() < deadline, 'no response'
            c.sock.settimeout(max(0.1, deadline - time.monotonic()))
            data = c.sock.recv(65536)
            assert data, 'connection closed'
            buf += data
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], 'big'):
                n = int.from_bytes(buf[:3], 'big')
                ftype, sid, payload, buf = buf[3], int.from_bytes(buf[5:9], 'big'), buf[9:9 + n], buf[9 + n:]
                assert ftype != 0x7, 'GOAWAY'
                if ftype == 0x1 and sid == 1:
                    status = dict(c.conn.decoder.decode(payload))[':status']
        assert status == '200'
    finally:
        c.close()
