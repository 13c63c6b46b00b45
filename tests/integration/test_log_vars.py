"""Embedded variables as the access log prints them (nginx's exact formats; passes with HY_BIN=/usr/sbin/nginx)."""
import os
import re
import socket

import pytest

from conftest import IS_NGINX
from test_log_access import read_lines
from helpers.process import drop_log_lines

FILES = {'html/a.txt': 'abc', 'html/sub/b.txt': 'bbbb'}

VARS = ['remote_addr', 'remote_user', 'request', 'request_method', 'request_uri', 'uri', 'document_uri', 'args',
        'query_string', 'is_args', 'arg_x', 'arg_Y', 'arg_none', 'http_x_foo', 'http_user_agent', 'cookie_c',
        'cookie_none', 'content_type', 'content_length', 'host', 'server_name', 'server_addr', 'server_port',
        'server_protocol', 'scheme', 'https', 'status', 'body_bytes_sent', 'sent_http_content_type',
        'sent_http_content_length', 'sent_http_x_nope', 'sent_http_connection', 'connection_requests',
        'request_filename', 'document_root', 'upstream_addr', 'upstream_status', 'upstream_response_time',
        'nginx_version', 'remote_port', 'connection', 'pid', 'request_id', 'hostname', 'bytes_sent',
        'request_length', 'realpath_root', 'binary_remote_addr', 'time_iso8601', 'time_local', 'msec',
        'request_time']


def conf(extra_loc=''):
    fmt = '|'.join('${%s}' % v for v in VARS)
    return '''
http {
    log_format v '%s';
    server {
        listen 127.0.0.1:{port};
        server_name example.com www.example.com;
        root {html};
        access_log logs/v.log v;
        location /al/ { alias {html}/sub/; }
        %s
    }
}
''' % (fmt, extra_loc)


def parse(line):
    vals = line.split(b'|')
    assert len(vals) == len(VARS), line
    return dict(zip(VARS, vals))


def test_request_variables(server):
    s = server(conf(), files=FILES)
    c = s.conn()
    req = (b'GET /a.txt?x=1&y=%41&Z=3 HTTP/1.1\r\nHost: LocalHost:' + str(s.port).encode() +
           b'\r\nX-Foo: bar baz\r\nAuthorization: Basic dXNlcjpwYXNz\r\nCookie: a=1; c=cv; d=2\r\n'
           b'User-Agent: t\r\nConnection: close\r\n\r\n')
    c.send(req)
    r = c.read_response()
    assert r.status == 200
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['remote_addr'] == b'127.0.0.1'
    assert v['remote_user'] == b'user'
    assert v['request'] == b'GET /a.txt?x=1&y=%41&Z=3 HTTP/1.1'
    assert v['request_method'] == b'GET'
    assert v['request_uri'] == b'/a.txt?x=1&y=%41&Z=3'
    assert v['uri'] == v['document_uri'] == b'/a.txt'
    assert v['args'] == v['query_string'] == b'x=1&y=%41&Z=3'
    assert v['is_args'] == b'?'
    assert v['arg_x'] == b'1' and v['arg_Y'] == b'%41' and v['arg_none'] == b'-'
    assert v['http_x_foo'] == b'bar baz' and v['http_user_agent'] == b't'
    assert v['cookie_c'] == b'cv' and v['cookie_none'] == b'-'
    assert v['content_type'] == b'-' and v['content_length'] == b'-'
    assert v['host'] == b'localhost'
    assert v['server_name'] == b'example.com'
    assert v['server_addr'] == b'127.0.0.1' and v['server_port'] == str(s.port).encode()
    assert v['server_protocol'] == b'HTTP/1.1' and v['scheme'] == b'http' and v['https'] == b''
    assert v['status'] == b'200' and v['body_bytes_sent'] == b'3'
    assert v['sent_http_content_type'] == b'text/plain' and v['sent_http_content_length'] == b'3'
    assert v['sent_http_x_nope'] == b'-' and v['sent_http_connection'] == b'close'
    assert v['connection_requests'] == b'1'
    assert v['request_filename'] == (s.html + '/a.txt').encode()
    assert v['document_root'] == s.html.encode()
    assert v['realpath_root'] == os.path.realpath(s.html).encode()
    assert v['upstream_addr'] == v['upstream_status'] == v['upstream_response_time'] == b'-'
    assert v['nginx_version'] == b'1.22.1'
    assert v['remote_port'] == str(c.sock.getsockname()[1]).encode()
    assert re.fullmatch(rb'\d+', v['connection'])
    assert v['pid'] == str(s.proc.pid).encode()
    assert re.fullmatch(rb'[0-9a-f]{32}', v['request_id'])
    assert v['hostname'] == socket.gethostname().encode()
    assert int(v['bytes_sent']) == len(r.raw_head) + 3
    assert int(v['request_length']) == len(req)
    assert v['binary_remote_addr'] == b'\\x7F\\x00\\x00\\x01'
    assert re.fullmatch(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d', v['time_iso8601'])
    assert re.fullmatch(rb'\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}', v['time_local'])
    assert re.fullmatch(rb'\d+\.\d{3}', v['msec']) and re.fullmatch(rb'\d+\.\d{3}', v['request_time'])


def test_no_args_and_404(server):
    s = server(conf(), files=FILES)
    r = s.get('/missing', host='www.example.com')
    assert r.status == 404
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['args'] == v['query_string'] == b'-' and v['is_args'] == b''
    assert v['status'] == b'404' and v['host'] == b'www.example.com'
    assert v['remote_user'] == b'-' and v['sent_http_content_type'] == b'text/html'
    assert v['request_filename'] == (s.html + '/missing').encode()


def test_empty_query(server):
    s = server(conf(), files=FILES)
    s.get('/a.txt?')
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['args'] == b'-' and v['is_args'] == b'' and v['request_uri'] == b'/a.txt?'


def test_http10_without_host_uses_server_name(server):
    s = server(conf(), files=FILES)
    r = s.raw(b'GET /a.txt HTTP/1.0\r\n\r\n')
    assert r.status == 200
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['host'] == b'example.com' and v['server_protocol'] == b'HTTP/1.0'


def test_keepalive_connection_requests(server):
    s = server(conf(), files=FILES)
    c = s.conn()
    for i in range(3):
        c.send(b'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n')
        assert c.read_response().status == 200
    lines = read_lines(s, 'logs/v.log', 3)
    vals = [parse(l) for l in lines]
    assert [v['connection_requests'] for v in vals] == [b'1', b'2', b'3']
    assert len({v['connection'] for v in vals}) == 1
    assert len({v['request_id'] for v in vals}) == 3
    # nginx has already cleared r->keepalive when the log phase runs
    assert [v['sent_http_connection'] for v in vals] == [b'close'] * 3


def test_alias_filename(server):
    s = server(conf(), files=FILES)
    assert s.get('/al/b.txt').status == 200
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['request_filename'] == (s.html + '/sub/b.txt').encode()


def test_post_content_type_and_length(server):
    s = server(conf(), files=FILES)
    r = s.get('/a.txt', method='POST', body=b'hello', headers={'Content-Type': 'text/x-y'})
    assert r.status == 405
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['content_type'] == b'text/x-y' and v['content_length'] == b'5'
    assert v['request_method'] == b'POST'


def test_repeated_headers(server):
    s = server(conf(), files=FILES)
    s.get('/a.txt', headers=[('X-Foo', 'one'), ('Cookie', 'a=1'), ('Cookie', 'c=2')])
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['http_x_foo'] == b'one' and v['cookie_c'] == b'2'


@pytest.mark.hayate_only  # nginx 1.22 gives the first line; nginx 1.23+ joins them, as hayate
def test_repeated_headers_joined(server):
    s = server(conf(), files=FILES)
    s.get('/a.txt', headers=[('X-Foo', 'one'), ('X-Foo', 'two'), ('Cookie', 'a=1'), ('Cookie', 'c=2')])
    v = parse(read_lines(s, 'logs/v.log')[0])
    assert v['http_x_foo'] == b'one, two' and v['cookie_c'] == b'2'


def test_pipe(server):
    """$pipe is "p" for a request that arrived behind another one in the same read, "." otherwise."""
    s = server('''
http {
    log_format p '$request_uri $pipe';
    server {
        listen 127.0.0.1:{port};
        root {html};
        access_log logs/p.log p;
    }
}
''', files=FILES)
    c = s.conn()
    c.send(b'GET /a.txt?1 HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt?2 HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.read_response().status == 200
    assert c.read_response().status == 200
    c.send(b'GET /a.txt?3 HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.read_response().status == 200
    lines = read_lines(s, 'logs/p.log', 3)
    assert lines == [b'/a.txt?1 .', b'/a.txt?2 p', b'/a.txt?3 .']


def test_document_root_with_variables(server):
    """$document_root and $request_filename follow a root that has variables in it."""
    s = server('''
http {
    log_format r '$document_root|$request_filename';
    server {
        listen 127.0.0.1:{port};
        set $site sub;
        root {html}/$site;
        access_log logs/r.log r;
    }
}
''', files=FILES)
    assert s.get('/b.txt').status == 200
    lines = read_lines(s, 'logs/r.log', 1)
    root, fn = lines[0].split(b'|')
    assert root.endswith(b'/html/sub'), lines
    assert fn == root + b'/b.txt', lines


ADDR_VARS = '[$remote_addr][$remote_port][$binary_remote_addr][$server_addr][$server_port]'


def test_addresses_over_ipv6_and_unix_sockets(server):
    """The address variables of an IPv6 and of a unix-socket connection (nginx 1.22's values: a unix client is
    "unix:" in $remote_addr and $binary_remote_addr, with no port; $server_addr names the socket's path)."""
    s = server('''
http {
    log_format a '%s';
    server {
        listen 127.0.0.1:{port};
        listen [::1]:{port2};
        listen unix:{tmp}/logs/v.sock;
        access_log logs/a.log a;
        location / { return 200 "ok\\n"; }
    }
}
''' % ADDR_VARS)
    c = socket.create_connection(('::1', s.prefix.port2), timeout=5)
    c.sendall(b'GET / HTTP/1.0\r\n\r\n')
    while c.recv(4096):
        pass
    cport = c.getsockname()[1]
    c.close()
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.settimeout(5)
    u.connect(s.prefix.path('logs/v.sock'))
    u.sendall(b'GET / HTTP/1.0\r\n\r\n')
    while u.recv(4096):
        pass
    u.close()
    lines = read_lines(s, 'logs/a.log', 2)
    assert lines[0] == ('[::1][%d][%s][::1][%d]' % (cport, '\\x00' * 15 + '\\x01', s.prefix.port2)).encode(), lines
    assert lines[1] == ('[unix:][][unix:][unix:%s][]' % s.prefix.path('logs/v.sock')).encode(), lines


def test_alias_document_root_and_missing_realpath(server):
    """$document_root of an alias location is the alias as written (even when it ends with the location's
    name); $realpath_root of a path that does not exist is not found, with nginx's [crit] realpath() line;
    $request_filename of a regex alias is the alias itself."""
    s = server('''
http {
    log_format r '[$document_root][$realpath_root][$request_filename]';
    server {
        listen 127.0.0.1:{port};
        access_log logs/r.log r;
        location /al/ { alias {html}/sub/al/; return 200 "a\\n"; }
        location /gone/ { root {tmp}/nonexistent; return 200 "g\\n"; }
        location ~ ^/re/(.*)$ { alias {html}/sub/$1; return 200 "r\\n"; }
    }
}
''', files=FILES)
    assert s.get('/al/x').body == b'a\n'
    assert s.get('/gone/x').body == b'g\n'
    assert s.get('/re/b.txt').body == b'r\n'
    lines = read_lines(s, 'logs/r.log', 3)
    html, tmp = s.html, s.prefix.tmp
    assert lines[0] == ('[%s/sub/al/][-][%s/sub/al/x]' % (html, html)).encode(), lines
    assert lines[1] == ('[%s/nonexistent][-][%s/nonexistent/gone/x]' % (tmp, tmp)).encode(), lines
    assert lines[2] == ('[%s/sub/b.txt][%s][%s/sub/b.txt]' % (html, os.path.realpath(html + '/sub/b.txt'), html)
                        ).encode(), lines
    log = s.error_log()
    for p in (html + '/sub/al/', tmp + '/nonexistent'):
        assert re.search(r'\[crit\] \d+#\d+: \*\d+ realpath\(\) "%s" failed \(2: No such file or directory\)'
                         % re.escape(p), log), log
    s.stop()
    drop_log_lines(s, r'realpath\(\) ".*" failed')


def test_time_iso8601_west_of_greenwich(server):
    """A negative UTC offset is printed with its sign (TZ of the server's environment)."""
    old = os.environ.get('TZ')
    os.environ['TZ'] = 'EST5'
    try:
        s = server('''
http {
    log_format t '$time_iso8601|$time_local';
    server {
        listen 127.0.0.1:{port};
        access_log logs/t.log t;
        location / { return 200 "ok\\n"; }
    }
}
''')
    finally:
        if old is None:
            del os.environ['TZ']
        else:
            os.environ['TZ'] = old
    s.get('/')
    line = read_lines(s, 'logs/t.log')[0]
    assert re.fullmatch(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-05:00\|\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d -0500', line), line


def test_sent_headers_not_set_and_request_body(server):
    """$sent_http_* of headers a response does not have are not found ("-"); $request_body and
    $request_body_file are not found when no handler read the body."""
    s = server('''
http {
    log_format h '[$sent_http_location][$sent_http_last_modified][$sent_http_etag][$sent_http_content_length][$sent_http_accept_ranges][$request_body][$request_body_file]';
    server {
        listen 127.0.0.1:{port};
        access_log logs/h.log h;
        location / { return 204; }
        location /r { return 302 /x; }
    }
}
''')
    assert s.get('/', method='POST', body=b'abc').status == 204
    r = s.get('/r')
    assert r.status == 302
    lines = read_lines(s, 'logs/h.log', 2)
    assert lines[0] == b'[-][-][-][-][-][-][-]', lines
    assert lines[1] == ('[http://localhost:%d/x][-][-][%d][-][-][-]' % (s.prefix.port, len(r.body))).encode(), lines


# ---- request fields: repeated lines joined (nginx 1.23+), unique ones rejected, $uri of an invalid target

JOIN = '''
http {
    log_format j '[$uri] [$http_cookie] [$content_type] [$http_via] [$cookie_qux] [$cookie_foo]';
    server {
        listen 127.0.0.1:{port};
        access_log logs/j.log j;
        location / { return 204; }
    }
}
'''


def test_cookie_lines_joined(server):
    s = server(JOIN)
    s.get('/c', headers=[('Cookie', 'foo=1'), ('Cookie', 'bar=2')])
    assert read_lines(s, 'logs/j.log')[0].startswith(b'[/c] [foo=1; bar=2] ')


@pytest.mark.hayate_only  # nginx 1.22 gives the first line of these; 1.23+ joins them, as hayate
def test_other_lines_joined(server):
    s = server(JOIN)
    s.get('/c', headers=[('Content-Type', 'a'), ('Content-Type', 'b'), ('Via', '1.1 x'), ('Via', '1.1 y')])
    assert read_lines(s, 'logs/j.log')[0] == b'[/c] [-] [a, b] [1.1 x, 1.1 y] [-] [-]'


@pytest.mark.hayate_only  # RFC 6265 §4.2.1 (and nginx 1.29.6): only ';' separates cookies; nginx 1.22 took ',' too
def test_cookie_comma_is_not_a_separator(server):
    s = server(JOIN)
    s.get('/c', headers=[('Cookie', 'foo=1, qux=0; bar=2')])
    assert read_lines(s, 'logs/j.log')[0] == b'[/c] [foo=1, qux=0; bar=2] [-] [-] [-] [1, qux=0]'


def test_uri_of_an_invalid_target_is_empty(server):
    """nginx logs an empty $uri (not "-") for a target its normalisation rejects."""
    s = server(JOIN)
    r = s.raw(b'GET /../x HTTP/1.0\r\n\r\n')
    assert r.status == 400
    assert read_lines(s, 'logs/j.log')[0].startswith(b'[] ')


@pytest.mark.hayate_only  # nginx 1.23+ rejects these duplicates; 1.22 took the first
@pytest.mark.parametrize('name,values', [
    ('Authorization', ('Basic dXNlcjpzZWNyZXQ=', 'Basic dXNlcjpzZWNyZXQ=')),
    ('Content-Range', ('bytes 0-1/2', 'bytes 0-1/2')),
])
def test_duplicate_unique_lines_rejected(server, name, values):
    s = server(JOIN)
    assert s.get('/d', headers=[(name, values[0])]).status == 204
    assert s.get('/d', headers=[(name, v) for v in values]).status == 400
