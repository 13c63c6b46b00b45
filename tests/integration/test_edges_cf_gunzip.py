"""gunzip on a precompressed file made of several gzip members (all of them are inflated, as zlib's gunzip does),
and on a corrupt one (an "inflate() failed" error, the response cut short)."""
import gzip
import socket

from conftest import simple
from test_limits import wait_for


def test_several_members(server):
    body = gzip.compress(b'first member;') + gzip.compress(b'second member') + gzip.compress(b'')
    srv = server(simple('location / { root {html}; gzip_static always; gunzip on; }'),
                 files={'html/m.txt.gz': body})
    r = srv.get('/m.txt')
    assert r.status == 200 and r.body == b'first member;second member'


def test_corrupt_member(server):
    good = gzip.compress(b'x' * 100000)
    bad = good[:200] + b'\xff' * 64 + good[264:]
    srv = server(simple('location / { root {html}; gzip_static always; gunzip on; }'),
                 files={'html/c.txt.gz': bad})
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'GET /c.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    # the connection is closed: before the head (nginx, which meets the error before its first output) or after a
    # part of the body, without the last chunk
    assert data == b'' or (data.startswith(b'HTTP/1.1 200') and not data.endswith(b'0\r\n\r\n')), data[:200]
    wait_for(lambda: 'inflate() failed' in srv.error_log(), what='the inflate error')
