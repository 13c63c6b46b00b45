"""Active health checks of "https://" upstreams (NGINX Plus checks such peers over TLS with the location's
proxy_ssl_* settings): the probe does the handshake as a proxied request would (SNI with proxy_ssl_server_name and
proxy_ssl_name, proxy_ssl_verify with proxy_ssl_trusted_certificate, the client certificate) and sends its request
over it; a failed handshake, a certificate that does not verify, and a handshake that does not end within
proxy_connect_timeout are failed checks, logged with their reason. Backends are real processes (helpers/hcpeer.py
over TLS). NGINX Plus is not available here: these tests are hayate's (hayate_only)."""
import re
import socket

import pytest

from conftest import simple
from helpers.hcpeer import HcPeer
from helpers.hcclient import get, served_by, unhealthy_reason, healthy_line
from helpers.process import wait_until, wait_log
from helpers.tls import make_ca, make_signed_cert

pytestmark = pytest.mark.hayate_only


@pytest.fixture
def pki(prefix):
    d = prefix.tmp
    ca = make_ca(d, 'hcca')
    other = make_ca(d, 'hcother')
    return {
        'ca': ca,
        'other_ca': other,
        'be': make_signed_cert(d, 'hcbe', 'backend.test', ca, 30, sans=['backend.test', 'alt.test']),
        'client': make_signed_cert(d, 'hcclient', 'prober', ca, 31),
    }


@pytest.fixture
def peers(prefix, pki):
    made = []

    def make(*names, tls=True, client_ca=None):
        out = [HcPeer(prefix.tmp, n, tls=pki['be'] if tls else None, client_ca=client_ca) for n in names]
        made.extend(out)
        return out
    yield make
    for p in made:
        p.stop()


def conf(addrs, hc, loc_extra='', http_extra=''):
    servers = ''.join('server 127.0.0.1:%d;' % a for a in addrs)
    return simple('''
        location / {
            proxy_pass https://backend;
            health_check %s;
            %s
        }''' % (hc, loc_extra), http_extra='''
        upstream backend { zone backend 64k; %s }
        %s''' % (servers, http_extra))


def test_tls_peers_checked_over_tls_and_failing_one_taken_out(server, peers):
    a, b = peers('a', 'b')
    srv = server(conf((a.port, b.port), 'interval=200ms fails=2 passes=2 uri=/hc'))
    # the checks reach the peers' HTTP handlers: they were made over TLS
    assert wait_until(lambda: len(a.checks()) >= 1 and len(b.checks()) >= 1, 10), srv.error_log()
    assert a.checks()[0][1:4] == ('/hc', 'HTTP/1.0', 'backend')
    assert 'unhealthy' not in srv.error_log()
    assert sorted(set(served_by(srv.prefix.port))) == ['a', 'b']

    a.set(status='500')
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'status 500'
    assert len([e for e in a.checks() if e[4] == 500]) >= 2
    before = len(a.traffic())
    assert served_by(srv.prefix.port, 10) == ['b'] * 10
    assert len(a.traffic()) == before

    a.set(status=None)
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)


def test_stopped_tls_peer_unhealthy_then_back(server, peers, prefix, pki):
    a, b = peers('a', 'b')
    srv = server(conf((a.port, b.port), 'interval=200ms uri=/hc'))
    assert wait_until(lambda: len(a.checks()) >= 1, 10), srv.error_log()
    a.stop()
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1).startswith('connect() failed (111: ')
    assert served_by(srv.prefix.port, 6) == ['b'] * 6
    a2 = HcPeer(prefix.tmp, 'a', port=a.port, tls=pki['be'])
    try:
        assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
        assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)
    finally:
        a2.stop()


def test_verify_with_the_wrong_ca_fails_the_check(server, peers, pki):
    a, b = peers('a', 'b')
    srv = server(conf((a.port, b.port), 'interval=200ms uri=/hc', loc_extra='''
            proxy_ssl_verify on;
            proxy_ssl_name backend.test;
            proxy_ssl_trusted_certificate %s;''' % pki['other_ca'][0]))
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1).startswith('upstream SSL certificate verify error: (')
    assert wait_log(srv, unhealthy_reason(b.port), timeout=10), srv.error_log()
    # the failure of each check is at info with the same reason
    assert re.search(r'\[info\] .*health check of peer 127\.0\.0\.1:%d of upstream "backend" failed: '
                     r'upstream SSL certificate verify error: ' % a.port, srv.error_log())
    # the request never went out
    assert a.checks() == [] and b.checks() == []
    assert get(srv.prefix.port).status == 502


def test_verify_with_the_right_ca_and_name(server, peers, pki):
    a, = peers('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='''
            proxy_ssl_verify on;
            proxy_ssl_name alt.test;
            proxy_ssl_trusted_certificate %s;''' % pki['ca'][0]))
    assert wait_until(lambda: len(a.checks()) >= 2, 10), srv.error_log()
    assert 'health check of peer' not in srv.error_log()
    assert get(srv.prefix.port).body == b'a'


def test_verify_name_mismatch_fails_the_check(server, peers, pki):
    a, = peers('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='''
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate %s;''' % pki['ca'][0]))  # the name checked: "backend"
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'upstream SSL certificate does not match "backend"'
    assert a.checks() == []


def test_sni_is_proxy_ssl_name_with_server_name_on(server, peers):
    a, = peers('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='''
            proxy_ssl_server_name on;
            proxy_ssl_name backend.test;'''))
    assert wait_until(lambda: len(a.checks()) >= 1, 10), srv.error_log()
    assert set(a.sni()) == {'backend.test'}


def test_sni_defaults_to_the_upstream_name(server, peers):
    a, = peers('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='proxy_ssl_server_name on;'))
    assert wait_until(lambda: len(a.checks()) >= 1, 10), srv.error_log()
    assert set(a.sni()) == {'backend'}


def test_no_sni_with_server_name_off(server, peers):
    a, = peers('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='proxy_ssl_name backend.test;'))
    assert wait_until(lambda: len(a.checks()) >= 1, 10), srv.error_log()
    assert set(a.sni()) == {'-'}


def test_match_over_tls(server, peers):
    a, b = peers('a', 'b')
    srv = server(conf((a.port, b.port), 'interval=200ms uri=/hc match=ok', http_extra='''
        match ok {
            status 200;
            header X-Peer ~ "^[ab]$";
            body ~ "ali+ve";
        }'''))
    assert wait_until(lambda: len(a.checks()) >= 2, 10), srv.error_log()
    assert 'unhealthy' not in srv.error_log()
    a.set(body='dead')
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'the response (status 200) does not match "ok" (body)'
    assert served_by(srv.prefix.port, 6) == ['b'] * 6
    a.set(body=None, headers='X-Extra: 1')
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()


def test_plain_http_peer_fails_the_handshake(server, peers):
    a, = peers('a', tls=False)
    srv = server(conf((a.port,), 'interval=200ms uri=/hc'))
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1).startswith('SSL_do_handshake() failed (SSL: ') or \
        m.group(1) == 'peer closed connection in SSL handshake', m.group(1)


def test_handshake_that_never_ends_times_out(server, peers):
    # a listener that accepts TCP connections (the kernel does) and never answers the ClientHello
    mute = socket.socket()
    mute.bind(('127.0.0.1', 0))
    mute.listen(64)
    try:
        port = mute.getsockname()[1]
        a, = peers('a')
        srv = server(conf((port, a.port), 'interval=300ms uri=/hc', loc_extra='proxy_connect_timeout 500ms;'))
        m = wait_log(srv, unhealthy_reason(port), timeout=10)
        assert m, srv.error_log()
        assert m.group(1) == 'timed out (110: Connection timed out) while SSL handshaking'
        # the workers kept serving and checking the other peer meanwhile
        assert served_by(srv.prefix.port, 4) == ['a'] * 4
        assert 'peer 127.0.0.1:%d' % a.port not in srv.error_log()
    finally:
        mute.close()


def test_client_certificate_presented_by_the_probe(server, peers, pki):
    a, = peers('a', client_ca=pki['ca'][0])
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', loc_extra='''
            proxy_ssl_certificate %s;
            proxy_ssl_certificate_key %s;''' % pki['client']))
    assert wait_until(lambda: len(a.checks()) >= 1, 10), srv.error_log()
    assert 'health check of peer' not in srv.error_log()


def test_missing_client_certificate_fails_the_check(server, peers, pki):
    a, = peers('a', client_ca=pki['ca'][0])
    srv = server(conf((a.port,), 'interval=200ms uri=/hc'))
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert a.checks() == []
