"""Bugs found by nginx's own test suite (../shared/conformance), each with a test written from nginx's documentation and
behaviour. http_method.t: TRACE and CONNECT are answered at once and the connection closes (the requests timed out
against hayate because they were served as ordinary requests on a kept-alive connection)."""
import re

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "ok\\n"; }
    }
}
'''


def exchange(srv, request_line):
    c = srv.conn()
    r = c.request(request_line + '\r\nHost: localhost\r\n\r\n', method=request_line.split()[0])
    return r, c.is_closed(timeout=5.0)


def test_trace_is_405_and_closes(server):
    srv = server(CONF)
    r, closed = exchange(srv, 'TRACE / HTTP/1.1')
    assert r.status == 405
    assert closed
    assert 'client sent TRACE method' in srv.error_log()


@pytest.mark.hayate_only  # nginx 1.29.3+ (the test suite's version); Debian's 1.22 answers 400
def test_connect_to_an_authority_is_405(server):
    srv = server(CONF)
    r, closed = exchange(srv, 'CONNECT localhost:8080 HTTP/1.1')
    assert r.status == 405
    assert closed


@pytest.mark.parametrize('target', [
    pytest.param('/', marks=pytest.mark.hayate_only),  # nginx 1.29.3+ says 400; Debian's 1.22 says 405
    'localhost', 'localhost:', ':8080', 'local host:80'])
def test_connect_to_anything_else_is_400(server, target):
    srv = server(CONF)
    r, closed = exchange(srv, 'CONNECT %s HTTP/1.1' % target)
    assert r.status == 400
    assert closed


def test_other_methods_keep_the_connection(server):
    srv = server(CONF)
    c = srv.conn()
    for m in ('GET', 'POST', 'OPTIONS', 'DELETE'):
        r = c.request('%s / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n' % m, method=m)
        assert r.status == 200, m


SERVER_NAMES = '''
http {
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        location / { return 200 "first\\n"; }
    }
    server {
        listen 127.0.0.1:{port};
        server_name "";
        location / { return 200 "empty name\\n"; }
    }
}
'''


def test_server_name_empty_takes_requests_without_host(server):
    """nginx-tests http_server_name.t: `server_name ""` serves requests that carry no Host (HTTP/1.0)."""
    srv = server(SERVER_NAMES)
    assert srv.raw('GET / HTTP/1.0\r\n\r\n').body == b'empty name\n'
    assert srv.get('/', host='other').body == b'first\n'   # an unknown Host still goes to the default server
    assert srv.get('/', host='localhost').body == b'first\n'


def test_connection_time(server):
    """nginx-tests http_keepalive.t: $connection_time is the connection's age in seconds with milliseconds."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "$connection_requests:$connection_time\\n"; }
    }
}
''')
    import re
    c = srv.conn()
    got = []
    for _ in range(2):
        r = c.request('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        m = re.fullmatch(rb'(\d+):(\d+)\.(\d{3})\n', r.body)
        assert m, r.body
        got.append((int(m.group(1)), float(m.group(2) + b'.' + m.group(3))))
    assert [n for n, _ in got] == [1, 2]
    assert got[1][1] >= got[0][1]


def test_index_with_variables(server):
    """nginx-tests index.t: index names may hold variables, relative (checked) or absolute (redirected)."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        location /var/ { alias {html}/; index $server_name.html; }
        location /va2/ { alias {html}/; index ${server_name}.html; }
        location /var_redirect/ { index /$server_name.html; }
        location / { }
    }
}
''')
    srv.write('html/localhost.html', 'varbody')
    assert srv.get('/var/').body == b'varbody'
    assert srv.get('/va2/').body == b'varbody'
    assert srv.get('/var_redirect/').body == b'varbody'


def test_index_directory_not_found_respects_log_not_found(server):
    """nginx-tests index.t: with log_not_found off, a missing directory is a 404 and no error line."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location /on/ { }
        location /off/ { log_not_found off; }
    }
}
''')
    assert srv.get('/off/').status == 404
    assert 'is not found' not in srv.error_log()
    assert srv.get('/on/').status == 404
    assert 'is not found' in srv.error_log()


def test_if_x_on_directories(server):
    """nginx-tests rewrite_if.t: -x tests the execute bit, so a (searchable) directory is "executable"."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location /exec { if (-x {tmp}/$arg_c) { return 204; } return 200; }
        location /not_exec { if (!-x {tmp}/$arg_c) { return 204; } return 200; }
    }
}
''')
    import os
    os.makedirs(srv.tmp + '/dir', exist_ok=True)
    with open(srv.tmp + '/file', 'w') as f:
        f.write('x')
    os.chmod(srv.tmp + '/file', 0o644)
    assert srv.get('/exec?c=dir').status == 204
    assert srv.get('/exec?c=file').status == 200
    assert srv.get('/not_exec?c=file').status == 204
    assert srv.get('/not_exec?c=dir').status == 200


def test_autoindex_jsonp_callback(server):
    """nginx-tests autoindex_format.t: jsonp wraps the listing in the "callback" argument; without one it is
    plain JSON; an invalid name is a bad request."""
    import os
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { root {html}; autoindex on; autoindex_format jsonp; }
    }
}
''')
    os.makedirs(srv.html + '/d', exist_ok=True)
    r = srv.get('/d/?callback=foo')
    assert r.status == 200
    assert re.fullmatch(rb'\s*(/\* callback \*/\s*)?foo\s*\(\s*\[\s*\]\s*\)\s*;\s*', r.body), r.body
    assert r.header('Content-Type') == 'application/javascript'
    r = srv.get('/d/?callback=')
    assert re.fullmatch(rb'\s*\[\s*\]\s*', r.body), r.body
    assert srv.get('/d/?callback=a-b').status == 400


def test_add_header_last_modified_replaces_the_field(server):
    """nginx-tests range_if_range.t: add_header Last-Modified replaces the response's own (empty: removes it),
    and If-Range compares against what is sent."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        location /t2.html { add_header Last-Modified ""; }
        location /t3.html { add_header Last-Modified "Mon, 28 Sep 1970 06:00:00 GMT"; }
    }
}
''')
    body = ''.join('X%03dXXXXXX' % i for i in range(100))
    for n in ('t1', 't2', 't3'):
        srv.write('html/%s.html' % n, body)
    r = srv.get('/t2.html', headers={'Range': 'bytes=0-9', 'If-Range': 'wrong'})
    assert r.status == 200 and r.header('Last-Modified') is None
    r = srv.get('/t3.html', headers={'Range': 'bytes=0-9', 'If-Range': 'wrong'})
    assert r.status == 200 and r.header('Last-Modified') == 'Mon, 28 Sep 1970 06:00:00 GMT'
    r = srv.get('/t3.html', headers={'Range': 'bytes=0-9', 'If-Range': 'Mon, 28 Sep 1970 06:00:00 GMT'})
    assert r.status == 206 and r.body == body[:10].encode()
    r = srv.get('/t1.html')
    last = r.header('Last-Modified')
    assert srv.get('/t1.html', headers={'Range': 'bytes=0-9', 'If-Range': last}).status == 206


def test_decoded_control_character_in_a_header_value(server):
    """nginx-tests http_uri.t: a %02 that $uri decoded goes out as the byte (nginx); CR/LF stay encoded so a
    request cannot add header lines (hayate's deliberate difference)."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { add_header X-URI "x $uri x"; return 204; }
    }
}
''')
    r = srv.get('/%02')
    assert r.header('X-URI') == 'x /\x02 x'


@pytest.mark.hayate_only  # nginx 1.29.3+ (the suite's version); Debian's 1.22 accepts both
def test_host_port_above_65535_and_ipvfuture(server):
    """nginx-tests http_host.t: a port above 65535 is a bad Host; an IPvFuture literal is a valid one."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "$host\\n"; }
    }
}
''')
    assert srv.get('/', host='123.49.0.78:98777').status == 400
    assert srv.raw('GET http://123.40.56.78:123456/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n').status == 400
    assert srv.get('/', host='123.49.0.78:65535').status == 200
    lit = "[v0123456789abcdef.!$&'()*+,;=-._~abcdefghijklmnopqrstuvwxyz0123456789:]"
    r = srv.get('/', host=lit)
    assert r.status == 200 and r.body == lit.encode() + b'\n'
    assert srv.get('/', host='[v1.]').status == 400
    assert srv.get('/', host='[vg.x]').status == 400


def test_access_log_gzip(server):
    """nginx-tests access_log.t: `access_log ... gzip[=level]` writes buffered lines as gzip members (64K buffer
    by default), flushed when full, on flush= and at exit; the file is one valid gzip stream."""
    import gzip
    srv = server('''
http {
    log_format short "$uri $status";
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "ok\\n"; }
        access_log {tmp}/logs/gz.log short gzip;
        access_log {tmp}/logs/gz9.log short gzip=9 buffer=1k;
    }
}
''')
    c = srv.conn()
    for i in range(300):
        assert c.request('GET /r%d HTTP/1.1\r\nHost: x\r\n\r\n' % i).status == 200
    c.close()
    assert srv.stop() == 0
    with open(srv.tmp + '/logs/gz.log', 'rb') as f:
        data = f.read()
    assert data[:2] == b'\x1f\x8b'
    lines = gzip.decompress(data).decode().splitlines()
    assert lines == ['/r%d 200' % i for i in range(300)]
    with open(srv.tmp + '/logs/gz9.log', 'rb') as f:
        data9 = f.read()
    assert data9.count(b'\x1f\x8b\x08') >= 2  # a 1k buffer fills more than once: several members
    assert gzip.decompress(data9).decode().splitlines() == lines


def test_access_log_gzip_bad_level(prefix, run_cli):
    path = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        access_log {tmp}/logs/a.log combined gzip=10;
    }
}
''')
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1
    assert 'invalid compression level "10"' in res.err, res.err


def test_prefix_variable_with_an_empty_name(server):
    """http_variables.t: `$arg_` (a prefix variable with nothing after the prefix) is a variable, as in nginx: the
    value of an argument with an empty name, so empty here; the config used to be refused."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location /arg { return 200 "$arg_l:$arg_:$http_"; }
    }
}
''')
    r = srv.get('/arg?l=42')
    assert r.status == 200 and r.body == b'42::'
