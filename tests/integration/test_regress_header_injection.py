"""A decoded %0D%0A in the URI must not add header lines to the response when $uri is used in add_header or
in a redirect (nginx 1.22 sends them raw; hayate percent-encodes control characters in header values)."""
import socket

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        location /h/ { add_header X-U $uri; return 200 "ok\\n"; }
        location /q { return 302 /z$uri; }
    }
}
'''


def head_of(port, path):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(('GET %s HTTP/1.0\r\n\r\n' % path).encode())
    d = b''
    while True:
        c = s.recv(65536)
        if not c:
            break
        d += c
    s.close()
    return d.split(b'\r\n\r\n')[0].split(b'\r\n')


@pytest.mark.hayate_only
def test_crlf_in_uri_cannot_add_headers(server):
    s = server(CONF)
    lines = head_of(s.port, '/h/a%0d%0aX-Evil:%201')
    assert not any(l.startswith(b'X-Evil') for l in lines), lines
    assert b'X-U: /h/a%0D%0AX-Evil: 1' in lines, lines
    lines = head_of(s.port, '/q%0d%0aX-Evil:%201')
    assert not any(l.startswith(b'X-Evil') for l in lines), lines
    assert any(l.startswith(b'Location: ') and l.endswith(b'/z/q%0D%0AX-Evil: 1') for l in lines), lines
