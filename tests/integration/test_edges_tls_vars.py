"""TLS variables as openssl s_client shapes the handshake (nginx's ngx_http_ssl_module docs, "Embedded
Variables"): $ssl_curves lists the client's groups and $ssl_curve the chosen one, $ssl_ciphers the client's
suites, $ssl_alpn_protocol the negotiated protocol (empty without ALPN), $ssl_session_id in lower-case hex."""
import re

import pytest

from helpers.tls import make_cert, openssl


@pytest.fixture
def srv(server, prefix):
    crt, key = make_cert(prefix.tmp, 'ec', 'localhost', kind='ec')
    return server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:S:1m;
        ssl_session_tickets off;
        location / {
            return 200 "curve=$ssl_curve curves=$ssl_curves alpn=[$ssl_alpn_protocol] id=$ssl_session_id ciphers=$ssl_ciphers\\n";
        }
    }
}
''' % (crt, key))


def fetch(port, *args):
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % port, '-servername', 'localhost', '-quiet', *args,
                input=b'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n')
    out = r.stdout.decode(errors='replace')
    m = re.search(r'curve=(\S*) curves=(\S*) alpn=\[(.*?)\] id=(\S*) ciphers=(\S*)', out)
    assert m, (out, r.stderr)
    return m.groups()


def test_groups_and_alpn(srv):
    curve, curves, alpn, sid, _ = fetch(srv.port, '-groups', 'X25519:prime256v1:ffdhe2048', '-alpn', 'http/1.1')
    assert curve == 'X25519'
    assert curves == 'X25519:prime256v1:ffdhe2048'
    assert alpn == 'http/1.1'


def test_tls12_ciphers_and_session_id(srv):
    curve, _, alpn, sid, ciphers = fetch(srv.port, '-tls1_2', '-groups', 'prime256v1',
                                         '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384')
    assert curve == 'prime256v1' and alpn == ''
    assert re.fullmatch('[0-9a-f]{64}', sid), sid
    assert ciphers.split(':')[:2] == ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384'], ciphers
