"""`server NAME resolve service=S` in an upstream{} with a zone (nginx 1.27.3): the workers ask for the SRV
records of `_S._tcp.NAME` (S without a dot; else `S.NAME`), resolve each record's target and make peers on the
records' ports, with the records' weights; the lowest priority's records are primary peers, the others backup
(with `backup` on the server: the lowest priority's are backup, the others left out). The DNS server is the
tests' own (helpers/dnsserver.py, SRV with compressed targets). Debian's nginx 1.22 has neither `resolve` nor
`service=`: hayate only (nginx-tests upstream_service*.t cover nginx's own behaviour)."""
import signal
import time

import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend
from helpers.dnsserver import DnsServer

pytestmark = pytest.mark.skipif(IS_NGINX, reason="Debian's nginx 1.22 has no `server ... resolve service=`")


@pytest.fixture
def dns():
    d = DnsServer().start()
    yield d
    d.stop()


def backend(body):
    b = Backend().start()
    b.handler = lambda r: b.reply(200, body)
    return b


@pytest.fixture
def bes():
    bs = [backend(b'A'), backend(b'B'), backend(b'C')]
    yield bs
    for b in bs:
        b.stop()


def conf(dns, server_line, extra=''):
    return simple('''
        location / { proxy_pass http://dyn; proxy_connect_timeout 1s; add_header X-Up $upstream_addr always; }
    ''', http_extra='''
        resolver 127.0.0.1:%d valid=1s;
        resolver_timeout 1s;
        upstream dyn { zone dyn 64k; %s %s }
    ''' % (dns.port, extra, server_line))


def wait_body(srv, body, timeout=10.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        r = srv.get('/')
        last = (r.status, r.body)
        if (body is None and r.status == 502) or (body is not None and r.status == 200 and r.body == body):
            return True
        time.sleep(0.1)
    raise AssertionError('wanted %r, last %r' % (body, last))


def bodies(srv, n):
    out = []
    for _ in range(n):
        r = srv.get('/')
        assert r.status == 200
        out.append(r.body)
    return out


def test_srv_port_and_target_followed(server, dns, bes):
    a, b, _ = bes
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    dns.set('_http._tcp.app.test', srv=[(1, 5, a.port, 'app.test')], ttl=1)
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    assert srv.get('/').header('X-Up') == '127.0.0.1:%d' % a.port
    assert dns.count('_http._tcp.app.test', 'SRV') >= 1
    dns.set('_http._tcp.app.test', srv=[(1, 5, b.port, 'app.test')], ttl=1)  # the record moved to B's port
    wait_body(srv, b'B')
    dns.set('_http._tcp.app.test', rcode=3, ttl=1)  # the service is gone: no peer, 502
    wait_body(srv, None)
    assert 'service _http._tcp.app.test of app.test could not be resolved (3: Host not found)' in srv.error_log()


@pytest.mark.parametrize('service,qname', [('_http._tcp', '_http._tcp.app.test'), ('web.svc', 'web.svc.app.test')])
def test_dotted_service_is_joined(server, dns, bes, service, qname):
    a = bes[0]
    dns.set('app.test', a=['127.0.0.1'])
    dns.set(qname, srv=[(1, 1, a.port, 'app.test')])
    srv = server(conf(dns, 'server app.test resolve service=%s;' % service))
    wait_body(srv, b'A')
    assert dns.count(qname, 'SRV') >= 1


def test_lowest_priority_primary_others_backup(server, dns, bes):
    a, b, _ = bes
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', srv=[(10, 1, a.port, 'app.test'), (20, 1, b.port, 'app.test')], ttl=1)
    srv = server(conf(dns, 'server app.test resolve service=http max_fails=0;'))
    wait_body(srv, b'A')
    assert bodies(srv, 6) == [b'A'] * 6  # the priority-20 record is a backup peer
    a.stop()  # the primary refuses: the backup answers
    wait_body(srv, b'B')


def test_backup_server_takes_lowest_priority_only(server, dns, bes):
    a, b, c = bes
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', srv=[(10, 1, a.port, 'app.test'), (20, 1, b.port, 'app.test')])
    c.stop()  # the primary static peer refuses: the backups serve
    srv = server(conf(dns, 'server 127.0.0.1:%d max_fails=0; server app.test resolve service=http backup;' % c.port))
    wait_body(srv, b'A')
    assert set(bodies(srv, 6)) == {b'A'}  # the priority-20 record is left out


def test_srv_weights(server, dns, bes):
    a, b, _ = bes
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', srv=[(1, 3, a.port, 'app.test'), (1, 1, b.port, 'app.test')], ttl=1)
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    got = bodies(srv, 8)
    assert got.count(b'A') == 6 and got.count(b'B') == 2


def test_server_weight_overrides_srv_weight(server, dns, bes):
    a, b, _ = bes
    dns.set('app.test', a=['127.0.0.1'])
    # weight=2 on the server: both peers weigh 2 whatever the records say
    dns.set('_http._tcp.app.test', srv=[(1, 7, a.port, 'app.test'), (1, 1, b.port, 'app.test')])
    srv = server(conf(dns, 'server app.test resolve service=http weight=2;'))
    wait_body(srv, b'A')
    got = bodies(srv, 8)
    assert got.count(b'A') == 4 and got.count(b'B') == 4


def test_targets_resolved_with_cname_and_several_addresses(server, dns, bes):
    a, b, _ = bes
    dns.set('one.test', a=['127.0.0.1'])
    dns.set('two.test', cname='one.test')
    dns.set('_http._tcp.app.test', srv=[(1, 1, a.port, 'one.test'), (1, 1, b.port, 'two.test')])
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    assert set(bodies(srv, 4)) == {b'A', b'B'}


def test_srv_name_alias_followed(server, dns, bes):
    a = bes[0]
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', cname='_http._tcp.real.test')
    dns.set('_http._tcp.real.test', srv=[(1, 1, a.port, 'app.test')])
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')


def test_failures_keep_peers(server, dns, bes):
    a = bes[0]
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    dns.set('_http._tcp.app.test', srv=[(1, 1, a.port, 'app.test')], ttl=1)
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    # the SRV question fails (SERVFAIL): the peers stay
    dns.set('_http._tcp.app.test', rcode=2, ttl=1)
    n = dns.count('_http._tcp.app.test', 'SRV')
    assert dns.wait_count('_http._tcp.app.test', n + 2, 'SRV', timeout=10)
    assert srv.get('/').body == b'A'
    # the target's question fails: the peers stay too
    dns.set('_http._tcp.app.test', srv=[(1, 1, a.port, 'app.test')], ttl=1)
    dns.set('app.test', rcode=2, ttl=1)
    n = dns.count('app.test', 'A')
    assert dns.wait_count('app.test', n + 2, 'A', timeout=10)
    assert srv.get('/').body == b'A'
    # a target without addresses: no peer
    dns.set('app.test', a=[], ttl=1)
    wait_body(srv, None)


def test_truncated_srv_answer_asked_over_tcp(server, dns, bes):
    a = bes[0]
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', srv=[(1, 1, a.port, 'app.test')])
    dns.truncate = {'_http._tcp.app.test'}
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    assert dns.count('_http._tcp.app.test', 'SRV', transport='tcp') >= 1


def test_peers_survive_reload(server, dns, bes):
    a = bes[0]
    dns.set('app.test', a=['127.0.0.1'])
    dns.set('_http._tcp.app.test', srv=[(1, 1, a.port, 'app.test')], ttl=1)
    srv = server(conf(dns, 'server app.test resolve service=http;'))
    wait_body(srv, b'A')
    dns.set('_http._tcp.app.test', rcode=2)
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while 'reconfigured' not in srv.error_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'reconfigured' in srv.error_log()
    r = srv.get('/')
    assert r.status == 200 and r.body == b'A'  # the zone kept the SRV peers (port from the record)


@pytest.mark.parametrize('line,msg', [
    ('server app.test service=http;', 'service upstream "app.test" requires "resolve" parameter'),
    ('server app.test:80 resolve service=http;', 'service upstream "app.test:80" may not have port'),
    ('server 127.0.0.1 resolve service=http;', 'service upstream "127.0.0.1" requires domain name'),
    ('server app.test resolve service=;', 'service is empty'),
])
def test_conf_errors(run_cli, prefix, line, msg):
    c = prefix.conf(simple('location / { proxy_pass http://u; }',
                           http_extra='resolver 127.0.0.1; upstream u { zone u 64k; %s }' % line))
    r = run_cli(['-t', '-c', c])
    assert r.rc != 0
    assert msg in r.err
