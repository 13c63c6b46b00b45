"""HTTP/2 edges at frame level (issue 18's coverage): a bad or split client preface over TLS, PRIORITY_UPDATE
frames that are ignored (even stream, oversized value, closed stream, more early signals than kept), the priority
header in several fields, an empty-DATA flood, keepalive_time, a HEAD request, response trailers (add_trailer),
HTTP/1 connection fields left out of a response, a Host field equal to :authority, a body above
client_max_body_size, lingering_close off."""
import socket
import ssl
import struct
import threading
import time

import h2.events
import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.h2client import H2
from helpers.process import wait_log
from helpers.tls import make_cert

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has no "http2 on" (and different limits and wording)

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'


def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


def prio_update(sid, value):
    return frame(0x10, 0, 0, struct.pack('>I', sid) + value)


@pytest.fixture(scope='module')
def cert(tmp_path_factory):
    return make_cert(str(tmp_path_factory.mktemp('cpcerts')), 'ec', 'localhost', kind='ec')


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def h2srv(server, body, http_extra=''):
    return server(simple(body, 'http2 on; ' + http_extra))


def tls_srv(server, cert):
    return server(simple('ssl_certificate %s; ssl_certificate_key %s; location / { return 200 "ok"; }' % cert,
                         'http2 on;', listen='listen 127.0.0.1:{port} ssl;'))


def tls_sock(port):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(['h2'])
    s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=5), server_hostname='localhost')
    assert s.selected_alpn_protocol() == 'h2'
    return s


def read_all(s, timeout=5.0):
    data = b''
    deadline = time.monotonic() + timeout
    s.settimeout(1.0)
    while time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, ssl.SSLError, OSError):
            break
        if not d:
            break
        data += d
    return data


def test_invalid_preface_over_tls_closes(server, cert):
    srv = tls_srv(server, cert)
    s = tls_sock(srv.port)
    s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    data = read_all(s)
    s.close()
    assert b'HTTP/1.1' not in data
    assert wait_log(srv, 'client sent invalid HTTP/2 preface')


def test_preface_in_pieces_over_tls(server, cert):
    srv = tls_srv(server, cert)
    c = H2.__new__(H2)
    s = tls_sock(srv.port)
    s.sendall(PREFACE[:10])
    s.settimeout(5)
    first = s.recv(65536)  # the server's SETTINGS goes out while the preface is incomplete
    assert first[3] == 4
    s.sendall(PREFACE[10:20])
    s.sendall(PREFACE[20:] + frame(4, 0, 0)[:3])
    s.sendall(frame(4, 0, 0)[3:])
    import h2.config
    import h2.connection
    c.sock = s
    c.conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding='utf-8'))
    c.conn.initiate_connection()
    c.conn.data_to_send()  # preface and SETTINGS were sent by hand
    c.events, c.closed, c.inbuf, c.after_goaway = [], False, b'', False
    c.conn.receive_data(first)
    c.flush()
    try:
        status, _, body = c.get('/')
        assert status == 200 and body == b'ok'
    finally:
        c.close()


def test_ignored_priority_updates_keep_the_connection(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        status, _, _ = c.get('/')  # stream 1, closed now
        assert status == 200
        c.send_raw(prio_update(1, b'u=0'))                 # a closed stream
        c.send_raw(prio_update(4, b'u=1'))                 # an even (server) stream
        c.send_raw(prio_update(101, b'u=1, i' + b' ' * 1100))  # above the kept field size
        c.send_raw(prio_update(103, b'u=@'))               # a value that does not parse
        for sid in range(201, 221, 2):                     # more early signals than are kept
            c.send_raw(prio_update(sid, b'u=%d' % (sid % 8)))
        c.send_raw(prio_update(201, b'u=2'))               # one of them again
        status, _, body = c.get('/')
        assert status == 200 and body == b'ok'
        assert not any(isinstance(e, h2.events.ConnectionTerminated) for e in c.events)
    finally:
        c.close()


def test_early_priority_update_then_the_request(server):
    srv = h2srv(server, 'location / { return 200 "u=$http_priority"; }')
    c = H2(srv.port)
    try:
        c.send_raw(prio_update(1, b'u=6'))
        c.send_raw(prio_update(3, b'u=2, i'))
        status, _, body = c.get('/', headers=[('priority', 'u=1'), ('priority', 'i')])
        assert status == 200 and body == b'u=u=1, i'  # the priority fields joined by ", " for the request
        status, _, _ = c.get('/')
        assert status == 200
    finally:
        c.close()


def test_empty_data_flood(server):
    srv = h2srv(server, 'location / { proxy_pass http://127.0.0.1:{port2}; }')
    c = H2(srv.port)
    try:
        sid = c.request('/', method='POST', end=False)
        c.send_raw(b''.join(frame(0, 0, sid) for _ in range(600)))
        ev = c.wait_for(h2.events.ConnectionTerminated)
        assert ev is not None and ev.error_code == 11  # ENHANCE_YOUR_CALM
        assert wait_log(srv, r'client sent too many empty DATA frames \(flood\)')
    finally:
        c.close()


def test_keepalive_time_ends_the_connection_with_goaway(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'keepalive_time 1s;')
    c = H2(srv.port)
    try:
        status, _, _ = c.get('/')
        assert status == 200
        assert not any(isinstance(e, h2.events.ConnectionTerminated) for e in c.events)
        start = time.monotonic()
        while time.monotonic() - start < 1.2:  # keepalive_time passes (a time limit is what is tested)
            c.read(0.2)
        sid = c.request('/')
        status, _, body = c.response(sid)
        assert status == 200 and body == b'ok'  # the last request is still answered
        ev = c.wait_for(h2.events.ConnectionTerminated)
        assert ev is not None and ev.error_code == 0 and ev.last_stream_id == sid
    finally:
        c.close()


def test_head_request(server):
    srv = h2srv(server, 'location / { return 200 "0123456789"; }')
    c = H2(srv.port)
    try:
        status, hdrs, body = c.get('/', method='HEAD')
        assert status == 200 and body == b'' and hdrs.get('content-length') == '10'
    finally:
        c.close()


def test_response_trailers(server):
    srv = h2srv(server, 'location / { add_trailer x-sum "abc"; add_trailer x-empty ""; return 200 "body"; }')
    c = H2(srv.port)
    try:
        sid = c.request('/')
        status, _, body = c.response(sid)
        assert status == 200 and body == b'body'
        trailers = [e for e in c.events if isinstance(e, h2.events.TrailersReceived) and e.stream_id == sid]
        assert trailers and dict(trailers[0].headers) == {'x-sum': 'abc'}
    finally:
        c.close()


def test_connection_fields_are_left_out(server):
    srv = h2srv(server, 'location / { add_header Connection "x"; add_header Keep-Alive "t=1"; '
                        'add_header Upgrade "y"; add_header Proxy-Connection "z"; add_header X-Kept "k"; '
                        'return 200 "ok"; }')
    c = H2(srv.port)
    try:
        status, hdrs, _ = c.get('/')
        assert status == 200 and hdrs.get('x-kept') == 'k'
        for n in ('connection', 'keep-alive', 'upgrade', 'proxy-connection'):
            assert n not in hdrs
    finally:
        c.close()


def test_host_equal_to_authority(server):
    srv = h2srv(server, 'location / { return 200 "$host|$http_host"; }')
    c = H2(srv.port)
    try:
        status, _, body = c.get('/', headers=[('host', 'localhost')])
        assert status == 200 and body == b'localhost|localhost'
    finally:
        c.close()


def test_body_above_max_size_before_the_handler_reads(server, be):
    be.handler = lambda r: be.reply(200, b'x')
    srv = h2srv(server, 'location / { client_max_body_size 10; proxy_pass http://127.0.0.1:%d; }' % be.port)
    c = H2(srv.port)
    try:
        # no content-length: the size is only known from the DATA frames
        status, _, _ = c.get('/', method='POST', body=b'a' * 100)
        assert status == 413
        assert wait_log(srv, 'client intended to send too large body: 100 bytes')
        assert be.requests == []
        status, _, _ = c.get('/', method='POST', body=b'a' * 5)
        assert status == 200
    finally:
        c.close()


def test_lingering_close_off_goaway_closes(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'lingering_close off; keepalive_timeout 1s;')
    c = H2(srv.port)
    try:
        status, _, _ = c.get('/')
        assert status == 200
        ev = c.wait_for(h2.events.ConnectionTerminated, timeout=10)
        assert ev is not None and ev.error_code == 0
        deadline = time.monotonic() + 10
        while not c.closed and time.monotonic() < deadline:
            c.read(1.0)
        assert c.closed
    finally:
        c.close()


def test_stream_reset_by_client_while_response_waits(server, be):
    # the backend never answers; the client resets the stream; the connection goes on
    gate = threading.Event()
    be.handler = lambda r: [lambda: gate.wait(10), be.reply(200, b'late')]
    srv = h2srv(server, 'location /slow { proxy_pass http://127.0.0.1:%d; } '
                        'location / { return 200 "ok"; }' % be.port,
                "log_format st '$request $status'; access_log {tmp}/logs/st.log st;")
    c = H2(srv.port)
    try:
        sid = c.request('/slow')
        be.wait_requests(1)
        c.conn.reset_stream(sid)
        c.flush()
        status, _, body = c.get('/')
        assert status == 200
    finally:
        gate.set()
        c.close()
    srv.stop()
    assert 'GET /slow HTTP/2.0 499' in open(srv.tmp + '/logs/st.log').read()

