"""try_files: files, $uri/ directory checks, URI fallback (args), named location fallback, =code."""
import pytest

from conftest import simple

FILES = {
    'html/a.txt': 'file a',
    'html/dir/index.html': 'dir index',
    'html/index.html': 'front controller',
    'html/app/index.html': 'spa shell',
    'html/app/main.js': 'js',
    'html/al/x.txt': 'aliased x',
}

CONF = simple('''
        root {html};
        location = /show { return 200 "uri=$uri args=$args"; }
        location / { try_files $uri $uri/ /index.html; }
        location /fc/ { try_files $uri /show?q=$uri&$args; }
        location /app/ { try_files $uri /app/index.html; }
        location /code/ { try_files $uri =404; }
        location /code410/ { try_files $uri =410; }
        location /named/ { try_files $uri @back; }
        location @back { return 200 "named fallback for $uri"; }
        location /alias/ { alias {html}/al/; try_files $uri =404; }
''')


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


@pytest.mark.parametrize('path,status,body', [
    ('/a.txt', 200, 'file a'),
    ('/dir/', 200, 'dir index'),
    ('/nope', 200, 'front controller'),
    ('/fc/x?y=1', 200, 'uri=/show args=q=/fc/x&y=1'),
    ('/app/main.js', 200, 'js'),
    ('/app/route/deep', 200, 'spa shell'),
    ('/named/zz', 200, 'named fallback for /named/zz'),
    ('/alias/x.txt', 200, 'aliased x'),
])
def test_try(srv, path, status, body):
    r = srv.get(path)
    assert r.status == status
    assert r.text == body


def test_dir_without_slash_redirects(srv):
    r = srv.get('/dir')
    assert r.status == 301
    assert r.header('Location') == 'http://localhost:%d/dir/' % srv.port


@pytest.mark.parametrize('path,status', [('/code/missing', 404), ('/code410/missing', 410), ('/alias/none', 404)])
def test_code(srv, path, status):
    assert srv.get(path).status == status


def test_fallback_loop_500(server, proto):
    srv = server(simple('location / { try_files $uri /loop; }'))
    r = srv.get('/x')
    assert r.status == 500
    assert 'rewrite or internal redirection cycle' in srv.error_log()


def test_not_inherited_by_nested_location(server, proto):
    srv = server(simple('''
        root {html};
        location /p/ {
            try_files $uri /index.html;
            location /p/n/ { }
        }
    '''), files={'html/index.html': 'idx'})
    assert srv.get('/p/missing').text == 'idx'
    assert srv.get('/p/n/missing').status == 404


def test_alias_with_regex_captures(server, proto):
    srv = server(simple('''
        location ~ ^/img/(\\w+)/(.+)$ { alias {html}/store/$1/$2; }
        location ~ ^/named/(?<sect>\\w+)/(?<file>.+)$ { alias {html}/store/$sect/$file; }
        location /r/ { root {html}/roots/$arg_v; }
    '''), files={'html/store/cats/a.txt': 'cat a', 'html/roots/v2/r/x.txt': 'root v2'})
    assert srv.get('/img/cats/a.txt').text == 'cat a'
    assert srv.get('/named/cats/a.txt').text == 'cat a'
    assert srv.get('/img/dogs/a.txt').status == 404
    assert srv.get('/r/x.txt?v=v2').text == 'root v2'


def test_server_name_captures(server, proto):
    srv = server(simple('''
        server_name ~^(?<sub>[a-z]+)\\.example\\.test$ ~^www\\.(.+)$;
        location / { return 200 "sub=$sub one=$1"; }
    '''))
    assert srv.get('/', host='shop.example.test').text == 'sub=shop one=shop'
    assert srv.get('/', host='www.other.test').text == 'sub= one=other.test'
