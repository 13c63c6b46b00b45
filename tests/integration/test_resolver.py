"""resolver / resolver_timeout and their users (issue 12): proxy_pass with variables naming a host that is no
upstream{} is resolved at request time by the location's resolver (a DNS server of the test's own:
helpers/dnsserver.py), answers are cached for their TTL (or valid=), an unresolvable name or a resolver that does
not answer is nginx's 502 with its log line, no resolver is nginx's "no resolver defined" 502; `server NAME
resolve` in an upstream{} with a zone follows the name's addresses (nginx 1.27.3; Debian's nginx 1.22 has no
`resolve`: those tests are hayate only). nginx-compatible configs: HY_BIN=/usr/sbin/nginx runs the rest."""
import signal
import socket
import threading
import time

import pytest

from conftest import simple, IS_NGINX
from helpers.backend import Backend
from helpers.dnsserver import DnsServer
from helpers.http1 import build_request


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


@pytest.fixture
def be2():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, b'B')
    yield b
    b.stop()


def wait_log(srv, text, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in srv.error_log():
            return True
        time.sleep(0.02)
    return False


def proxy_conf(dns, be, extra='', resolver_args=''):
    return simple('''
        resolver 127.0.0.1:%d %s;
        %s
        location / {
            set $target app.test;
            proxy_pass http://$target:%d;
        }
        location /h/ {
            proxy_pass http://$arg_host:%d;
        }
    ''' % (dns.port, resolver_args, extra, be.port, be.port))


def test_resolved_at_request_time(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    r = srv.get('/x')
    assert r.status == 200 and r.body == b'A'
    assert be.requests[-1].target == '/x'
    assert dns.count('app.test', 'A') >= 1


def test_cached_within_ttl(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    for _ in range(5):
        assert srv.get('/').status == 200
    assert dns.count('app.test', 'A') == 1


def test_reresolved_after_ttl(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    srv = server(proxy_conf(dns, be))
    assert srv.get('/').status == 200
    assert dns.count('app.test', 'A') == 1
    deadline = time.monotonic() + 10
    while dns.count('app.test', 'A') < 2 and time.monotonic() < deadline:
        assert srv.get('/').status == 200
        time.sleep(0.2)
    assert dns.count('app.test', 'A') >= 2


def test_valid_overrides_ttl(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=0)
    srv = server(proxy_conf(dns, be, resolver_args='valid=60s'))
    for _ in range(4):
        assert srv.get('/').status == 200
        time.sleep(0.3)
    assert dns.count('app.test', 'A') == 1


def test_ttl_zero_asks_every_time(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=0)
    srv = server(proxy_conf(dns, be))
    for _ in range(3):
        assert srv.get('/').status == 200
        time.sleep(1.1)  # nginx's cache has a one-second clock
    assert dns.count('app.test', 'A') >= 2


def test_nxdomain_is_502(server, dns, be):
    srv = server(proxy_conf(dns, be))
    r = srv.get('/h/?host=nowhere.test')
    assert r.status == 502
    assert wait_log(srv, 'nowhere.test could not be resolved (3: Host not found)')


def test_servfail_is_502(server, dns, be):
    dns.set('broken.test', rcode=2)
    srv = server(proxy_conf(dns, be))
    assert srv.get('/h/?host=broken.test').status == 502
    assert wait_log(srv, 'broken.test could not be resolved (2: Server failure)')


def test_timeout_is_502(server, dns, be):
    dns.drop = {'*'}
    srv = server(proxy_conf(dns, be, extra='resolver_timeout 500ms;'))
    r = srv.get('/h/?host=slow.test')
    assert r.status == 502
    assert wait_log(srv, 'slow.test could not be resolved (110: Operation timed out)')


def test_no_resolver_is_502(server, be):
    srv = server(simple('''
        location / { proxy_pass http://$arg_host:%d; }
    ''' % be.port))
    r = srv.get('/?host=app.test')
    assert r.status == 502
    assert wait_log(srv, 'no resolver defined to resolve app.test')


def test_cname_followed(server, dns, be):
    dns.set('app.test', cname='real.test', ttl=60)
    dns.set('real.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    assert srv.get('/').status == 200


def test_cname_chain_in_answer(server, dns, be):
    dns.set('app.test', cname='mid.test', ttl=60)
    dns.set('mid.test', cname='real.test', ttl=60)
    dns.set('real.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    assert srv.get('/').status == 200


def test_ipv6_off_asks_a_only(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be, resolver_args='ipv6=off'))
    assert srv.get('/').status == 200
    assert dns.count('app.test', 'A') == 1
    assert dns.count('app.test', 'AAAA') == 0


def test_ipv6_on_by_default(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    assert srv.get('/').status == 200
    assert dns.wait_count('app.test', 1, 'AAAA')


def test_aaaa_only_name(server, dns, be):
    # ::1 has no listener of the backend: the address is the one tried (502 with its connect error)
    dns.set('six.test', aaaa=['::1'], ttl=60)
    srv = server(proxy_conf(dns, be))
    r = srv.get('/h/?host=six.test')
    assert r.status == 502
    assert wait_log(srv, '[::1]:%d' % be.port)


def test_second_server_when_first_silent(server, dns, be):
    silent = DnsServer().start()
    silent.drop = {'*'}
    try:
        dns.set('app.test', a=['127.0.0.1'], ttl=60)
        srv = server(simple('''
            resolver 127.0.0.1:%d 127.0.0.1:%d;
            resolver_timeout 10s;
            location / { proxy_pass http://$arg_host:%d; }
        ''' % (silent.port, dns.port, be.port)))
        for _ in range(2):  # whichever server a question goes to first, the answer comes (nginx asks the
            # next server after 5 s)
            c = srv.conn(timeout=15)
            r = c.request(build_request('GET', '/?host=app.test', 'localhost', [('Connection', 'close')]))
            c.close()
            assert r.status == 200
            dns.set('app.test', a=['127.0.0.1'], ttl=0)
            time.sleep(1.1)  # past the cached answer (nginx counts in seconds)
    finally:
        silent.stop()


def test_wrong_id_ignored(server, dns, be):
    # an answer with another id (a spoofing attempt) is ignored; the real answer is used
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    dns.wrong_id = {'app.test'}
    srv = server(proxy_conf(dns, be))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'A'


def test_upstream_name_is_not_resolved(server, dns, be):
    srv = server(simple('''
        resolver 127.0.0.1:%d;
        location / { proxy_pass http://$arg_u; }
    ''' % dns.port, http_extra='upstream named { server 127.0.0.1:%d; }' % be.port))
    assert srv.get('/?u=named').status == 200
    assert dns.count('named') == 0


def test_resolver_in_location_overrides(server, dns, be):
    other = DnsServer().start()
    try:
        other.set('app.test', a=['127.0.0.1'], ttl=60)
        srv = server(simple('''
            resolver 127.0.0.1:%d;
            location / { resolver 127.0.0.1:%d; proxy_pass http://$arg_host:%d; }
        ''' % (dns.port, other.port, be.port)))
        assert srv.get('/?host=app.test').status == 200
        assert dns.count('app.test') == 0 and other.count('app.test') >= 1
    finally:
        other.stop()


@pytest.mark.parametrize('args,msg', [
    ('127.0.0.1:0', 'invalid port'),
    ('127.0.0.1 valid=x', 'invalid parameter'),
    ('127.0.0.1 ipv6=maybe', 'invalid parameter'),
])
def test_resolver_conf_errors(run_cli, prefix, args, msg):
    conf = prefix.conf(simple('resolver %s; location / { return 204; }' % args))
    r = run_cli(['-t', '-c', conf])
    assert r.rc != 0
    assert msg in r.err


# ---------------------------------------------------------------- server ... resolve (nginx >= 1.27.3)

needs_resolve = pytest.mark.skipif(IS_NGINX, reason="Debian's nginx 1.22 has no `server ... resolve`")


class V6Backend:
    """Answers "B" on [::1]:port (the same port as the IPv4 backend: a name moving from 127.0.0.1 to ::1 moves
    from backend A to backend B while the port in the configuration stays)."""

    def __init__(self, port):
        import http.server
        import socketserver

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header('Content-Length', '1')
                self.end_headers()
                self.wfile.write(b'B')

            def log_message(self, *a):
                pass

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            address_family = socket.AF_INET6
            daemon_threads = True
            allow_reuse_address = True

        self.srv = S(('::1', port), H)
        self.t = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.t.start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def wait_body(srv, body, path='/', timeout=10.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        r = srv.get(path)
        last = (r.status, r.body)
        if (body is None and r.status == 502) or (body is not None and r.status == 200 and r.body == body):
            return True
        time.sleep(0.1)
    raise AssertionError('never got %r, last %r' % (body, last))


def test_proxy_pass_follows_dns_change(server, dns, be):
    v6 = V6Backend(be.port)
    try:
        dns.set('app.test', a=['127.0.0.1'], ttl=1)
        srv = server(proxy_conf(dns, be))
        assert srv.get('/').body == b'A'
        dns.set('app.test', aaaa=['::1'], ttl=1)
        wait_body(srv, b'B')
    finally:
        v6.stop()


@needs_resolve
def test_server_resolve_follows_changes(server, dns, be):
    v6 = V6Backend(be.port)
    try:
        dns.set('app.test', a=['127.0.0.1'], ttl=1)
        srv = server(simple('''
            location / { proxy_pass http://dyn; }
        ''', http_extra='''
            resolver 127.0.0.1:%d valid=1s;
            upstream dyn { zone dyn 64k; server app.test:%d resolve; }
        ''' % (dns.port, be.port)))
        wait_body(srv, b'A')                         # backend A
        dns.set('app.test', aaaa=['::1'], ttl=1)
        wait_body(srv, b'B')                         # the name moved: backend B
        dns.set('app.test', rcode=3, ttl=1)
        wait_body(srv, None)                         # no address: no peer from it, 502
        assert wait_log(srv, 'app.test could not be resolved (3: Host not found)')
        assert 'no live upstreams' in srv.error_log()
        dns.set('app.test', a=['127.0.0.1'], ttl=1)
        wait_body(srv, b'A')
    finally:
        v6.stop()


@needs_resolve
def test_server_resolve_keeps_peers_on_servfail(server, dns, be):
    # a failure to get an answer keeps the peers (nginx 1.27.3); only a name that does not exist removes them
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    srv = server(simple('''
        location / { proxy_pass http://dyn; }
    ''', http_extra='''
        resolver 127.0.0.1:%d valid=1s;
        upstream dyn { zone dyn 64k; server app.test:%d resolve; }
    ''' % (dns.port, be.port)))
    wait_body(srv, b'A')
    dns.set('app.test', rcode=2, ttl=1)
    n = dns.count('app.test', 'A')
    assert dns.wait_count('app.test', n + 2, 'A', timeout=10)  # asked again (twice: past one answer's use)
    assert srv.get('/').body == b'A'
    assert wait_log(srv, 'app.test could not be resolved (2: Server failure)')


@needs_resolve
def test_server_resolve_addresses_survive_reload(server, dns, be):
    # the zone keeps what was resolved (nginx's "preresolve"): after a reload, with the DNS server failing, the
    # new generation still has the peers
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    conf = simple('''
        location / { proxy_pass http://dyn; }
    ''', http_extra='''
        resolver 127.0.0.1:%d valid=1s;
        upstream dyn { zone dyn 64k; server app.test:%d resolve; }
    ''' % (dns.port, be.port))
    srv = server(conf)
    wait_body(srv, b'A')
    dns.set('app.test', rcode=2)
    srv.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while 'reconfigured' not in srv.error_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'reconfigured' in srv.error_log()
    r = srv.get('/')
    assert r.status == 200 and r.body == b'A'


@needs_resolve
def test_server_resolve_with_static_peer(server, dns, be):
    dns.set('app.test', rcode=3)
    srv = server(simple('''
        location / { proxy_pass http://dyn; }
    ''', http_extra='''
        upstream dyn { zone dyn 64k; resolver 127.0.0.1:%d; server app.test:1 resolve; server 127.0.0.1:%d; }
    ''' % (dns.port, be.port)))
    assert srv.get('/').body == b'A'
    assert dns.wait_count('app.test', 1)


@needs_resolve
@pytest.mark.parametrize('ups,msg', [
    ('upstream u { server app.test resolve; }', 'to be in shared memory'),
    ('upstream u { zone u 64k; server app.test resolve; }', 'no resolver defined to resolve names at run time'),
])
def test_server_resolve_conf_errors(run_cli, prefix, ups, msg):
    conf = prefix.conf(simple('location / { proxy_pass http://u; }', http_extra=ups))
    r = run_cli(['-t', '-c', conf])
    assert r.rc != 0
    assert msg in r.err


def test_truncated_answer_asked_over_tcp(server, dns, be):
    dns.set('app.test', a=['127.0.0.1'], ttl=60)
    dns.truncate = {'app.test'}
    srv = server(proxy_conf(dns, be))
    r = srv.get('/')
    assert r.status == 200 and r.body == b'A'
    assert dns.count('app.test', 'A', transport='udp') >= 1
    assert dns.count('app.test', 'A', transport='tcp') == 1


def test_fastcgi_pass_with_variables_resolved(server, dns, prefix):
    from helpers.apppeers import fcgi_peer
    peer = fcgi_peer(prefix.tmp, 'r', unix=False)
    try:
        port = int(peer.addr.rsplit(':', 1)[1])
        dns.set('fcgi.test', a=['127.0.0.1'], ttl=60)
        srv = server(simple('''
            resolver 127.0.0.1:%d;
            location / {
                fastcgi_pass $arg_h:%d;
                fastcgi_param REQUEST_URI /conn;
            }
        ''' % (dns.port, port)))
        r = srv.get('/?h=fcgi.test')
        assert r.status == 200 and b'name=r' in r.body
        assert srv.get('/?h=nowhere.test').status == 502
        assert wait_log(srv, 'nowhere.test could not be resolved (3: Host not found)')
    finally:
        peer.stop()


def test_master_reloads_with_resolvers_and_implicit_upstreams(server, dns, be):
    # a reload releases the old generation in the master and the workers: resolvers, `server ... resolve` groups
    # and implicit upstreams (proxy_pass host:port) must all be released cleanly (the master once crashed here)
    from helpers.process import master_conf
    dns.set('app.test', a=['127.0.0.1'], ttl=1)
    resolve = '' if IS_NGINX else 'upstream dyn { zone dyn 64k; server app.test:%d resolve; }' % be.port
    body = '''
        resolver 127.0.0.1:%d valid=1s;
        %s
        server {
            listen 127.0.0.1:{port};
            location /fixed { proxy_pass http://127.0.0.1:%d; }
            location /var { proxy_pass http://$arg_h:%d; }
            %s
        }
    ''' % (dns.port, resolve, be.port, be.port, '' if IS_NGINX else 'location /dyn { proxy_pass http://dyn; }')
    srv = server(master_conf(body, workers=1), full=True)
    paths = ['/fixed', '/var?h=app.test'] + ([] if IS_NGINX else ['/dyn'])
    for n in range(2):
        for p in paths:
            wait_body(srv, b'A', path=p)
        srv.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while srv.error_log().count('reconfiguring') < n + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    for p in paths:
        wait_body(srv, b'A', path=p)
    assert srv.alive()
