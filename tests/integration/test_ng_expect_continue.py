"""Expect: 100-continue (RFC 9110 §10.1.1) on a request whose body is read for a proxied location: nginx sends
the interim "100 Continue" when the body is asked for, an empty one (Content-Length: 0) too, with the
expectation compared case-insensitively; an HTTP/1.0 client never gets one."""
import socket

import pytest

from conftest import simple

CONF = simple('''
        location / { proxy_pass http://127.0.0.1:{port}/local; }
        location /local { return 200 "local"; }
''')


def exchange(port, version, expect):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    try:
        s.sendall(('POST / HTTP/%s\r\nHost: localhost\r\nExpect: %s\r\nContent-Length: 0\r\n'
                   'Connection: close\r\n\r\n' % (version, expect)).encode())
        data = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    finally:
        s.close()


@pytest.mark.parametrize('expect', ['100-continue', '100-Continue'])
def test_continue_for_an_empty_proxied_body(server, expect):
    s = server(CONF)
    data = exchange(s.port, '1.1', expect)
    assert data.startswith(b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 '), data
    assert data.endswith(b'local'), data


def test_no_continue_for_http10(server):
    s = server(CONF)
    data = exchange(s.port, '1.0', '100-continue')
    assert data.startswith(b'HTTP/1.1 200 '), data
