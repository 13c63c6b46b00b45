"""More HTTP/2 connection edges (issue 18's coverage): header lists too large by one long value or by many tiny
fields (the stream reset, the connection kept), a request with Host and no :authority, with neither (400, as nginx), CONNECT (no :path: 400), a client that
half-closes after its request, frames sent after the server's GOAWAY (read and dropped, then the close), the idle
close after keepalive_requests' GOAWAY, a graceful stop after that GOAWAY."""
import signal
import socket
import time

import h2.events
import pytest

from conftest import simple
from helpers.h2client import H2
from helpers.process import wait_log

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has no "http2 on"


def h2srv(server, body, http_extra=''):
    return server(simple(body, 'http2 on; ' + http_extra))


def raw_request(c, headers, end=True):
    c.conn.config.validate_outbound_headers = False
    c.conn.config.normalize_outbound_headers = False
    sid = c.conn.get_next_available_stream_id()
    c.conn.send_headers(sid, headers, end_stream=end)
    c.flush()
    return sid


def test_one_value_longer_than_a_buffer_resets_the_stream(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'large_client_header_buffers 4 1k;')
    c = H2(srv.port)
    try:
        with pytest.raises(ConnectionError, match='stream 1 reset: 2$'):
            c.get('/', headers=[('x-long', 'v' * 1500)])
        assert wait_log(srv, r'client sent too large header list')
        status, _, _ = c.get('/', headers=[('x-fits', 'v' * 900)])
        assert status == 200
    finally:
        c.close()


def test_many_tiny_fields_reset_the_stream(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'large_client_header_buffers 2 1k;')
    c = H2(srv.port)
    try:
        # 70 fields of 2 bytes: far below 2k of names and values, above 2k at 32 bytes a field (RFC 9113 §6.5.2)
        with pytest.raises(ConnectionError, match='stream 1 reset: 2$'):
            c.get('/', headers=[('a%d' % i, '') for i in range(70)])
        assert c.get('/', headers=[('a%d' % i, '') for i in range(30)])[0] == 200
    finally:
        c.close()


def test_host_without_authority(server):
    srv = h2srv(server, 'location / { return 200 "$host"; }')
    c = H2(srv.port)
    try:
        sid = raw_request(c, [(':method', 'GET'), (':path', '/'), (':scheme', 'http'), ('host', 'h.example')])
        status, _, body = c.response(sid)
        assert status == 200 and body == b'h.example'
        sid = raw_request(c, [(':method', 'GET'), (':path', '/'), (':scheme', 'http')])
        # RFC 9113 §8.3.1 makes it malformed; nginx answers 400 on the stream (not RST_STREAM)
        assert c.response(sid)[0] == 400
    finally:
        c.close()


def test_connect_is_refused(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        sid = raw_request(c, [(':method', 'CONNECT'), (':authority', 'example.com:443')])
        status, _, _ = c.response(sid)
        assert status == 400
    finally:
        c.close()


def test_client_half_close_after_its_request(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }')
    c = H2(srv.port)
    try:
        c.request('/')
        c.sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + 10
        while not c.closed and time.monotonic() < deadline:
            c.read(1.0)
        assert c.closed  # the connection is closed (the client can send nothing more)
    finally:
        c.close()
    c2 = H2(srv.port)  # the server goes on
    try:
        assert c2.get('/')[0] == 200
    finally:
        c2.close()


def test_frames_after_goaway_are_read_then_the_connection_closes(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'keepalive_timeout 1s; lingering_timeout 1s;')
    c = H2(srv.port)
    try:
        assert c.get('/')[0] == 200
        ev = c.wait_for(h2.events.ConnectionTerminated, timeout=10)
        assert ev is not None and ev.error_code == 0
        c.raw_ack(1, 1)  # a WINDOW_UPDATE after the GOAWAY: read and dropped
        c.send_raw(b'\x00\x00\x08\x06\x00\x00\x00\x00\x00' + b'pingpong')
        deadline = time.monotonic() + 10
        while not c.closed and time.monotonic() < deadline:
            c.read(1.0)
        assert c.closed
    finally:
        c.close()


def test_idle_close_after_keepalive_requests_goaway(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'keepalive_requests 1; keepalive_timeout 1s;')
    c = H2(srv.port)
    try:
        assert c.get('/')[0] == 200
        ev = c.wait_for(h2.events.ConnectionTerminated, timeout=5)
        assert ev is not None and ev.last_stream_id == 1
        deadline = time.monotonic() + 10
        while not c.closed and time.monotonic() < deadline:
            c.read(1.0)
        assert c.closed
    finally:
        c.close()


def test_graceful_stop_after_goaway(server):
    srv = h2srv(server, 'location / { return 200 "ok"; }', 'keepalive_requests 1; keepalive_timeout 60s;')
    c = H2(srv.port)
    try:
        assert c.get('/')[0] == 200
        assert c.wait_for(h2.events.ConnectionTerminated, timeout=5) is not None
        srv.proc.send_signal(signal.SIGQUIT)
        assert srv.proc.wait(10) == 0
    finally:
        c.close()
