"""access_log with variables in the file name (nginx's ngx_http_log_script_write): nothing is written unless the
request's root directory exists (a missing root, a root that is a file: logged at error with the errno); a request
refused before a location was chosen (400) is logged through the server's configuration; gzip= logs with flush;
escape=none / json formats through a variable-named file."""
import gzip
import os
import socket

from conftest import simple
from test_limits import wait_for


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def test_variable_log_needs_the_root(server):
    srv = server(simple('''
        location /ok { root {html}; access_log {tmp}/logs/v_$arg_n.log plain; return 200 "ok"; }
        location /missing { root {tmp}/no_such_dir; access_log {tmp}/logs/v_$arg_n.log plain; return 200 "ok"; }
        location /file { root {html}/f.txt; access_log {tmp}/logs/v_$arg_n.log plain; return 200 "ok"; }''', http_extra="log_format plain '$request_uri $status';"),
        files={'html/f.txt': 'x'})
    for p in ('/ok?n=a', '/missing?n=b', '/file?n=c'):
        assert srv.get(p).status == 200
    wait_for(lambda: read(srv.tmp + '/logs/v_a.log') == b'/ok?n=a 200\n', what='the log line')
    wait_for(lambda: 'testing "%s/no_such_dir" existence failed (2: No such file or directory)' % srv.tmp
             in srv.error_log(), what='the missing root')
    wait_for(lambda: 'testing "%s/html/f.txt" existence failed (20: Not a directory)' % srv.tmp
             in srv.error_log(), what='the root that is a file')
    assert read(srv.tmp + '/logs/v_b.log') is None and read(srv.tmp + '/logs/v_c.log') is None


def test_bad_request_logged_with_the_servers_log(server):
    srv = server(simple('''
        root {html};
        access_log {tmp}/logs/srv_$server_port.log plain;
        location / { return 200 "ok"; }''', http_extra="log_format plain '[$request] $status';"))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'GARBAGE\r\n\r\n')
    data = s.recv(4096)
    s.close()
    assert data.startswith(b'HTTP/1.1 400')
    path = srv.tmp + '/logs/srv_%d.log' % srv.port
    wait_for(lambda: read(path) and b'] 400' in read(path), what='the 400 line')


def test_gzip_log_with_flush(server):
    srv = server(simple('''
        access_log {tmp}/logs/z.log.gz plain gzip=1 buffer=64k flush=1s;
        location / { return 200 "ok"; }''', http_extra="log_format plain '$uri $status';"))
    for i in range(3):
        assert srv.get('/p%d' % i).status == 200

    def lines():
        raw = read(srv.tmp + '/logs/z.log.gz')
        if not raw:
            return None
        try:
            return gzip.decompress(raw).decode().splitlines()
        except (EOFError, OSError):
            return None  # a member still being written
    # flush=1s writes the buffer as a gzip member once a second at most
    wait_for(lambda: lines() == ['/p0 200', '/p1 200', '/p2 200'], what='the flushed gzip member')


def test_escapes_through_a_variable_named_file(server):
    srv = server(simple('''
        root {html};
        location /j { access_log {tmp}/logs/j_$arg_k.log j; return 200 "ok"; }
        location /n { access_log {tmp}/logs/n_$arg_k.log n; return 200 "ok"; }''', http_extra='''
    log_format j escape=json '{"u":"$arg_u"}';
    log_format n escape=none '[$arg_u]';'''))
    assert srv.get('/j?k=1&u=a%22b%5Cc').status == 200
    assert srv.get('/n?k=1&u=a%22b').status == 200
    wait_for(lambda: read(srv.tmp + '/logs/j_1.log') == b'{"u":"a%22b%5Cc"}\n', what='the json line')
    wait_for(lambda: read(srv.tmp + '/logs/n_1.log') == b'[a%22b]\n', what='the raw line')
    assert os.path.exists(srv.tmp + '/logs/j_1.log')
