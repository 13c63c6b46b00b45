"""OCSP stapling against responders that misbehave (a Python peer answering each query with what the test
chose): garbage instead of DER, an OCSP "tryLater", an HTTP error status, no HTTP at all, an immediate close, a
response too big to keep. Each is logged with its reason and nothing is stapled; the server keeps serving. Also
responder URLs the certificate or ssl_stapling_responder may give: an IPv6 literal with a port (works), and
malformed ones (a warning at -t, as nginx: stapling is ignored, the configuration is fine)."""
import socket
import threading

import pytest

from conftest import free_port
from helpers.tls import make_ca, make_client_cert, https_get
from test_tls_stapling import RESPONDER_CONF, status_of, wait_log, wait_status
from helpers.tls import ocsp_responder


def bad_responder(port, answer, family=socket.AF_INET, host='127.0.0.1'):
    """Answers every connection with `answer` (bytes, sent after the request head arrived) then closes."""
    ls = socket.socket(family, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(8)

    def serve():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            try:
                buf = b''
                c.settimeout(5)
                while b'\r\n\r\n' not in buf:
                    d = c.recv(4096)
                    if not d:
                        break
                    buf += d
                if answer:
                    c.sendall(answer)
            except OSError:
                pass
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return ls


@pytest.fixture
def pki(prefix):
    ca = make_ca(prefix.tmp, 'ca')
    port = free_port()
    crt, key = make_client_cert(prefix.tmp, 'srv', 'localhost', ca, 4243, ocsp_url='http://127.0.0.1:%d/' % port)
    chain = prefix.write('srv-chain.crt', open(crt).read() + open(ca[0]).read())
    return ca, port, crt, chain, key


TRY_LATER = b'\x30\x03\x0a\x01\x03'  # OCSPResponse { responseStatus tryLater(3) }

CASES = [
    (b'HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\n\r\nnot a DER response',
     'd2i_OCSP_RESPONSE() failed'),
    (b'HTTP/1.0 200 OK\r\n\r\n' + TRY_LATER, 'OCSP response not successful (3: trylater)'),
    pytest.param(b'HTTP/1.0 500 Internal Server Error\r\n\r\n',
                 'OCSP responder sent invalid response (HTTP status 500)', marks=pytest.mark.hayate_only),
    (b'SSH-2.0-OpenSSH\r\n\r\n', 'OCSP responder sent invalid response'),
    (b'', 'OCSP responder prematurely closed connection'),
    # nginx stops at its buffer and fails to decode what it has
    pytest.param(b'HTTP/1.0 200 OK\r\n\r\n' + b'x' * (1 << 20), 'OCSP responder sent too big response',
                 marks=pytest.mark.hayate_only),
]


@pytest.mark.parametrize('answer,msg', CASES, ids=['garbage', 'trylater', 'http500', 'not-http', 'closed', 'too-big'])
def test_misbehaving_responder(server, prefix, pki, answer, msg):
    ca, port, crt, chain, key = pki
    ls = bad_responder(port, answer)
    try:
        s = server(RESPONDER_CONF % (chain, key, ''))
        assert status_of(s.prefix.port) is None  # the first handshake starts the query
        assert wait_log(s, msg), s.error_log()
        line = [l for l in s.error_log().splitlines() if msg in l][0]
        assert '[error]' in line and 'while requesting certificate status, responder: 127.0.0.1' in line, line
        assert status_of(s.prefix.port) is None
        assert https_get(s.prefix.port, '/')[0] == 200
    finally:
        ls.close()


def test_ipv6_responder_url(server, prefix, pki):
    ca, _, crt, chain, key = pki
    port = free_port()
    # a real responder on ::1 is not available from the openssl helper (it binds 127.0.0.1): proxy ::1 to it
    v4 = free_port()
    resp = ocsp_responder(prefix.tmp, ca, [(crt, 'V')], v4)
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('::1', port))
    ls.listen(8)

    def relay():
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            u = socket.create_connection(('127.0.0.1', v4))

            def pipe(a, b):
                try:
                    while True:
                        d = a.recv(65536)
                        if not d:
                            break
                        b.sendall(d)
                    b.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            threading.Thread(target=pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    threading.Thread(target=relay, daemon=True).start()
    try:
        s = server(RESPONDER_CONF % (chain, key, 'ssl_stapling_responder http://[::1]:%d/ocsp;' % port))
        assert wait_status(s.prefix.port) == 'good'
    finally:
        ls.close()
        resp.kill()
        resp.wait()


@pytest.mark.parametrize('url,why', [('http://[::1/', 'invalid host'), ('http://[::1]x/', 'invalid host'),
                                     ('http://[]:80/', 'no host'), ('http://:80/', 'no host'),
                                     ('http://127.0.0.1:8x/', 'invalid port'), ('http://127.0.0.1:/', 'invalid port')])
def test_malformed_responder_url_is_a_warning(run_cli, prefix, pki, url, why):
    ca, port, crt, chain, key = pki
    path = prefix.conf(RESPONDER_CONF % (chain, key, 'ssl_stapling_responder %s;' % url))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r.err
    assert ('"ssl_stapling" ignored, %s in OCSP responder "%s" in the certificate "%s"'
            % (why, url[7:], chain)) in r.err, r.err
