"""gunzip where test_gunzip.py does not go: a large file corrupt after its first batches (found while the body
is held, between sends), and a proxied gzip response streamed in pieces that turns corrupt (found inside a send);
both end the connection instead of a short body, and are logged."""
import gzip
import random
import socket

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.process import wait_until

MIB = 1 << 20


def read_to_close(port, path):
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    s.sendall(b'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' % path.encode())
    out = b''
    try:
        while True:
            d = s.recv(1 << 16)
            if not d:
                break
            out += d
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    return out


def test_large_file_corrupt_late(server):
    rnd = random.Random(7)
    data = bytes(rnd.choice(b'abcdefgh \n') for _ in range(MIB))
    good = gzip.compress(data, 1)
    mid = len(good) * 3 // 4
    bad = good[:mid] + bytes(b ^ 0x5a for b in good[mid:mid + 64]) + good[mid + 64:]
    srv = server(simple('root {html}; location / { gunzip on; gzip_static always; gunzip_buffers 2 8k; }'),
                 files={'html/big.txt.gz': bad})
    out = read_to_close(srv.port, '/big.txt')
    assert out.startswith(b'HTTP/1.1 200')
    assert not out.endswith(b'0\r\n\r\n')  # no clean end: the body is cut
    assert wait_until(lambda: 'inflate() failed' in srv.error_log())


def test_streamed_gzip_turns_corrupt(server):
    rnd = random.Random(3)
    good = gzip.compress(bytes(rnd.choice(b'abcdefgh \n') for _ in range(200000)))
    be = Backend().start()
    try:
        head = b'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n'
        first, rest = good[:2000], bytes(b ^ 0x33 for b in good[2000:])
        be.handler = lambda r: [head + b'%x\r\n%s\r\n' % (len(first), first), 0.2,
                                b'%x\r\n%s\r\n0\r\n\r\n' % (len(rest), rest)]
        srv = server(simple('location / { gunzip on; proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; '
                            'proxy_buffering off; }' % be.port))
        out = read_to_close(srv.port, '/')
        assert out.startswith(b'HTTP/1.1 200')
        assert not out.endswith(b'0\r\n\r\n')
        assert wait_until(lambda: 'inflate() failed' in srv.error_log())
    finally:
        be.stop()
