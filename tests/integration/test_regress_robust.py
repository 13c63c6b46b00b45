"""Robustness: whatever a client sends, the server answers (or closes) and keeps serving.

Seeded random mutations of valid requests, sent raw; after each batch a clean request must still succeed,
the process must be alive, and teardown checks the error log for [alert]/[crit] and sanitizer reports.
Bounded: a fixed number of inputs, each connection with a short timeout.
"""
import random
import socket

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        autoindex on;
        location /a/ { alias {html}/; }
        location ~ \\.txt$ { }
    }
}
'''

SEEDS = [
    b'GET / HTTP/1.1\r\nHost: x\r\n\r\n',
    b'GET /f.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3,5-\r\n\r\n',
    b'POST /f.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
    b'POST /f.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    b'GET /a/f.txt?x=1 HTTP/1.0\r\nIf-None-Match: "x"\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n',
    b'GET http://x/dir HTTP/1.1\r\nHost: y\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
]
TOKENS = [b'\r\n', b'\n', b'\r', b'\x00', b' ', b':', b'%', b'%2e', b'..', b'/', b'//', b'?', b'#', b'\xff',
          b'chunked', b'Content-Length: ', b'Transfer-Encoding: ', b'-1', b'99999999999999999999', b'\t',
          b'Host: ', b'Range: bytes=', b'HTTP/1.1', b'HTTP/2.0', b'0\r\n\r\n', b'ffffffff\r\n']


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randint(0, 3)
        pos = rng.randint(0, len(data))
        if op == 0 and data:
            del data[pos:pos + rng.randint(1, 8)]
        elif op == 1:
            data[pos:pos] = rng.choice(TOKENS)
        elif op == 2 and data:
            data[min(pos, len(data) - 1)] = rng.randint(0, 255)
        else:
            data[pos:pos] = data[rng.randint(0, len(data)):][:rng.randint(1, 40)]
    return bytes(data)


def send_raw(port, payload):
    s = socket.create_connection(('127.0.0.1', port), timeout=2)
    try:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        got = b''
        while len(got) < 1 << 20:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got
    except OSError:
        return None
    finally:
        s.close()


def test_mutated_requests_never_kill_the_server(server, prog):
    srv = server(CONF, files={'html/f.txt': 'hello world\n', 'html/dir/x.txt': 'x'})
    rng = random.Random(20261130)
    for i in range(400):
        payload = mutate(rng, rng.choice(SEEDS))
        got = send_raw(srv.port, payload)
        if got and prog != 'nginx':  # nginx answers some garbage as HTTP/0.9 (no status line)
            assert got.startswith(b'HTTP/1.1 '), (payload, got[:200])
        if i % 50 == 49:
            assert srv.alive()
            r = srv.get('/f.txt')
            assert r.status == 200 and r.body == b'hello world\n'
    assert srv.alive()


# gzip/brotli/zstd, add_header, error_page to a named location, rewrite, try_files, return (hayate modules)
RICH_CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        autoindex on;
        gzip on; gzip_types *; gzip_min_length 1; brotli on; brotli_types *; zstd on; zstd_types *;
        add_header X-A $uri always;
        error_page 404 = @nf;
        location @nf { return 200 "nf $request_uri $args $http_host\\n"; }
        location /a/ { alias {html}/; }
        location /r/ { rewrite ^/r/(.*)$ /$1?x=$arg_y last; }
        location /t/ { try_files $uri $uri/ /f.txt?$args; }
        location /ret { return 302 http://$host$request_uri; }
        location ~ \\.txt$ { }
    }
}
'''

PATHS = ['/', '/f.txt', '/dir', '/dir/', '/a/f.txt', '/r/f.txt', '/r/dir/x.txt', '/t/none', '/t/dir', '/ret',
         '/missing', '/%2e%2e/f.txt', '/a/../f.txt', '/dir/x.txt', '/f.txt?y=1&z', '/r/?', '/t/?a=$b']
HDRS = ['Range: bytes=0-3', 'Range: bytes=-2,0-1', 'Range: bytes=5-', 'If-None-Match: *', 'If-Range: "x"',
        'Accept-Encoding: gzip', 'Accept-Encoding: br;q=1, zstd;q=0.9', 'Accept-Encoding: *;q=0', 'Cookie: a=b',
        'If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT', 'Connection: close', 'Expect: 100-continue',
        'User-Agent: MSIE 6.0', 'Via: 1.1 p']


@pytest.mark.hayate_only
def test_structured_requests_through_every_module(server):
    srv = server(RICH_CONF, files={'html/f.txt': 'hello world\n' * 50, 'html/dir/x.txt': 'x' * 3000})
    rng = random.Random(20261201)
    for i in range(300):
        method = rng.choice(['GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'])
        req = '%s %s HTTP/1.%d\r\nHost: %s\r\n' % (method, rng.choice(PATHS), rng.randint(0, 1),
                                                 rng.choice(['x', 'X.example', 'a:1']))
        for h in rng.sample(HDRS, rng.randint(0, 4)):
            req += h + '\r\n'
        body = b''
        if method == 'POST':
            body = b'abc'
            req += 'Content-Length: 3\r\n'
        got = send_raw(srv.port, req.encode() + b'\r\n' + body)
        assert got is None or got == b'' or got.startswith(b'HTTP/1.1 '), (req, got[:200])
    assert srv.alive()
    r = srv.get('/f.txt')
    assert r.status == 200
