"""Static files: headers, MIME types, index, directories, autoindex, symlinks, big files, methods."""
import email.utils
import os
import random
import re

import pytest

from conftest import IS_NGINX, simple
from helpers.http1 import build_request


def etag_of(path):
    st = os.stat(path)
    return '"%x-%x"' % (int(st.st_mtime), st.st_size)


def http_date(ts):
    return email.utils.formatdate(ts, usegmt=True)


@pytest.fixture
def srv(server):
    files = {
        'html/index.html': '<p>root index</p>\n',
        'html/f.txt': 'hello world\n',
        'html/s.css': 'body{}',
        'html/i.png': b'\x89PNG\r\n\x1a\n' + b'\0' * 20,
        'html/j.JPG': b'\xff\xd8\xff',
        'html/noext': 'no extension',
        'html/x.unknownext': 'unknown',
        'html/a.js': 'var a;',
        'html/d.json': '{}',
        'html/dir/index.html': 'dir index',
        'html/empty/.keep': '',
        'html/zero.txt': '',
    }
    return server(simple('root {html};'), files=files)


def test_content_length_and_body(srv):
    r = srv.get('/f.txt')
    assert r.status == 200
    assert r.body == b'hello world\n'
    assert r.header('Content-Length') == str(len(b'hello world\n'))
    assert r.header('Transfer-Encoding') is None


def test_empty_file(srv):
    r = srv.get('/zero.txt')
    assert r.status == 200 and r.body == b'' and r.header('Content-Length') == '0'


@pytest.mark.parametrize('path,ctype', [
    ('/f.txt', 'text/plain'),
    ('/index.html', 'text/html'),
    ('/s.css', 'text/css'),
    ('/i.png', 'image/png'),
    ('/j.JPG', 'image/jpeg'),
    ('/a.js', 'application/javascript'),
    ('/d.json', 'application/json'),
    ('/noext', 'application/octet-stream'),
    ('/x.unknownext', 'application/octet-stream'),
])
def test_content_type(srv, path, ctype):
    r = srv.get(path)
    assert r.status == 200
    assert r.header('Content-Type') == ctype


def test_default_type_directive(server, proto):
    s = server(simple('root {html};\n        location /t/ { default_type text/x-custom; }',
                      http_extra=''), files={'html/t/noext': 'x', 'html/t/a.txt': 'y', 'html/u': 'z'})
    assert s.get('/t/noext').header('Content-Type') == 'text/x-custom'
    assert s.get('/t/a.txt').header('Content-Type') == 'text/plain'
    assert s.get('/u').header('Content-Type') == 'application/octet-stream'


def test_types_block(server, proto):
    body = '''http {
    types {
        text/x-one one;
        application/x-two two too;
    }
    default_type text/x-default;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location /inner/ {
            types { text/x-inner one; }
        }
    }
}
'''
    s = server(body, files={'html/a.one': '1', 'html/a.two': '2', 'html/a.too': '3', 'html/a.txt': '4',
                            'html/inner/a.one': '5', 'html/inner/a.two': '6'})
    assert s.get('/a.one').header('Content-Type') == 'text/x-one'
    assert s.get('/a.two').header('Content-Type') == 'application/x-two'
    assert s.get('/a.too').header('Content-Type') == 'application/x-two'
    assert s.get('/a.txt').header('Content-Type') == 'text/x-default'
    assert s.get('/inner/a.one').header('Content-Type') == 'text/x-inner'
    # a location's types block replaces the inherited one
    assert s.get('/inner/a.two').header('Content-Type') == 'text/x-default'


def test_last_modified_is_mtime(srv):
    p = os.path.join(srv.html, 'f.txt')
    os.utime(p, (1600000000, 1600000000))
    r = srv.get('/f.txt')
    assert r.header('Last-Modified') == http_date(1600000000) == 'Sun, 13 Sep 2020 12:26:40 GMT'


def test_etag_format(srv):
    p = os.path.join(srv.html, 'f.txt')
    os.utime(p, (1600000000, 1600000000))
    r = srv.get('/f.txt')
    assert r.header('ETag') == '"5f5e1000-c"' == etag_of(p)


def test_accept_ranges(srv):
    assert srv.get('/f.txt').header('Accept-Ranges') == 'bytes'


def test_etag_off(server, proto):
    s = server(simple('root {html};\n        etag off;'), files={'html/f.txt': 'x'})
    r = s.get('/f.txt')
    assert r.status == 200
    assert r.header('ETag') is None
    assert r.header('Last-Modified') is not None


def test_404(srv):
    r = srv.get('/missing.txt')
    assert r.status == 404
    r = srv.get('/missing/dir/')
    assert r.status == 404


def test_file_as_directory_404(srv):
    assert srv.get('/f.txt/').status == 404
    assert srv.get('/f.txt/x').status == 404


@pytest.mark.parametrize('method', ['POST', 'DELETE', 'PUT'])
def test_method_not_allowed(srv, method):
    r = srv.raw(build_request(method, '/f.txt', headers={'Connection': 'close', 'Content-Length': '0'}))
    assert r.status == 405


def test_post_missing_file_404(srv):
    # nginx looks the file up before refusing POST
    r = srv.raw(build_request('POST', '/missing.txt', headers={'Connection': 'close', 'Content-Length': '0'}))
    assert r.status == 404


def test_directory_redirect(srv):
    r = srv.raw(b'GET /dir HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n')
    assert r.status == 301
    assert r.reason == 'Moved Permanently'
    assert r.header('Location') == 'http://example.com:%d/dir/' % srv.port
    assert b'<title>301 Moved Permanently</title>' in r.body


def test_directory_redirect_keeps_query(srv):
    r = srv.raw(b'GET /dir?a=1&b=2 HTTP/1.1\r\nHost: example.com:81\r\nConnection: close\r\n\r\n')
    assert r.status == 301
    assert r.header('Location') == 'http://example.com:%d/dir/?a=1&b=2' % srv.port


def test_directory_redirect_http10(srv):
    r = srv.raw(b'GET /dir HTTP/1.0\r\n\r\n')
    assert r.status == 301
    assert r.header('Location') == 'http://127.0.0.1:%d/dir/' % srv.port


def test_directory_index(srv):
    r = srv.get('/dir/')
    assert r.status == 200 and r.body == b'dir index'
    assert r.header('Content-Type') == 'text/html'
    r = srv.get('/')
    assert r.body == b'<p>root index</p>\n'


def test_directory_without_index_403(srv):
    r = srv.get('/empty/')
    assert r.status == 403
    assert r.reason == 'Forbidden'


def test_index_order(server, proto):
    s = server(simple('root {html};\n        index a.html b.html;'),
               files={'html/both/a.html': 'A', 'html/both/b.html': 'B', 'html/onlyb/b.html': 'B only',
                      'html/none/index.html': 'default index is not used'})
    assert s.get('/both/').body == b'A'
    assert s.get('/onlyb/').body == b'B only'
    assert s.get('/none/').status == 403


def test_index_per_location(server, proto):
    s = server(simple('root {html};\n        location /l/ { index home.htm; }'),
               files={'html/l/home.htm': 'home', 'html/l/index.html': 'idx', 'html/index.html': 'top'})
    assert s.get('/l/').body == b'home'
    assert s.get('/').body == b'top'


def test_index_is_directory_not_file(server, proto):
    # an index entry that is a directory: nginx redirects internally to it, which then gets the slash 301
    s = server(simple('root {html};'), files={'html/d/index.html/x': 'x'})
    r = s.get('/d/')
    assert r.status == 301
    assert r.header('Location').endswith(':%d/d/index.html/' % s.port)


def test_autoindex(server, proto):
    s = server(simple('root {html};\n        location /list/ { autoindex on; }'),
               files={'html/list/one.txt': '1', 'html/list/two words.txt': '22', 'html/list/sub/x': 'x',
                      'html/list/.hidden': 'h', 'html/plain/a.txt': 'a'})
    r = s.get('/list/')
    assert r.status == 200
    assert r.header('Content-Type') == 'text/html'
    body = r.text
    assert '<title>Index of /list/</title>' in body
    assert '<h1>Index of /list/</h1>' in body
    assert 'href="one.txt"' in body
    assert 'href="sub/"' in body
    assert 'href="two%20words.txt"' in body
    assert '.hidden' not in body
    assert 'href="../"' in body
    # autoindex is off elsewhere
    assert s.get('/plain/').status == 403


def test_autoindex_index_wins(server, proto):
    s = server(simple('root {html};\n        autoindex on;'), files={'html/d/index.html': 'idx', 'html/e/f': 'f'})
    assert s.get('/d/').body == b'idx'
    assert b'href="f"' in s.get('/e/').body


def test_autoindex_head(server, proto):
    s = server(simple('root {html};\n        autoindex on;'), files={'html/e/f': 'f'})
    r = s.head('/e/')
    assert r.status == 200 and r.body == b''


def test_symlinks_followed(server, prefix, proto):
    s = server(simple('root {html};'), files={'html/real.txt': 'real', 'outside/o.txt': 'outside',
                                              'html/realdir/in.txt': 'in'})
    os.symlink('real.txt', os.path.join(s.html, 'link.txt'))
    os.symlink(os.path.join(s.tmp, 'outside'), os.path.join(s.html, 'linkdir'))
    os.symlink('realdir', os.path.join(s.html, 'linkdir2'))
    assert s.get('/link.txt').body == b'real'
    assert s.get('/linkdir/o.txt').body == b'outside'
    assert s.get('/linkdir2/in.txt').body == b'in'
    os.symlink('nowhere', os.path.join(s.html, 'dangling'))
    assert s.get('/dangling').status == 404


def test_unreadable_file_403(server, proto):
    if os.geteuid() == 0:
        pytest.skip('root reads everything')
    s = server(simple('root {html};'), files={'html/secret.txt': 's'})
    os.chmod(os.path.join(s.html, 'secret.txt'), 0)
    assert s.get('/secret.txt').status == 403


def test_large_file_exact(server, proto):
    rnd = random.Random(1234)
    data = bytes(rnd.getrandbits(8) for _ in range(1536 * 1024 + 17))
    s = server(simple('root {html};'), files={'html/big.bin': data})
    r = s.get('/big.bin')
    assert r.status == 200
    assert r.header('Content-Length') == str(len(data))
    assert r.body == data


def test_large_file_keepalive_twice(server):
    data = os.urandom(3 * 1024 * 1024 + 5)
    s = server(simple('root {html};\n        sendfile on;\n        tcp_nopush on;'), files={'html/big.bin': data})
    c = s.conn(timeout=20)
    for _ in range(2):
        r = c.request(build_request('GET', '/big.bin'))
        assert r.body == data


@pytest.mark.parametrize('sendfile', ['on', 'off'])
def test_large_file_in_turns_of_sendfile_max_chunk(server, sendfile):
    # a flush writes at most sendfile_max_chunk, then the worker serves others and goes on in its next turn
    data = os.urandom(3 * 1024 * 1024 + 7)
    s = server(simple('root {html};\n        sendfile %s;\n        sendfile_max_chunk 16k;' % sendfile),
               files={'html/big.bin': data, 'html/small.txt': 'small'})
    c = s.conn(timeout=20)
    for _ in range(2):
        r = c.request(build_request('GET', '/big.bin'))
        assert r.body == data
    assert c.request(build_request('GET', '/small.txt')).body == b'small'
    assert 'sendfile_max_chunk' not in s.error_log()  # a directive, not an ignored one


@pytest.mark.parametrize('value,ok', [('512k', True), ('0', True), ('lots', False)])
def test_sendfile_max_chunk_values(run_cli, prefix, value, ok):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port};\n sendfile_max_chunk %s; } }' % value)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    if ok:
        assert res.rc == 0 and 'warn' not in res.err, res  # a directive, not one accepted and ignored
    else:
        line = [n for n, text in enumerate(open(conf), 1) if text.lstrip().startswith('sendfile_max_chunk')][0]
        assert res.rc == 1 and '"sendfile_max_chunk" directive invalid value in %s:%d' % (conf, line) in res.err, res


def test_large_file_sendfile_off(server, proto):
    data = os.urandom(2 * 1024 * 1024 + 3)
    s = server(simple('root {html};\n        sendfile off;'), files={'html/big.bin': data})
    assert s.get('/big.bin').body == data


def test_large_file_slow_reader(server):
    # a client that reads slowly still gets every byte (the server handles EAGAIN on the socket)
    from helpers.process import wait_until
    data = os.urandom(4 * 1024 * 1024)
    s = server(simple('root {html};'), files={'html/big.bin': data})
    c = s.conn(timeout=20)
    c.sock.setsockopt(__import__('socket').SOL_SOCKET, __import__('socket').SO_RCVBUF, 16384)
    c.send(build_request('GET', '/big.bin', headers={'Connection': 'close'}))
    # wait until the client's receive buffer is full (the server then meets EAGAIN), then read
    import fcntl
    import struct
    import termios

    def queued():
        return struct.unpack('i', fcntl.ioctl(c.sock.fileno(), termios.FIONREAD, b'\0\0\0\0'))[0] >= 8192
    assert wait_until(queued, 10)
    r = c.read_response()
    assert r.body == data


def test_root_inheritance(server, proto):
    body = '''http {
    root {html}/http_root;
    server {
        listen 127.0.0.1:{port};
        location /srv/ { }
        location /loc/ { root {html}/loc_root; }
    }
}
'''
    s = server(body, files={'html/http_root/srv/a': 'from http', 'html/loc_root/loc/a': 'from loc'})
    assert s.get('/srv/a').body == b'from http'
    assert s.get('/loc/a').body == b'from loc'
