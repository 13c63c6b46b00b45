"""open_file_cache: files replaced on disk are served fresh after open_file_cache_valid, at once without the
cache; cached errors with open_file_cache_errors."""
import os

import pytest

from conftest import simple


def replace(path, content):
    tmp = path + '.new'
    with open(tmp, 'wb') as f:
        f.write(content)
    os.rename(tmp, path)


def test_no_cache_serves_fresh_immediately(server):
    s = server(simple('root {html};\n        open_file_cache off;'), files={'html/f.txt': 'version one'})
    assert s.get('/f.txt').body == b'version one'
    replace(os.path.join(s.html, 'f.txt'), b'version 2')
    r = s.get('/f.txt')
    assert r.body == b'version 2' and r.header('Content-Length') == '9'


def served(conn_or_srv, path, want_status=None, want_body=None, timeout=5.0):
    """Requests `path` until the response has the wanted status/body (open_file_cache_valid elapsing);
    returns the last response."""
    from helpers.process import wait_until
    last = []

    def once():
        r = conn_or_srv.get(path)
        last[:] = [r]
        return (want_status is None or r.status == want_status) and (want_body is None or r.body == want_body)
    wait_until(once, timeout)
    return last[0]


def test_cache_serves_fresh_after_valid(server):
    s = server(simple('root {html};\n        open_file_cache max=100 inactive=20s;\n'
                      '        open_file_cache_valid 2s;'), files={'html/f.txt': 'version one'})
    for _ in range(3):
        assert s.get('/f.txt').body == b'version one'
    replace(os.path.join(s.html, 'f.txt'), b'version 2')
    # cached: the old bytes while the entry is valid (the request follows at once, well inside 2 s) ...
    assert s.get('/f.txt').body == b'version one'
    # ... and the new file once open_file_cache_valid has passed
    r = served(s, '/f.txt', want_body=b'version 2', timeout=10)
    assert r.body == b'version 2'
    assert r.header('Content-Length') == '9'


def test_cache_deleted_file_404_after_valid(server):
    s = server(simple('root {html};\n        open_file_cache max=100 inactive=20s;\n'
                      '        open_file_cache_valid 1s;'), files={'html/f.txt': 'here'})
    assert s.get('/f.txt').status == 200
    os.unlink(os.path.join(s.html, 'f.txt'))
    assert s.get('/f.txt').status == 200      # the cached descriptor, while valid
    assert served(s, '/f.txt', want_status=404).status == 404


def test_cache_many_files_bounded(server):
    # more distinct files than max= entries: every response still correct
    files = {'html/f%03d.txt' % i: 'file %d' % i for i in range(60)}
    s = server(simple('root {html};\n        open_file_cache max=10 inactive=20s;'), files=files)
    c = s.conn()
    for rnd in range(2):
        for i in range(60):
            r = c.request(b'GET /f%03d.txt HTTP/1.1\r\nHost: a\r\n\r\n' % i)
            assert r.body == b'file %d' % i


def test_cache_errors_cached(server):
    s = server(simple('root {html};\n        open_file_cache max=100 inactive=60s;\n'
                      '        open_file_cache_valid 60s;\n        open_file_cache_errors on;'))
    assert s.get('/late.txt').status == 404
    with open(os.path.join(s.html, 'late.txt'), 'w') as f:
        f.write('late')
    # the ENOENT is cached for open_file_cache_valid
    assert s.get('/late.txt').status == 404


def test_cache_errors_off(server):
    s = server(simple('root {html};\n        open_file_cache max=100 inactive=60s;\n'
                      '        open_file_cache_valid 60s;\n        open_file_cache_errors off;'))
    assert s.get('/late.txt').status == 404
    with open(os.path.join(s.html, 'late.txt'), 'w') as f:
        f.write('late')
    assert s.get('/late.txt').body == b'late'


def test_cache_conditional_and_range(server):
    s = server(simple('root {html};\n        open_file_cache max=100 inactive=20s;'),
               files={'html/f.txt': '0123456789'})
    r = s.get('/f.txt')
    etag = r.header('ETag')
    assert s.get('/f.txt', headers={'If-None-Match': etag}).status == 304
    r = s.get('/f.txt', headers={'Range': 'bytes=2-4'})
    assert r.status == 206 and r.body == b'234'


# ---------------------------------------------------------------- the implicit cache (no open_file_cache)
# hayate keeps served files open when open_file_cache is configured nowhere, checking them with stat(2) on
# every use (DIFFERENCES.md): a request must still see the file exactly as it is on disk.

def fds_to(srv, path):
    """How many descriptors of the server's processes point at `path` (deleted or not)."""
    from helpers.process import children
    n = 0
    for pid in [srv.proc.pid] + children(srv.proc.pid):
        try:
            fds = os.listdir('/proc/%d/fd' % pid)
        except FileNotFoundError:
            continue
        for fd in fds:
            try:
                link = os.readlink('/proc/%d/fd/%s' % (pid, fd))
            except OSError:
                continue
            if link == path or link == path + ' (deleted)':
                n += 1
    return n


def get_close(srv, path):
    """One request on its own connection, read to the server's close: the request is over on the server."""
    c = srv.conn()
    r = c.request(('GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n' % path).encode())
    c.close()
    return r


@pytest.mark.hayate_only  # nginx without open_file_cache closes the file after each request
def test_implicit_cache_keeps_the_file_open(server):
    s = server(simple('root {html};'), files={'html/f.txt': 'kept open'})
    path = os.path.join(s.html, 'f.txt')
    assert get_close(s, '/f.txt').body == b'kept open'
    assert fds_to(s, path) == 1
    assert get_close(s, '/f.txt').body == b'kept open'
    assert fds_to(s, path) == 1  # the same descriptor, not a second one


def test_cache_off_keeps_nothing_open(server):
    s = server(simple('root {html};\n        open_file_cache off;'), files={'html/f.txt': 'closed'})
    assert get_close(s, '/f.txt').body == b'closed'
    assert fds_to(s, os.path.join(s.html, 'f.txt')) == 0


def test_implicit_cache_sees_a_rewrite_in_the_same_second(server):
    # same inode, same size, same second: only the nanoseconds of mtime/ctime tell the change
    s = server(simple('root {html};'), files={'html/f.txt': 'AAAA'})
    path = os.path.join(s.html, 'f.txt')
    assert get_close(s, '/f.txt').body == b'AAAA'
    for i, body in enumerate([b'BBBB', b'CCCC', b'DDDD']):
        with open(path, 'r+b') as f:
            f.write(body)
        r = get_close(s, '/f.txt')
        assert r.body == body, (i, r.body)


def test_implicit_cache_sees_replace_truncate_and_delete(server):
    s = server(simple('root {html};'), files={'html/f.txt': 'version one'})
    path = os.path.join(s.html, 'f.txt')
    assert get_close(s, '/f.txt').body == b'version one'
    replace(path, b'version 2')
    r = get_close(s, '/f.txt')
    assert r.body == b'version 2' and r.header('Content-Length') == '9'
    with open(path, 'r+b') as f:
        f.truncate(3)
    assert get_close(s, '/f.txt').body == b'ver'
    os.unlink(path)
    assert get_close(s, '/f.txt').status == 404
    assert fds_to(s, path) == 0  # the descriptor of the deleted file went with its entry


def test_implicit_cache_sees_a_chmod(server):
    s = server(simple('root {html};'), files={'html/f.txt': 'readable'})
    path = os.path.join(s.html, 'f.txt')
    assert get_close(s, '/f.txt').body == b'readable'
    os.chmod(path, 0)
    try:
        if os.geteuid() == 0 and not children_run_unprivileged(s):
            return  # a worker running as root reads a mode-0 file: nothing to tell apart
        assert get_close(s, '/f.txt').status == 403
    finally:
        os.chmod(path, 0o644)
    assert get_close(s, '/f.txt').body == b'readable'


def children_run_unprivileged(srv):
    from helpers.process import children
    for pid in children(srv.proc.pid) or [srv.proc.pid]:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('Uid:') and line.split()[2] == '0':
                    return False
    return True
