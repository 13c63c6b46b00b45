"""TLS client certificates: ssl_verify_client on|optional|optional_no_ca, ssl_client_certificate,
ssl_trusted_certificate, ssl_verify_depth, 495/496 (error_page works), $ssl_client_* variables."""
import calendar
import ssl
import time

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


def test_client_cert_pem_forms_and_handshake_lists(server, pki):
    """$ssl_client_cert (each line after the first starts with a tab, no last newline), $ssl_client_raw_cert
    (the PEM as is), the client's offered lists $ssl_ciphers and $ssl_curves, and $ssl_session_id."""
    s = server(conf(pki, 'optional',
                    'ssl_session_tickets off; ssl_session_cache shared:S:1m;\n'  # a session id, not a ticket
                    '        location /cert { return 200 "[$ssl_client_cert]"; }\n'
                    '        location /raw { return 200 "[$ssl_client_raw_cert]"; }\n'
                    '        location /lists { return 200 "$ssl_ciphers|$ssl_curves|$ssl_session_id|'
                    '$ssl_early_data|$ssl_session_reused"; }'))
    pem = open(pki['alice'][0]).read()
    assert pem.endswith('\n')
    st, body = get(s.prefix.port, pki['alice'], path='/raw')
    assert (st, body) == (200, '[' + pem + ']')
    st, body = get(s.prefix.port, pki['alice'], path='/cert')
    assert (st, body) == (200, '[' + pem.rstrip('\n').replace('\n', '\n\t') + ']')
    st, body = get(s.prefix.port, None, path='/cert')  # no certificate: empty
    assert (st, body) == (200, '[]')
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2, ciphers='ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305')
    c = tls_connect(s.prefix.port, sni='localhost', ctx=ctx)
    c.sendall(b'GET /lists HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, h, body = read_response(c)
    sess = c.session
    c.close()
    f = body.decode().split('|')
    assert st == 200 and f[0] == 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305', f
    assert f[1] == CURVES, f
    assert f[2] == sess.id.hex() and len(f[2]) == 64, (f, sess.id)  # lower case, as nginx
    assert f[3:] == ['', '.'], f


# the elliptic curves a default OpenSSL 3 client offers up to TLS 1.2, by nginx's names (OBJ_nid2sn)
CURVES = 'X25519:prime256v1:X448:secp521r1:secp384r1'


def test_host_naming_another_server_than_sni_is_421(server, pki):
    """With client certificates verified, a request whose Host names another server than the SNI name that
    chose the verification settings is refused with 421 (nginx's "client attempted to request the server name
    different from the one that was negotiated")."""
    text = conf(pki, 'optional').replace('''    }
}''', '''    }
    server {
        listen 127.0.0.1:{port} ssl;
        server_name other.test;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_client_certificate %s;
        ssl_verify_client optional;
        location / { return 200 "other\\n"; }
    }
}''' % (pki['server'][0], pki['server'][1], pki['ca'][0]))
    s = server(text)
    c = tls_connect(s.prefix.port, sni='localhost', ctx=client_ctx())
    c.sendall(b'GET / HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n')
    st, h, body = read_response(c)
    c.close()
    assert st == 421, (st, body)
    assert 'client attempted to request the server name different from the one that was negotiated' in \
        s.error_log()
    c = tls_connect(s.prefix.port, sni='other.test', ctx=client_ctx())
    c.sendall(b'GET / HTTP/1.1\r\nHost: OTHER.test\r\nConnection: close\r\n\r\n')
    st, h, body = read_response(c)
    c.close()
    assert (st, body) == (200, b'other\n')
    # the SNI name and Host differ, but both lead to the same server: served
    c = tls_connect(s.prefix.port, sni='nosuch.test', ctx=client_ctx())
    c.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, h, body = read_response(c)
    c.close()
    assert st == 200 and body.startswith(b'NONE|'), (st, body)


def test_client_cert_legacy_names_and_validity(server, pki):
    """$ssl_client_s_dn_legacy/$ssl_client_i_dn_legacy (OpenSSL's one-line form), $ssl_client_v_start and
    $ssl_client_v_end (as `openssl x509 -startdate/-enddate` print them), $ssl_client_v_remain (whole days)."""
    s = server(conf(pki, 'optional',
                    'location /v { return 200 "$ssl_client_s_dn_legacy|$ssl_client_i_dn_legacy|'
                    '$ssl_client_v_start|$ssl_client_v_end|$ssl_client_v_remain"; }'))
    t0 = int(time.time())
    st, body = get(s.prefix.port, pki['alice'], path='/v')
    t1 = int(time.time()) + 1
    f = body.split('|')
    assert st == 200 and f[0] == '/O=Hayate Test/CN=alice', f
    assert f[1] == '/CN=Test CA ca', f
    start = openssl('x509', '-in', pki['alice'][0], '-noout', '-startdate').stdout.decode().strip()
    end = openssl('x509', '-in', pki['alice'][0], '-noout', '-enddate').stdout.decode().strip()
    assert 'notBefore=' + f[2] == start and 'notAfter=' + f[3] == end, (f, start, end)
    # whole days left at the second the server looked (the certificate was made with -days 2)
    end_s = calendar.timegm(time.strptime(end.split('=', 1)[1], '%b %d %H:%M:%S %Y GMT'))
    assert int(f[4]) in range((end_s - t1) // 86400, (end_s - t0) // 86400 + 1), (f, end_s, t0, t1)
    assert int(f[4]) in (1, 2), f
    st, body = get(s.prefix.port, None, path='/v')
    assert (st, body) == (200, '||||')


@pytest.mark.hayate_only  # nginx 1.22 refuses such a file (SSL_load_client_CA_file); newer nginx reads it
def test_client_ca_file_in_trusted_certificate_form(server, pki, tmp_path):
    """A CA written by `openssl x509 -addtrust clientAuth -trustout` ("BEGIN TRUSTED CERTIFICATE", which
    SSL_load_client_CA_file refuses) names the CA to clients and verifies them (nginx-tests ssl_certificate_aux.t)."""
    aux = str(tmp_path / 'ca-aux.crt')
    r = openssl('x509', '-in', pki['ca'][0], '-addtrust', 'clientAuth', '-trustout', '-out', aux)
    assert r.returncode == 0 and 'TRUSTED CERTIFICATE' in open(aux).read(), r.stderr
    text = conf(pki, 'optional').replace('ssl_client_certificate %s;' % pki['ca'][0], 'ssl_client_certificate %s;' % aux)
    s = server(text)
    st, body = get(s.prefix.port, pki['alice'])
    assert st == 200 and 'SUCCESS' in body, body
    st, body = get(s.prefix.port, pki['mallory'])  # another CA's client
    assert 'SUCCESS' not in body, body
