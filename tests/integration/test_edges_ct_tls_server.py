"""TLS server edges (nginx's ngx_http_ssl_module): configuration values at their limits (an ssl_client_certificate
file without certificates, an encrypted key without a password file, ssl_session_cache words and zones), client
certificate checks around plain listeners and servers without verification, optional_no_ca with the chain errors
it lets through, certificates named by variables whose key does not load, SNI after a HelloRetryRequest, ALPN h2
with a trailing dot in SNI, session resumption inherited from the http level."""
import re
import ssl

import pytest

from conftest import IS_NGINX
from helpers.tls import (make_ca, make_cert, make_client_cert, make_crl, make_signed_cert, client_ctx, tls_connect,
                         read_response, https_get, openssl, conf_with)


@pytest.fixture
def pair(prefix):
    return make_cert(prefix.tmp, 'good', 'localhost', kind='ec')


# ---------------------------------------------------------------- -t

def test_client_certificate_file_with_only_a_crl(prefix, run_cli, pair):
    """A CRL loads as verify locations but names no CA to ask the client for: the configuration fails."""
    ca = make_ca(prefix.tmp, 'ca')
    crl = make_crl(prefix.tmp, ca, [])
    r = run_cli(['-t', '-c', prefix.conf(conf_with(pair[0], pair[1], extra='ssl_verify_client on; '
                                                  'ssl_client_certificate %s;' % crl))])
    assert r.rc == 1, r
    assert '[emerg]' in r.err and crl in r.err, r.err


def test_encrypted_key_without_a_password_file(prefix, run_cli):
    """No ssl_password_file: an encrypted key cannot be read (no prompt on the terminal), -t fails."""
    crt, key = make_cert(prefix.tmp, 'enc', 'localhost', kind='ec', password='s3cret')
    r = run_cli(['-t', '-c', prefix.conf(conf_with(crt, key))])
    assert r.rc == 1, r
    assert 'cannot load certificate key "%s"' % key in r.err, r.err


@pytest.mark.skipif(IS_NGINX, reason='nginx 1.22 (Debian 12) insists on ssl_client_certificate')
def test_verify_with_only_a_trusted_certificate(prefix, run_cli, pair):
    """ssl_verify_client needs ssl_client_certificate or ssl_trusted_certificate: either one will do."""
    ca = make_ca(prefix.tmp, 'ca')
    r = run_cli(['-t', '-c', prefix.conf(conf_with(pair[0], pair[1], extra='ssl_verify_client on; '
                                                  'ssl_trusted_certificate %s;' % ca[0]))])
    assert r.rc == 0, r.err


@pytest.mark.parametrize('value', ['shared:', 'builtin:', 'builtin:x', 'sharedX'])
def test_invalid_session_cache_words(prefix, run_cli, pair, value):
    r = run_cli(['-t', '-c', prefix.conf(conf_with(pair[0], pair[1], extra='ssl_session_cache %s;' % value))])
    assert r.rc == 1, r
    assert 'invalid session cache "%s"' % value in r.err or '"%s"' % value in r.err, r.err


def test_one_zone_two_sizes(prefix, run_cli, pair):
    text = '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache shared:Z:1m;
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache shared:Z:2m;
    }
}
''' % (pair[0], pair[1], pair[0], pair[1])
    r = run_cli(['-t', '-c', prefix.conf(text)])
    assert r.rc == 1, r
    assert '[emerg]' in r.err and '"Z"' in r.err, r.err


def test_ssl_on_with_reject_handshake_needs_no_certificate(prefix, run_cli):
    r = run_cli(['-t', '-c', prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        ssl on;
        ssl_reject_handshake on;
    }
}
''')])
    assert r.rc == 0, r.err


# ---------------------------------------------------------------- running

def resumed_twice(port, maxv=ssl.TLSVersion.TLSv1_2):
    """Three connections, the second and third resuming the first one's session: their reuse flags."""
    ctx = client_ctx(maxv=maxv)
    s = tls_connect(port, sni='localhost', ctx=ctx)
    s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    read_response(s)
    sess = s.session
    s.close()
    flags = []
    for _ in range(2):
        s = tls_connect(port, sni='localhost', ctx=ctx, session=sess)
        s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
        read_response(s)
        flags.append(s.session_reused)
        s.close()
    return flags


def test_session_cache_inherited_from_http(server, pair):
    s = server('''
http {
    ssl_session_cache builtin:100;
    ssl_session_tickets off;
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "ok\\n"; }
    }
}
''' % pair)
    assert resumed_twice(s.prefix.port) == [True, True]


def test_builtin_after_shared_uses_both(server, pair):
    """A second ssl_session_cache goes on from the first: shared then builtin keeps both caches."""
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_tickets off;
        ssl_session_cache shared:S:1m;
        ssl_session_cache builtin;
        location / { return 200 "ok\\n"; }
    }
}
''' % pair)
    assert resumed_twice(s.prefix.port) == [True, True]


@pytest.mark.hayate_only  # nginx 1.22 has no single-use rule for TLS 1.2 sessions either, but no shared-zone 0-RTT
def test_early_data_leaves_tls12_sessions_reusable(server, pair):
    """ssl_early_data makes TLS 1.3 sessions of the shared cache single-use (replay protection); a TLS 1.2
    session carries no early data and resumes as often as the client likes."""
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_early_data on;
        ssl_session_tickets off;
        ssl_session_cache shared:S:1m;
        location / { return 200 "ok\\n"; }
    }
}
''' % pair)
    assert resumed_twice(s.prefix.port) == [True, True]


def test_plain_listener_of_a_verifying_server(server, prefix, pair):
    """The same server on a TLS and a plain port: SSL variables are empty on the plain one and no client
    certificate is asked for there (nginx checks certificates on TLS connections only)."""
    ca = make_ca(prefix.tmp, 'ca')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        listen 127.0.0.1:{port2};
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_client_certificate %s;
        ssl_verify_client on;
        location / { return 200 "[$ssl_protocol][$ssl_client_verify][$ssl_session_reused]\\n"; }
    }
    server {
        listen 127.0.0.1:{port3} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "[$ssl_protocol][$ssl_client_verify]\\n"; }
    }
}
''' % (pair[0], pair[1], ca[0], pair[0], pair[1]))
    import socket
    c = socket.create_connection(('127.0.0.1', s.prefix.port2))
    c.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, _, body = read_response(c)
    c.close()
    assert st == 200 and body == b'[][][]\n', (st, body)
    st, _, body, _ = https_get(s.prefix.port)
    assert st == 400 and b'No required SSL certificate was sent' in body, (st, body)
    st, _, body, _ = https_get(s.prefix.port3)  # a server without ssl_verify_client: no check
    assert st == 200 and re.fullmatch(rb'\[TLSv1\.[23]\]\[NONE\]\n', body), (st, body)


def get_with(port, cert, chain_extra=None):
    ctx = client_ctx()
    if chain_extra:
        import os
        import tempfile
        fd, path = tempfile.mkstemp(suffix='.pem')
        with os.fdopen(fd, 'w') as f:
            f.write(open(cert[0]).read() + open(chain_extra).read())
        ctx.load_cert_chain(path, cert[1])
        os.unlink(path)
    else:
        ctx.load_cert_chain(cert[0], cert[1])
    c = tls_connect(port, sni='localhost', ctx=ctx)
    c.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, _, body = read_response(c)
    c.close()
    return st, body.decode()


def test_optional_no_ca_lets_unknown_issuers_through(server, prefix, pair):
    """optional_no_ca: a certificate whose issuer is unknown, or whose chain ends in an untrusted self-signed root,
    is passed to the application ($ssl_client_verify says why), a trusted one is SUCCESS."""
    ca = make_ca(prefix.tmp, 'ca')
    stranger_ca = make_ca(prefix.tmp, 'stranger')
    alice = make_client_cert(prefix.tmp, 'alice', 'alice', ca, 5)
    mallory = make_client_cert(prefix.tmp, 'mallory', 'mallory', stranger_ca, 6)
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_client_certificate %s;
        ssl_verify_client optional_no_ca;
        ssl_verify_depth 2;
        location / { return 200 "$ssl_client_verify\\n"; }
    }
}
''' % (pair[0], pair[1], ca[0]))
    assert get_with(s.prefix.port, alice) == (200, 'SUCCESS\n')
    st, body = get_with(s.prefix.port, mallory)
    assert st == 200 and body.startswith('FAILED:unable to verify the first certificate'), body
    st, body = get_with(s.prefix.port, mallory, chain_extra=stranger_ca[0])
    assert st == 200 and body.startswith('FAILED:self-signed certificate in certificate chain'), body


@pytest.mark.hayate_only  # the log words
def test_certificate_variables_whose_key_does_not_load(server, prefix):
    make_cert(prefix.tmp + '/conf', 'a.example', 'a.example', kind='ec')
    make_cert(prefix.tmp + '/conf', 'b.example', 'b.example', kind='ec')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate $ssl_server_name.crt;
        ssl_certificate_key $ssl_server_name.key;
        ssl_certificate a.example.crt;
        ssl_certificate_key b.example.key;
        location / { return 200 "ok\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate a.example.crt;
        ssl_certificate_key $ssl_server_name.key;
        location / { return 200 "$ssl_server_name\\n"; }
    }
}
''')
    s.ignore_log = r'cannot load certificate'
    # the first pair fails (no such key): the handshake fails before the second is tried
    with pytest.raises(OSError):
        tls_connect(s.prefix.port, sni='nothere.example').close()
    assert re.search(r'\[error\].*cannot load certificate "[^"]*nothere.example.crt"', s.error_log()), s.error_log()
    # the pair loads but its second one is a key of another certificate
    with pytest.raises(OSError):
        tls_connect(s.prefix.port, sni='a.example').close()
    assert re.search(r'\[error\].*SSL_use_PrivateKey\("[^"]*/b.example.key"\) failed.*key values mismatch',
                     s.error_log()), s.error_log()
    with pytest.raises(OSError):
        tls_connect(s.prefix.port2, sni='b.example').close()  # a.example.crt with b.example.key
    with pytest.raises(OSError):
        tls_connect(s.prefix.port2, sni='none.example').close()  # no such key file
    assert 'none.example.key' in s.error_log()
    st, _, body, _ = https_get(s.prefix.port2, sni='a.example', host='a.example')
    assert (st, body) == (200, b'a.example\n')


def test_sni_server_chosen_again_after_a_hello_retry(server, prefix, pair):
    """The client's first key share is for a group the server does not take: after the HelloRetryRequest the
    second ClientHello names the same server, whose certificate is sent."""
    other = make_cert(prefix.tmp, 'other', 'other.example', kind='ec')
    s = server('''
http {
    ssl_ecdh_curve prime256v1;
    ssl_protocols TLSv1.2 TLSv1.3;
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
        location / { return 200 "other $ssl_curve\\n"; }
    }
}
''' % (pair[0], pair[1], other[0], other[1]))
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-servername', 'other.example',
                '-groups', 'X25519:prime256v1', '-tls1_3', '-quiet',
                input=b'GET / HTTP/1.0\r\nHost: other.example\r\n\r\n')
    out = r.stdout.decode(errors='replace')
    assert 'other prime256v1' in out, (out, r.stderr.decode(errors='replace'))
    assert 'CN = other.example' in r.stderr.decode(errors='replace')


@pytest.mark.skipif(IS_NGINX, reason='nginx 1.22 (Debian 12) predates the http2 directive')
def test_alpn_h2_with_a_trailing_dot_in_sni(server, prefix, pair):
    other = make_cert(prefix.tmp, 'other', 'other.example', kind='ec')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "default\\n"; }
    }
    server {
        listen 127.0.0.1:{port} ssl;
        server_name other.example;
        http2 on;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "other\\n"; }
    }
}
''' % (pair[0], pair[1], other[0], other[1]))

    def alpn(name):
        r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-servername', name,
                    '-alpn', 'h2,http/1.1', input=b'')
        m = re.search(r'ALPN protocol: (\S+)', r.stdout.decode())
        return m.group(1) if m else None
    assert alpn('Other.Example.') == 'h2'
    assert alpn('localhost') == 'http/1.1'
    assert alpn('..') == 'http/1.1'  # nothing left once the dots go: the default server
