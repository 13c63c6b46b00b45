"""Response framing from an HTTP/1.x backend that bends or breaks the rules (a Python peer sends exactly the bytes
the test chose): chunked bodies with extensions, bare LF line ends, upper-case hex, trailers (all decoded to the
same body); chunked bodies that break (bad or overlong size, data not followed by CRLF) are never passed on as
complete; response heads that are invalid (two Content-Lengths, an unknown Transfer-Encoding, both, a bad status
code or version) are a 502."""
import socket
import time

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.http1 import build_request


@pytest.fixture
def be():
    b = Backend().start()
    b.close_after = 1
    yield b
    b.stop()


def proxy(server, be, extra=''):
    return server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; %s }'
                         % (be.port, extra)))


def raw_exchange(port, path='/'):
    """One HTTP/1.0 request; everything the server sends until it closes."""
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    s.sendall(build_request('GET', path, 'localhost', [], None, 'HTTP/1.0'))
    out = b''
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    return out


HEAD = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'


@pytest.mark.parametrize('body', [
    b'5;name=value\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',     # extensions
    b'5\nhello\n6\n world\n0\n\n',                             # bare LF everywhere
    b'5 \r\nhello\r\n6\t;x\r\n world\r\n0\r\n\r\n',           # blanks before an extension
    b'5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n',  # trailers
    b'5\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\n\n',          # trailers with bare LF
    b'0005\r\nhello\r\n0006\r\n world\r\n000\r\n\r\n',         # leading zeros
], ids=['ext', 'lf', 'blank-ext', 'trailers', 'trailers-lf', 'zeros'])
def test_chunked_variants_decode(server, be, body):
    be.handler = lambda r: HEAD + body
    srv = proxy(server, be)
    r = srv.get('/')
    assert r.status == 200 and r.body == b'hello world'


def test_chunked_upper_case_hex(server, be):
    be.handler = lambda r: HEAD + b'A\r\n0123456789\r\n1F\r\n' + b'y' * 31 + b'\r\n0\r\n\r\n'
    srv = proxy(server, be)
    r = srv.get('/')
    assert r.status == 200 and r.body == b'0123456789' + b'y' * 31


@pytest.mark.parametrize('bad', [
    b'zz\r\n',                       # no hex digit
    b'1234567890abcdef0\r\n',        # a size past 15 hex digits
    b'5\r\nhelloX\r\n0\r\n\r\n',     # data not followed by its line end
    b'5\r\nhello\rX\r\n0\r\n\r\n',   # CR without LF after data
    b'5\rX\r\nhello\r\n0\r\n\r\n',   # CR without LF after the size
    b'5@\r\nhello\r\n0\r\n\r\n',     # junk after the size
    b'0\r\n\rX',                     # CR without LF ending the trailers
    b'5\r\nhel',                     # closed mid-chunk
], ids=['nohex', 'overlong', 'data-no-crlf', 'data-cr-x', 'size-cr-x', 'size-junk', 'trailer-cr-x', 'closed'])
def test_broken_chunked_is_never_complete(server, be, bad):
    # a first good chunk, so the head may already be on its way when the break is found
    be.handler = lambda r: [HEAD + b'3\r\nabc\r\n', 0.2, bad]
    srv = proxy(server, be, 'proxy_buffering off;')
    out = raw_exchange(srv.port)
    head, _, body = out.partition(b'\r\n\r\n')
    if head.startswith(b'HTTP/1.1 502'):
        pass  # found before the head went out
    else:
        assert head.startswith(b'HTTP/1.1 200'), out[:200]
        # HTTP/1.0 client: the body is delimited by the close, which must not pass for a whole body: the
        # server closes without adding anything after what it got
        assert body in (b'', b'abc', b'abchel', b'abchello'), body
    deadline = time.monotonic() + 5
    while 'upstream' not in srv.error_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'upstream' in srv.error_log() and '[error]' in srv.error_log()


def test_broken_chunked_to_a_keepalive_client_is_cut(server, be):
    # an HTTP/1.1 client gets chunked: the final 0-chunk must not be sent, and the connection closes
    be.handler = lambda r: [HEAD + b'3\r\nabc\r\n', 0.2, b'zz\r\n']
    srv = proxy(server, be, 'proxy_buffering off;')
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
    s.sendall(build_request('GET', '/', 'localhost', [], None, 'HTTP/1.1'))
    out = b''
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
    s.close()
    assert out.startswith(b'HTTP/1.1 200') or out.startswith(b'HTTP/1.1 502'), out[:100]
    if out.startswith(b'HTTP/1.1 200'):
        assert not out.endswith(b'0\r\n\r\n'), out


@pytest.mark.parametrize('head', [
    b'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc',
    b'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nabc',
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc',
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    b'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
    b'HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n',
    b'HTTP/1.1 0x0 Odd\r\nContent-Length: 0\r\n\r\n',
    b'HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n',
    b'HTTP/1.1200 OK\r\nContent-Length: 0\r\n\r\n',
    b'HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n',
    b'HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\n\r\n',
], ids=['two-cl', 'cl-junk', 'te-gzip', 'two-te', 'cl-then-te', 'te-then-cl', 'status-600', 'status-junk',
        'version-2', 'no-space', 'space-in-name', 'control-in-value'])
@pytest.mark.hayate_only  # docs/DIFFERENCES.md: nginx 1.22 passes these on (or as HTTP/0.9)
def test_invalid_heads_are_502(server, be, head):
    be.handler = lambda r: head
    srv = proxy(server, be)
    r = srv.get('/')
    assert r.status == 502
    deadline = time.monotonic() + 5
    while 'upstream sent invalid header' not in srv.error_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'upstream sent invalid header' in srv.error_log()


def test_http10_backend_keepalive_and_close(server, be):
    # HTTP/1.0 without a length: the body runs to the close
    be.handler = lambda r: b'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok'
    srv = proxy(server, be)
    assert srv.get('/').body == b'ok'
    be.handler = lambda r: b'HTTP/1.0 200 OK\r\n\r\nto the close'
    assert srv.get('/').body == b'to the close'
    be.handler = lambda r: b'HTTP/1.1 200 OK\r\nConnection: x, close\r\n\r\nclosed'
    assert srv.get('/').body == b'closed'
