"""resolver edges (nginx's resolver directive and its error messages): the DNS error codes nginx names (Format
error, Unimplemented, Operation refused, and an unknown code), a truncated answer whose TCP retry cannot connect,
requests that wait together on one question, invalid names, a bare IPv6 resolver address, and the `-t` errors of
resolver addresses (hayate's limit of 16 servers, a host name too long)."""
import socket
import threading

import pytest

from conftest import simple
from helpers.backend import Backend
from helpers.dnsserver import DnsServer
from helpers.process import wait_log


@pytest.fixture
def dns():
    d = DnsServer().start()
    yield d
    d.stop()


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, b'A')
    yield b
    b.stop()


def conf(dns, be, timeout='1s'):
    return simple('''
        resolver 127.0.0.1:%d ipv6=off;
        resolver_timeout %s;
        location / {
            proxy_pass http://$arg_host:%d;
        }''' % (dns.port, timeout, be.port))


@pytest.mark.parametrize('rcode,text', [(4, 'Unimplemented'), (5, 'Operation refused')])
def test_dns_error_codes_named(server, dns, be, rcode, text):
    dns.set('bad.test', rcode=rcode)
    srv = server(conf(dns, be))
    assert srv.get('/?host=bad.test').status == 502
    assert wait_log(srv, r'bad\.test could not be resolved \(%d: %s\)' % (rcode, text)), srv.error_log()


@pytest.mark.parametrize('rcode,text', [(1, 'Format error'), (6, 'Unknown error'), (9, 'Unknown error')])
def test_dns_errors_that_are_no_answer(server, dns, be, rcode, text):
    """nginx logs a format error or an unknown code as "DNS error" and keeps waiting: the request times out."""
    dns.set('bad.test', rcode=rcode)
    srv = server(conf(dns, be, '500ms'))
    assert srv.get('/?host=bad.test').status == 502
    assert wait_log(srv, r'DNS error \(%d: %s\), query id:\d+' % (rcode, text)), srv.error_log()
    assert wait_log(srv, r'bad\.test could not be resolved \(110: Operation timed out\)'), srv.error_log()


def test_truncated_answer_and_tcp_refused_times_out(server, dns, be):
    dns.set('tc.test', a=['127.0.0.1'])
    dns.truncate = {'tc.test'}
    dns.tcp.shutdown(socket.SHUT_RDWR)  # nobody listens for the TCP retry
    dns.tcp.close()
    srv = server(conf(dns, be, '700ms'))
    assert srv.get('/?host=tc.test').status == 502
    assert wait_log(srv, r'tc\.test could not be resolved \(110: Operation timed out\)'), srv.error_log()


def test_requests_wait_together_on_one_question(server, dns, be):
    dns.set('slow.test', a=['127.0.0.1'])
    dns.delay = 0.4
    srv = server(conf(dns, be))
    out = []

    def one():
        out.append(srv.get('/?host=slow.test').status)
    ts = [threading.Thread(target=one) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert out == [200, 200, 200]
    assert dns.count('slow.test', 'A') == 1


@pytest.mark.parametrize('host', ['a..b.test',
                                  pytest.param('x' * 64 + '.test', marks=pytest.mark.hayate_only)])  # nginx asks it
def test_invalid_names_are_not_asked(server, dns, be, host):
    srv = server(conf(dns, be))
    assert srv.get('/?host=%s' % host).status == 502
    assert dns.count(host) == 0


def test_trailing_dot_name(server, dns, be):
    dns.set('dot.test', a=['127.0.0.1'])
    srv = server(conf(dns, be))
    r = srv.get('/?host=dot.test.')
    assert r.status == 200 and r.body == b'A', r


@pytest.mark.hayate_only  # nginx: invalid port in resolver "::1"
def test_bare_ipv6_resolver_address(run_cli, prefix):
    path = prefix.conf(simple('resolver ::1 127.0.0.1:53; location / { return 204; }'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r


@pytest.mark.hayate_only
def test_too_many_resolvers(run_cli, prefix):
    path = prefix.conf(simple('resolver %s; location / { return 204; }' % ' '.join(
        '127.0.0.%d' % i for i in range(1, 18))))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0, r
    assert 'too many resolvers' in r.err and '%s:' % path in r.err, r.err


@pytest.mark.hayate_only
def test_resolver_host_too_long(run_cli, prefix):
    path = prefix.conf(simple('resolver %s:53; location / { return 204; }' % ('h' * 300)))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0, r
    assert 'invalid address' in r.err, r.err
