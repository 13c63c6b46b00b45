"""ssl_conf_command: a command whose value is a file or a directory (Certificate, PrivateKey, ...) names it
relative to the configuration's directory, as other file names in nginx.conf (nginx resolves the value with
ngx_conf_full_name before SSL_CONF_cmd)."""
import os

from helpers.tls import make_cert, conf_with, tls_connect, cert_der


def test_relative_certificate_in_conf_command(server, prefix):
    crt, key = make_cert(prefix.tmp, 'main', 'main.test', kind='ec')
    conf_dir = prefix.tmp + '/conf'
    os.makedirs(conf_dir, exist_ok=True)
    ocrt, okey = make_cert(conf_dir, 'override', 'override.test', kind='ec')
    s = server(conf_with(crt, key, 'ssl_conf_command Certificate override.crt;\n'
                                   '        ssl_conf_command PrivateKey override.key;'))
    c = tls_connect(s.prefix.port, sni='x')
    assert c.getpeercert(binary_form=True) == cert_der(ocrt)
    c.close()
