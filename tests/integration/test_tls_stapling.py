"""OCSP stapling from a file (ssl_stapling on + ssl_stapling_file): works offline, sent to clients that ask."""
import pytest

from conftest import IS_NGINX
from helpers.tls import make_ca, make_client_cert, make_ocsp_response, openssl


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


@pytest.mark.hayate_only
def test_stapling_without_file_is_a_warning(run_cli, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 321)
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
    assert r.rc == 0 and '[warn] "ssl_stapling" ignored' in r.err


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
