"""$content_length of a chunked request body read whole (its size, as nginx), $realpath_root of a root that does not
exist (not found, realpath() failure logged at crit), $sent_trailer_* of trailers made so far."""
import socket

from conftest import simple
from test_limits import wait_for


def test_content_length_of_a_chunked_body(server):
    srv = server(simple('''
        location / { proxy_pass http://127.0.0.1:{port2}; proxy_set_header X-CL "[$content_length]"; }''',
        http_extra='''
    server { listen 127.0.0.1:{port2}; location / { return 200 "$http_x_cl"; } }'''))
    s = socket.create_connection(('127.0.0.1', srv.port))
    s.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n'
              b'5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n')
    data = b''
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
    s.close()
    assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'[11]')
    r = srv.get('/')
    assert r.body == b'[]'


def test_realpath_root_of_a_missing_root(server):
    srv = server(simple('''
        location / { root {tmp}/nowhere; return 200 "[$realpath_root]"; }'''))
    srv.ignore_log = r'realpath\(\) ".*/nowhere" failed'
    r = srv.get('/')
    assert r.status == 200 and r.body == b'[]'
    wait_for(lambda: 'realpath() "%s/nowhere" failed (2: No such file or directory)' % srv.tmp in srv.error_log(),
             what='the crit line')


def test_body_variables_in_proxy_set_header(server):
    # the request is made once the body is read (proxy_request_buffering on): the body's variables are known
    srv = server(simple('''
        location /mem { proxy_pass http://127.0.0.1:{port2}; proxy_set_header X-B "[$request_body]"; }
        location /file { client_body_in_file_only clean; proxy_pass http://127.0.0.1:{port2};
                         proxy_set_header X-B "[$request_body_file]"; }''',
        http_extra='''
    server { listen 127.0.0.1:{port2}; location / { return 200 "$http_x_b"; } }'''))
    assert srv.get('/mem', method='POST', body='hello').body == b'[hello]'
    r = srv.get('/file', method='POST', body='hello')
    assert r.body.startswith(b'[/') and r.body != b'[]', r.body
