"""HTTP/1 message framing: request bodies, smuggling defences, limits, lingering close, timeouts."""
import socket
import time
import threading

import pytest

from conftest import IS_NGINX, simple
from helpers.http1 import build_request

FILES = {'html/f.txt': 'file\n', 'html/g.txt': 'gggg\n'}
NEXT = b'GET /g.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'


@pytest.fixture
def srv(server):
    return server(simple('root {html};'), files=FILES)


def assert_rejected_and_closed(c, statuses=(400,)):
    """The bad request gets an error, the connection closes, and the smuggled request after it is never
    answered."""
    r = c.read_response()
    assert r.status in statuses, r
    assert r.header('Connection') == 'close'
    assert c.is_closed(10)
    assert c.buf == b'', 'a second response followed: %r' % c.buf[:200]
    return r


# ---------------------------------------------------------------- request bodies on a static location

def test_body_content_length_then_next_request(srv):
    # the 405's body is discarded and the connection stays usable
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello' + NEXT)
    r1 = c.read_response()
    r2 = c.read_response()
    assert r1.status == 405
    assert r2.status == 200 and r2.body == b'gggg\n'


def test_body_chunked_then_next_request(srv):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n'
           b'3\r\nabc\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n' + NEXT)
    r1 = c.read_response()
    r2 = c.read_response()
    assert r1.status == 405
    assert r2.status == 200 and r2.body == b'gggg\n'


def test_body_body_looks_like_request(srv):
    # a body that contains a request line is body, not a second request
    inner = b'GET /f.txt HTTP/1.1\r\nHost: a\r\n\r\n'
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n' % len(inner) + inner + NEXT)
    r1 = c.read_response()
    r2 = c.read_response()
    assert r1.status == 405
    assert r2.body == b'gggg\n'
    assert c.is_closed(5) and c.buf == b''


def test_expect_100_continue_static(srv):
    # nginx answers the final 405 without asking for the body; the client may still send it
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n')
    r = c.read_response()
    assert r.status == 405
    if r.header('Connection', '').lower() == 'close':
        assert c.is_closed(5)
    else:
        c.send(b'hello' + NEXT)
        r2 = c.read_response()
        assert r2.status == 200 and r2.body == b'gggg\n'


def test_transfer_encoding_unknown_501(srv):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c, (501,))


# ---------------------------------------------------------------- smuggling cases

def test_cl_and_te(srv):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n'
           b'0\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_te_and_cl(srv):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n'
           b'0\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_duplicate_content_length(srv):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc' + NEXT)
    assert_rejected_and_closed(c)


@pytest.mark.parametrize('cl', [b'-1', b'1,1', b'abc', b'1 1', b'99999999999999999999999', b'+5', b''])
def test_bad_content_length(srv, cl):
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: ' + cl + b'\r\n\r\nhello' + NEXT)
    assert_rejected_and_closed(c)


@pytest.mark.parametrize('chunk', [b'zz\r\nabc\r\n0\r\n\r\n', b'ffffffffffffffffffff\r\n', b'-3\r\nabc\r\n0\r\n\r\n',
                                   b'3\r\nabcXX\r\n0\r\n\r\n', b'0x3\r\nabc\r\n0\r\n\r\n'])
def test_bad_chunked_body(srv, chunk):
    # nginx answers the static location's 405 before looking at the body and then closes when discarding
    # the body fails; whatever the status, nothing after the bad body is executed
    c = srv.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n' + chunk + NEXT)
    assert_rejected_and_closed(c, (400, 405))


def test_obs_fold(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_nul_in_header_value(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_bare_cr_in_header(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_space_before_colon(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


def test_nul_in_request_line(srv):
    c = srv.conn()
    c.send(b'GET /f\x00.txt HTTP/1.1\r\nHost: a\r\n\r\n' + NEXT)
    assert_rejected_and_closed(c)


# ---------------------------------------------------------------- limits

@pytest.fixture
def small(server):
    return server(simple('root {html};\n        large_client_header_buffers 2 1k;\n'
                         '        client_header_buffer_size 1k;\n        client_max_body_size 10;'), files=FILES)


def test_request_line_too_long_414(small):
    c = small.conn()
    c.send(b'GET /' + b'a' * 2000 + b' HTTP/1.1\r\nHost: a\r\n\r\n')
    r = c.read_response()
    assert r.status == 414
    assert r.reason == 'Request-URI Too Large'
    assert r.header('Connection') == 'close'


def test_request_line_fits(small):
    r = small.get('/f.txt?' + 'a' * 900)
    assert r.status == 200


def test_header_too_long(small, prog):
    c = small.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nX-Long: ' + b'a' * 2000 + b'\r\n\r\n')
    r = c.read_response()
    assert r.status == 400
    if IS_NGINX:
        assert b'Request Header Or Cookie Too Large' in r.body
    assert r.header('Connection') == 'close'


def test_too_many_header_buffers(small):
    # 6 headers of ~900 bytes need more than the 1k header buffer and 2 large buffers
    hdrs = b''.join(b'X-H%d: %s\r\n' % (i, b'b' * 900) for i in range(6))
    c = small.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\n' + hdrs + b'\r\n')
    r = c.read_response()
    assert r.status == 400


def test_headers_spanning_buffers_ok(small):
    hdrs = [('X-H%d' % i, 'b' * 700) for i in range(2)]
    r = small.get('/f.txt', headers=hdrs)
    assert r.status == 200


def test_body_too_large_413(small):
    c = small.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n' + b'x' * 11)
    r = c.read_response()
    assert r.status == 413
    assert r.reason == 'Request Entity Too Large'
    assert r.header('Connection') == 'close'


def test_body_at_limit_ok(small):
    c = small.conn()
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n' + b'x' * 10 + NEXT)
    assert c.read_response().status == 405
    assert c.read_response().status == 200


def test_client_max_body_size_zero_unlimited(server):
    s = server(simple('root {html};\n        client_max_body_size 0;'), files=FILES)
    r = s.raw(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 100000\r\n\r\n' + b'x' * 100000)
    assert r.status == 405


def send_in_background(c, first, extra_bytes):
    def run():
        c.send_lenient(first)
        for _ in range(extra_bytes // 16384):
            if not c.send_lenient(b'x' * 16384):
                break
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_lingering_close_413(small):
    # a client still sending its big body must be able to read the whole 413
    c = small.conn()
    t = send_in_background(c, b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 10000000\r\n\r\n', 1 << 20)
    r = c.read_response()
    assert r.status == 413
    assert b'</html>' in r.body
    t.join(10)


def test_lingering_close_400(srv):
    c = srv.conn()
    t = send_in_background(c, b'GET /f.txt HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 1 << 20)
    r = c.read_response()
    assert r.status == 400
    assert b'</html>' in r.body
    t.join(10)


# ---------------------------------------------------------------- timeouts

def test_client_header_timeout_closes(server):
    s = server(simple('root {html};\n        client_header_timeout 1s;'), files=FILES)
    c = s.conn(timeout=15)
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\n')   # never finished
    assert c.is_closed(10)
    # nginx closes a timed-out client without a response (the 408 is only logged)
    assert c.buf == b''


def test_client_header_timeout_no_bytes(server):
    s = server(simple('root {html};\n        client_header_timeout 1s;'), files=FILES)
    c = s.conn(timeout=15)
    assert c.is_closed(10)
    assert c.buf == b''


def test_stalled_body_closed(server):
    s = server(simple('root {html};\n        client_body_timeout 1s;\n        lingering_timeout 1s;'), files=FILES)
    c = s.conn(timeout=15)
    c.send(b'POST /f.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc')
    # the 405 may come first; in any case the stalled connection is closed
    assert c.is_closed(15)


def drain_after_send_timeout(server, reset):
    """A client that never reads a big response is dropped after send_timeout; returns how the connection
    ended for the client once it reads again: 'reset' or 'eof'."""
    from helpers.process import wait_log
    size = 64 * 1024 * 1024
    s = server(simple('root {html};\n        send_timeout 1s;\n        reset_timedout_connection %s;'
                      % ('on' if reset else 'off')), files={'html/huge.bin': b'x' * size})
    c = s.conn(timeout=5, rcvbuf=8192)
    c.send(b'GET /huge.bin HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    # the client reads nothing until the server says it gave up (info line, as nginx's)
    assert wait_log(s, r'client timed out \(110: Connection timed out\) while sending', timeout=20)
    got = 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            d = c.sock.recv(1 << 20)
        except ConnectionResetError:
            return 'reset', got, size
        if not d:
            return 'eof', got, size
        got += len(d)
    return 'open', got, size


def test_send_timeout_reset(server):
    # reset_timedout_connection on: RST, so neither side has to drain the socket buffers
    how, got, size = drain_after_send_timeout(server, True)
    assert how == 'reset' and got < size


def test_send_timeout_close(server):
    # reset_timedout_connection off (nginx's default): an orderly close after what was already queued
    how, got, size = drain_after_send_timeout(server, False)
    assert how == 'eof' and got < size


def test_client_abort_mid_body(server):
    data = b'y' * (8 * 1024 * 1024)
    s = server(simple('root {html};'), files={'html/big.bin': data, 'html/f.txt': 'ok'})
    for _ in range(5):
        c = s.conn()
        c.send(b'GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n')
        c.sock.recv(1024)
        c.close()
    assert s.get('/f.txt').body == b'ok'
