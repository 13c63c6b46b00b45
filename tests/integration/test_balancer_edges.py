"""Load-balancing methods on the paths the other tests miss: hash and ip_hash retrying past a dead peer (the next
hash attempt), hash with an empty key (round robin), hash consistent when its peer is dead, ip_hash for an IPv6
client (the whole address), random two least_conn."""
import pytest

from conftest import free_port
from helpers.backend import Backend


@pytest.fixture
def bes():
    bs = [Backend().start() for _ in range(2)]
    for i, b in enumerate(bs):
        b.handler = (lambda n: (lambda r: Backend.reply(200, n)))(b'be%d' % i)
    yield bs
    for b in bs:
        b.stop()


def conf(bes, method, dead=True, listen='listen 127.0.0.1:{port};'):
    servers = ''.join('server 127.0.0.1:%d;' % b.port for b in bes)
    if dead:
        servers = 'server 127.0.0.1:%d;' % free_port() + servers  # nobody listens there
    return '''
http {
    upstream u { %s %s }
    server { %s location / { proxy_pass http://u; proxy_next_upstream error; } }
}
''' % (method, servers, listen)


@pytest.mark.parametrize('method', ['hash $arg_k;', 'hash $arg_k consistent;', 'ip_hash;', 'random;',
                                    'random two least_conn;', 'least_conn;'])
def test_every_request_served_despite_a_dead_peer(server, bes, method):
    srv = server(conf(bes, method))
    got = set()
    for k in range(12):
        r = srv.get('/?k=%d' % k)
        assert r.status == 200, (k, r.status)
        got.add(r.body)
    assert got <= {b'be0', b'be1'}
    srv.ignore_log = r'connect\(\) failed'


def test_hash_with_an_empty_key_is_round_robin(server, bes):
    srv = server(conf(bes, 'hash $arg_k;', dead=False))
    assert {srv.get('/').body for _ in range(6)} == {b'be0', b'be1'}  # no key: spread
    assert len({srv.get('/?k=same').body for _ in range(6)}) == 1      # one key: one peer


def test_ip_hash_for_an_ipv6_client(server, bes):
    srv = server(conf(bes, 'ip_hash;', dead=False, listen='listen [::1]:{port};'), wait_host='::1')
    conn = lambda: srv.conn(host='::1')
    bodies = set()
    for _ in range(6):
        c = conn()
        r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        c.close()
        assert r.status == 200
        bodies.add(r.body)
    assert len(bodies) == 1  # one client address, one peer
