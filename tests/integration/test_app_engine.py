"""fastcgi_pass / uwsgi_pass on the shared engine, against peers written here (helpers/apppeers.py) for what a real
app server does not let a test observe: fastcgi_keep_conn with pooled connections, fastcgi_catch_stderr, the uwsgi
packet's modifiers, X-Accel-Redirect, fastcgi_intercept_errors, fastcgi_request_buffering off and
fastcgi_next_upstream (issue 13). Written from nginx's documentation; they pass against Debian's nginx
(HY_BIN=/usr/sbin/nginx).
"""
import os
import time

import pytest

from conftest import IS_NGINX
from helpers.apppeers import fcgi_peer, uwsgi_peer


@pytest.fixture
def peer(prefix):
    b = fcgi_peer(prefix.tmp, 'a')
    yield b
    b.stop()


@pytest.fixture
def peer_b(prefix):
    b = fcgi_peer(prefix.tmp, 'b', unix=False)
    yield b
    b.stop()


def conn_info(body):
    return dict(kv.split('=', 1) for kv in body.decode().split())


KEEP = '''
http {
    upstream fcgi {
        server %s;
        keepalive 4;
    }
    server {
        listen 127.0.0.1:{port};
        location / {
            fastcgi_param REQUEST_URI $request_uri;
            fastcgi_keep_conn on;
            fastcgi_pass fcgi;
        }
        location /nokeep/ {
            rewrite ^/nokeep(/.*)$ $1 break;
            fastcgi_param REQUEST_URI $uri;
            fastcgi_pass fcgi;
        }
    }
}
'''


def test_keep_conn_reuses_one_pooled_connection(server, peer):
    srv = server(KEEP % peer.addr)
    seen = [conn_info(srv.get('/conn').body) for _ in range(5)]
    assert all(s['flags'] == '1' for s in seen)          # FCGI_KEEP_CONN sent
    assert len({s['conn'] for s in seen}) == 1           # one connection carried them all
    assert [s['nreq'] for s in seen] == ['1', '2', '3', '4', '5']


def test_without_keep_conn_each_request_connects(server, peer):
    srv = server(KEEP % peer.addr)
    seen = [conn_info(srv.get('/nokeep/conn').body) for _ in range(3)]
    assert all(s['flags'] == '0' for s in seen)
    assert len({s['conn'] for s in seen}) == 3


CATCH = '''
http {
    upstream two {
        server %s max_fails=0;
        server %s max_fails=0;
    }
    server {
        listen 127.0.0.1:{port};
        location / {
            fastcgi_param REQUEST_URI $request_uri;
            fastcgi_catch_stderr "FATAL";
            fastcgi_pass %s;
        }
        location /two/ {
            rewrite ^/two(/.*)$ $1 break;
            fastcgi_param REQUEST_URI $uri;
            fastcgi_next_upstream error http_503;
            fastcgi_pass two;
        }
        location /intercept/ {
            rewrite ^/intercept(/.*)$ $1 break;
            fastcgi_param REQUEST_URI $uri;
            fastcgi_intercept_errors on;
            error_page 404 /err404.html;
            fastcgi_pass %s;
        }
        location = /err404.html {
            root {html};
        }
        location /internal/ {
            internal;
            root {html};
        }
        location /unbuffered/ {
            rewrite ^/unbuffered(/.*)$ $1 break;
            fastcgi_param REQUEST_URI $uri;
            fastcgi_request_buffering off;
            fastcgi_pass %s;
        }
    }
}
'''


@pytest.fixture
def srv(server, peer, peer_b, prefix):
    os.makedirs(prefix.path('html/internal'), exist_ok=True)
    with open(prefix.path('html/internal/file.txt'), 'w') as f:
        f.write('internal file\n')
    with open(prefix.path('html/err404.html'), 'w') as f:
        f.write('our 404 page\n')
    return server(CATCH % (peer.addr, peer_b.addr, peer.addr, peer.addr, peer.addr))


def test_stderr_logged_and_passed_when_not_caught(srv, prefix):
    r = srv.get('/stderr/just-a-notice')
    assert r.status == 200 and r.body == b'ok'
    lines = [l for l in prefix.error_log().splitlines() if 'FastCGI sent in stderr' in l]
    assert lines and '[error]' in lines[0] and 'just-a-notice' in lines[0]


def test_stderr_before_the_head_does_not_count_against_the_buffer(srv, prefix):
    # 20 KB of stderr in separate reads before the head: dropped as logged (nginx reuses its buffer while no stdout
    # came), not "upstream sent too big header" against fastcgi_buffer_size
    r = srv.get('/bigstderr/20')
    assert r.status == 200 and r.body == b'ok'
    lines = [l for l in prefix.error_log().splitlines() if 'FastCGI sent in stderr' in l]
    assert len(lines) >= 20 and '019eee' in lines[-1]


def test_catch_stderr_fails_the_request(srv, prefix):
    r = srv.get('/stderr/FATAL-boom')
    assert r.status == 502
    assert 'FATAL-boom' in prefix.error_log()


def test_x_accel_redirect_serves_the_internal_location(srv):
    r = srv.get('/accel/internal/file.txt')
    assert r.status == 200
    assert r.body == b'internal file\n'
    assert r.header('x-accel-redirect') is None


def test_intercept_errors_uses_error_page(srv):
    r = srv.get('/intercept/status/404')
    assert r.status == 404
    assert r.body == b'our 404 page\n'
    # without an error_page for the status, the app's own response goes through
    r = srv.get('/intercept/status/410')
    assert r.status == 410
    assert r.body.startswith(b'app status 410')


def test_without_intercept_errors_the_app_answers(srv):
    r = srv.get('/status/404')
    assert r.status == 404
    assert r.body.startswith(b'app status 404')


def test_next_upstream_http_503_tries_the_other_peer(srv):
    names = set()
    for _ in range(4):
        r = srv.get('/two/status/503')
        assert r.status == 503, srv.error_log()[-1500:]  # both answer 503: the last one's answer is passed on
        names.add(r.body.decode().split()[-1])
    assert names == {'a', 'b'}
    # a 200 from either is passed at once
    r = srv.get('/two/conn')
    assert r.status == 200


def test_next_upstream_error_skips_a_dead_peer(srv, peer):
    peer.stop()
    if peer.addr.startswith('unix:') and os.path.exists(peer.addr[5:]):
        os.unlink(peer.addr[5:])
    srv.ignore_log = r'\[crit\].*connect\(\) to unix:.*failed'
    for _ in range(3):
        r = srv.get('/two/conn')
        assert r.status == 200
        assert conn_info(r.body)['name'] == 'b'


def test_request_buffering_off_streams_the_body(srv, peer):
    """The app gets the first bytes while the client still holds back the rest."""
    marker = os.path.join(peer.workdir, 'BODYSTARTED')
    c = srv.conn()
    first, rest = b'x' * 5000, b'y' * 3000
    c.send(b'POST /unbuffered/body HTTP/1.1\r\nHost: localhost\r\nContent-Length: 8000\r\n\r\n' + first)
    deadline = time.monotonic() + 10
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert os.path.exists(marker)
    c.send(rest)
    r = c.read_response()
    assert r.status == 200
    import hashlib
    assert r.body.decode() == '8000 ' + hashlib.md5(first + rest).hexdigest()


def test_request_buffering_on_sends_the_body_whole(srv, peer):
    import hashlib
    body = os.urandom(300000)
    r = srv.get('/body', method='POST', body=body)
    assert r.status == 200
    assert r.body.decode() == '%d %s' % (len(body), hashlib.md5(body).hexdigest())


UW = '''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            uwsgi_param REQUEST_URI $request_uri;
            uwsgi_param CONTENT_LENGTH $content_length;
            uwsgi_modifier1 5;
            uwsgi_modifier2 9;
            uwsgi_pass %s;
        }
        location /plain/ {
            uwsgi_param REQUEST_URI $request_uri;
            uwsgi_pass %s;
        }
    }
}
'''


@pytest.mark.parametrize('unix', [True, False])
def test_uwsgi_modifiers_in_the_packet_header(server, prefix, unix):
    p = uwsgi_peer(prefix.tmp, unix=unix)
    try:
        srv = server(UW % (p.addr, p.addr))
        r = srv.get('/x?a=1', method='POST', body=b'hello')
        assert r.status == 200
        assert r.body.startswith(b'm1=5 m2=9 ')
        assert b'REQUEST_URI=/x?a=1' in r.body
        assert r.body.endswith(b'body=hello')
        r = srv.get('/plain/y')
        assert r.body.startswith(b'm1=0 m2=0 ')
        assert b'tail=' not in r.body
    finally:
        p.stop()


UW_STRING = '''
http {
    server {
        listen 127.0.0.1:{port};
        uwsgi_string "hayate-extra";
        location / {
            uwsgi_param REQUEST_URI $request_uri;
            uwsgi_param CONTENT_LENGTH $content_length;
            uwsgi_pass %s;
        }
        location /own/ {
            uwsgi_string "own";
            uwsgi_param CONTENT_LENGTH $content_length;
            uwsgi_pass %s;
        }
    }
}
'''


def test_uwsgi_string_follows_the_vars_inside_the_packet(server, prefix):
    """uwsgi_string's bytes come after the vars and count in the packet's size (nginx's create_request); the body
    follows them whole. Inherited from the server level, replaced in a location."""
    p = uwsgi_peer(prefix.tmp, unix=True)
    try:
        srv = server(UW_STRING % (p.addr, p.addr))
        r = srv.get('/x', method='POST', body=b'hello')
        assert r.status == 200
        assert b' tail=hayate-extra body=hello' in r.body
        assert b'REQUEST_URI=/x' in r.body
        r = srv.get('/own/y', method='POST', body=b'abc')
        assert r.body.endswith(b' tail=own body=abc')
    finally:
        p.stop()


def test_keep_conn_after_head_uses_a_new_connection(server, peer):
    """nginx does not read the body of a HEAD response, so that connection is not reused (nginx-tests
    fastcgi_keepalive.t)."""
    srv = server(KEEP % peer.addr)
    first = conn_info(srv.get('/conn').body)
    assert srv.head('/conn').status == 200
    after = conn_info(srv.get('/conn').body)
    assert after['conn'] != first['conn']


@pytest.mark.skipif(IS_NGINX, reason="Debian's nginx 1.22 sends repeated fields apart; nginx 1.23+ joins them")
def test_repeated_client_fields_are_joined(server, peer):
    srv = server(KEEP % peer.addr)
    c = srv.conn()
    c.send(b'GET /env HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 1.1.1.1\r\nCookie: a=1\r\n'
           b'X-Forwarded-For: 2.2.2.2\r\nCookie: b=2\r\nX-Foo: x\r\nX-Foo: y\r\n\r\n')
    r = c.read_response()
    env = dict(l.split('=', 1) for l in r.body.decode().splitlines() if '=' in l)
    assert env['HTTP_X_FORWARDED_FOR'] == '1.1.1.1, 2.2.2.2'
    assert env['HTTP_COOKIE'] == 'a=1; b=2'
    assert env['HTTP_X_FOO'] == 'x, y'


@pytest.mark.parametrize('rule,msg', [
    ('fastcgi_split_path_info ^(.+\\.php)$;', 'must have 2 captures'),
    ('fastcgi_param A b c;', 'invalid parameter "c"'),
    ('fastcgi_pass 127.0.0.1:9000; fastcgi_pass 127.0.0.1:9001;', '"fastcgi_pass" directive is duplicate'),
    ('uwsgi_modifier1 256;', ''),
    ('scgi_buffers 1 4k; scgi_pass 127.0.0.1:9000;', 'there must be at least 2 "scgi_buffers"'),
    ('uwsgi_next_upstream error sometimes;', 'invalid value "sometimes"'),
    ('fastcgi_bind 127.0.0.1 opaque;', 'invalid parameter "opaque"'),
    ('scgi_bind localhost;', 'invalid address "localhost"'),
])
def test_bad_config(run_cli, prefix, rule, msg):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % rule)
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc != 0
    assert msg in r.err and 'test.conf:' in r.err


INHERIT = '''
http {
    fastcgi_param FROM_HTTP http-level;
    server {
        listen 127.0.0.1:{port};
        set $target %s;
        location / {
            fastcgi_pass $target;
        }
        location /own/ {
            fastcgi_param FROM_LOC loc-level;
            fastcgi_param HTTP_X_OVER from-param;
            fastcgi_param EMPTY_KEPT "";
            fastcgi_param EMPTY_DROPPED "" if_not_empty;
            fastcgi_pass_request_headers on;
            fastcgi_pass %s;
        }
        location /noheaders/ {
            fastcgi_pass_request_headers off;
            fastcgi_pass %s;
        }
    }
}
'''


def env_lines(r):
    return dict(l.split('=', 1) for l in r.body.decode().splitlines() if '=' in l)


def test_params_inheritance_headers_and_variables(server, peer):
    srv = server(INHERIT % (peer.addr, peer.addr, peer.addr))
    # fastcgi_pass with a variable; the http-level parameter inherited
    env = env_lines(srv.get('/x', headers={'X-Over': 'client'}))
    assert env['FROM_HTTP'] == 'http-level'
    assert env['HTTP_X_OVER'] == 'client'
    # a level with its own parameters replaces the inherited set; HTTP_X_OVER overrides the client's field
    env = env_lines(srv.get('/own/x', headers={'X-Over': 'client', 'X-Other': 'o'}))
    assert 'FROM_HTTP' not in env
    assert env['FROM_LOC'] == 'loc-level'
    assert env['HTTP_X_OVER'] == 'from-param'
    assert env['HTTP_X_OTHER'] == 'o'
    assert env['EMPTY_KEPT'] == ''
    assert 'EMPTY_DROPPED' not in env
    # no HTTP_* parameters at all
    env = env_lines(srv.get('/noheaders/x', headers={'X-Over': 'client'}))
    assert not [k for k in env if k.startswith('HTTP_')]
    assert env['FROM_HTTP'] == 'http-level'


def test_bind_sets_the_local_address(server, peer_b):
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            fastcgi_param REQUEST_URI /conn;
            fastcgi_bind 127.0.0.2;
            fastcgi_pass %s;
        }
        location /var {
            set $src 127.0.0.3;
            fastcgi_param REQUEST_URI /conn;
            fastcgi_bind $src;
            fastcgi_pass %s;
        }
        location /off {
            fastcgi_param REQUEST_URI /conn;
            fastcgi_bind off;
            fastcgi_pass %s;
        }
    }
}
''' % ((peer_b.addr,) * 3))
    assert conn_info(srv.get('/').body)['src'] == '127.0.0.2'
    assert conn_info(srv.get('/var').body)['src'] == '127.0.0.3'
    assert conn_info(srv.get('/off').body)['src'] == '127.0.0.1'
