"""return: fixed bodies (seed 004's hello), redirects, error codes through error_page, 444."""
import socket

import pytest

from conftest import simple

CONF = simple('''
        root {html};
        location = /hello { return 200 "Hello, World\\n"; }
        location = /hello.html { return 200 "<p>hi</p>"; }
        location = /vars { return 200 "uri=$uri args=$args host=$host"; }
        location = /r301 { return 301 /target; }
        location = /r302 { return 302 http://example.com/x; }
        location = /r307 { return 307 https://example.com/y; }
        location = /url { return http://example.com/bare; }
        location = /e404 { return 404; }
        location = /e403text { return 403 "no way"; }
        location = /empty { return 200; }
        location = /nc { return 204; }
        location = /close { return 444; }
        location = /teapot { return 418 "short and stout"; }
        location /srv { return 200 "loc"; }
''')


@pytest.fixture
def srv(server):
    return server(CONF)


def test_hello_seed_004(srv):
    r = srv.get('/hello')
    assert r.status == 200
    assert r.body == b'Hello, World\n'
    assert r.header('Content-Type') == 'application/octet-stream'   # default_type
    assert r.header('Content-Length') == '13'


def test_hello_keepalive_many(srv):
    c = srv.conn()
    for _ in range(5):
        c.send(b'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n')
        r = c.read_response()
        assert r.status == 200 and r.body == b'Hello, World\n'


def test_head(srv):
    r = srv.head('/hello')
    assert r.status == 200
    assert r.body == b''
    assert r.header('Content-Length') == '13'


def test_type_from_extension(srv):
    r = srv.get('/hello.html')
    assert r.header('Content-Type') == 'text/html'
    assert r.body == b'<p>hi</p>'


def test_variables(srv):
    r = srv.get('/vars?a=1', host='example.org')
    assert r.body == b'uri=/vars args=a=1 host=example.org'


def test_redirect_relative_becomes_absolute(srv):
    r = srv.get('/r301')
    assert r.status == 301
    assert r.header('Location') == 'http://localhost:%d/target' % srv.port
    assert b'301 Moved Permanently' in r.body


@pytest.mark.parametrize('path,status,loc', [
    ('/r302', 302, 'http://example.com/x'),
    ('/r307', 307, 'https://example.com/y'),
    ('/url', 302, 'http://example.com/bare'),
])
def test_redirects(srv, path, status, loc):
    r = srv.get(path)
    assert r.status == status
    assert r.header('Location') == loc


def test_error_code_gives_error_page(srv):
    r = srv.get('/e404')
    assert r.status == 404
    assert r.header('Content-Type') == 'text/html'
    assert b'404 Not Found' in r.body


def test_error_code_with_text(srv):
    r = srv.get('/e403text')
    assert r.status == 403
    assert r.body == b'no way'


def test_empty_200(srv):
    r = srv.get('/empty')
    assert r.status == 200
    assert r.header('Content-Length') == '0'
    assert r.body == b''


def test_204(srv):
    r = srv.get('/nc')
    assert r.status == 204
    assert r.body == b''
    assert not r.has('Content-Type')


def test_unknown_code_with_text(srv):
    r = srv.get('/teapot')
    assert r.status == 418
    assert r.body == b'short and stout'


def test_444_closes_without_response(srv):
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'GET /close HTTP/1.1\r\nHost: x\r\n\r\n')
    data = b''
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data == b''


def test_server_level_return(server, proto):
    srv = server(simple('''
        return 301 https://canonical.example$request_uri;
        location / { return 200 "never"; }
    '''))
    r = srv.get('/a/b?c=d')
    assert r.status == 301
    assert r.header('Location') == 'https://canonical.example/a/b?c=d'


@pytest.mark.hayate_only
def test_error_body_wording(srv, prog):
    r = srv.get('/e404')
    assert b'<title>404 Not Found</title>' in r.body
    assert b'Nothing was found at this address.' in r.body
    assert b'hayate/' in r.body


@pytest.mark.parametrize('conf,msg', [
    ('return 1000;', 'invalid return code "1000"'),
    ('return abc;', 'invalid return code "abc"'),
])
def test_config_errors(run_cli, prefix, prog, conf, msg):
    path = prefix.conf(simple('location / { %s }' % conf))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', path])
    assert res.rc != 0
    assert msg in res.err
