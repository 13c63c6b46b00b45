"""Upstreams over TLS: proxy_pass https://, proxy_ssl_server_name / proxy_ssl_name (SNI), proxy_ssl_verify with
proxy_ssl_trusted_certificate, proxy_ssl_verify_depth and proxy_ssl_crl, client certificates
(proxy_ssl_certificate/_key, with variables, proxy_ssl_password_file), proxy_ssl_protocols, proxy_ssl_conf_command,
proxy_ssl_session_reuse, and keep-alive pooling of TLS connections. The backend is a Python TLS server that
records, per connection, the SNI name, whether the session was resumed and the client certificate."""
import os
import re
import ssl
import time

import pytest

from conftest import IS_NGINX
from helpers.tls import make_ca, make_signed_cert, tls_backend


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp('upki'))
    p = {'dir': d}
    p['ca'] = make_ca(d, 'ca')
    p['other_ca'] = make_ca(d, 'other')
    p['be'] = make_signed_cert(d, 'be', 'backend.test', p['ca'], 10, sans=['backend.test', '127.0.0.1'])
    p['stranger'] = make_signed_cert(d, 'stranger', 'backend.test', p['other_ca'], 11)
    p['inter'] = make_signed_cert(d, 'inter', 'Test Intermediate', p['ca'], 12, is_ca=True)
    leaf = make_signed_cert(d, 'leaf', 'deep.test', p['inter'], 13)
    chain = os.path.join(d, 'leaf-chain.crt')
    with open(chain, 'w') as f:
        f.write(open(leaf[0]).read() + open(p['inter'][0]).read())
    p['deep'] = (chain, leaf[1])
    p['revoked'] = make_signed_cert(d, 'revoked', 'backend.test', p['ca'], 14)
    p['alice'] = make_signed_cert(d, 'alice', 'alice', p['ca'], 20)
    p['bob'] = make_signed_cert(d, 'bob', 'bob', p['ca'], 21)
    p['carol'] = make_signed_cert(d, 'carol', 'carol', p['ca'], 22, password='s3cret')
    with open(os.path.join(d, 'passwords'), 'w') as f:
        f.write('wrong\ns3cret\n')
    p['passwords'] = os.path.join(d, 'passwords')
    from helpers.tls import make_crl
    p['crl'] = make_crl(d, p['ca'], [p['revoked'][0]])
    return p


@pytest.fixture
def backends():
    started = []

    def start(*a, **kw):
        be = tls_backend(*a, **kw)
        started.append(be)
        return be
    yield start
    for be in started:
        be.stop()


def front(server, be, loc, top='', ignore=None):
    srv = server('''
http {
    %s
    server {
        listen 127.0.0.1:{port};
        location / {
            proxy_pass https://127.0.0.1:%d;
            %s
        }
    }
}
''' % (top, be.port, loc))
    if ignore:
        srv.ignore_log = ignore
    return srv


def test_https_pass_no_sni_by_default(server, backends, pki):
    be = backends(*pki['be'])
    srv = front(server, be, '')
    r = srv.get('/a?b=1')
    assert r.status == 200 and r.body == b'ok'
    be.wait_requests(1)
    req = be.requests[0]
    assert req.target == '/a?b=1'
    assert req.header('Host') == '127.0.0.1:%d' % be.port
    assert be.tls_info[req.conn_no]['sni'] is None  # proxy_ssl_server_name is off by default


def test_sni_name_and_default(server, backends, pki):
    be = backends(*pki['be'])
    srv = server('''
http {
    upstream backend.test { server 127.0.0.1:%d; }
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_server_name on;
        proxy_ssl_session_reuse off;  # a resumed session reports the name of the first
        location /named { proxy_pass https://127.0.0.1:%d; proxy_ssl_name example.com; }
        location /var { proxy_pass https://127.0.0.1:%d; proxy_ssl_name $arg_n:8443; }
        location /up { proxy_pass https://backend.test; }
        location /literal { proxy_pass https://127.0.0.1:%d; }
    }
}
''' % (be.port, be.port, be.port, be.port))
    sni = []
    for path in ('/named', '/var?n=v.example', '/up', '/literal'):
        r = srv.get(path)
        assert r.status == 200, path
        be.wait_requests(len(sni) + 1)
        sni.append(be.tls_info[be.requests[-1].conn_no]['sni'])
    # the port of a name is cut; an address literal is never sent (RFC 6066 §3)
    assert sni == ['example.com', 'v.example', 'backend.test', None]


def test_verify_right_ca_and_name(server, backends, pki):
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; proxy_ssl_name backend.test;'
                % pki['ca'][0])
    assert srv.get('/').status == 200


def test_verify_address_name(server, backends, pki):
    # the default name is the host of proxy_pass, 127.0.0.1: nginx checks names only (X509_check_host), so an
    # address fails even with an IP subjectAltName
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_verify on; proxy_ssl_trusted_certificate %s;' % pki['ca'][0])
    assert srv.get('/').status == 502
    assert 'upstream SSL certificate does not match "127.0.0.1" while SSL handshaking to upstream' in srv.error_log()


def test_verify_wrong_ca(server, backends, pki):
    be = backends(*pki['stranger'])
    srv = front(server, be, 'proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; proxy_ssl_name backend.test;'
                % pki['ca'][0])
    r = srv.get('/')
    assert r.status == 502
    assert re.search(r'\[error\].*upstream SSL certificate verify error: \(\d+:[^)]*\) while SSL handshaking to '
                     r'upstream', srv.error_log())
    assert len(be.requests) == 0


def test_verify_off_accepts_any(server, backends, pki):
    be = backends(*pki['stranger'])
    srv = front(server, be, 'proxy_ssl_trusted_certificate %s; proxy_ssl_name nomatch.test;' % pki['ca'][0])
    assert srv.get('/').status == 200


def test_verify_wrong_name(server, backends, pki):
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; proxy_ssl_name other.test;'
                % pki['ca'][0])
    assert srv.get('/').status == 502
    assert 'upstream SSL certificate does not match "other.test" while SSL handshaking to upstream' in srv.error_log()


def test_verify_depth(server, backends, pki):
    be = backends(*pki['deep'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_verify on;
        proxy_ssl_trusted_certificate %s;
        proxy_ssl_name deep.test;
        proxy_ssl_session_reuse off;
        location /d0 { proxy_pass https://127.0.0.1:%d; proxy_ssl_verify_depth 0; }
        location /d1 { proxy_pass https://127.0.0.1:%d; }
        location /d2 { proxy_pass https://127.0.0.1:%d; proxy_ssl_verify_depth 2; }
    }
}
''' % (pki['ca'][0], be.port, be.port, be.port))
    # leaf, one intermediate, root: the depth counts the intermediates (OpenSSL's; the default 1 allows one)
    assert srv.get('/d0').status == 502
    assert re.search(r'upstream SSL certificate verify error: \(\d+:[^)]+\) while SSL handshaking', srv.error_log())
    assert srv.get('/d1').status == 200
    assert srv.get('/d2').status == 200


def test_crl(server, backends, pki):
    good, bad = backends(*pki['be']), backends(*pki['revoked'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_verify on;
        proxy_ssl_trusted_certificate %s;
        proxy_ssl_crl %s;
        proxy_ssl_name backend.test;
        location /good { proxy_pass https://127.0.0.1:%d; }
        location /bad { proxy_pass https://127.0.0.1:%d; }
    }
}
''' % (pki['ca'][0], pki['crl'], good.port, bad.port))
    assert srv.get('/good').status == 200
    assert srv.get('/bad').status == 502
    assert re.search(r'upstream SSL certificate verify error: \(23:certificate revoked\)', srv.error_log())


def test_client_certificate(server, backends, pki):
    be = backends(*pki['be'], client_ca=pki['ca'][0], require_client=True)
    d = pki['dir']
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        location /none { proxy_pass https://127.0.0.1:%d; }
        location /alice {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate %s/alice.crt;
            proxy_ssl_certificate_key %s/alice.key;
        }
        location /var {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate %s/$arg_who.crt;
            proxy_ssl_certificate_key %s/$arg_who.key;
        }
        location /carol {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate %s/carol.crt;
            proxy_ssl_certificate_key %s/carol.key;
            proxy_ssl_password_file %s;
        }
    }
}
''' % (be.port, be.port, d, d, be.port, d, d, be.port, d, d, pki['passwords']))
    srv.ignore_log = r'SSL|closed|reset'
    assert srv.get('/none').status == 502  # the backend requires a certificate

    def cn_of_last(path):
        n = len(be.requests)
        r = srv.get(path)
        assert r.status == 200, (path, r.status)
        be.wait_requests(n + 1)
        return be.tls_info[be.requests[-1].conn_no]['client_cn']
    assert cn_of_last('/alice') == 'alice'
    assert cn_of_last('/var?who=bob') == 'bob'
    assert cn_of_last('/var?who=alice') == 'alice'
    assert cn_of_last('/carol') == 'carol'
    # a certificate that does not load: our side's error, 500 (no try of the peer)
    assert srv.get('/var?who=nobody').status == 500
    assert re.search(r'\[error\].*cannot load certificate ".*nobody.crt"', srv.error_log())


@pytest.mark.skipif(IS_NGINX, reason='nginx 1.22 (Debian 12) predates proxy_ssl_certificate ""')
def test_certificate_empty_cancels_inherited(server, backends, pki):
    be = backends(*pki['be'], client_ca=pki['ca'][0])  # optional client certificate
    d = pki['dir']
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;  # a resumed session would carry the certificate of the first
        proxy_ssl_certificate %s/alice.crt;
        proxy_ssl_certificate_key %s/alice.key;
        location /with { proxy_pass https://127.0.0.1:%d; }
        location /without {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_certificate "";
            proxy_ssl_certificate_key "";
        }
    }
}
''' % (d, d, be.port, be.port))
    assert srv.get('/with').status == 200
    be.wait_requests(1)
    assert be.tls_info[be.requests[-1].conn_no]['client_cn'] == 'alice'
    assert srv.get('/without').status == 200
    be.wait_requests(2)
    assert be.tls_info[be.requests[-1].conn_no]['client_cn'] is None


def sessions(srv, be, path, n):
    for i in range(n):
        assert srv.get(path).status == 200
        be.wait_requests(i + 1)
    return [be.tls_info[r.conn_no]['reused'] for r in be.requests]


@pytest.mark.parametrize('version', ['TLSv1.2', 'TLSv1.3'])
def test_session_reuse(server, backends, pki, version):
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_protocols %s;' % version)
    # a new connection per request (no keepalive): the second and third resume the peer's session
    assert sessions(srv, be, '/', 3) == [False, True, True]
    assert be.connections == 3


def test_session_reuse_off(server, backends, pki):
    be = backends(*pki['be'])
    srv = front(server, be, 'proxy_ssl_session_reuse off;')
    assert sessions(srv, be, '/', 2) == [False, False]


def test_keepalive_pool(server, backends, pki):
    be = backends(*pki['be'])
    srv = server('''
http {
    upstream u { server 127.0.0.1:%d; keepalive 4; }
    server {
        listen 127.0.0.1:{port};
        location / {
            proxy_pass https://u;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /plain {
            proxy_pass http://u;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
''' % be.port)
    for i in range(4):
        r = srv.get('/k%d' % i)
        assert r.status == 200
    be.wait_requests(4)
    assert be.connections == 1  # one TLS connection, kept with its SSL state between requests
    assert [r.conn_req for r in be.requests] == [1, 2, 3, 4]


def test_protocols(server, backends, pki):
    be = backends(*pki['be'], maxv=ssl.TLSVersion.TLSv1_2)
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location /13 { proxy_pass https://127.0.0.1:%d; proxy_ssl_protocols TLSv1.3; }
        location /12 { proxy_pass https://127.0.0.1:%d; proxy_ssl_protocols TLSv1.2; }
    }
}
''' % (be.port, be.port))
    srv.ignore_log = r'SSL'
    assert srv.get('/13').status == 502
    assert re.search(r'SSL_do_handshake\(\) failed .* while SSL handshaking to upstream', srv.error_log())
    assert srv.get('/12').status == 200
    be.wait_requests(1)
    assert be.tls_info[be.requests[0].conn_no]['version'] == 'TLSv1.2'


def test_ciphers_and_conf_command(server, backends, pki):
    be = backends(*pki['be'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        proxy_ssl_session_reuse off;
        location /c12 {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_protocols TLSv1.2;
            proxy_ssl_ciphers ECDHE-ECDSA-CHACHA20-POLY1305;
        }
        location /c13 {
            proxy_pass https://127.0.0.1:%d;
            proxy_ssl_protocols TLSv1.3;
            proxy_ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256;
        }
    }
}
''' % (be.port, be.port))
    assert srv.get('/c12').status == 200
    be.wait_requests(1)
    assert be.tls_info[be.requests[0].conn_no]['cipher'] == 'ECDHE-ECDSA-CHACHA20-POLY1305'
    assert srv.get('/c13').status == 200
    be.wait_requests(2)
    assert be.tls_info[be.requests[1].conn_no]['cipher'] == 'TLS_CHACHA20_POLY1305_SHA256'


def test_variables_https(server, backends, pki):
    be = backends(*pki['be'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass $arg_s://127.0.0.1:%d; }
    }
}
''' % be.port)
    assert srv.get('/?s=https').status == 200
    be.wait_requests(1)


def test_handshake_timeout(server, pki):
    from helpers.backend import Backend
    plain = Backend().start()  # never answers a ClientHello (it waits for an HTTP head)
    try:
        srv = front(server, plain, 'proxy_connect_timeout 1s;')
        assert srv.get('/').status == 504
        assert 'upstream timed out (110: Connection timed out) while SSL handshaking to upstream' in srv.error_log()
    finally:
        plain.stop()


def test_handshake_with_plain_backend_fails(server, pki):
    import socket
    import threading
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(8)

    def serve():  # answers plain HTTP at once, whatever it receives: no TLS record
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
            c.close()
    threading.Thread(target=serve, daemon=True).start()

    class P:
        port = ls.getsockname()[1]
    try:
        srv = front(server, P, '', ignore=r'SSL')
        assert srv.get('/').status == 502
        if not IS_NGINX:  # nginx 1.22 logs "upstream prematurely sent response" here
            assert re.search(r'\[error\].*SSL_do_handshake\(\) failed .*while SSL handshaking to upstream',
                             srv.error_log())
    finally:
        ls.close()


def test_verify_needs_trusted_certificate(hy_bin, prefix, pki):
    import subprocess
    conf = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { proxy_pass https://127.0.0.1:1; proxy_ssl_verify on; }
    }
}
''')
    r = subprocess.run([hy_bin, '-t', '-p', prefix.tmp + '/', '-c', conf], capture_output=True, timeout=20)
    assert r.returncode != 0
    assert b'no proxy_ssl_trusted_certificate for proxy_ssl_verify' in r.stderr


def test_session_reuse_repeated(server, pki):
    # the backend is the server itself (nginx-tests' setup): it sends no new TLS 1.3 ticket after a resumption, so
    # the same saved session must resume again and again
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache builtin;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / { return 200 "$ssl_session_reused $ssl_protocol"; }
    }
    server {
        listen 127.0.0.1:{port};
        location /13 { proxy_pass https://127.0.0.1:{port2}/; proxy_ssl_protocols TLSv1.3; }
        location /12 { proxy_pass https://127.0.0.1:{port2}/; proxy_ssl_protocols TLSv1.2; }
    }
}
''' % pki['be'])
    assert [srv.get('/13').body for _ in range(4)] == [b'. TLSv1.3', b'r TLSv1.3', b'r TLSv1.3', b'r TLSv1.3']
    assert [srv.get('/12').body for _ in range(3)] == [b'. TLSv1.2', b'r TLSv1.2', b'r TLSv1.2']


def test_if_and_limit_except_keep_the_pass(server, backends, pki):
    # an "if" or "limit_except" block without its own proxy_pass passes where its location does, with its TLS
    # settings; a nested location with another proxy_pass does not inherit them
    be = backends(*pki['be'])
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location /ssl {
            proxy_pass https://127.0.0.1:%d/outer;
            if ($arg_if) { }
            limit_except POST { }
            location /ssl/inner { return 200 "inner"; }
        }
    }
}
''' % be.port)
    assert srv.get('/ssl').status == 200
    assert srv.get('/ssl?if=1').status == 200
    assert srv.get('/ssl', method='POST', body=b'x').status == 200
    assert srv.get('/ssl/inner').body == b'inner'
    be.wait_requests(3)
    assert [r.target for r in be.requests] == ['/outer', '/outer?if=1', '/outer']


UWSGI_APP = r'''
def application(env, start_response):
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [('%s %s' % (env['REQUEST_METHOD'], env.get('HTTPS', '-'))).encode()]
'''


def test_suwsgi(server, pki, tmp_path):
    from helpers.appservers import UWSGI, Backend, _free_port
    if not os.path.exists(UWSGI):
        pytest.skip('uwsgi missing')
    app = tmp_path / 'app.py'
    app.write_text(UWSGI_APP)
    port = _free_port()
    be = Backend([UWSGI, '--plugin', 'python3', '--ssl-socket', '127.0.0.1:%d,%s,%s' % (port, pki['be'][0], pki['be'][1]),
                  '--wsgi-file', str(app), '--master', '--processes', '1', '--die-on-term'],
                 '127.0.0.1:%d' % port, str(tmp_path / 'uwsgi.log'), str(tmp_path))
    try:
        srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        uwsgi_param REQUEST_METHOD $request_method;
        uwsgi_ssl_trusted_certificate %s;
        uwsgi_ssl_session_reuse off;  # sessions are per peer: one made without verification keeps its result
        location /plain-scheme { uwsgi_pass suwsgi://127.0.0.1:%d; }
        location /verified {
            uwsgi_pass suwsgi://127.0.0.1:%d;
            uwsgi_ssl_verify on;
            uwsgi_ssl_name backend.test;
        }
        location /wrong-name {
            uwsgi_pass suwsgi://127.0.0.1:%d;
            uwsgi_ssl_verify on;
            uwsgi_ssl_name other.test;
        }
        location /var { uwsgi_pass $arg_s://127.0.0.1:%d; }
    }
}
''' % (pki['ca'][0], port, port, port, port))
        assert srv.get('/plain-scheme').body.startswith(b'GET')
        assert srv.get('/verified').status == 200
        assert srv.get('/wrong-name').status == 502
        assert 'upstream SSL certificate does not match "other.test"' in srv.error_log()
        assert srv.get('/var?s=suwsgi').status == 200
    finally:
        be.stop()
