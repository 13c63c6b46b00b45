"""HTTP/2 malformed requests answered as nginx answers them (issues 11 and 16): RFC 9113 §8.2.1 field names and
values, §8.2.2 connection-specific fields and TE, §8.3.1 pseudo-headers, §8.1.1 content-length against the DATA
received. nginx's HTTP/2 module answers each with 400 on the stream (error_page 400 applies) and an info line in the
error log; CONNECT and TRACE with 405; a zero-length field name is a connection error. The connection goes on."""
import h2.events
import pytest

from conftest import simple
from helpers.h2client import H2
from helpers.process import wait_log

pytestmark = pytest.mark.hayate_only  # Debian's nginx 1.22 has no "http2 on" and fewer of these checks

GOOD = [(':method', 'GET'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost')]

CONF = '''
    error_log {tmp}/logs/error.log info;
    location / { return 200 "ok"; }
    error_page 400 /err;
    location /err { return 200 "error page"; }
    location /body { proxy_pass http://127.0.0.1:{port2}/; }
'''
BACKEND = 'server { listen 127.0.0.1:{port2}; location / { return 200 "got $content_length"; } }'


@pytest.fixture
def srv(server):
    return server(simple(CONF, 'http2 on; ' + BACKEND))


def raw_request(c, headers, end=True):
    c.conn.config.validate_outbound_headers = False
    c.conn.config.normalize_outbound_headers = False
    sid = c.conn.get_next_available_stream_id()
    c.conn.send_headers(sid, headers, end_stream=end)
    c.flush()
    return sid


def replaced(name, value):
    return [(n, value if n == name else v) for n, v in GOOD]


CASES = [
    ('upper-case name', GOOD + [('X-Foo', 'bar')], 400, r'client sent invalid header name: "X-Foo"'),
    ('space in name', GOOD + [('x foo', 'bar')], 400, r'client sent invalid header name: "x foo"'),
    ('colon in name', GOOD + [('x:foo', 'bar')], 400, r'client sent invalid header name: "x:foo"'),
    ('control in name', GOOD + [('x\x01foo', 'bar')], 400, r'client sent invalid header name'),
    ('newline in value', GOOD + [('x-foo', 'a\nb')], 400, r'client sent header "x-foo" with invalid value'),
    ('NUL in value', GOOD + [('x-foo', 'a\x00b')], 400, r'client sent header "x-foo" with invalid value'),
    ('no authority, no host', GOOD[:3], 400, r'client sent neither ":authority" nor "Host" header'),
    ('empty authority', replaced(':authority', ''), 400, r'client sent invalid ":authority" header'),
    ('duplicate authority', GOOD + [(':authority', 'localhost')], 400, r'client sent duplicate ":authority" header'),
    ('duplicate path', GOOD + [(':path', '/')], 400, r'client sent duplicate :path header'),
    ('duplicate method', GOOD + [(':method', 'GET')], 400, r'client sent duplicate :method header'),
    ('duplicate scheme', GOOD + [(':scheme', 'http')], 400, r'client sent duplicate :scheme header'),
    ('empty path', replaced(':path', ''), 400, r'client sent empty :path header'),
    ('empty method', replaced(':method', ''), 400, r'client sent empty :method header'),
    ('empty scheme', replaced(':scheme', ''), 400, r'client sent empty :scheme header'),
    ('no scheme', [GOOD[0], GOOD[2], GOOD[3]], 400, r'client sent no :scheme header'),
    ('no method', GOOD[1:], 400, r'client sent no :method header'),
    ('no path, a regular field', GOOD[:2] + [GOOD[3], ('x-a', 'b')], 400, r'client sent no :path header'),
    ('unknown pseudo-header', GOOD + [(':protocol', 'websocket')], 400,
     r'client sent unknown pseudo-header ":protocol"'),
    ('pseudo-header after a field', GOOD[:3] + [('x-a', 'b'), GOOD[3]], 400,
     r'client sent out of order pseudo-headers'),
    ('relative path', replaced(':path', 't1.html'), 400, r'client sent invalid :path header: "t1.html"'),
    ('control in path', replaced(':path', '/t\x02'), 400, r'client sent invalid :path header'),
    ('lower-case method', replaced(':method', 'get'), 400, r'client sent invalid method: "get"'),
    ('invalid scheme', replaced(':scheme', '1http'), 400, r'client sent invalid :scheme header: "1http"'),
    ('Connection', GOOD + [('connection', 'keep-alive')], 400, r'client sent "Connection" header'),
    ('Keep-Alive', GOOD + [('keep-alive', '5')], 400, r'client sent "Keep-Alive" header'),
    ('Transfer-Encoding', GOOD + [('transfer-encoding', 'chunked')], 400, r'client sent "Transfer-Encoding" header'),
    ('Upgrade', GOOD + [('upgrade', 'websocket')], 400, r'client sent "Upgrade" header'),
    ('TE other than trailers', GOOD + [('te', 'gzip')], 400, r'client sent invalid "TE" header'),
    ('TE twice', GOOD + [('te', 'trailers'), ('te', 'trailers')], 400, r'client sent invalid "TE" header'),
    ('invalid content-length', GOOD + [('content-length', '1x')], 400,
     r'client sent invalid "Content-Length" header'),
    ('content-length, no body', GOOD + [('content-length', '5')], 400, r'client prematurely closed stream'),
    ('CONNECT', replaced(':method', 'CONNECT'), 405, r'client sent CONNECT method'),
    ('TRACE', replaced(':method', 'TRACE'), 405, r'client sent TRACE method'),
]


@pytest.mark.parametrize('name,headers,status,log', CASES, ids=[c[0] for c in CASES])
def test_malformed_head_is_answered_on_its_stream(srv, name, headers, status, log):
    c = H2(srv.port)
    try:
        sid = raw_request(c, headers)
        assert c.response(sid)[0] == status, name
        assert wait_log(srv, r'\[info\].*' + log)
        assert c.get('/')[0] == 200  # the connection goes on
    finally:
        c.close()


def test_valid_neighbours_pass(srv):
    c = H2(srv.port)
    try:
        for extra in ([('te', 'trailers')], [('te', 'Trailers')], [('x-a', 'b')], [('content-length', '0')]):
            status, _, body = c.response(raw_request(c, GOOD + extra))
            assert (status, body) == (200, b'ok'), extra
        status, _, _ = c.response(raw_request(c, replaced(':authority', 'h.example') + [('host', 'h.example')]))
        assert status == 200
        assert c.response(raw_request(c, GOOD[:3] + [('host', 'localhost')]))[0] == 200
    finally:
        c.close()


def test_underscore_name_is_ignored_by_default(srv):
    c = H2(srv.port)
    try:
        status, _, body = c.response(raw_request(c, GOOD + [('x_foo', 'bar'), ('x.bar', 'baz')]))
        assert (status, body) == (200, b'ok')
        assert wait_log(srv, r'\[info\].*client sent invalid header: "x_foo"')
        assert wait_log(srv, r'\[info\].*client sent invalid header: "x\.bar"')
    finally:
        c.close()


def test_error_page_400_applies(srv):
    """the server's error_page 400 answers a malformed request (its status kept), as nginx's"""
    c = H2(srv.port)
    try:
        status, _, body = c.response(raw_request(c, GOOD + [('X-Up', 'a')]))
        assert (status, body) == (400, b'error page')
    finally:
        c.close()


def test_zero_length_name_is_a_connection_error(srv):
    c = H2(srv.port)
    try:
        raw_request(c, GOOD + [('', 'x')])
        ev = c.wait_for(h2.events.ConnectionTerminated)
        assert ev is not None and ev.error_code == 1  # PROTOCOL_ERROR
        assert wait_log(srv, r'client sent zero header name length')
    finally:
        c.close()


def body_request(c, cl, body, trailers=None):
    sid = raw_request(c, [(':method', 'POST'), (':scheme', 'http'), (':path', '/body'), (':authority', 'localhost'),
                          ('content-length', str(cl))], end=False)
    if trailers:
        c.send_body(sid, body, end=False)
        c.conn.send_headers(sid, trailers, end_stream=True)
        c.flush()
    else:
        c.send_body(sid, body)
    return sid


def test_body_shorter_than_content_length(srv):
    c = H2(srv.port)
    try:
        assert c.response(body_request(c, 5, b'TEST'))[0] == 400
        assert wait_log(srv, r'\[info\].*client prematurely closed stream: only 4 out of 5 bytes of request body '
                             r'received')
        assert c.get('/')[0] == 200
    finally:
        c.close()


def test_body_longer_than_content_length(srv):
    c = H2(srv.port)
    try:
        assert c.response(body_request(c, 3, b'TEST'))[0] == 400
        assert wait_log(srv, r'\[info\].*client intended to send body data larger than declared')
        assert c.get('/')[0] == 200
    finally:
        c.close()


def test_body_short_before_trailers(srv):
    c = H2(srv.port)
    try:
        assert c.response(body_request(c, 5, b'TEST', trailers=[('x-t', 'v')]))[0] == 400
        assert wait_log(srv, r'client prematurely closed stream: only 4 out of 5')
    finally:
        c.close()


def test_body_matching_content_length(srv):
    c = H2(srv.port)
    try:
        status, _, body = c.response(body_request(c, 4, b'TEST'))
        assert (status, body) == (200, b'got 4')
        status, _, body = c.response(body_request(c, 4, b'TEST', trailers=[('x-t', 'v')]))
        assert (status, body) == (200, b'got 4')
    finally:
        c.close()


def test_body_mismatch_not_read_is_not_checked(srv):
    """nginx checks the DATA against content-length only when the body is read; a handler that does not read it
    answers as usual and the rest is dropped"""
    c = H2(srv.port)
    try:
        sid = raw_request(c, [(':method', 'POST'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost'),
                              ('content-length', '3')], end=False)
        c.send_body(sid, b'TEST')
        status, _, body = c.response(sid)
        assert (status, body) == (200, b'ok')
    finally:
        c.close()


def test_body_mismatch_then_error_page_to_a_proxy(server):
    """the refused body is not sent again: error_page 400 to a proxied location answers (400, its body), no hang"""
    conf = '''
    error_page 400 /proxy/t.html;
    location /proxy/ { proxy_pass http://127.0.0.1:{port2}/; }
    location /cmbs { client_body_in_file_only on; proxy_pass http://127.0.0.1:{port2}/; }
'''
    srv = server(simple(conf, 'http2 on; server { listen 127.0.0.1:{port2}; location / { return 200 "up"; } }'))
    c = H2(srv.port)
    try:
        sid = raw_request(c, [(':method', 'POST'), (':scheme', 'http'), (':path', '/cmbs'), (':authority', 'localhost'),
                              ('content-length', '5')], end=False)
        c.send_body(sid, b'TEST')
        status, _, body = c.response(sid)
        assert (status, body) == (400, b'up')
    finally:
        c.close()


def test_trailers_without_end_stream_reset_the_stream(srv):
    """RFC 9113 §8.1: a trailer section ends the stream; without END_STREAM the stream is reset (PROTOCOL_ERROR)"""
    c = H2(srv.port)
    try:
        sid = raw_request(c, [(':method', 'POST'), (':scheme', 'http'), (':path', '/body'), (':authority', 'localhost')],
                          end=False)
        c.send_body(sid, b'TEST', end=False)
        block = c.conn.encoder.encode([('x-t', 'v')])
        c.send_raw(len(block).to_bytes(3, 'big') + b'\x01\x04' + sid.to_bytes(4, 'big') + block)
        with pytest.raises(ConnectionError, match='stream %d reset: 1$' % sid):
            c.response(sid)
        assert wait_log(srv, r'client sent trailers without END_STREAM')
        assert c.get('/')[0] == 200
    finally:
        c.close()
