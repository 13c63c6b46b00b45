"""Upstream TLS edges (nginx's proxy_ssl_* directives): the name proxy_ssl_name gives when it is an IPv6 literal
(never sent as SNI, RFC 6066 §3), client certificates named by variables that evaluate to nothing (none is sent),
that are relative (to the configuration's directory), or whose key does not load, and several
proxy_ssl_conf_command lines applied together."""
import os
import re
import shutil
import ssl

import pytest

from conftest import IS_NGINX
from test_proxy_ssl import backends, front, pki  # noqa: F401 (fixtures)


def sni_of(srv, be, path):
    n = len(be.requests)
    r = srv.get(path)
    assert r.status == 200, (path, r.status, srv.error_log())
    be.wait_requests(n + 1)
    return be.tls_info[be.requests[-1].conn_no]


def test_ipv6_literal_names_send_no_sni(server, backends, pki):
    be = backends(*pki['be'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_server_name on;
        proxy_ssl_session_reuse off;
        location /v6port { proxy_pass https://127.0.0.1:%d; proxy_ssl_name [::1]:443; }
        location /v6open { proxy_pass https://127.0.0.1:%d; proxy_ssl_name $arg_n; }
        location /v4 { proxy_pass https://127.0.0.1:%d; proxy_ssl_name 127.0.0.2; }
        location /name { proxy_pass https://127.0.0.1:%d; proxy_ssl_name $arg_n; }
    }
}
''' % (be.port, be.port, be.port, be.port))
    assert sni_of(srv, be, '/v6port')['sni'] is None
    assert sni_of(srv, be, '/v6open?n=[::1')['sni'] is None  # no closing bracket: still an address literal
    assert sni_of(srv, be, '/v4')['sni'] is None
    assert sni_of(srv, be, '/name?n=be.example:8443')['sni'] == 'be.example'  # the name works (control)


@pytest.mark.skipif(IS_NGINX, reason='nginx 1.22 (Debian 12) refuses an empty certificate from a variable')
def test_certificate_variables_evaluating_to_nothing_send_none(server, backends, pki):
    be = backends(*pki['be'], client_ca=pki['ca'][0])  # optional client certificate
    d = pki['dir']
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        location / {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate $arg_c;
            proxy_ssl_certificate_key $arg_k;
        }
    }
}
''' % be.port)
    assert sni_of(srv, be, '/?c=&k=')['client_cn'] is None
    assert sni_of(srv, be, '/?c=%s/alice.crt&k=' % d)['client_cn'] is None  # no key: none sent either
    assert sni_of(srv, be, '/?c=%s/alice.crt&k=%s/alice.key' % (d, d))['client_cn'] == 'alice'


def test_relative_certificate_variables_are_under_the_prefix(server, backends, pki, prefix):
    """A relative path from variables is taken from the configuration prefix, as a static one is."""
    be = backends(*pki['be'], client_ca=pki['ca'][0])
    for ext in ('crt', 'key'):
        shutil.copy(os.path.join(pki['dir'], 'bob.' + ext), os.path.join(prefix.tmp, 'conf', 'bob.' + ext))
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        location / {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate $arg_who.crt;
            proxy_ssl_certificate_key $arg_who.key;
        }
    }
}
''' % be.port)
    assert sni_of(srv, be, '/?who=bob')['client_cn'] == 'bob'


@pytest.mark.hayate_only  # nginx logs it too, with its own prefix words
def test_certificate_variables_with_a_key_that_does_not_load(server, backends, pki):
    be = backends(*pki['be'], client_ca=pki['ca'][0])
    d = pki['dir']
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        location / {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate %s/$arg_c.crt;
            proxy_ssl_certificate_key %s/$arg_k.key;
        }
    }
}
''' % (be.port, d, d))
    srv.ignore_log = r'cannot load certificate key'
    assert srv.get('/?c=alice&k=nobody').status == 500  # no such key file
    assert re.search(r'\[error\].*cannot load certificate key ".*/nobody\.key": BIO_new_file\(\) failed',
                     srv.error_log()), srv.error_log()
    assert srv.get('/?c=alice&k=bob').status == 500  # a key of another certificate
    assert re.search(r'\[error\].*SSL_use_PrivateKey\(".*/bob\.key"\) failed', srv.error_log()), srv.error_log()
    assert sni_of(srv, be, '/?c=alice&k=alice')['client_cn'] == 'alice'


def test_several_conf_commands(server, backends, pki):
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_conf_command MaxProtocol TLSv1.2; '
                            'proxy_ssl_conf_command CipherString ECDHE-ECDSA-AES128-GCM-SHA256;')
    info = sni_of(srv, be, '/')
    assert info['version'] == 'TLSv1.2'
    assert info['cipher'] == 'ECDHE-ECDSA-AES128-GCM-SHA256'


@pytest.mark.hayate_only  # file:line and the words
@pytest.mark.parametrize('loc,message', [
    ('proxy_ssl_certificate /x/$nosuchvar.crt; proxy_ssl_certificate_key /x/a.key;', r'unknown "nosuchvar" variable'),
    ('proxy_ssl_certificate /x/a.crt; proxy_ssl_certificate_key /x/$nosuchvar.key;', r'unknown "nosuchvar" variable'),
], ids=['unknown-var-cert', 'unknown-var-key'])
def test_rejected_at_t(run_cli, prefix, loc, message):
    conf = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass https://127.0.0.1:1; %s }
    }
}
''' % loc)
    res = run_cli(['-t', '-c', conf])
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] ' + message, res.err), res.err


def test_locations_overriding_one_setting_each(server, backends, pki):
    """Settings from the server level, each location changing one of them: its own context, the rest inherited."""
    be = backends(*pki['be'], client_ca=pki['ca'][0])
    d = pki['dir']
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        proxy_ssl_verify on;
        proxy_ssl_trusted_certificate %s;
        proxy_ssl_name backend.test;
        proxy_ssl_certificate %s/carol.crt;
        proxy_ssl_certificate_key %s/carol.key;
        proxy_ssl_password_file %s;
        location /crl { proxy_pass https://127.0.0.1:%d; proxy_ssl_crl %s; }
        location /key { proxy_pass https://127.0.0.1:%d; proxy_ssl_certificate_key %s/carol.key; }
        location /pw { proxy_pass https://127.0.0.1:%d; proxy_ssl_password_file %s; }
        location /ciphers { proxy_pass https://127.0.0.1:%d; proxy_ssl_ciphers HIGH; }
    }
}
''' % (pki['ca'][0], d, d, pki['passwords'], be.port, pki['crl'], be.port, d, be.port, pki['passwords'], be.port))
    for path in ('/crl', '/key', '/pw', '/ciphers'):
        assert sni_of(srv, be, path)['client_cn'] == 'carol', path


def test_empty_ssl_name_never_matches(server, backends, pki):
    """proxy_ssl_verify checks the certificate against the name: an empty one matches nothing (502)."""
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; proxy_ssl_name $arg_n;'
                % pki['ca'][0])
    srv.ignore_log = r'upstream SSL certificate does not match'
    assert srv.get('/?n=').status == 502
    assert re.search(r'\[error\].*upstream SSL certificate does not match ""', srv.error_log()), srv.error_log()
    assert srv.get('/?n=backend.test').status == 200


def test_name_too_long_for_sni(server, backends, pki):
    """A name OpenSSL cannot send (over 255 bytes): our side's error, 500, as nginx answers it."""
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_server_name on; proxy_ssl_name $arg_n;')
    srv.ignore_log = r'SSL_set_tlsext_host_name'
    assert srv.get('/?n=' + 'a' * 300).status == 500
    assert 'SSL_set_tlsext_host_name' in srv.error_log(), srv.error_log()
    assert srv.get('/?n=ok.example').status == 200
