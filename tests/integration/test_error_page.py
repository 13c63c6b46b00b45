"""error_page: URI, =code, "=", named locations, URLs, recursion, inheritance, maintenance pages."""
import pytest

from conftest import simple

FILES = {
    'html/404.html': 'custom 404',
    'html/50x.html': 'custom 50x',
    'html/maint.html': 'down for maintenance',
    'html/ok.txt': 'ok',
}

CONF = simple('''
        root {html};
        error_page 404 /404.html;
        error_page 500 502 503 504 /50x.html;
        location = /show { return 200 "uri=$uri args=$args method=$request_method"; }
        location /e500/ { return 500; }
        location /to200/ { error_page 404 =200 /show?from=404; }
        location /eq/ { error_page 404 = /eqtarget; }
        location = /eqtarget { return 202 "accepted"; }
        location /nm/ { error_page 404 = @nm; }
        location @nm { return 200 "named $uri"; }
        location /url/ { error_page 404 http://example.com/notfound; }
        location /url301/ { error_page 404 =301 http://example.com/moved; }
        location /nopage/ { error_page 403 /404.html; }
        location /chain/ { error_page 404 /missing-page.html; }
        location /rec/ { recursive_error_pages on; error_page 404 /rec/nothing-either; }
        location /rec2/ { recursive_error_pages on; error_page 404 /rec3/x; }
        location /rec3/ { error_page 404 /404.html; }
        location /maint/ { error_page 503 /maint.html; return 503; }
''')


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def test_uri_keeps_status(srv):
    r = srv.get('/missing')
    assert r.status == 404
    assert r.body == b'custom 404'


def test_500(srv):
    r = srv.get('/e500/')
    assert r.status == 500
    assert r.body == b'custom 50x'


def test_overwrite_code(srv):
    r = srv.get('/to200/nothing?a=b')
    assert r.status == 200
    assert r.text == 'uri=/show args=from=404 method=GET'


def test_post_becomes_get(srv):
    r = srv.get('/to200/nothing', method='POST', body=b'x')
    assert r.status == 200
    assert r.text.endswith('method=GET')


def test_equals_takes_target_status(srv):
    r = srv.get('/eq/nothing')
    assert r.status == 202
    assert r.body == b'accepted'


def test_named(srv):
    r = srv.get('/nm/zz')
    assert r.status == 200
    assert r.text == 'named /nm/zz'


def test_url(srv):
    r = srv.get('/url/zz')
    assert r.status == 302
    assert r.header('Location') == 'http://example.com/notfound'
    r = srv.get('/url301/zz')
    assert r.status == 301
    assert r.header('Location') == 'http://example.com/moved'


def test_level_with_own_error_page_does_not_inherit(srv):
    # /nopage/ has error_page 403 only: the server's 404 page is not inherited
    r = srv.get('/nopage/missing')
    assert r.status == 404
    assert r.body != b'custom 404'


def test_target_missing_without_recursion(srv):
    r = srv.get('/chain/x')
    assert r.status == 404
    assert b'404' in r.body and r.body != b'custom 404'


def test_recursive(srv):
    r = srv.get('/rec2/x')
    assert r.status == 404
    assert r.body == b'custom 404'


def test_recursive_loop_ends(srv):
    r = srv.get('/rec/x')
    assert r.status == 500      # nginx: "rewrite or internal redirection cycle"


def test_maintenance(srv):
    r = srv.get('/maint/anything')
    assert r.status == 503
    assert r.body == b'down for maintenance'


def test_head(srv):
    r = srv.head('/missing')
    assert r.status == 404
    assert r.body == b''


@pytest.mark.parametrize('conf,msg', [
    ('error_page 200 /x;', 'value "200" must be between 300 and 599'),
    ('error_page 499 /x;', 'invalid value "499"'),
    ('error_page 404 =abc /x;', 'invalid value "=abc"'),
])
def test_config_errors(run_cli, prefix, conf, msg):
    path = prefix.conf(simple(conf))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', path])
    assert res.rc != 0
    assert msg in res.err
