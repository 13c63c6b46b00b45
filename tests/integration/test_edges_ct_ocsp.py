"""OCSP stapling edges (nginx's ngx_http_ssl_module, ssl_stapling*): responders whose answer is not an HTTP
response nginx would accept (closed inside the head, a status that is no number, a head too short), a
responder URL without a path (the query goes to "/"), and a server with two certificates of which only one can
be stapled: a client choosing the other gets no staple, the stapled one still gets it."""
import os
import time

import pytest

from conftest import free_port
from helpers.tls import make_ca, make_client_cert, make_cert, https_get, ocsp_responder, openssl
from helpers.process import wait_until
from test_tls_stapling import RESPONDER_CONF, status_of, wait_log, wait_status
from test_tls_stapling_peers import bad_responder, pki  # noqa: F401 (fixture)


@pytest.mark.parametrize('answer,msg', [
    (b'HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\n',
     'OCSP responder prematurely closed connection'),
    (b'HTTP/1.0 abc\r\n\r\n', 'OCSP responder sent invalid response'),
    (b'HTTP/1.0\n\n', 'OCSP responder sent invalid response'),
    (b'HTTP/1.0 200 OK\n\r\nnot a DER response', 'd2i_OCSP_RESPONSE() failed'),
], ids=['no-end-of-head', 'status-not-a-number', 'short', 'lf-crlf-then-garbage'])
def test_responder_answers_that_are_no_response(server, prefix, pki, answer, msg):
    ca, port, crt, chain, key = pki
    ls = bad_responder(port, answer)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert status_of(s.prefix.port) is None  # the first handshake starts the query
        assert wait_log(s, msg), s.error_log()
        line = [ln for ln in s.error_log().splitlines() if msg in ln][0]
        assert '[error]' in line and 'while requesting certificate status' in line, line
        assert status_of(s.prefix.port) is None
        assert https_get(s.prefix.port, '/')[0] == 200
    finally:
        ls.close()


def test_responder_url_without_a_path(server, prefix, pki):
    """ssl_stapling_responder http://host:port (no path): the query is sent to "/" and the answer stapled."""
    ca, port, crt, chain, key = pki
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port)
    try:
        s = server(RESPONDER_CONF % (chain, key, 'ssl_stapling_responder http://127.0.0.1:%d;' % port))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        resp.kill()
        resp.wait()


def test_only_the_certificate_that_can_be_stapled_gets_a_staple(server, run_cli, prefix, pki):
    """An ECDSA certificate with a responder and an RSA one without any: "ssl_stapling" is ignored for the RSA one
    (a warning), an RSA-only client gets no staple while an ECDSA client gets one."""
    ca, port, crt, chain, key = pki
    rsa_crt, rsa_key = make_cert(prefix.tmp, 'rsa', 'localhost', kind='rsa')
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], port)
    try:
        text = '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_stapling on;
        location / { return 200 "ok\\n"; }
    }
}
''' % (chain, key, rsa_crt, rsa_key)
        r = run_cli(['-t', '-c', prefix.conf(text)])
        assert r.rc == 0, r.err
        assert '"ssl_stapling" ignored, issuer certificate not found for certificate "%s"' % rsa_crt in r.err, r.err
        s = server(text)
        assert wait_status(s.prefix.port) == 'good'  # the client's default prefers ECDSA here
        for _ in range(2):
            out = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-status', '-tls1_2',
                          '-sigalgs', 'RSA+SHA256:RSA-PSS+SHA256', '-servername', 'localhost',
                          input=b'').stdout.decode()
            assert 'Server public key is 2048 bit' in out, out
            assert 'OCSP response: no response sent' in out, out
    finally:
        resp.kill()
        resp.wait()


@pytest.mark.hayate_only  # nginx 1.22 did not close the old query's connection within 10 s here
def test_reload_with_a_query_in_flight(server, prefix, pki):
    """A responder that takes the query and never answers: a reload drops the old configuration's query (its
    socket closed), and the new configuration asks again."""
    import signal
    import socket
    import threading
    ca, port, crt, chain, key = pki
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', port))
    ls.listen(8)
    held = []

    def accept():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            held.append(c)
    threading.Thread(target=accept, daemon=True).start()
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert status_of(s.prefix.port) is None  # starts the query
        assert wait_until(lambda: len(held) == 1)
        first = held[0]
        first.settimeout(10)
        os.kill(s.proc.pid, signal.SIGHUP)
        assert first.recv(65536).startswith(b'GET /')  # the request it sent
        assert first.recv(65536) == b''  # then closed by the reload
        end = time.monotonic() + 10
        while len(held) < 2 and time.monotonic() < end:
            status_of(s.prefix.port)  # the new configuration's first handshakes start its own query
            time.sleep(0.1)
        assert len(held) >= 2
        assert https_get(s.prefix.port, '/')[0] == 200
    finally:
        ls.close()
        for c in held:
            c.close()


def test_certificate_naming_an_https_responder_is_a_warning(run_cli, prefix):
    """Only http:// responders can be asked: stapling is ignored for that certificate, the configuration is
    fine."""
    ca = make_ca(prefix.tmp, 'ca')
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 4245, ocsp_url='https://127.0.0.1:9/ocsp')
    chain = prefix.write('srv-chain.crt', open(crt).read() + open(ca[0]).read())
    r = run_cli(['-t', '-c', prefix.conf(RESPONDER_CONF % (chain, key, ''))])
    assert r.rc == 0, r.err
    assert ('"ssl_stapling" ignored, invalid URL prefix in OCSP responder "https://127.0.0.1:9/ocsp" in the '
            'certificate "%s"' % chain) in r.err, r.err


@pytest.mark.hayate_only  # nginx's words for a name this long differ
@pytest.mark.parametrize('url', ['http://%s/' % ('a' * 300), 'http://[%s]:80/' % ('1:' * 150 + '1')])
def test_responder_host_too_long_is_a_warning(run_cli, prefix, pki, url):
    ca, port, crt, chain, key = pki
    r = run_cli(['-t', '-c', prefix.conf(RESPONDER_CONF % (chain, key, 'ssl_stapling_responder %s;' % url))])
    assert r.rc == 0, r.err
    assert '"ssl_stapling" ignored, invalid host in OCSP responder' in r.err, r.err
