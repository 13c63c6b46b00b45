"""proxy_ssl_* files and values that cannot be loaded: `-t` fails with an [emerg] naming the OpenSSL call, as
nginx does when it builds the upstream SSL context (missing trusted certificate, CRL, certificate or key, a key
that does not match, a cipher list OpenSSL rejects, a key protected by a password without one that fits)."""
import os

import pytest

from helpers.tls import make_cert


@pytest.fixture(scope='module')
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp('pssl'))
    a = make_cert(d, 'a', 'a.test')
    b = make_cert(d, 'b', 'b.test')
    p = make_cert(d, 'p', 'p.test', password='pw')
    with open(os.path.join(d, 'bad.pem'), 'w') as f:
        f.write('-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n')
    with open(os.path.join(d, 'wrongpw'), 'w') as f:
        f.write('nope\n')
    return {'dir': d, 'a': a, 'b': b, 'p': p}


def cases(c):
    d = c['dir']
    return [
        ('proxy_ssl_trusted_certificate %s/missing.crt; proxy_ssl_verify on;' % d, 'SSL_CTX_load_verify_locations'),
        ('proxy_ssl_trusted_certificate %s; proxy_ssl_verify on; proxy_ssl_crl %s/missing.crl;' % (c['a'][0], d),
         'X509_LOOKUP_load_file'),
        ('proxy_ssl_certificate %s/missing.crt; proxy_ssl_certificate_key %s;' % (d, c['a'][1]),
         'cannot load certificate "%s/missing.crt"' % d),
        ('proxy_ssl_certificate %s; proxy_ssl_certificate_key %s/missing.key;' % (c['a'][0], d),
         'cannot load certificate key "%s/missing.key"' % d),
        ('proxy_ssl_certificate %s; proxy_ssl_certificate_key %s;' % (c['a'][0], c['b'][1]), 'SSL_CTX_use_PrivateKey'),
        ('proxy_ssl_certificate %s/bad.pem; proxy_ssl_certificate_key %s;' % (d, c['a'][1]),
         'cannot load certificate "%s/bad.pem"' % d),
        ('proxy_ssl_ciphers NO-SUCH-CIPHER;', 'SSL_CTX_set_cipher_list'),
        ('proxy_ssl_certificate %s; proxy_ssl_certificate_key %s; proxy_ssl_password_file %s/wrongpw;'
         % (c['p'][0], c['p'][1], d), 'PEM_read_bio_PrivateKey'),
    ]


@pytest.mark.parametrize('i', range(8))
def test_unloadable(run_cli, prefix, certs, i):
    loc, needle = cases(certs)[i]
    conf = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass https://127.0.0.1:1; %s }
    }
}
''' % loc)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    assert '[emerg]' in res.err and needle in res.err, res.err


def test_certificate_without_key(run_cli, prefix, certs):
    conf = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass https://127.0.0.1:1; proxy_ssl_certificate %s; }
    }
}
''' % certs['a'][0])
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    assert '[emerg]' in res.err and 'no "proxy_ssl_certificate_key" is defined for certificate' in res.err, res.err
