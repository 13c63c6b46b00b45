"""TLS client certificates: ssl_verify_client on|optional|optional_no_ca, ssl_client_certificate,
ssl_trusted_certificate, ssl_verify_depth, 495/496 (error_page works), $ssl_client_* variables."""
import ssl

import pytest

from helpers.tls import make_cert, make_ca, make_client_cert, make_crl, client_ctx, tls_connect, read_response, openssl

VARS = ('location / { return 200 "$ssl_client_verify|$ssl_client_s_dn|$ssl_client_i_dn|$ssl_client_serial|'
        '$ssl_client_fingerprint\\n"; }\n'
        '        location /pem { return 200 "$ssl_client_escaped_cert"; }')


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp('pki'))
    p = {'dir': d}
    p['server'] = make_cert(d, 'server', 'localhost', kind='ec')
    p['ca'] = make_ca(d, 'ca')
    p['other_ca'] = make_ca(d, 'other')
    p['alice'] = make_client_cert(d, 'alice', 'alice', p['ca'], 4660)
    p['mallory'] = make_client_cert(d, 'mallory', 'mallory', p['other_ca'], 7)
    p['bob'] = make_client_cert(d, 'bob', 'bob', p['ca'], 99)
    p['crl'] = make_crl(d, p['ca'], [p['bob'][0]])
    return p


def conf(pki, verify, extra=''):
    return '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_client_certificate %s;
        ssl_verify_client %s;
        ssl_protocols TLSv1.2 TLSv1.3;
        %s
        %s
    }
}
''' % (pki['server'][0], pki['server'][1], pki['ca'][0], verify, extra, VARS)


def get(port, cert=None, path='/', tls12=False):
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2 if tls12 else None)
    if cert:
        ctx.load_cert_chain(cert[0], cert[1])
    c = tls_connect(port, sni='localhost', ctx=ctx)
    c.sendall(('GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % path).encode())
    st, h, body = read_response(c)
    c.close()
    return st, body.decode()


def test_verify_on(server, pki):
    s = server(conf(pki, 'on'))
    for tls12 in (False, True):
        st, body = get(s.prefix.port, pki['alice'], tls12=tls12)
        assert st == 200
        f = body.strip().split('|')
        assert f[0] == 'SUCCESS'
        assert f[1] == 'CN=alice,O=Hayate Test'
        assert f[2] == 'CN=Test CA ca'
        assert f[3] == '1234'  # 4660
        r = openssl('x509', '-in', pki['alice'][0], '-noout', '-fingerprint', '-sha1')
        assert f[4] == r.stdout.decode().split('=', 1)[1].strip().replace(':', '').lower()
    st, body = get(s.prefix.port, None)
    assert st == 400 and 'No required SSL certificate was sent' in body
    st, body = get(s.prefix.port, pki['mallory'])
    assert st == 400 and 'The SSL certificate error' in body
    log = s.error_log()
    assert 'client sent no required SSL certificate' in log and 'client SSL certificate verify error' in log
    st, body = get(s.prefix.port, pki['alice'], path='/pem')
    assert body.startswith('-----BEGIN%20CERTIFICATE-----%0A')


def test_verify_optional_and_error_page(server, pki):
    s = server(conf(pki, 'optional', 'error_page 495 =403 /bad; location = /bad { return 403 "bad cert\\n"; }'))
    st, body = get(s.prefix.port, None)
    assert st == 200 and body.startswith('NONE|')
    st, body = get(s.prefix.port, pki['alice'])
    assert st == 200 and body.startswith('SUCCESS|')
    st, body = get(s.prefix.port, pki['mallory'])
    assert st == 403 and body == 'bad cert\n'


def test_verify_optional_no_ca(server, pki):
    s = server(conf(pki, 'optional_no_ca'))
    st, body = get(s.prefix.port, pki['mallory'])
    assert st == 200 and body.startswith('FAILED:') and '|CN=mallory,O=Hayate Test|' in body


def test_crl(server, pki):
    s = server(conf(pki, 'on', 'ssl_crl %s;' % pki['crl']))
    st, body = get(s.prefix.port, pki['alice'])
    assert st == 200 and body.startswith('SUCCESS|')
    st, body = get(s.prefix.port, pki['bob'])
    assert st == 400 and 'The SSL certificate error' in body
    assert 'certificate revoked' in s.error_log()


@pytest.mark.hayate_only  # nginx prints this without file:line
def test_verify_without_ca_fails_t(prefix, run_cli, pki):
    text = conf(pki, 'on').replace('ssl_client_certificate %s;' % pki['ca'][0], '')
    path = prefix.conf(text)
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'no ssl_client_certificate for ssl_verify_client' in r.err and path + ':' in r.err
