"""TLS configuration errors found at -t: each one names the directive's file:line (nginx names none for the
OpenSSL failures found while building the context, hayate names the server's ssl_certificate line) and uses
nginx's wording: the OpenSSL call that failed, the file, and OpenSSL's reason."""
import re

import pytest

from helpers.tls import make_cert, make_ca, conf_with, line_of

pytestmark = pytest.mark.hayate_only  # file:line and the OpenSSL reasons of OpenSSL 3


@pytest.fixture
def pair(prefix):
    return make_cert(prefix.tmp, 'good', 'localhost', kind='ec')


def check(prefix, run_cli, text, message, needle):
    """-t fails with `message` (a regex) at the line of the config holding `needle`."""
    path = prefix.conf(text)
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    want = r'\[emerg\] %s in %s:%d\n' % (message, re.escape(path), line_of(path, needle))
    assert re.search(want, r.err), (want, r.err)
    assert 'test failed' in r.err


# built with the context: reported at the ssl_certificate line, with OpenSSL's reason
@pytest.mark.parametrize('directive,message', [
    ('ssl_ciphers NOSUCHCIPHER;',
     r'SSL_CTX_set_cipher_list\("NOSUCHCIPHER"\) failed \(SSL: error:[0-9A-F]+:SSL routines::no cipher match\)'),  # nginx: the same
    ('ssl_ecdh_curve nosuchcurve;',
     r'SSL_CTX_set1_curves_list\("nosuchcurve"\) failed \(SSL: .+\)'),
    ('ssl_dhparam {tmp}/conf/none.pem;',
     r'BIO_new_file\("[^"]+/conf/none\.pem"\) failed \(SSL: .*No such file or directory.*\)'),
    ('ssl_dhparam {tmp}/conf/garbage.pem;',
     r'PEM_read_bio_DHparams\("[^"]+/conf/garbage\.pem"\) failed \(SSL: .+\)'),
    ('ssl_verify_client on; ssl_client_certificate {tmp}/conf/garbage.pem;',
     r'SSL_CTX_load_verify_locations\("[^"]+/conf/garbage\.pem"\) failed \(SSL: .+\)'),
    ('ssl_verify_client on; ssl_client_certificate {tmp}/conf/none.pem;',
     r'SSL_CTX_load_verify_locations\("[^"]+/conf/none\.pem"\) failed \(SSL: .+\)'),
    ('ssl_trusted_certificate {tmp}/conf/none.pem;',
     r'SSL_CTX_load_verify_locations\("[^"]+/conf/none\.pem"\) failed \(SSL: .+\)'),
    ('ssl_crl {tmp}/conf/garbage.pem;',
     r'X509_LOOKUP_load_file\("[^"]+/conf/garbage\.pem"\) failed \(SSL: .+\)'),
    ('ssl_stapling on; ssl_stapling_file {tmp}/conf/none.der;',
     r'BIO_new_file\("[^"]+/conf/none\.der"\) failed \(SSL: .+\)'),
    ('ssl_stapling on; ssl_stapling_file {tmp}/conf/garbage.pem;',
     r'd2i_OCSP_RESPONSE_bio\("[^"]+/conf/garbage\.pem"\) failed \(SSL: .+\)'),
], ids=['ciphers', 'ecdh_curve', 'dhparam_missing', 'dhparam_garbage', 'client_cert_garbage',
        'client_cert_missing', 'trusted_missing', 'crl_garbage', 'stapling_missing', 'stapling_garbage'])
def test_context_errors(prefix, run_cli, pair, directive, message):
    prefix.write('conf/garbage.pem', 'this is not PEM\n')
    check(prefix, run_cli, conf_with(pair[0], pair[1], extra=directive), message, 'ssl_certificate ')


def test_client_certificate_without_a_certificate_in_it(prefix, run_cli, pair):
    """A PEM file holding only a key: loaded as verify locations, but no CA name to send."""
    check(prefix, run_cli, conf_with(pair[0], pair[1], extra='ssl_verify_client on; '
                                     'ssl_client_certificate %s;' % pair[1]),
          r'SSL_CTX_load_verify_locations\("%s"\) failed \(SSL: .*no certificate or crl found\)' % re.escape(pair[1]),
          'ssl_certificate ')


# found by the directive's own handler: reported at its line
@pytest.mark.parametrize('directive,message,needle', [
    ('ssl_password_file {tmp}/conf/nopw;',
     r'open\(\) "[^"]+/conf/nopw" failed \(2: No such file or directory\)', 'ssl_password_file'),
    ('ssl_password_file {tmp}/conf/emptypw;',
     r'no passwords are defined in "[^"]+/conf/emptypw"', 'ssl_password_file'),
    ('ssl_password_file {tmp}/conf/pw; ssl_password_file {tmp}/conf/pw;',
     r'"ssl_password_file" directive is duplicate', 'ssl_password_file'),
    ('ssl_protocols TLSv1.2 TLSv9;', r'invalid value "TLSv9"', 'ssl_protocols'),
    ('ssl_dhparam a.pem;\n ssl_dhparam b.pem;', r'"ssl_dhparam" directive is duplicate', 'ssl_dhparam b'),
])
def test_directive_errors(prefix, run_cli, pair, directive, message, needle):
    prefix.write('conf/emptypw', '\n\n')
    prefix.write('conf/pw', 'secret\n')
    check(prefix, run_cli, conf_with(pair[0], pair[1], extra=directive), message, needle)


def test_ssl_on_without_certificate(prefix, run_cli):
    text = '''
http {
    server {
        listen 127.0.0.1:{port};
        ssl on;
    }
}
'''
    path = prefix.conf(text)
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    line = line_of(path, 'ssl on')
    assert ('[warn] the "ssl" directive is deprecated, use the "listen ... ssl" directive instead in %s:%d'
            % (path, line)) in r.err, r.err
    assert ('[emerg] no "ssl_certificate" is defined for the "ssl" directive in %s:%d' % (path, line)) in r.err


def test_certificate_without_key(prefix, run_cli, pair):
    text = '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_certificate %s;
    }
}
''' % (pair[0], pair[1], pair[0])
    path = prefix.conf(text)
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] no "ssl_certificate_key" is defined for certificate "%s" in %s:\d+'
                     % (re.escape(pair[0]), re.escape(path)), r.err), r.err
