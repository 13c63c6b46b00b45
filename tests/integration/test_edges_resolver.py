"""Edges of `resolver` (event/resolver.c, core/dns.c) beyond test_resolver.py: the server addresses a `resolver`
directive accepts and rejects ([IPv6]:port, ports, unknown hosts), a CNAME answered bare (without its target's
records: the target is asked separately, the alias is cached for its TTL), a CNAME loop, and answers that are
malformed (ignored: the request fails when resolver_timeout expires, as if no answer came)."""
import socket
import struct

import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend
from helpers.dnsserver import DnsServer, _enc


class EdgeDns(DnsServer):
    """The test DNS server, plus: CNAMEs answered bare (a stub resolver's view of a server that does not
    chase them), and names answered with a malformed message (`bad`: name -> kind)."""

    def __init__(self):
        super().__init__()
        self.bad = {}

    def _records(self, name, qtype, depth=0):
        e = self.table.get(name)
        if e is not None and not e['rcode'] and e['cname']:
            return 0, [(name, 5, e['ttl'], _enc(e['cname']))]
        return super()._records(name, qtype, depth)

    def _answer(self, msg, transport):
        if len(msg) >= 12:
            from helpers.dnsserver import _name
            name, off = _name(msg, 12)
            kind = self.bad.get(name.lower())
            if kind is not None:
                with self.lock:
                    self.queries.append((name.lower(), 'bad', transport))
                qid = struct.unpack('!H', msg[:2])[0]
                question = msg[12:off + 4]
                if kind == 'short-a':  # an A record of 3 bytes
                    return [struct.pack('!HHHHHH', qid, 0x8180, 1, 1, 0, 0) + question + b'\xc0\x0c' +
                            struct.pack('!HHIH', 1, 1, 60, 3) + b'\x7f\x00\x00']
                if kind == 'cut':  # the answer section announced, then the message ends inside it
                    return [struct.pack('!HHHHHH', qid, 0x8180, 1, 1, 0, 0) + question + b'\xc0\x0c\x00']
        return super()._answer(msg, transport)


@pytest.fixture
def dns():
    d = EdgeDns().start()
    yield d
    d.stop()


@pytest.fixture
def be():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, b'A')
    yield b
    b.stop()


def conf(dns, be, extra=''):
    return simple('''
        resolver 127.0.0.1:%d ipv6=off;
        resolver_timeout 1s;
        %s
        location / {
            proxy_pass http://$arg_host:%d;
        }
    ''' % (dns.port, extra, be.port))


# ---------------------------------------------------------------- the directive's addresses

@pytest.mark.parametrize('spec', ['[::1]:53', '[::1]', '127.0.0.1:5353', 'localhost'])
def test_resolver_addresses_accepted(run_cli, prefix, prog, spec):
    path = prefix.conf(simple('resolver %s; location / { return 204; }' % spec))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r
    assert 'test is successful' in r.err


@pytest.mark.hayate_only  # nginx words some of these differently ("invalid host" / "invalid port")
@pytest.mark.parametrize('spec,msg', [
    ('[::1', 'invalid address'),
    ('[::1]x', 'invalid address'),
    ('[::1]:', 'invalid port'),
    (':53', 'invalid address'),
    ('127.0.0.1:', 'invalid port'),
    ('127.0.0.1:65536', 'invalid port'),
    ('127.0.0.1:5x', 'invalid port'),
    ('127.0.0.1:1234567', 'invalid port'),
    ('no-such-host.invalid', 'host not found'),
])
def test_resolver_address_errors(run_cli, prefix, spec, msg):
    path = prefix.conf(simple('resolver %s; location / { return 204; }' % spec))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0, r
    assert msg in r.err and '%s:' % path in r.err, r.err


def test_resolver_rejected_port_zero_at_its_line(run_cli, prefix):
    path = prefix.conf(simple('resolver 127.0.0.1:0; location / { return 204; }'))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0
    assert 'invalid port' in r.err


# ---------------------------------------------------------------- answers

def test_bare_cname_target_asked_and_alias_cached(server, dns, be):
    dns.set('alias.test', cname='real.test', ttl=60)
    dns.set('real.test', a=['127.0.0.1'], ttl=60)
    srv = server(conf(dns, be))
    r = srv.get('/?host=alias.test')
    assert (r.status, r.body) == (200, b'A')
    assert dns.count('alias.test', 'A') == 1 and dns.count('real.test', 'A') == 1
    # within both TTLs: the alias and its target come from the cache
    for _ in range(3):
        r = srv.get('/?host=alias.test')
        assert (r.status, r.body) == (200, b'A')
    assert dns.count('alias.test', 'A') == 1 and dns.count('real.test', 'A') == 1
    # the target alone is cached too
    assert srv.get('/?host=real.test').status == 200
    assert dns.count('real.test', 'A') == 1


def test_bare_cname_to_a_missing_name_is_502(server, dns, be):
    dns.set('alias.test', cname='gone.test', ttl=60)
    srv = server(conf(dns, be))
    r = srv.get('/?host=alias.test')
    assert r.status == 502
    assert dns.count('gone.test', 'A') == 1
    assert 'alias.test could not be resolved' in srv.error_log()


@pytest.mark.hayate_only  # the words of the log line are hayate's
def test_cname_loop_is_502(server, dns, be):
    dns.set('a.test', cname='b.test', ttl=60)
    dns.set('b.test', cname='a.test', ttl=60)
    srv = server(conf(dns, be))
    r = srv.get('/?host=a.test')
    assert r.status == 502
    assert 'too many CNAMEs while resolving' in srv.error_log()
    # asked again next time (the alias that looped is not kept), and it fails the same way
    assert srv.get('/?host=a.test').status == 502


@pytest.mark.hayate_only  # nginx's words for a malformed answer differ
@pytest.mark.parametrize('kind', ['short-a', 'cut'])
def test_malformed_answer_is_ignored_until_the_timeout(server, dns, be, kind):
    dns.bad['bad.test'] = kind
    srv = server(conf(dns, be))
    r = srv.get('/?host=bad.test')
    assert r.status == 502
    log = srv.error_log()
    assert 'invalid DNS response for bad.test (ignored)' in log, log
    assert 'bad.test could not be resolved (110: Operation timed out)' in log, log
    # a good name on the same resolver still works
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    assert srv.get('/?host=app.test').status == 200


def test_client_gone_while_resolving_is_499(server, dns, be):
    """The client closes while the name is being resolved: the wait is cancelled, the request is logged 499
    (nginx's rd_check_broken_connection), and the resolver keeps answering for others."""
    import socket as _s
    import time as _t
    dns.drop = {'slow.test'}
    srv = server(conf(dns, be, extra='resolver_timeout 5s;').replace('resolver_timeout 1s;', '')
                 .replace('http {', 'http {\n    log_format st "$request_uri $status";\n'
                          '    access_log {tmp}/logs/st.log st;', 1))
    c = _s.create_connection(('127.0.0.1', srv.port), timeout=5)
    c.sendall(b'GET /?host=slow.test HTTP/1.1\r\nHost: x\r\n\r\n')
    assert dns.wait_count('slow.test', 1)
    c.close()
    deadline = _t.monotonic() + 4  # well before resolver_timeout
    line = ''
    while _t.monotonic() < deadline:
        try:
            line = open(srv.tmp + '/logs/st.log').read()
        except FileNotFoundError:
            line = ''
        if '/?host=slow.test' in line:
            break
        _t.sleep(0.05)
    assert '/?host=slow.test 499' in line, line
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    assert srv.get('/?host=app.test').status == 200


def test_name_spellings(server, dns, be):
    """A name in capitals and one with the root's final dot are the same cached name; a malformed name fails at
    once, without a question."""
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    srv = server(conf(dns, be))
    assert srv.get('/?host=APP.Test').status == 200
    assert srv.get('/?host=app.test').status == 200
    assert dns.count('app.test', 'A') == 1
    r = srv.get('/?host=a..test')
    assert r.status == 502
    assert dns.count('a..test') == 0


def test_no_records_of_the_type_is_502_and_cached(server, dns, be):
    """An answer without error and without an address (the name has only AAAA, ipv6=off asks A) fails the
    request, every time. (hayate keeps such an answer 10 s, or valid=; nginx 1.22 asks again: not checked.)"""
    dns.set('v6only.test', aaaa=['::1'], ttl=60)
    srv = server(conf(dns, be))
    assert srv.get('/?host=v6only.test').status == 502
    assert srv.get('/?host=v6only.test').status == 502
    assert dns.count('v6only.test', 'A') >= 1 and dns.count('v6only.test', 'AAAA') == 0
    assert 'v6only.test could not be resolved' in srv.error_log()
