"""A body whose length is not known when the head goes out (gzip of a static file streamed batch by batch) is
framed as nginx frames it: chunked on HTTP/1.1, delimited by the close on HTTP/1.0 or with
chunked_transfer_encoding off (no keep-alive then), and HEAD gets the head alone."""
import gzip
import socket

import pytest

from conftest import simple

DATA = b'0123456789abcdef' * (9 * 65536 + 7)  # over 9 MiB: hayate streams it (nginx always does)


def conf(extra=''):
    return simple('root {html};\n        %s' % extra,
                  http_extra='gzip on; gzip_comp_level 1; gzip_types text/plain; gzip_http_version 1.0; '
                         'keepalive_timeout 30s;')


def exchange(port, req):
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    s.sendall(req)
    data = b''
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data += d
    s.close()
    head, body = data.split(b'\r\n\r\n', 1)
    return head.decode('latin-1').split('\r\n'), body


def header(lines, name):
    for l in lines[1:]:
        k, v = l.split(':', 1)
        if k.lower() == name:
            return v.strip()
    return None


def dechunk(body):
    out, rest = b'', body
    while True:
        size, rest = rest.split(b'\r\n', 1)
        n = int(size, 16)
        if n == 0:
            assert rest == b'\r\n', rest[:40]
            return out
        out, rest = out + rest[:n], rest[n + 2:]


@pytest.fixture
def srv(server):
    def start(extra=''):
        return server(conf(extra), files={'html/big.txt': DATA})
    return start


def test_http11_is_chunked(srv):
    s = srv()
    head, body = exchange(s.prefix.port, b'GET /big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n'
                                         b'Connection: close\r\n\r\n')
    assert head[0] == 'HTTP/1.1 200 OK'
    assert header(head, 'transfer-encoding') == 'chunked' and header(head, 'content-length') is None
    assert gzip.decompress(dechunk(body)) == DATA


def test_http10_is_delimited_by_the_close(srv):
    s = srv()
    head, body = exchange(s.prefix.port, b'GET /big.txt HTTP/1.0\r\nAccept-Encoding: gzip\r\n'
                                         b'Connection: keep-alive\r\n\r\n')
    assert head[0] == 'HTTP/1.1 200 OK'
    assert header(head, 'transfer-encoding') is None and header(head, 'content-length') is None
    assert header(head, 'connection') == 'close'
    assert gzip.decompress(body) == DATA


def test_chunked_transfer_encoding_off(srv):
    s = srv('chunked_transfer_encoding off;')
    head, body = exchange(s.prefix.port, b'GET /big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n')
    assert header(head, 'transfer-encoding') is None and header(head, 'connection') == 'close'
    assert gzip.decompress(body) == DATA


def test_head_gets_the_head_alone(srv):
    s = srv()
    head, body = exchange(s.prefix.port, b'HEAD /big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n'
                                         b'Connection: close\r\n\r\n')
    assert head[0] == 'HTTP/1.1 200 OK' and header(head, 'content-encoding') == 'gzip'
    assert header(head, 'content-length') is None and body == b''
