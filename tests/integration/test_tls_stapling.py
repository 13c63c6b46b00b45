"""OCSP stapling: from a file (ssl_stapling on + ssl_stapling_file: works offline) and from the certificate's
responder (a real `openssl ocsp` on loopback), sent to clients that ask."""
import time

import pytest

from conftest import IS_NGINX, free_port
from helpers.tls import make_ca, make_client_cert, make_ocsp_response, ocsp_responder, openssl


def status_of(port):
    """`openssl s_client -status`'s OCSP part: 'good', 'revoked', ... or None when no response was stapled."""
    out = openssl('s_client', '-connect', '127.0.0.1:%d' % port, '-status', '-servername', 'localhost',
                  input=b'').stdout.decode()
    if 'OCSP Response Status: successful' not in out:
        assert 'no response sent' in out, out
        return None
    return out.split('Cert Status: ', 1)[1].split()[0]


def wait_status(port, want='good', deadline=15.0):
    """The first handshake starts the query (it gets no staple, as in nginx): ask until one arrives."""
    end = time.monotonic() + deadline
    got = None
    while time.monotonic() < end:
        got = status_of(port)
        if got == want:
            return got
        time.sleep(0.1)
    return got


def wait_log(srv, needle, deadline=15.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if needle in srv.error_log():
            return True
        time.sleep(0.1)
    return False


def test_stapling_file(server, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 321)  # a leaf signed by ca
    resp = make_ocsp_response(prefix.tmp, ca, crt)
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
        ssl_stapling_file %s;
        location / { return 200 "ok\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "ok\\n"; }
    }
}
''' % (crt, key, resp, crt, key))
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-status', '-servername', 'localhost',
                input=b'')
    out = r.stdout.decode()
    assert 'OCSP Response Status: successful' in out and 'Cert Status: good' in out, out
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port2, '-status', input=b'')
    assert 'OCSP response: no response sent' in r.stdout.decode()


def test_stapling_without_responder_url_is_a_warning(run_cli, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 321)  # no AIA extension
    with open(crt, 'a') as f, open(ca[0]) as c:
        f.write(c.read())  # the issuer is in the chain
    path = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
        ssl_stapling_verify on;
    }
}
''' % (crt, key))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r.err
    assert '[warn]' in r.err and '"ssl_stapling" ignored, no OCSP responder URL in the certificate "%s"' % crt in r.err


def test_stapling_without_issuer_is_a_warning(run_cli, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 321, ocsp_url='http://127.0.0.1:9/')
    path = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
    }
}
''' % (crt, key))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r.err
    assert '"ssl_stapling" ignored, issuer certificate not found for certificate "%s"' % crt in r.err


RESPONDER_CONF = '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
        %s
        location / { return 200 "ok\\n"; }
    }
}
'''


@pytest.fixture
def pki(prefix):
    """A CA, a responder port, and a server certificate naming that responder (issuer in the chain file)."""
    ca = make_ca(prefix.tmp, 'ca')
    port = free_port()
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 4242, ocsp_url='http://127.0.0.1:%d/' % port)
    chain = prefix.write('srv-chain.crt', open(crt).read() + open(ca[0]).read())
    return ca, port, crt, chain, key


def test_stapling_from_the_certificates_responder(server, prefix, pki):
    ca, port, crt, chain, key = pki
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert wait_status(s.prefix.port) == 'good'
        assert status_of(s.prefix.port) == 'good'  # cached: every later client gets it
    finally:
        resp.kill()
        resp.wait()
    assert status_of(s.prefix.port) == 'good'  # still valid with the responder gone


def test_responder_head_with_bare_lf(server, prefix, pki):
    ca, port, crt, chain, key = pki
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port, lf_only=True)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()


def test_stapling_verify_against_trusted_certificate(server, prefix, pki):
    ca, port, crt, chain, key = pki
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port)
    try:
        # the issuer comes from ssl_trusted_certificate here (the certificate file has no chain)
        s = server(RESPONDER_CONF % (crt, key, 'ssl_stapling_verify on; ssl_trusted_certificate %s;' % ca[0]))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()


def test_stapling_verify_refuses_a_foreign_signer(server, prefix, pki):
    ca, port, crt, chain, key = pki
    rogue = make_ca(prefix.tmp, 'rogue')
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port, signer=rogue)
    try:
        s = server(RESPONDER_CONF % (crt, key, 'ssl_stapling_verify on; ssl_trusted_certificate %s;' % ca[0]))
        assert status_of(s.prefix.port) is None  # starts the query
        assert wait_log(s, 'OCSP_basic_verify() failed'), s.error_log()
        assert status_of(s.prefix.port) is None
    finally:
        resp.kill()
        resp.wait()


def test_without_verify_a_foreign_signer_is_stapled(server, prefix, pki):
    ca, port, crt, chain, key = pki
    rogue = make_ca(prefix.tmp, 'rogue')
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port, signer=rogue)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))  # ssl_stapling_verify off: the client checks
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()


def test_revoked_status_is_not_stapled(server, prefix, pki):
    ca, port, crt, chain, key = pki
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'R')], port)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert status_of(s.prefix.port) is None
        assert wait_log(s, 'certificate status "revoked" in the OCSP response'), s.error_log()
        assert status_of(s.prefix.port) is None
        line = [l for l in s.error_log().splitlines() if 'revoked' in l][0]
        assert '[error]' in line and 'while requesting certificate status, responder: 127.0.0.1' in line
    finally:
        resp.kill()
        resp.wait()


def test_unreachable_responder_is_logged_and_served(server, prefix, pki):
    ca, port, crt, chain, key = pki  # nothing listens on port
    s = server(RESPONDER_CONF % (chain, key, ''))
    assert status_of(s.prefix.port) is None
    assert wait_log(s, '(111: Connection refused) while requesting certificate status'), \
        s.error_log()
    assert status_of(s.prefix.port) is None  # no retry before 5 minutes, no crash, still serving


def test_stapling_responder_overrides_the_certificate(server, prefix, pki):
    ca, port, crt, chain, key = pki
    other_port = free_port()
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], other_port)
    try:
        s = server(RESPONDER_CONF % (chain, key, 'ssl_stapling_responder http://127.0.0.1:%d/;' % other_port))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()


@pytest.mark.hayate_only
def test_bad_stapling_file_fails_t(run_cli, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 321)
    bad = prefix.write('bad.der', b'\x30\x03junk')
    path = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
        ssl_stapling_file %s;
    }
}
''' % (crt, key, bad))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'd2i_OCSP_RESPONSE_bio' in r.err and path + ':' in r.err
