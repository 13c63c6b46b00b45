"""Built-in variables (nginx's ngx_http_core_module docs, "Embedded Variables"): $server_protocol, $hostname,
$request_id (32 hex digits, new for each request), the path variables $document_root, $realpath_root and
$request_filename under root, alias and a root with variables, and $arg_NAME read again after `set $args` (nginx:
not cacheable; nginx-tests geo_volatile.t)."""
import os
import re
import socket

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        location = /v { return 200 "$server_protocol|$hostname|$request_id"; }
        location /al/ {
            alias {html}/real/;
            return 200 "$document_root|$realpath_root|$request_filename";
        }
        location /ln/ {
            root {html}/link;
            return 200 "$document_root|$realpath_root|$request_filename";
        }
        location /vr/ {
            root {html}/$arg_d;
            return 200 "$document_root|$realpath_root";
        }
        location = /args {
            set $before $arg_x;
            set $args x=2;
            return 200 "$before $arg_x";
        }
        location ~ ^/re/(.*)$ {
            alias {html}/real/$1;
            return 200 "$request_filename";
        }
    }
}
'''


@pytest.fixture
def srv(server, prefix):
    os.makedirs(prefix.html + '/real/sub', exist_ok=True)
    os.symlink(prefix.html + '/real', prefix.html + '/link')
    return server(CONF)


def test_protocol_hostname_request_id(srv):
    a = srv.get('/v').text.split('|')
    b = srv.get('/v', version='HTTP/1.0').text.split('|')
    assert a[0] == 'HTTP/1.1' and b[0] == 'HTTP/1.0'
    assert a[1] == socket.gethostname()
    assert re.fullmatch('[0-9a-f]{32}', a[2]) and re.fullmatch('[0-9a-f]{32}', b[2]) and a[2] != b[2]


def test_alias_paths(srv):
    h = srv.html
    assert srv.get('/al/sub/x.txt').text == '%s/real/|%s/real|%s/real/sub/x.txt' % (h, h, h)


def test_symlinked_root(srv):
    h = srv.html
    assert srv.get('/ln/a.txt').text == '%s/link|%s/real|%s/link/ln/a.txt' % (h, h, h)


def test_root_with_variables(srv):
    h = srv.html
    assert srv.get('/vr/x?d=real').text == '%s/real|%s/real' % (h, h)


def test_regex_alias_filename(srv):
    assert srv.get('/re/sub/y.txt').text == srv.html + '/real/sub/y.txt'


def test_arg_follows_set_args(srv):
    assert srv.get('/args?x=1').text == '1 2'
