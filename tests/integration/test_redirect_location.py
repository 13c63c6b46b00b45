"""The Location of a directory redirect (301 to the URI with a slash): the host from Host, from the server's
first name (server_name_in_redirect), or from the local address (no Host; IPv6 in brackets); the port unless
it is the scheme's default or port_in_redirect is off; relative with absolute_redirect off. Values as
nginx 1.22 sends them."""
import pytest


def conf(extra='', listen='listen 127.0.0.1:{port};', names=''):
    return '''
http {
    server {
        %s
        %s
        root {html};
        %s
    }
}
''' % (listen, names, extra)


def location(s, raw, port=None):
    r = s.raw(raw, port=port)
    assert r.status == 301, r
    return r.header('Location')


FILES = {'html/dir/a.txt': 'a'}


def test_host_header_is_used(server):
    s = server(conf(names='server_name a.test;'), files=FILES)
    assert location(s, b'GET /dir HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n') == \
        'http://other.test:%d/dir/' % s.prefix.port


def test_server_name_in_redirect_uses_the_first_name(server):
    s = server(conf('server_name_in_redirect on;', names='server_name a.test b.test;'), files=FILES)
    assert location(s, b'GET /dir HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n') == \
        'http://a.test:%d/dir/' % s.prefix.port


@pytest.mark.hayate_only  # nginx 1.22 puts "*.w.test" in the URL (docs/DIFFERENCES.md)
def test_server_name_in_redirect_with_a_wildcard_first_name_uses_the_address(server):
    s = server(conf('server_name_in_redirect on;', names='server_name *.w.test;'), files=FILES)
    assert location(s, b'GET /dir HTTP/1.1\r\nHost: x.w.test\r\nConnection: close\r\n\r\n') == \
        'http://127.0.0.1:%d/dir/' % s.prefix.port


def test_no_host_uses_the_local_address(server):
    s = server(conf(), files=FILES)
    assert location(s, b'GET /dir HTTP/1.0\r\n\r\n') == 'http://127.0.0.1:%d/dir/' % s.prefix.port


@pytest.mark.hayate_only  # nginx 1.22 sends http://::1:PORT/ (docs/DIFFERENCES.md)
def test_no_host_over_ipv6_brackets_the_address(server):
    s = server(conf(listen='listen [::1]:{port};'), files=FILES, wait_host='::1')
    c = s.conn(host='::1')
    c.send(b'GET /dir HTTP/1.0\r\n\r\n')
    r = c.read_response()
    assert r.status == 301 and r.header('Location') == 'http://[::1]:%d/dir/' % s.prefix.port


def test_port_in_redirect_off(server):
    s = server(conf('port_in_redirect off;'), files=FILES)
    assert location(s, b'GET /dir?q=1 HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n') == \
        'http://a.test/dir/?q=1'


def test_absolute_redirect_off(server):
    s = server(conf('absolute_redirect off;'), files=FILES)
    assert location(s, b'GET /dir HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n') == '/dir/'


def test_directory_redirect_escapes_the_path(server):
    # nginx escapes the decoded URI again (space, '#', '%', '?', controls, bytes >= 0x7f); the arguments follow as sent
    s = server(conf(), files={'html/dir sp/a.txt': 'a', 'html/p%c/a.txt': 'b'})
    assert location(s, b'GET /dir%20sp?a=b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n') == \
        'http://h:%d/dir%%20sp/?a=b' % s.prefix.port
    assert location(s, b'GET /p%25c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n') == \
        'http://h:%d/p%%25c/' % s.prefix.port


def test_proxy_location_with_a_slash_redirects_the_name_without_it(server):
    # nginx: a prefix location ending in '/' served by proxy_pass (or fastcgi_pass, uwsgi_pass, scgi_pass) answers
    # its name without the slash with a 301 to the name with it; not a static prefix, not one named exactly
    s = server(conf('''location /app/ { proxy_pass http://127.0.0.1:1; }
        location "/sp ace/" { proxy_pass http://127.0.0.1:1; }
        location /fcgi/ { fastcgi_pass 127.0.0.1:1; }
        location /both/ { proxy_pass http://127.0.0.1:1; }
        location = /both { return 200 "exact"; }
        location /static/ { }'''))
    get = b'GET %s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'
    assert location(s, get % b'/app') == 'http://h:%d/app/' % s.prefix.port
    assert location(s, get % b'/app?a=b') == 'http://h:%d/app/?a=b' % s.prefix.port
    assert location(s, get % b'/sp%20ace') == 'http://h:%d/sp%%20ace/' % s.prefix.port
    assert location(s, get % b'/fcgi') == 'http://h:%d/fcgi/' % s.prefix.port
    r = s.raw(get % b'/both')
    assert r.status == 200 and r.body == b'exact'
    assert s.raw(get % b'/static').status == 404
