"""`return 408;` and `return 499;` end the request as nginx's ngx_http_finalize_request does for those codes: the
connection is closed without a response (no error_page is consulted), and the access log records the code with 0
bytes. With a text the response is sent as for any other code, and `error_page ... =408` answers with 408."""
import socket
import time

import pytest

CONF = '''
http {
    log_format f "$request $status $body_bytes_sent";
    access_log logs/codes.log f;
    server {
        listen 127.0.0.1:{port};
        location = /408 { return 408; }
        location = /499 { return 499; }
        location = /408text { return 408 "text"; }
        location = /408page { error_page 408 /x; return 408; }
        location = /to408 { error_page 404 =408 /x; }
        location = /x { return 200 "x"; }
    }
}
'''


def exchange(port, path):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n')
    data = b''
    while True:  # the server must close: a keep-alive request that got an answer would wait here until timeout
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            return data, True
        data += chunk
        if b'\r\n\r\n' in data and path != '/408' and path != '/499':
            break
    s.close()
    return data, False


def log_lines(srv, n):
    deadline = time.monotonic() + 5
    lines = []
    while time.monotonic() < deadline:
        try:
            with open(srv.prefix.path('logs/codes.log')) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        if len(lines) >= n:
            break
        time.sleep(0.05)
    return lines


@pytest.mark.parametrize('code', [408, 499])
def test_bare_return_closes_without_response(server, code):
    srv = server(CONF)
    data, closed = exchange(srv.port, '/%d' % code)
    assert data == b'' and closed
    assert log_lines(srv, 1)[-1] == 'GET /%d HTTP/1.1 %d 0' % (code, code)


def test_error_page_not_consulted(server):
    srv = server(CONF)
    data, closed = exchange(srv.port, '/408page')
    assert data == b'' and closed
    assert log_lines(srv, 1)[-1] == 'GET /408page HTTP/1.1 408 0'


def test_with_text_or_by_error_page_it_answers(server):
    srv = server(CONF)
    data, _ = exchange(srv.port, '/408text')
    assert data.startswith(b'HTTP/1.1 408 ')
    data, _ = exchange(srv.port, '/to408')
    assert data.startswith(b'HTTP/1.1 408 ')
    assert log_lines(srv, 2)[-2:] == ['GET /408text HTTP/1.1 408 4', 'GET /to408 HTTP/1.1 408 1']


def test_body_timeout_closes_without_response(server):
    # the same finalize path: a body that stops coming (client_body_timeout) ends the request with 408, unanswered
    srv = server(CONF.replace('location = /x', 'client_body_timeout 1s;\n        location /up { proxy_pass http://127.0.0.1:1; }\n        location = /x'))
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
    s.sendall(b'POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc')
    data = b''
    while True:
        chunk = s.recv(65536)  # a timeout here (nothing, but not closed) fails the test
        if not chunk:
            break
        data += chunk
    s.close()
    assert data == b''
    assert log_lines(srv, 1)[-1] == 'POST /up HTTP/1.1 408 0'
