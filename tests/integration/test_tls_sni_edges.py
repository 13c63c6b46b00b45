"""TLS server selection edges: an SNI name with a trailing dot picks the same server as without it (and in any
case), a client offering only ALPN protocols the server does not speak is refused (no_application_protocol), and
ssl_reject_handshake on the default server refuses unknown names with unrecognized_name."""
import ssl

import pytest

from helpers.tls import client_ctx, https_get, make_cert, tls_connect


@pytest.fixture
def two(server, prefix):
    a = make_cert(prefix.tmp, 'a', 'a.test')
    b = make_cert(prefix.tmp, 'b', 'b.test')
    return server('''
http {
    server { listen 127.0.0.1:{port} ssl default_server; server_name a.test;
             ssl_certificate %s; ssl_certificate_key %s; location / { return 200 "a\\n"; } }
    server { listen 127.0.0.1:{port} ssl; server_name b.test;
             ssl_certificate %s; ssl_certificate_key %s; location / { return 200 "b\\n"; } }
    server { listen 127.0.0.1:{port2} ssl default_server; ssl_reject_handshake on; }
    server { listen 127.0.0.1:{port2} ssl; server_name b.test;
             ssl_certificate %s; ssl_certificate_key %s; location / { return 200 "b2\\n"; } }
}
''' % (a + b + b))


def peer_cn(s):
    return dict(x[0] for x in s.getpeercert(binary_form=False)['subject'])['commonName'] if s.getpeercert() else None


def test_trailing_dot_and_case_in_sni(two):
    for sni in ('b.test', 'b.test.', 'B.Test.'):
        st, _, body, _ = https_get(two.port, '/', host='b.test', sni=sni)
        assert st == 200 and body == b'b\n', sni


def test_unknown_alpn_only(two):
    # RFC 7301 3.2, as nginx: a client offering only protocols the server does not speak is refused
    with pytest.raises(ssl.SSLError) as e:
        tls_connect(two.port, sni='a.test', ctx=client_ctx(alpn=['spdy/1', 'foo']))
    assert 'NO APPLICATION PROTOCOL' in str(e.value).upper().replace('_', ' ')
    s = tls_connect(two.port, sni='a.test', ctx=client_ctx(alpn=['foo', 'http/1.1']))
    assert s.selected_alpn_protocol() == 'http/1.1'
    s.close()


def test_reject_handshake_for_unknown_names(two):
    with pytest.raises(ssl.SSLError) as e:
        tls_connect(two.port2, sni='nobody.test')
    assert 'UNRECOGNIZED_NAME' in str(e.value).upper()
    st, _, body, _ = https_get(two.port2, '/', host='b.test', sni='b.test.')
    assert st == 200 and body == b'b2\n'
