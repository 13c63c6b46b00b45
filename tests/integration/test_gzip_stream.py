"""Streaming compression with backpressure (hayate): a static file too large to compress in one buffer (over
8 MiB) is read and compressed batch by batch, each batch handed to the connection only when the previous one was
written (hy_req_send_more's proceed), so a slow client never makes the worker hold the compressed file in
memory. The body must still decompress byte-exact."""
import gzip
import hashlib
import os
import random
import zlib

import brotli
import pytest
import zstandard

from conftest import simple
from helpers.http1 import build_request
from helpers.process import status_field, wait_until

pytestmark = pytest.mark.hayate_only  # the memory bound is hayate's; nginx streams too, with other buffers

MIB = 1 << 20


def words_file(size, seed):
    """Text that compresses about 3:1 with gzip level 1 (random words), so the compressed body is far larger than
    the memory bound the test allows."""
    rnd = random.Random(seed)
    vocab = [''.join(rnd.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rnd.randint(2, 9)))
             for _ in range(4000)]
    block = ' '.join(rnd.choice(vocab) for _ in range(MIB // 5)).encode()[:MIB]
    out = bytearray()
    i = 0
    while len(out) < size:
        out += b'%08d ' % i + block
        i += 1
    return bytes(out[:size])


def vm_rss_kib(pid):
    return int(status_field(pid, 'VmRSS')[0])


class Dechunker:
    """Incremental chunked-body decoder: feed() bytes, get body bytes back; .done after the last chunk."""

    def __init__(self):
        self.buf = b''
        self.left = 0
        self.state = 'size'
        self.done = False

    def feed(self, data):
        self.buf += data
        out = []
        while not self.done:
            if self.state == 'size':
                i = self.buf.find(b'\r\n')
                if i < 0:
                    break
                self.left = int(self.buf[:i].split(b';')[0], 16)
                self.buf = self.buf[i + 2:]
                self.state = 'data' if self.left else 'trailer'
            elif self.state == 'data':
                if not self.buf:
                    break
                n = min(self.left, len(self.buf))
                out.append(self.buf[:n])
                self.buf = self.buf[n:]
                self.left -= n
                if self.left == 0:
                    self.state = 'crlf'
            elif self.state == 'crlf':
                if len(self.buf) < 2:
                    break
                assert self.buf[:2] == b'\r\n'
                self.buf = self.buf[2:]
                self.state = 'size'
            else:  # trailer: an empty line ends the body
                if len(self.buf) < 2:
                    break
                assert self.buf[:2] == b'\r\n'
                self.buf = self.buf[2:]
                self.done = True
        return b''.join(out)


def test_large_file_streams_with_bounded_memory(server, monkeypatch):
    # under ASan freed batches would sit in its quarantine and count as resident: reuse them at once instead
    monkeypatch.setenv('ASAN_OPTIONS', ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'),
                                                              'quarantine_size_mb=0'])))
    size = 64 * MIB
    data = words_file(size, 7)
    want = hashlib.sha256(data).hexdigest()
    srv = server(simple('root {html};', http_extra='gzip on; gzip_types text/plain; gzip_comp_level 1;'),
                 files={'html/big.txt': data, 'html/small.txt': 'x' * 100})
    del data
    pid = srv.proc.pid  # master_process off: this process serves
    assert srv.get('/small.txt', headers={'Accept-Encoding': 'gzip'}).status == 200
    base = vm_rss_kib(pid)
    bound = base + 8 * 1024  # far below the ~20 MiB compressed body and the 64 MiB file

    c = srv.conn(timeout=30.0, rcvbuf=16384)  # a slow reader: a small window, small reads
    c.send(build_request('GET', '/big.txt', 'localhost', [('Accept-Encoding', 'gzip')]))
    version, status, _, headers, _ = c.read_head()
    rss = vm_rss_kib(pid)  # a server that compressed the whole file first holds it all by now
    assert rss <= bound, 'worker RSS %d KiB > %d KiB once the head arrived' % (rss, bound)
    h = {k.lower(): v for k, v in headers}
    assert status == 200
    assert h.get('content-encoding') == 'gzip'
    assert h.get('transfer-encoding') == 'chunked' and 'content-length' not in h
    dechunk, unzip, sha = Dechunker(), zlib.decompressobj(16 + zlib.MAX_WBITS), hashlib.sha256()
    pending, wire, peak = c.buf, 0, 0
    c.buf = b''
    while not dechunk.done:
        if not pending:
            pending = c.sock.recv(4096)
            assert pending, 'connection closed before the last chunk'
        wire += len(pending)
        sha.update(unzip.decompress(dechunk.feed(pending)))
        pending = b''
        if wire // (256 * 1024) != (wire - 4096) // (256 * 1024):
            rss = vm_rss_kib(pid)
            peak = max(peak, rss)
            assert rss <= bound, 'worker RSS %d KiB > %d KiB after %d bytes' % (rss, bound, wire)
    sha.update(unzip.flush())
    assert sha.hexdigest() == want
    assert wire > 12 * MIB  # the compressed body really was larger than the bound
    # the connection is still good for the next request (the chunked body ended properly)
    c.send(build_request('GET', '/small.txt', 'localhost', [('Connection', 'close')]))
    r = c.read_response()
    assert r.status == 200 and r.body == b'x' * 100


@pytest.mark.parametrize('coding', ['gzip', 'br', 'zstd'])
def test_every_codec_streams_byte_exact(server, coding):
    data = words_file(9 * MIB + 12345, 11)
    srv = server(simple('root {html};', http_extra='gzip on; brotli on; zstd on; brotli_comp_level 1; '
                                                   'gzip_types text/plain; brotli_types text/plain; '
                                                   'zstd_types text/plain; gzip_http_version 1.0;'),
                 files={'html/big.txt': data})
    r = srv.get('/big.txt', headers={'Accept-Encoding': coding})
    assert r.status == 200 and r.header('Content-Encoding') == coding
    assert r.header('Content-Length') is None
    decode = {'gzip': gzip.decompress, 'br': brotli.decompress,
              'zstd': lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b)}[coding]
    assert decode(r.body) == data
    # HTTP/1.0: no chunking, the close delimits the body
    r = srv.get('/big.txt', headers={'Accept-Encoding': coding}, version='HTTP/1.0')
    assert r.status == 200 and decode(r.body) == data
    # HEAD: no body, no length (nginx never sends one for a compressed response)
    r = srv.head('/big.txt', headers={'Accept-Encoding': coding})
    assert r.status == 200 and r.header('Content-Encoding') == coding and r.body == b''


def test_client_gone_mid_stream(server):
    """A client that goes away in the middle of a streamed body: the worker frees the stream and keeps serving."""
    data = words_file(16 * MIB, 13)
    srv = server(simple('root {html};', http_extra='gzip on; gzip_types text/plain;'),
                 files={'html/big.txt': data})
    for _ in range(3):
        c = srv.conn(rcvbuf=8192)
        c.send(build_request('GET', '/big.txt', 'localhost', [('Accept-Encoding', 'gzip')]))
        c.read_head()
        c.sock.recv(1000)
        c.close()
    r = srv.get('/big.txt', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 200 and gzip.decompress(r.body) == data


def test_stalled_client_times_out(server):
    """send_timeout applies while a body streams: a client that stops reading is closed, not held forever."""
    data = words_file(16 * MIB, 17)
    srv = server(simple('root {html}; send_timeout 1s;', http_extra='gzip on; gzip_types text/plain;'),
                 files={'html/big.txt': data})
    c = srv.conn(rcvbuf=4096, timeout=15.0)
    c.send(build_request('GET', '/big.txt', 'localhost', [('Accept-Encoding', 'gzip')]))
    c.read_head()  # then read nothing: the server's output stops draining
    assert wait_until(lambda: 'client timed out' in srv.error_log(), timeout=10.0)
    assert c.is_closed(timeout=10.0)
