"""TLS odds and ends (nginx's ngx_http_ssl_module): a ticket key file that does not exist fails -t, two servers
sharing one session zone with different ssl_session_timeout values both resume, an OCSP issuer found after an
unrelated certificate of the chain."""
import re
import ssl

import pytest

from conftest import free_port
from helpers.tls import (make_ca, make_cert, make_client_cert, client_ctx, tls_connect, read_response, conf_with,
                         ocsp_responder)
from test_tls_stapling import RESPONDER_CONF, wait_status


@pytest.mark.hayate_only  # the words of the message
def test_missing_ticket_key_file_fails_t(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    path = prefix.conf(conf_with(crt, key, extra='ssl_session_ticket_key %s/conf/nokey;' % prefix.tmp))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] open\(\) "[^"]*/conf/nokey" failed \(2: No such file or directory\)', r.err), r.err


def resumes(port, sni):
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_3)
    c = tls_connect(port, sni=sni, ctx=ctx)
    c.sendall(b'GET / HTTP/1.1\r\nHost: %s\r\n\r\n' % sni.encode())
    read_response(c)  # the TLS 1.3 ticket arrives with the response
    sess = c.session
    c.close()
    c = tls_connect(port, sni=sni, ctx=ctx, session=sess)
    c.sendall(b'GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % sni.encode())
    st, _, body = read_response(c)
    reused = c.session_reused
    c.close()
    return st, body, reused


def test_two_servers_one_zone_two_timeouts(server, prefix):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache shared:T:1m;
        ssl_session_timeout 10m;
        location / { return 200 "one\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache shared:T:1m;
        ssl_session_timeout 1m;
        location / { return 200 "two\\n"; }
    }
}
''' % (crt, key, crt, key))
    assert resumes(s.prefix.port, 'localhost') == (200, b'one\n', True)
    assert resumes(s.prefix.port2, 'localhost') == (200, b'two\n', True)


def test_issuer_found_after_an_unrelated_chain_certificate(server, prefix):
    ca = make_ca(prefix.tmp, 'ca')
    stranger = make_ca(prefix.tmp, 'stranger')
    port = free_port()
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 4244, ocsp_url='http://127.0.0.1:%d/' % port)
    chain = prefix.write('srv-chain.crt', open(crt).read() + open(stranger[0]).read() + open(ca[0]).read())
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()
