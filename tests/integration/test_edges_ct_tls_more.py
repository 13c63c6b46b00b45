"""More TLS edges (nginx's ngx_http_ssl_module): settings inherited from the http level, a CA file naming a CA
twice (asked for once), a server without a certificate chosen by SNI (the default server's certificate is sent,
the request is that server's), a protocol list OpenSSL cannot honour, -t errors for certificates without keys,
unknown variables and an empty responder URL, password files with CRLF lines and more than a page of text,
broken ClientHellos with ssl_early_data on, and a file that shrinks while it is being sent over TLS."""
import os
import re
import socket
import ssl
import time

import pytest

from conftest import IS_NGINX
from helpers.tls import (make_ca, make_cert, make_client_cert, client_ctx, tls_connect, read_response, https_get,
                         openssl, conf_with)


@pytest.fixture
def pair(prefix):
    return make_cert(prefix.tmp, 'good', 'localhost', kind='ec')


@pytest.mark.skipif(IS_NGINX, reason='nginx 1.22 (Debian 12) predates ssl_handshake_timeout')
def test_settings_inherited_from_http(server, prefix, pair):
    ca = make_ca(prefix.tmp, 'ca')
    alice = make_client_cert(prefix.tmp, 'alice', 'alice', ca, 3)
    s = server('''
http {
    ssl_handshake_timeout 30s;
    ssl_reject_handshake off;
    ssl_verify_client optional;
    ssl_client_certificate %s;
    ssl_certificate %s;
    ssl_certificate_key %s;
    server {
        listen 127.0.0.1:{port} ssl;
        location / { return 200 "$ssl_client_verify $ssl_client_s_dn\\n"; }
    }
}
''' % (ca[0], pair[0], pair[1]))
    st, _, body, _ = https_get(s.prefix.port)
    assert (st, body) == (200, b'NONE \n')
    ctx = client_ctx()
    ctx.load_cert_chain(*alice)
    st, _, body, _ = https_get(s.prefix.port, ctx=ctx)
    assert (st, body) == (200, b'SUCCESS CN=alice,O=Hayate Test\n')


def test_ca_named_twice_is_asked_for_once(server, prefix, pair):
    ca = make_ca(prefix.tmp, 'ca')
    other = make_ca(prefix.tmp, 'other')
    both = prefix.write('cas.pem', open(ca[0]).read() + open(other[0]).read() + open(ca[0]).read())
    s = server(conf_with(pair[0], pair[1], extra='ssl_verify_client optional; ssl_client_certificate %s;' % both))
    out = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-servername', 'localhost',
                  '-tls1_2', input=b'').stdout.decode()
    names = out.split('Acceptable client certificate CA names', 1)[1].split('---', 1)[0]
    assert names.count('CN = Test CA ca') == 1, names
    assert names.count('CN = Test CA other') == 1, names


def test_sni_server_without_a_certificate(server, prefix, pair):
    """A server on the TLS port with no ssl_certificate of its own: the default server's certificate serves the
    handshake, the request goes to the server its name chose."""
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "default $ssl_server_name\\n"; }
    }
    server {
        listen 127.0.0.1:{port} ssl;
        server_name bare.example;
        location / { return 200 "bare $ssl_server_name\\n"; }
    }
}
''' % pair)
    c = tls_connect(s.prefix.port, sni='bare.example')
    assert b'localhost' in c.getpeercert(binary_form=True)  # the default server's certificate
    c.sendall(b'GET / HTTP/1.1\r\nHost: bare.example\r\nConnection: close\r\n\r\n')
    st, _, body = read_response(c)
    c.close()
    assert (st, body) == (200, b'bare bare.example\n')


def test_sni_in_capitals_naming_another_server_is_421(server, prefix, pair):
    ca = make_ca(prefix.tmp, 'ca')
    other = make_cert(prefix.tmp, 'other', 'other.example', kind='ec')
    s = server('''
http {
    ssl_client_certificate %s;
    ssl_verify_client optional;
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "default\\n"; }
    }
    server {
        listen 127.0.0.1:{port} ssl;
        server_name other.example;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "other\\n"; }
    }
}
''' % (ca[0], pair[0], pair[1], other[0], other[1]))

    def ask(sni, host):
        r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-servername', sni, '-quiet',
                    input=('GET / HTTP/1.0\r\nHost: %s\r\n\r\n' % host).encode())
        return r.stdout.decode(errors='replace').split('\r\n', 1)[0]
    assert ' 421 ' in ask('OTHER.Example', 'localhost')
    assert ' 200 ' in ask('OTHER.Example', 'other.example')


@pytest.mark.hayate_only  # what nginx does with SSLv2 alone depends on its OpenSSL wrapper
def test_sslv2_alone_allows_no_handshake(server, prefix, pair):
    s = server(conf_with(pair[0], pair[1], extra='ssl_protocols SSLv2;'))
    s.ignore_log = r'SSL_do_handshake|no protocols available|unsupported protocol'
    for maxv in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        with pytest.raises((ssl.SSLError, OSError)):
            tls_connect(s.prefix.port, sni='localhost', ctx=client_ctx(maxv=maxv)).close()


def test_protocols_with_a_gap_keep_the_highest_run(server, prefix, pair):
    """"TLSv1 TLSv1.3": OpenSSL can only negotiate a contiguous range; the TLS 1.3 clients of today are served
    (nginx on Debian: the system's MinProtocol TLSv1.2 leaves TLSv1.3 alone), TLS 1.2 is not offered."""
    s = server(conf_with(pair[0], pair[1], extra='ssl_protocols TLSv1 TLSv1.3;'))
    s.ignore_log = r'SSL_do_handshake|unsupported protocol|no protocols available'
    c = tls_connect(s.prefix.port, sni='localhost')
    assert c.version() == 'TLSv1.3'
    c.close()
    with pytest.raises((ssl.SSLError, OSError)):
        tls_connect(s.prefix.port, sni='localhost',
                    ctx=client_ctx(minv=ssl.TLSVersion.TLSv1_2, maxv=ssl.TLSVersion.TLSv1_2)).close()


@pytest.mark.hayate_only  # file:line and the words
@pytest.mark.parametrize('extra,message', [
    ('ssl_certificate {tmp}/good.crt;', r'no "ssl_certificate_key" is defined for certificate'),
    ('ssl_certificate {tmp}/$nosuchvar.crt; ssl_certificate_key {tmp}/good.key;', r'unknown "nosuchvar" variable'),
    ('ssl_certificate {tmp}/good.crt; ssl_certificate_key {tmp}/$nosuchvar.key;', r'unknown "nosuchvar" variable'),
    ('ssl_certificate {tmp}/good.crt; ssl_certificate_key {tmp}/good.key; ssl_stapling_responder http://;',
     r'invalid URL prefix in OCSP responder "http://"'),
], ids=['no-key-at-all', 'unknown-var-cert', 'unknown-var-key', 'empty-responder'])
def test_rejected_at_t(prefix, run_cli, pair, extra, message):
    r = run_cli(['-t', '-c', prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        %s
    }
}
''' % extra)])
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] ' + message, r.err), r.err


def test_password_file_with_crlf_lines_longer_than_a_page(server, prefix):
    crt, key = make_cert(prefix.tmp, 'enc', 'localhost', kind='ec', password='s3cret')
    pw = prefix.write('pw', 'wrong\r\ns3cret\r\n' + ('x' * 70 + '\r\n') * 80)  # over 4 KiB: the rest is not read
    assert os.path.getsize(pw) > 4096
    s = server(conf_with(crt, key, extra='ssl_password_file %s;' % pw))
    assert https_get(s.prefix.port)[:3:2] == (200, b'ok\n')


def early_conf(pair):
    return conf_with(pair[0], pair[1], extra='ssl_early_data on; ssl_session_cache shared:E:1m;')


@pytest.mark.parametrize('hello', [b'\x16\x03\x01\x00\x10' + b'\xff' * 16, b'\x16\x03\x01'],
                         ids=['garbage-record', 'cut-short'])
def test_broken_client_hello_with_early_data_on(server, prefix, pair, hello):
    """With ssl_early_data on the handshake starts with SSL_read_early_data: a ClientHello that is not one, or
    that stops, ends that connection only."""
    s = server(early_conf(pair))
    s.ignore_log = r'SSL_do_handshake|SSL_read_early_data|handshak'
    c = socket.create_connection(('127.0.0.1', s.prefix.port), timeout=5)
    c.sendall(hello)
    if len(hello) < 5:
        c.shutdown(socket.SHUT_WR)
    c.settimeout(5)
    got = b''
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += d
    except ConnectionResetError:
        pass
    c.close()
    assert b'HTTP/' not in got  # no response: at most a TLS alert
    assert https_get(s.prefix.port)[0] == 200


@pytest.mark.hayate_only  # nginx also closes, with its own log line
def test_file_that_shrinks_while_sent_over_tls(server, prefix, pair):
    big = 24 << 20
    path = prefix.write('html/big.bin', b'\0' * big)
    s = server(conf_with(pair[0], pair[1]).replace('location / { return 200 "ok\\n"; }',
                                                   'location / { root %s/html; }' % prefix.tmp))
    s.ignore_log = r'pread|truncated|Input/output error|while sending'
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(10)
    raw.connect(('127.0.0.1', s.prefix.port))
    c = client_ctx().wrap_socket(raw, server_hostname='localhost')
    c.sendall(b'GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    head = b''
    while b'\r\n\r\n' not in head:
        head += c.recv(1024)
    assert head.startswith(b'HTTP/1.1 200') and b'Content-Length: %d' % big in head, head
    got = len(head.split(b'\r\n\r\n', 1)[1])
    os.truncate(path, 0)  # the server is blocked on our full window with most of the file still to send
    try:
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            got += len(d)
    except (ConnectionResetError, ssl.SSLError):
        pass
    c.close()
    assert got < big, got  # the connection ends early: what is left cannot be sent
    assert https_get(s.prefix.port, '/big.bin')[1].get('content-length') == '0'


def test_limit_rate_over_tls(server, prefix, pair):
    """limit_rate caps what the TLS transport writes per period: the whole file still arrives, intact."""
    data = bytes(range(256)) * 1024  # 256 KiB
    prefix.write('html/r.bin', data)
    s = server(conf_with(pair[0], pair[1]).replace(
        'location / { return 200 "ok\\n"; }',
        'location / { root %s/html; limit_rate 1m; limit_rate_after 64k; }' % prefix.tmp))
    st, h, body, _ = https_get(s.prefix.port, '/r.bin')
    assert st == 200 and body == data


def test_optional_no_ca_still_refuses_a_revoked_certificate(server, prefix, pair):
    """optional_no_ca lets only the "unknown issuer" errors through: a revoked certificate is 495; a client
    without SNI or a request without Host is checked as usual."""
    ca = make_ca(prefix.tmp, 'ca')
    alice = make_client_cert(prefix.tmp, 'alice', 'alice', ca, 31)
    bob = make_client_cert(prefix.tmp, 'bob', 'bob', ca, 32)
    from helpers.tls import make_crl
    crl = make_crl(prefix.tmp, ca, [bob[0]])
    s = server(conf_with(pair[0], pair[1], extra='ssl_verify_client optional_no_ca; ssl_client_certificate %s; '
                                                 'ssl_crl %s;' % (ca[0], crl)).replace(
        'location / { return 200 "ok\\n"; }', 'location / { return 200 "$ssl_client_verify\\n"; }'))

    def get(cert, sni='localhost', req=b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'):
        ctx = client_ctx()
        ctx.load_cert_chain(*cert)
        c = tls_connect(s.prefix.port, sni=sni, ctx=ctx)
        c.sendall(req)
        st, _, body = read_response(c)
        c.close()
        return st, body
    assert get(alice) == (200, b'SUCCESS\n')
    st, body = get(bob)
    assert st == 400 and b'The SSL certificate error' in body, (st, body)
    assert get(alice, sni=None) == (200, b'SUCCESS\n')
    assert get(alice, req=b'GET / HTTP/1.0\r\n\r\n') == (200, b'SUCCESS\n')
