"""Range requests on static files: 206, suffix/open ranges, multipart/byteranges, 416, If-Range."""
import email.utils
import os
import re

import pytest

from conftest import simple
from helpers.http1 import parse_multipart_byteranges

DATA = bytes(range(256)) * 4          # 1024 bytes
MTIME = 1600000000
ETAG = '"5f5e1000-400"'
LM = email.utils.formatdate(MTIME, usegmt=True)


@pytest.fixture
def srv(server):
    s = server(simple('root {html};'), files={'html/r.bin': DATA, 'html/e.txt': ''})
    os.utime(os.path.join(s.html, 'r.bin'), (MTIME, MTIME))
    return s


def rng(srv, spec, **kw):
    headers = {'Range': spec}
    headers.update(kw)
    return srv.get('/r.bin', headers=headers)


@pytest.mark.parametrize('spec,start,end', [
    ('bytes=0-0', 0, 0),
    ('bytes=0-99', 0, 99),
    ('bytes=100-199', 100, 199),
    ('bytes=1000-2000', 1000, 1023),      # end past the size is clamped
    ('bytes=1000-', 1000, 1023),          # open-ended
    ('bytes=-24', 1000, 1023),            # suffix
    ('bytes=-5000', 0, 1023),             # suffix longer than the file
    ('bytes=1023-1023', 1023, 1023),
])
def test_single_range(srv, spec, start, end):
    r = rng(srv, spec)
    assert r.status == 206
    assert r.reason == 'Partial Content'
    assert r.header('Content-Range') == 'bytes %d-%d/1024' % (start, end)
    assert r.header('Content-Length') == str(end - start + 1)
    assert r.header('Content-Type') == 'application/octet-stream'
    assert r.header('ETag') == ETAG
    assert r.body == DATA[start:end + 1]


def test_range_head(srv):
    r = srv.head('/r.bin', headers={'Range': 'bytes=10-19'})
    assert r.status == 206
    assert r.header('Content-Range') == 'bytes 10-19/1024'
    assert r.header('Content-Length') == '10'
    assert r.body == b''


def test_multi_range(srv):
    r = rng(srv, 'bytes=0-9,100-109,-5')
    assert r.status == 206
    ct = r.header('Content-Type')
    m = re.match(r'^multipart/byteranges; boundary=(\S+)$', ct)
    assert m, ct
    assert r.header('Content-Range') is None
    assert int(r.header('Content-Length')) == len(r.body)
    parts = parse_multipart_byteranges(r.body, m.group(1))
    assert [(h['content-range'], d) for h, d in parts] == [
        ('bytes 0-9/1024', DATA[0:10]),
        ('bytes 100-109/1024', DATA[100:110]),
        ('bytes 1019-1023/1024', DATA[1019:1024]),
    ]
    for h, _ in parts:
        assert h['content-type'] == 'application/octet-stream'


def test_multi_range_keepalive_framing(srv):
    # the multipart body length must be exact: a following request on the connection still works
    c = srv.conn()
    c.send(b'GET /r.bin HTTP/1.1\r\nHost: a\r\nRange: bytes=0-1,5-6\r\n\r\n'
           b'GET /r.bin HTTP/1.1\r\nHost: a\r\nRange: bytes=2-3\r\nConnection: close\r\n\r\n')
    r1 = c.read_response()
    r2 = c.read_response()
    assert r1.status == 206 and r1.header('Content-Type').startswith('multipart/byteranges')
    assert r2.status == 206 and r2.body == DATA[2:4]


@pytest.mark.parametrize('spec', ['bytes=1024-', 'bytes=5000-6000', 'bytes=-0', 'bytes=20-10', 'bytes=abc',
                                  'bytes=1024-1024'])
def test_unsatisfiable_416(srv, spec):
    r = rng(srv, spec)
    assert r.status == 416
    assert r.reason == 'Requested Range Not Satisfiable'
    assert r.header('Content-Range') == 'bytes */1024'


def test_range_on_empty_file(srv):
    # nginx does not apply ranges to an empty file
    r = srv.get('/e.txt', headers={'Range': 'bytes=0-10'})
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Length') == '0'


def test_other_unit_ignored(srv):
    r = rng(srv, 'items=0-5')
    assert r.status == 200 and r.body == DATA


def test_if_range_etag_match(srv):
    r = rng(srv, 'bytes=0-9', **{'If-Range': ETAG})
    assert r.status == 206 and r.body == DATA[:10]


def test_if_range_etag_stale(srv):
    r = rng(srv, 'bytes=0-9', **{'If-Range': '"stale-1"'})
    assert r.status == 200 and r.body == DATA
    assert r.header('Content-Range') is None


def test_if_range_date_match(srv):
    r = rng(srv, 'bytes=0-9', **{'If-Range': LM})
    assert r.status == 206 and r.body == DATA[:10]


def test_if_range_date_stale(srv):
    r = rng(srv, 'bytes=0-9', **{'If-Range': email.utils.formatdate(MTIME - 100, usegmt=True)})
    assert r.status == 200 and r.body == DATA


def test_range_large_file_middle(server, proto):
    data = os.urandom(2 * 1024 * 1024)
    s = server(simple('root {html};'), files={'html/big.bin': data})
    start, end = 1024 * 1024 - 7, 1024 * 1024 + 100000
    r = s.get('/big.bin', headers={'Range': 'bytes=%d-%d' % (start, end)})
    assert r.status == 206
    assert r.body == data[start:end + 1]


def test_range_with_if_none_match_304(srv):
    r = rng(srv, 'bytes=0-9', **{'If-None-Match': ETAG})
    assert r.status == 304
