"""gunzip (ngx_http_gunzip_module), from nginx's documentation: `gunzip on` decompresses "Content-Encoding: gzip"
responses for clients that do not support gzip (here with `gzip_static always`), `gunzip_buffers`."""
import gzip
import os
import random

import pytest

from conftest import simple
from helpers.process import status_field, wait_until

MIB = 1 << 20
TEXT = ''.join('X%03dXXXXXX' % i for i in range(100)).encode()


def conf(body, http_extra=''):
    return simple('root {html};\n' + body, http_extra=http_extra)


FILES = {'html/t1.gz': gzip.compress(TEXT), 'html/t2.gz': gzip.compress(TEXT) + gzip.compress(TEXT),
         'html/t3': 'not compressed', 'html/empty.gz': gzip.compress(b'')}


@pytest.fixture
def srv(server):
    return server(conf('''
        default_type text/plain;
        location / { gunzip on; gzip_vary on; gzip_static always; }
        location /off/ { alias {html}/; gzip_static always; }
        location /sub/ { alias {html}/; gunzip on; gzip_static always; sub_filter_types text/plain;
                         sub_filter_once off; sub_filter X050 "[fifty]"; }
    '''), files=FILES)


def test_inflated_for_a_client_without_gzip(srv):
    r = srv.get('/t1')
    assert r.status == 200
    assert r.body == TEXT
    assert r.header('Content-Encoding') is None
    assert r.header('Content-Length') is None
    assert r.header('Accept-Ranges') is None
    assert r.header('Vary') == 'Accept-Encoding'


def test_gzip_client_gets_the_compressed_file(srv):
    r = srv.get('/t1', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip'
    assert r.body == FILES['html/t1.gz']
    assert r.header('Vary') == 'Accept-Encoding'


def test_gzips_own_rules_decide(srv):
    # gzip_http_version 1.1 (the default): an HTTP/1.0 client does not get gzip, whatever it accepts
    r = srv.get('/t1', headers={'Accept-Encoding': 'gzip'}, version='HTTP/1.0')
    assert r.header('Content-Encoding') is None and r.body == TEXT
    r = srv.get('/t1', headers={'Accept-Encoding': 'gzip;q=0, deflate'})
    assert r.header('Content-Encoding') is None and r.body == TEXT


def test_several_members(srv):
    assert srv.get('/t2').body == TEXT + TEXT


def test_empty_member(srv):
    r = srv.get('/empty')
    assert r.status == 200 and r.body == b''


def test_head_and_vary(srv):
    r = srv.head('/t1')
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Encoding') is None and r.header('Vary') == 'Accept-Encoding'
    # a response that is not gzip-encoded does not vary
    r = srv.get('/t3')
    assert r.body == b'not compressed' and r.header('Vary') is None
    assert srv.head('/t3').header('Vary') is None


def test_off_by_default(srv):
    r = srv.get('/off/t1')
    assert r.header('Content-Encoding') == 'gzip'
    assert r.body == FILES['html/t1.gz']


def test_etag_made_weak(srv):
    r = srv.get('/t1')
    etag = r.header('ETag')
    assert etag is None or etag.startswith('W/"')
    assert srv.get('/t1', headers={'Accept-Encoding': 'gzip'}).header('ETag', '').startswith('"')


def test_sub_filter_sees_the_inflated_text(srv):
    r = srv.get('/sub/t1')
    assert r.body == TEXT.replace(b'X050', b'[fifty]')


def test_large_file_streams(server):
    rnd = random.Random(5)
    data = bytes(rnd.choice(b'abcdefgh \n') for _ in range(3 * MIB))
    srv = server(conf('location / { gunzip on; gzip_static always; gunzip_buffers 4 16k; }'),
                 files={'html/big.txt.gz': gzip.compress(data, 1)})
    r = srv.get('/big.txt')
    assert r.status == 200 and r.body == data
    # and for HTTP/1.0 (close-delimited)
    assert srv.get('/big.txt', version='HTTP/1.0').body == data


def test_corrupt_data_closes_and_logs(server):
    good = gzip.compress(TEXT)
    bad = good[:10] + bytes(b ^ 0x5a for b in good[10:40]) + good[40:]
    srv = server(conf('location / { gunzip on; gzip_static always; }'),
                 files={'html/bad.gz': bad, 'html/t1.gz': good})
    c = srv.conn()
    c.send(b'GET /bad HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.is_closed(timeout=5.0)
    assert wait_until(lambda: 'inflate() failed' in srv.error_log())
    assert srv.get('/t1').body == TEXT


@pytest.mark.hayate_only  # the memory bound is hayate's
def test_high_ratio_bounded_memory(server, monkeypatch):
    monkeypatch.setenv('ASAN_OPTIONS', ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'),
                                                              'quarantine_size_mb=0'])))
    size = 96 * MIB
    z = gzip.compress(b'\0' * size, 9)  # about 100 KiB that inflate to 96 MiB
    srv = server(conf('location / { gunzip on; gzip_static always; }'),
                 files={'html/zeros.gz': z, 'html/small': 'x'})
    pid = srv.proc.pid
    assert srv.get('/small').status == 200
    base = int(status_field(pid, 'VmRSS')[0])
    c = srv.conn(timeout=30.0, rcvbuf=16384)
    c.send(b'GET /zeros HTTP/1.0\r\nHost: x\r\n\r\n')
    total, peak, head = 0, 0, b''
    while True:
        chunk = c.sock.recv(65536)
        if not chunk:
            break
        if b'\r\n\r\n' not in head:
            head += chunk
            if b'\r\n\r\n' in head:
                total += len(head.partition(b'\r\n\r\n')[2])
            continue
        assert chunk.count(0) == len(chunk)
        total += len(chunk)
        if total % (4 * MIB) < 65536:
            peak = max(peak, int(status_field(pid, 'VmRSS')[0]))
    assert total == size
    assert peak - base < 16 * 1024, 'worker RSS grew by %d KiB' % (peak - base)


@pytest.mark.parametrize('line, message', [
    ('gunzip maybe;', 'invalid value "maybe" in "gunzip" directive, it must be "on" or "off"'),
    ('gunzip_buffers 0 4k;', '"gunzip_buffers" directive invalid value'),
    ('gunzip_buffers 4 4k; gunzip_buffers 4 4k;', '"gunzip_buffers" directive is duplicate'),
])
def test_config_errors(prefix, run_cli, line, message):
    prefix.conf(simple('location / { %s }' % line))
    res = run_cli(['-t', '-c', prefix.path('conf/test.conf')])
    assert res.rc != 0
    assert message in res.err and 'test.conf:' in res.err


def test_client_gone_mid_stream(server):
    z = gzip.compress(b'abc' * (8 * MIB), 6)
    srv = server(conf('location / { gunzip on; gzip_static always; }'), files={'html/big.gz': z})
    for _ in range(3):
        c = srv.conn(rcvbuf=8192)
        c.send(b'GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
        c.read_head()
        c.sock.recv(1000)
        c.close()
    assert srv.get('/big').body == b'abc' * (8 * MIB)


@pytest.mark.parametrize('buffers', ['1 512', '2 4k', '32 4k', '4 1m'])
def test_buffer_sizes_byte_exact(server, buffers):
    rnd = random.Random(9)
    # long runs (high ratio: an output buffer fills with input left in zlib) between random bytes
    parts = []
    for i in range(300):
        parts.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 300))))
        parts.append(bytes([i % 256]) * rnd.randint(1, 40000))
    data = b''.join(parts)
    srv = server(conf('location / { gunzip on; gzip_static always; gunzip_buffers %s; }' % buffers),
                 files={'html/d.gz': gzip.compress(data, 9) + gzip.compress(data[:1000])})
    r = srv.get('/d')
    assert r.status == 200 and r.body == data + data[:1000]
