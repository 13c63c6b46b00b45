"""Single behaviours nginx's test suite found different (s7), each written from nginx's documented behaviour and
checked against Debian's nginx."""
from conftest import simple


def test_rewrite_redirect_escapes_captures_of_an_escaped_uri(server):
    # nginx escapes a capture of a %-escaped URI in a redirect's replacement, then unescapes the redirect (all but
    # the bytes below '%'): "/t4/blah%20%3Fblah" gives "blah%20?blah", as rewrite_unescape.t shows for nginx
    srv = server(simple('''
        location /t4 { rewrite ^(.*) http://example.com$1 redirect; }
        location /t3 { rewrite ^ http://example.com$uri redirect; }
    '''))
    r = srv.get('/t4/blah%20%3Fblah')
    assert r.status == 302
    assert r.header('Location') == 'http://example.com/t4/blah%20?blah'
    r = srv.get('/t4/plain')
    assert r.header('Location') == 'http://example.com/t4/plain'
    # a variable is not escaped (nginx)
    r = srv.get('/t3/blah%20%3Fblah')
    assert r.header('Location') == 'http://example.com/t3/blah ?blah'


def test_proxy_pass_in_one_if_then_an_if_without_is_500(server):
    # nginx keeps the content handler the first `if` set, with the second block's settings (no upstream): 500
    # (proxy_if.t: "fixed to return 500 Internal Error in nginx 1.3.10")
    srv = server(simple('''
        location /crash {
            set $true 1;
            if ($true) {
                proxy_pass http://127.0.0.1:1;
            }
            if ($true) {
                # no handler here
            }
        }
        location /ok {
            set $true 1;
            if ($true) { }
            if ($true) { }
            return 200 "fine";
        }
    '''))
    srv.ignore_log = r'no upstream configuration'
    assert srv.get('/crash').status == 500
    r = srv.get('/ok')
    assert r.status == 200 and r.body == b'fine'


def test_proxy_bind_with_a_port(server):
    # "proxy_bind address ... with an optional port (1.11.2)"
    srv = server(simple('''
        location / {
            proxy_bind 127.0.0.1:$arg_p;
            proxy_pass http://127.0.0.1:{port2}/;
        }
    ''', http_extra='''
    server {
        listen 127.0.0.1:{port2};
        location / { return 200 "$remote_addr:$remote_port"; }
    }'''))
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()  # a free port to bind to
    r = srv.get('/?p=%d' % port)
    assert r.status == 200 and r.body == ('127.0.0.1:%d' % port).encode()


def test_access_log_line_written_before_the_close(server):
    # nginx writes a request's log line before it closes the connection: a client that saw the close finds it
    # (limit_rate.t reads the log right after each response)
    import os
    import socket
    srv = server(simple('''
        location / {
            access_log {tmp}/logs/t.log t;
            return 200 "x";
        }
    ''', http_extra='log_format t "$uri";'))
    path = os.path.join(srv.tmp, 'logs/t.log')
    for i in range(300):
        s = socket.create_connection(('127.0.0.1', srv.port))
        s.sendall(b'GET /r%d HTTP/1.0\r\nHost: localhost\r\n\r\n' % i)
        while s.recv(4096):
            pass
        s.close()
        with open(path) as f:
            lines = f.read().splitlines()
        assert lines and lines[-1] == '/r%d' % i, (i, lines[-3:])
