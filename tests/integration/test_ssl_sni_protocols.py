"""ssl_protocols of the server the SNI name selects decide the protocol version (nginx 1.29.2+): OpenSSL picks
the version before its servername callback, so the name is looked at in the ClientHello callback already.
Debian's nginx 1.22 keeps the default server's protocols: hayate_only."""
import ssl

import pytest

from helpers.tls import make_cert, tls_connect

CONF = '''
http {
    ssl_certificate %s;
    ssl_certificate_key %s;
    server {
        listen 127.0.0.1:{port} ssl default_server;
        listen 127.0.0.1:{port2} ssl;
        server_name one;
        ssl_protocols TLSv1.2;
        location / { return 200 "$ssl_protocol\\n"; }
    }
    server {
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{port2} default_server;
        server_name two;
        ssl_protocols TLSv1.3;
        location / { return 200 "$ssl_protocol\\n"; }
    }
}
'''


def version(port, sni):
    c = tls_connect(port, sni=sni)
    v = c.version()
    c.close()
    return v


@pytest.mark.hayate_only  # nginx 1.29.2+
def test_sni_server_protocols(server, prefix):
    crt, key = make_cert(prefix.tmp, 'p', 'localhost', kind='ec')
    s = server(CONF % (crt, key))
    assert version(s.prefix.port, 'one') == 'TLSv1.2'
    assert version(s.prefix.port2, 'two') == 'TLSv1.3'
    # the name picks another server than the address's default one: its protocols apply
    assert version(s.prefix.port, 'two') == 'TLSv1.3'
    assert version(s.prefix.port2, 'one') == 'TLSv1.2'
    # no name, an unknown name: the default server's
    assert version(s.prefix.port2, None) == 'TLSv1.3'
    assert version(s.prefix.port, 'nosuch') == 'TLSv1.2'
