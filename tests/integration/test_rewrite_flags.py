"""rewrite: flags (last, break, redirect, permanent, none), the `?` rule for args, captures, loops → 500,
server-level rewrites, set/if/break."""
import pytest

from conftest import simple

CONF = simple('''
        root {html};
        location = /show { return 200 "uri=$uri args=$args"; }
        location /last/ { rewrite ^/last/(.*)$ /show?to=$1 last; return 200 "not reached"; }
        location /plain/ { rewrite ^/plain/(.*)$ /show?p=$1; return 200 "plain falls through to $uri"; }
        location /chain/ { rewrite ^/chain/(.*)$ /show; rewrite ^/show$ /show?second=1; }
        location /brk/ { rewrite ^/brk/(.*)$ /b/$1.txt break; }
        location /b/ { return 200 "wrong"; }
        location /noargs/ { rewrite ^ /show? last; }
        location /keepargs/ { rewrite ^ /show last; }
        location /newargs/ { rewrite ^ /show?n=1 last; }
        location /newonly/ { rewrite ^ /show?n=1? last; }
        location /red/ { rewrite ^/red/(.*)$ /show/$1 redirect; }
        location /perm/ { rewrite ^/perm/(.*)$ /x/$1? permanent; }
        location /abs/ { rewrite ^ http://example.com/abs; }
        location /absperm/ { rewrite ^ https://example.com/p permanent; }
        location /loop/ { rewrite ^ /loop/again last; }
        location /nomatch/ { rewrite ^/zzz /show last; return 200 "no match"; }
        location /named/ { rewrite "^/named/(?<first>[a-z]+)/(\\d+)$" /show?f=$first&n=$2 last; }
        location /setvar/ { set $a "A"; set $b "$a-B"; return 200 "$b"; }
        location /brkdir/ { set $v 1; break; set $v 2; }
        location ~ ^/capt/(\\w+)/(\\w+) { return 200 "$2-$1"; }
''', http_extra='rewrite_log on;')


@pytest.fixture
def srv(server):
    return server(CONF, files={'html/b/x.txt': 'file x', 'html/brkdir/index.html': 'brk index'})


@pytest.mark.parametrize('path,body', [
    ('/last/abc', 'uri=/show args=to=abc'),
    ('/last/abc?q=1', 'uri=/show args=to=abc&q=1'),
    ('/plain/abc', 'plain falls through to /show'),
    ('/chain/x?a=1', 'uri=/show args=second=1&a=1'),
    ('/noargs/x?a=1', 'uri=/show args='),
    ('/keepargs/x?a=1', 'uri=/show args=a=1'),
    ('/newargs/x?a=1', 'uri=/show args=n=1&a=1'),
    ('/newonly/x?a=1', 'uri=/show args=n=1'),
    ('/nomatch/x', 'no match'),
    ('/named/abc/42', 'uri=/show args=f=abc&n=42'),
    ('/setvar/', 'A-B'),
    ('/capt/one/two', 'two-one'),
])
def test_internal(srv, path, body):
    r = srv.get(path)
    assert r.status == 200, r
    assert r.text == body


def test_break_serves_in_same_location(srv):
    r = srv.get('/brk/x')
    assert r.status == 200
    assert r.body == b'file x'


def test_break_directive_stops(srv):
    r = srv.get('/brkdir/')
    assert r.status == 200
    assert r.body == b'brk index'


@pytest.mark.parametrize('path,status,loc', [
    ('/red/a?q=1', 302, 'http://localhost:{port}/show/a?q=1'),
    ('/perm/a?q=1', 301, 'http://localhost:{port}/x/a'),
    ('/abs/z?k=v', 302, 'http://example.com/abs?k=v'),
    ('/absperm/z', 301, 'https://example.com/p'),
])
def test_redirects(srv, path, status, loc):
    r = srv.get(path)
    assert r.status == status
    assert r.header('Location') == loc.replace('{port}', str(srv.port))


def test_loop_gives_500(srv):
    r = srv.get('/loop/x')
    assert r.status == 500
    assert 'rewrite or internal redirection cycle' in srv.error_log()


def test_rewrite_log(srv):
    srv.get('/last/abc')
    log = srv.error_log()
    assert '[notice]' in log
    assert '"^/last/(.*)$" matches "/last/abc"' in log


def test_server_level_rewrite(server):
    srv = server(simple('''
        rewrite ^/old/(.*)$ /new/$1;
        location /new/ { return 200 "new $uri"; }
        location /old/ { return 200 "old"; }
    '''))
    r = srv.get('/old/page')
    assert r.text == 'new /new/page'


def test_internal_location_reached_by_rewrite(server):
    srv = server(simple('''
        location /pub/ { rewrite ^/pub/(.*)$ /priv/$1 last; }
        location /priv/ { internal; return 200 "private $uri"; }
    '''))
    assert srv.get('/pub/a').text == 'private /priv/a'
    assert srv.get('/priv/a').status == 404


UNESCAPE_CONF = simple('''
        location /t1 { rewrite ^ $arg_r? redirect; }
        location /t2 { rewrite ^ http://example.com$request_uri? redirect; }
        location /t5 { rewrite ^ http://example.com/blah%20%3Fblah%3A redirect; }
''')


@pytest.mark.parametrize('path,location', [
    # a redirect's result is unescaped up to the first '?' (nginx's NGX_UNESCAPE_REDIRECT) ...
    ('/t1?r=http%3A%2F%2Fexample.com%2F%3Ffrom', 'http://example.com/?from'),
    # ... but CR/LF and other characters at or below '%' stay escaped: no header splitting
    ('/t1?r=http%3A%2F%2Fexample.com%0D%0Asplit', 'http://example.com%0D%0Asplit'),
    ('/t1?r=http%3A%2F%2Fe.com%2Fa%20b%25c', 'http://e.com/a%20b%25c'),
    # an escaped '?' ends the decoding: what follows stays as it was
    ('/t1?r=http%3A%2F%2Fe.com%2F%3Fa%3Db', 'http://e.com/?a%3Db'),
    ('/t5', 'http://example.com/blah%20?blah%3A'),
])
def test_redirect_result_unescaped_as_nginx(server, path, location):
    srv = server(UNESCAPE_CONF)
    r = srv.get(path)
    assert r.status == 302
    assert r.header('location') == location

