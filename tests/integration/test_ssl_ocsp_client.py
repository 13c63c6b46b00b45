"""ssl_ocsp (ngx_http_ssl_module): the client certificate's status is asked of its OCSP responder (the
certificate's AIA URL, or ssl_ocsp_responder) after the handshake; revoked is answered 400 (nginx's 495 page)
with $ssl_client_verify "FAILED:certificate revoked", an unreachable responder "FAILED:certificate status request
failed"; ssl_ocsp_cache keeps a status until its nextUpdate. Runs against Debian's nginx too (1.19.0+)."""
import os

import pytest

from helpers.tls import make_cert, make_ca, make_client_cert, ocsp_responder, client_ctx, https_get

CONF = '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %(crt)s;
        ssl_certificate_key %(key)s;
        ssl_verify_client on;
        ssl_client_certificate %(ca)s;
        ssl_ocsp on;
        %(extra)s
        add_header X-Verify $ssl_client_verify always;
        location / { return 200 "ok\\n"; }
    }
}
'''


@pytest.fixture
def pki(prefix):
    d = prefix.tmp
    ca = make_ca(d)
    url = 'http://127.0.0.1:%d' % prefix.port3
    good = make_client_cert(d, 'good', 'good', ca, 4001, ocsp_url=url)
    bad = make_client_cert(d, 'bad', 'bad', ca, 4002, ocsp_url=url)
    crt, key = make_cert(d, 'srv', 'localhost', kind='ec')
    resp = ocsp_responder(d, ca, [(good[0], 'V'), (bad[0], 'R')], prefix.port3)
    yield {'ca': ca, 'good': good, 'bad': bad, 'crt': crt, 'key': key, 'responder': resp}
    resp.kill()
    resp.wait()


def get(port, cert):
    ctx = client_ctx()
    ctx.load_cert_chain(cert[0], cert[1])
    st, h, body, _ = https_get(port, '/', ctx=ctx)
    return st, h.get('x-verify')


def conf(p, extra=''):
    return CONF % {'crt': p['crt'], 'key': p['key'], 'ca': p['ca'][0], 'extra': extra}


def test_good_and_revoked(server, pki):
    s = server(conf(pki))
    assert get(s.prefix.port, pki['good']) == (200, 'SUCCESS')
    assert get(s.prefix.port, pki['bad']) == (400, 'FAILED:certificate revoked')


def test_unreachable_responder_fails(server, pki, prefix):
    from conftest import free_port
    s = server(conf(pki, 'ssl_ocsp_responder http://127.0.0.1:%d;' % free_port()))
    assert get(s.prefix.port, pki['good']) == (400, 'FAILED:certificate status request failed')


def test_ocsp_cache_keeps_the_status(server, pki):
    s = server(conf(pki, 'ssl_ocsp_cache shared:OCSP:1m;'))
    assert get(s.prefix.port, pki['good']) == (200, 'SUCCESS')
    pki['responder'].kill()
    pki['responder'].wait()
    # the responder is gone: the cached status answers
    assert get(s.prefix.port, pki['good']) == (200, 'SUCCESS')


def test_without_cache_each_connection_asks(server, pki):
    s = server(conf(pki))
    assert get(s.prefix.port, pki['good']) == (200, 'SUCCESS')
    pki['responder'].kill()
    pki['responder'].wait()
    assert get(s.prefix.port, pki['good']) == (400, 'FAILED:certificate status request failed')
