"""open_file_cache: files replaced on disk are served fresh after open_file_cache_valid, at once without the
cache; cached errors with open_file_cache_errors."""
import os

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
