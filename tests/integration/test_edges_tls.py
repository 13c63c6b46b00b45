"""Edges of the TLS transport (event/tls.c) beyond test_tls_*.py: lingering close over TLS (the server sends
close_notify before it stops writing, then drains what the client still sends), and handshakes that fail
(a ClientHello offering nothing the server accepts, a client that closes mid-handshake): the failure is logged at
info with OpenSSL's reason, never above, and the worker goes on serving."""
import re
import socket
import ssl
import time

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, client_ctx, https_get


@pytest.fixture(scope='module')
def cert(tmp_path_factory):
    d = str(tmp_path_factory.mktemp('edges-tls'))
    return make_cert(d, 'rsa', 'localhost')


def conf(cert, body='', extra=''):
    return '''
http {
    %s
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        root {html};
        %s
    }
}
''' % (extra, cert[0], cert[1], body)


def strict_ctx():
    ctx = client_ctx()
    ctx.options &= ~getattr(ssl, 'OP_IGNORE_UNEXPECTED_EOF', 0x80)  # see a truncation as an error
    return ctx


def read_to_eof(c):
    data = b''
    while True:
        chunk = c.recv(65536)  # SSLEOFError when the server closes without close_notify
        if not chunk:
            return data
        data += chunk


@pytest.mark.hayate_only  # nginx 1.22 ends this connection without close_notify (a truncation for a strict client)
@pytest.mark.parametrize('linger', ['on', 'always'])
def test_lingering_close_over_tls_sends_close_notify(server, cert, linger):
    """413 for a body over client_max_body_size while the body is still coming: the response, close_notify, and
    the rest of the body is read and dropped (no reset): the client reads the whole response and a clean EOF."""
    s = server(conf(cert, 'location / { client_max_body_size 10; return 200 "no\\n"; }',
                    extra='lingering_close %s; lingering_timeout 2s;' % linger))
    raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    c = strict_ctx().wrap_socket(raw, server_hostname='localhost', suppress_ragged_eofs=False)
    c.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + b'a' * 20000)
    data = read_to_eof(c)
    assert data.startswith(b'HTTP/1.1 413 '), data[:200]
    assert b'\r\nConnection: close\r\n' in data
    # the server shut its side after close_notify; what we still send is drained, not answered with a reset
    try:
        c.sendall(b'b' * 20000)
    except (ssl.SSLError, OSError):
        pass  # the server may already be done lingering
    c.close()
    assert s.get('/').status == 400  # plain HTTP to the TLS port: still serving (497 as a 400)


@pytest.mark.hayate_only  # nginx logs these at info too, with its own wording
def test_refused_protocol_version_is_logged_at_info(server, cert):
    s = server(conf(cert, 'location / { return 200 "ok\\n"; }', extra='ssl_protocols TLSv1.2;'))
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_1, minv=ssl.TLSVersion.TLSv1)
    ctx.set_ciphers('ALL:@SECLEVEL=0')
    raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    with pytest.raises((ssl.SSLError, OSError)):
        ctx.wrap_socket(raw, server_hostname='localhost')
    raw.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and 'SSL_do_handshake() failed' not in s.error_log():
        time.sleep(0.02)
    log = s.error_log()
    m = re.search(r'\[info\] \d+#\d+: \*\d+ SSL_do_handshake\(\) failed \(SSL: ([^)]*)\)', log)
    assert m, log
    assert 'version' in m.group(1) or 'protocol' in m.group(1), m.group(1)
    st, _, body, _ = https_get(s.port, '/')
    assert (st, body) == (200, b'ok\n')


def test_client_closing_mid_handshake_is_not_an_error(server, cert):
    """A ClientHello and then the connection closes: no alert/crit line (the fixture checks), still serving."""
    s = server(conf(cert, 'location / { return 200 "ok\\n"; }'))
    ctx = client_ctx()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname='localhost')
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    hello = out.read()
    for cut in (len(hello), len(hello) // 2, 5):
        raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
        raw.sendall(hello[:cut])
        raw.shutdown(socket.SHUT_WR)
        try:
            while raw.recv(65536):
                pass
        except OSError:
            pass
        raw.close()
    st, _, body, _ = https_get(s.port, '/')
    assert (st, body) == (200, b'ok\n')
