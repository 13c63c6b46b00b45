"""A pooled upstream connection is reused only when the request went out whole (nginx's request_body_sent): a
client that announces a body, sends none and closes leaves the streamed request unfinished, and the upstream may
have answered already (a static file does not wait for a GET's body). Put back in the pool, that connection would
carry the next request as the rest of the first one's body — the backend then answers 400."""
import socket

from conftest import simple


def test_connection_with_an_unfinished_body_is_not_reused(server):
    srv = server(simple('''
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering off;
        }''', http_extra='''
    upstream backend { server 127.0.0.1:{port2}; keepalive 1; }
    server { listen 127.0.0.1:{port2}; root {html}; }'''), files={'html/t1': 'SEE-THIS'})
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
    s.sendall(b'GET /t1 HTTP/1.0\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n')
    first = b''
    while True:  # the answer comes before the body: the client never sends it
        chunk = s.recv(65536)
        if not chunk:
            break
        first += chunk
    s.close()
    assert first.startswith(b'HTTP/1.1 200') and first.endswith(b'SEE-THIS'), first
    for _ in range(3):
        r = srv.get('/t1')
        assert r.status == 200 and r.body == b'SEE-THIS', (r.status, r.body)
