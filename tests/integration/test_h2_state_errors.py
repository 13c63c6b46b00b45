"""HTTP/2 frames on streams in the wrong state (issue 11, the h2spec cases of RFC 9113 §5.1, §5.3.1, §6.3 and §8.1),
at frame level over h2c with prior knowledge: DATA or HEADERS on a stream the client reset or ended (STREAM_CLOSED),
PRIORITY frames on stream 0 or depending on their own stream (PROTOCOL_ERROR), and trailers without END_STREAM.
nghttp2 forgets closed streams and skips PRIORITY frames with RFC 7540 priorities off; hayate's h2 layer judges
these. Most run against nginx too."""
import struct

import pytest

from test_h2_conformance import (DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, LISTEN, RST_STREAM, WINDOW_UPDATE, Raw,
                                 frame, goaway_of)
from conftest import simple

PRIORITY = 2
PROTOCOL_ERROR, STREAM_CLOSED, NO_ERROR, CANCEL = 1, 5, 0, 8


@pytest.fixture
def srv(server):
    return server(simple('location / { return 200 "body"; }', listen=LISTEN))


def rst_code(frames, sid):
    """The error code of the first RST_STREAM on sid among frames, or None."""
    for f in frames:
        if f[0] == RST_STREAM and f[2] == sid:
            return struct.unpack('>I', f[3])[0]
    return None


def until_rst(c, sid, code):
    return c.read_until(lambda f: f[0] == GOAWAY or f[0] == RST_STREAM and f[2] == sid and
                        struct.unpack('>I', f[3])[0] == code)


def still_serves(c, sid):
    status, body, frames = c.response(sid)
    assert status == 200 and body == b'body', frames


@pytest.mark.hayate_only  # nginx 1.22 ignores DATA on a stream it closed, whatever the client did
def test_data_after_the_client_reset_the_stream(srv):
    # RFC 9113 §5.1 (closed): a frame other than PRIORITY after the RST_STREAM the client sent: STREAM_CLOSED
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '4')])
        c.send(frame(RST_STREAM, 0, 1, struct.pack('>I', CANCEL)) + frame(DATA, END_STREAM, 1, b'test'))
        frames = until_rst(c, 1, STREAM_CLOSED)
        assert rst_code(frames, 1) == STREAM_CLOSED or goaway_of(frames)[1] == STREAM_CLOSED, frames
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 ignores DATA on a stream it closed, whatever the client did
def test_data_after_the_stream_closed(srv):
    # the request ended (END_STREAM), the response went out: the stream is closed, DATA on it is STREAM_CLOSED
    c = Raw(srv.port)
    try:
        c.headers(1)
        still_serves(c, 1)
        c.send(frame(DATA, END_STREAM, 1, b'test'))
        frames = until_rst(c, 1, STREAM_CLOSED)
        assert rst_code(frames, 1) == STREAM_CLOSED or goaway_of(frames)[1] == STREAM_CLOSED, frames
        if rst_code(frames, 1) == STREAM_CLOSED:  # a stream error: the connection goes on
            c.headers(3)
            still_serves(c, 3)
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 ignores DATA on a stream it closed, whatever the client did
def test_data_after_end_stream_in_the_same_read(srv):
    # RFC 9113 §6.1: DATA on a stream half-closed (remote) or closed is STREAM_CLOSED, whether the stream is still
    # open on our side (nghttp2's verdict) or already forgotten
    c = Raw(srv.port)
    try:
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, c.enc.encode(
            [(':method', 'POST'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost')],
            huffman=False)) + frame(DATA, END_STREAM, 1, b'test'))
        frames = until_rst(c, 1, STREAM_CLOSED)
        assert rst_code(frames, 1) == STREAM_CLOSED or goaway_of(frames)[1] == STREAM_CLOSED, frames
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 ignores the frames of a stream it reset, whoever reset it first
def test_headers_after_the_client_reset_a_stream_we_reset(srv):
    # we reset the stream (response done, the body still coming: NO_ERROR); the client resets it too, then sends
    # HEADERS on it: after its own RST_STREAM, that is STREAM_CLOSED (RFC 9113 §5.1)
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        frames = until_rst(c, 1, NO_ERROR)
        assert rst_code(frames, 1) == NO_ERROR, frames
        c.send(frame(RST_STREAM, 0, 1, struct.pack('>I', CANCEL)))
        c.headers(1)
        frames = until_rst(c, 1, STREAM_CLOSED)
        assert rst_code(frames, 1) == STREAM_CLOSED, frames
        c.headers(3)
        still_serves(c, 3)
    finally:
        c.close()


@pytest.mark.hayate_only  # nginx 1.22 ignores the frames of a stream it reset
def test_trailers_without_end_stream_on_a_stream_we_reset(srv):
    # RFC 9113 §8.1: a second HEADERS frame without END_STREAM is malformed, also when it reaches a stream we reset
    # while the client was sending (trailers with END_STREAM there are ignored: test_h2_conformance)
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        frames = until_rst(c, 1, NO_ERROR)
        assert rst_code(frames, 1) == NO_ERROR, frames
        c.send(frame(DATA, 0, 1, b'test'))
        c.send(frame(HEADERS, END_HEADERS, 1, c.enc.encode([('x-test', 'ok')], huffman=False)))
        frames = until_rst(c, 1, PROTOCOL_ERROR)
        assert rst_code(frames, 1) == PROTOCOL_ERROR, frames
        c.headers(3)
        still_serves(c, 3)
    finally:
        c.close()


def test_trailers_without_end_stream_on_an_open_stream(srv):
    c = Raw(srv.port)
    try:
        c.send(frame(HEADERS, END_HEADERS, 1, c.enc.encode(
            [(':method', 'POST'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost')],
            huffman=False)) + frame(DATA, 0, 1, b'test') +
            frame(HEADERS, END_HEADERS, 1, c.enc.encode([('x-test', 'ok')], huffman=False)))
        frames = until_rst(c, 1, PROTOCOL_ERROR)
        assert rst_code(frames, 1) == PROTOCOL_ERROR or goaway_of(frames)[1] == PROTOCOL_ERROR, frames
    finally:
        c.close()


def test_priority_on_stream_0_is_a_connection_error(srv):
    # RFC 9113 §6.3
    c = Raw(srv.port)
    try:
        c.send(frame(PRIORITY, 0, 0, struct.pack('>IB', 1, 15)))
        frames = c.read_until(lambda f: f[0] == GOAWAY)
        assert goaway_of(frames)[1] == PROTOCOL_ERROR, frames
    finally:
        c.close()


def test_priority_depending_on_its_own_stream(srv):
    # RFC 9113 §5.3.1 makes it a stream error; nginx ends the connection (GOAWAY PROTOCOL_ERROR, the last stream
    # processed), and so does hayate, for an open, closed or idle stream alike
    c = Raw(srv.port)
    try:
        c.headers(1)
        still_serves(c, 1)
        c.send(frame(PRIORITY, 0, 1, struct.pack('>IB', 1, 15)))
        assert goaway_of(c.read_until(lambda f: f[0] == GOAWAY)) == (1, PROTOCOL_ERROR)
    finally:
        c.close()
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        c.send(frame(PRIORITY, 0, 3, struct.pack('>IB', 3, 15)))
        frames = c.read_until(lambda f: f[0] == GOAWAY)
        assert goaway_of(frames)[1] == PROTOCOL_ERROR, frames
    finally:
        c.close()


def test_valid_priority_frames_change_nothing(srv):
    # PRIORITY frames on idle streams, one depending on another, split across reads: the requests are served
    c = Raw(srv.port)
    try:
        p = frame(PRIORITY, 0, 1, struct.pack('>IB', 0, 15)) + frame(PRIORITY, 0, 5, struct.pack('>IB', 1, 15))
        c.send(p[:11])
        c.send(p[11:])
        c.headers(1)
        still_serves(c, 1)
        c.send(frame(PRIORITY, 0, 3, struct.pack('>IB', 5, 15))[:12])
        c.send(frame(PRIORITY, 0, 3, struct.pack('>IB', 5, 15))[12:])
        c.headers(3)
        still_serves(c, 3)
    finally:
        c.close()


def test_bad_padding_on_a_stream_we_reset_is_a_connection_error(srv):
    # RFC 9113 §6.1: a pad length that leaves no room is a connection error PROTOCOL_ERROR, also in a DATA frame
    # that reaches a stream already reset (nghttp2 skips such a frame's payload unread)
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        frames = until_rst(c, 1, NO_ERROR)
        assert rst_code(frames, 1) == NO_ERROR, frames
        c.send(frame(DATA, 0x8, 1, b'\x06Test'))  # PADDED: 5 bytes, a pad length of 6
        frames = c.read_until(lambda f: f[0] == GOAWAY)
        assert goaway_of(frames)[1] == PROTOCOL_ERROR, frames
    finally:
        c.close()


def test_window_update_of_0_on_a_stream_we_closed(srv):
    # RFC 9113 §6.9: an increment of 0 on a stream is a stream error PROTOCOL_ERROR, also when the stream is closed
    # on our side already (the response went out while the client had not ended its request)
    c = Raw(srv.port)
    try:
        c.headers(1, method='POST', end=False, extra=[('content-length', '10')])
        frames = until_rst(c, 1, NO_ERROR)
        assert rst_code(frames, 1) == NO_ERROR, frames
        c.send(frame(WINDOW_UPDATE, 0, 1, struct.pack('>I', 0)))
        frames = until_rst(c, 1, PROTOCOL_ERROR)
        assert rst_code(frames, 1) == PROTOCOL_ERROR or goaway_of(frames)[1] == PROTOCOL_ERROR, frames
    finally:
        c.close()


def test_headers_depending_on_their_own_stream_end_the_connection(srv):
    # RFC 9113 §5.3.1 allows a stream error; nginx makes it a connection error (GOAWAY PROTOCOL_ERROR naming the
    # last stream processed, none here), and so does hayate
    c = Raw(srv.port)
    try:
        block = c.enc.encode([(':method', 'GET'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost')])
        c.send(frame(HEADERS, END_STREAM | END_HEADERS | 0x20, 1, struct.pack('>IB', 1, 15) + block))
        assert goaway_of(c.read_until(lambda f: f[0] == GOAWAY)) == (0, PROTOCOL_ERROR)
    finally:
        c.close()


def test_overlong_integer_in_a_partial_header_block(srv):
    # an HPACK integer of more than four octets at the start of a HEADERS frame whose end has not come: nginx refuses
    # it at once (COMPRESSION_ERROR) instead of waiting for a frame that may never be whole; so does hayate
    for payload in (b'\xff\xff\xff\xff', b'\x42\xff\xff\xff\xff'):
        c = Raw(srv.port)
        try:
            c.send(struct.pack('>I', len(payload) + 1)[1:] + bytes([HEADERS, END_STREAM | END_HEADERS]) +
                   struct.pack('>I', 1) + payload)
            frames = c.read_until(lambda f: f[0] == GOAWAY)
            assert goaway_of(frames)[1] == 9, frames  # COMPRESSION_ERROR
        finally:
            c.close()
