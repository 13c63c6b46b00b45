"""TLS settings edges (nginx's ngx_http_ssl_module docs): settings written at the http level reach a server that
does not repeat them, ssl_dhparam enables DHE suites, ssl_password_file tries each password in turn, an SNI name
with a trailing dot selects the server, and the values rejected at -t."""
import os
import ssl

import pytest

from helpers.tls import make_cert, https_get, client_ctx, tls_connect, cert_der, openssl
from helpers.conf_t import fails_at


def test_http_level_settings_are_inherited(server, prefix):
    crt, key = make_cert(prefix.tmp, 'ec', 'localhost', kind='ec')
    s = server('''
http {
    ssl_certificate %s;
    ssl_certificate_key %s;
    ssl_protocols TLSv1.2;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384;
    ssl_prefer_server_ciphers on;
    ssl_ecdh_curve secp384r1;
    ssl_buffer_size 4k;
    ssl_session_timeout 10m;
    ssl_session_tickets off;
    ssl_verify_depth 2;
    ssl_stapling off;
    ssl_stapling_verify off;
    ssl_early_data off;
    server {
        listen 127.0.0.1:{port} ssl;
        location / { return 200 "$ssl_protocol $ssl_cipher $ssl_curve"; }
    }
}
''' % (crt, key))
    # the client prefers AES256; the server's order wins
    ctx = client_ctx(ciphers='ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256')
    st, _, body, _ = https_get(s.port, ctx=ctx)
    assert (st, body) == (200, b'TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256 secp384r1')
    with pytest.raises(ssl.SSLError):
        https_get(s.port, ctx=client_ctx(minv=ssl.TLSVersion.TLSv1_3))


def test_dhparam_enables_dhe(server, prefix):
    crt, key = make_cert(prefix.tmp, 'rsa', 'localhost', kind='rsa')
    dh = os.path.join(prefix.tmp, 'dh.pem')
    r = openssl('genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'group:ffdhe2048', '-out', dh)
    assert r.returncode == 0, r.stderr
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_dhparam %s;
        ssl_protocols TLSv1.2;
        ssl_ciphers DHE-RSA-AES128-GCM-SHA256;
        location / { return 200 "$ssl_cipher"; }
    }
}
''' % (crt, key, dh))
    st, _, body, _ = https_get(s.port, ctx=client_ctx(ciphers='DHE-RSA-AES128-GCM-SHA256'))
    assert (st, body) == (200, b'DHE-RSA-AES128-GCM-SHA256')


def test_password_file_tries_each_line(server, prefix):
    crt, key = make_cert(prefix.tmp, 'enc', 'localhost', kind='ec', password='right-one')
    prefix.write('conf/pw', 'wrong-one\r\n\r\nanother\nright-one\n')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_password_file %s;
        location / { return 200 "ok"; }
    }
}
''' % (crt, key, prefix.tmp + '/conf/pw'))
    assert https_get(s.port)[2] == b'ok'


def test_password_file_without_the_right_password(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'enc', 'localhost', kind='ec', password='right-one')
    prefix.write('conf/pw', 'wrong-one\nwrong-two\n')
    path = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port} ssl;\n        ssl_certificate %s;\n'
                       '        ssl_certificate_key %s;\n        ssl_password_file %s;\n    }\n}\n'
                       % (crt, key, prefix.tmp + '/conf/pw'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1
    assert 'cannot load certificate key "%s"' % key in r.err, r.err


def test_sni_with_a_trailing_dot(server, prefix):
    a = make_cert(prefix.tmp, 'a', 'a.test', kind='ec')
    b = make_cert(prefix.tmp, 'b', 'b.test', kind='ec')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        server_name a.test;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "a"; }
    }
    server {
        listen 127.0.0.1:{port} ssl;
        server_name b.test;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "b"; }
    }
}
''' % (a[0], a[1], b[0], b[1]))
    for sni in ('b.test.', 'B.TEST'):
        c = tls_connect(s.port, sni=sni)
        assert c.getpeercert(binary_form=True) == cert_der(b[0]), sni
        c.close()
    c = tls_connect(s.port, sni='.'.join(['x' * 60] * 4))   # no such name: the default server's certificate
    assert c.getpeercert(binary_form=True) == cert_der(a[0])
    c.close()


def tls_srv(crt, key, extra):
    return ('http {\n    server {\n        listen 127.0.0.1:{port} ssl;\n        ssl_certificate %s;\n'
            '        ssl_certificate_key %s;\n        %s\n    }\n}\n' % (crt, key, extra))


@pytest.mark.parametrize('extra,message,needle', [
    ('ssl maybe;', 'invalid value "maybe" in "ssl" directive, it must be "on" or "off"', 'ssl maybe'),
    ('ssl_client_certificate a.pem;\n        ssl_client_certificate b.pem;',
     '"ssl_client_certificate" directive is duplicate', 'b.pem'),
    ('ssl_trusted_certificate a.pem;\n        ssl_trusted_certificate b.pem;',
     '"ssl_trusted_certificate" directive is duplicate', 'b.pem'),
    ('ssl_crl a.pem;\n        ssl_crl b.pem;', '"ssl_crl" directive is duplicate', 'b.pem'),
    ('ssl_stapling_file a.der;\n        ssl_stapling_file b.der;', '"ssl_stapling_file" directive is duplicate', 'b.der'),
])
def test_rejected_at_t(prefix, run_cli, extra, message, needle):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    fails_at(prefix, run_cli, tls_srv(crt, key, extra), prefix.render(needle), message, regex=True)


@pytest.mark.hayate_only  # nginx names no line (hayate: the server's first ssl_certificate)
def test_certificate_without_key(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    fails_at(prefix, run_cli, tls_srv(crt, key, 'ssl_certificate {tmp}/c2.crt;'), 'ssl_certificate ',
             'no "ssl_certificate_key" is defined for certificate "[^"]+/c2.crt"', regex=True)


@pytest.mark.hayate_only  # nginx checks the responder URL only when it would query it
def test_stapling_responder_prefix(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    fails_at(prefix, run_cli, tls_srv(crt, key, 'ssl_stapling_responder ftp://x/;'), 'ssl_stapling_responder',
             'invalid URL prefix in OCSP responder "ftp://x/" in "ssl_stapling_responder"')


@pytest.mark.hayate_only  # file:line and OpenSSL 3's reason
def test_bad_conf_command(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    path = prefix.conf(tls_srv(crt, key, 'ssl_conf_command Options -SessionTicket;\n'
                                         '        ssl_conf_command NoSuchCommand x;'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1
    assert 'SSL_CONF_cmd("NoSuchCommand", "x") failed' in r.err, r.err


def session_conf(crt, key, port, cache):
    return """
    server {
        listen 127.0.0.1:%s ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        %s
        ssl_session_tickets off;
        location / { return 200 "$ssl_session_reused"; }
    }""" % (port, crt, key, cache)


def resumes(port):
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2)
    c = tls_connect(port, sni='localhost', ctx=ctx)
    sess = c.session
    c.close()
    c = tls_connect(port, sni='localhost', ctx=ctx, session=sess)
    reused = c.session_reused
    c.close()
    return reused


@pytest.mark.parametrize('cache,resumed', [
    ('ssl_session_cache off builtin;', True),                 # the words apply in order
    ('ssl_session_cache builtin none;', False),
    ('ssl_session_cache shared:S:1m off;', False),            # "off" leaves the zone unused
    ('ssl_session_cache none;\n        ssl_session_cache builtin;', True),   # a second one goes on from the first
    ('ssl_session_cache shared:S:1m;\n        ssl_session_cache none;', False),
    ('ssl_session_cache none;\n        ssl_session_cache shared:S:1m;', False),  # "none" stays
])
def test_session_cache_words_in_order(server, prefix, cache, resumed):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server('http {%s\n}\n' % session_conf(crt, key, '{port}', cache))
    assert resumes(s.port) == resumed


def test_two_servers_share_one_session_zone(server, prefix):
    crt, key = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    cache = 'ssl_session_cache shared:S:1m;'
    s = server('http {%s%s\n}\n' % (session_conf(crt, key, '{port}', cache), session_conf(crt, key, '{port2}', cache)))
    assert resumes(s.port) and resumes(s.port2)
