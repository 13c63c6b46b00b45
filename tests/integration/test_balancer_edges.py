"""Load-balancing methods on the paths the other tests miss: hash and ip_hash retrying past a dead peer (the next
hash attempt), hash with an empty key (round robin), hash consistent when its peer is dead, ip_hash for an IPv6
client (the whole address), random two least_conn; and nginx's hash functions to the bit (Cache::Memcached's
distribution for `hash`, Cache::Memcached::Fast's ketama ring for `consistent`)."""
import bisect
import struct
import zlib

import pytest

from conftest import free_port
from helpers.backend import Backend


def named_backends(n, name):
    """n backends, each answering its name (name % index) to every request, stopped after the test."""
    bs = [Backend().start() for _ in range(n)]
    for i, b in enumerate(bs):
        b.handler = (lambda v: (lambda r: Backend.reply(200, v)))(name % i)
    yield bs
    for b in bs:
        b.stop()


@pytest.fixture
def bes():
    yield from named_backends(2, b'be%d')


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


# ---------------------------------------------------------------- nginx's hash functions, to the bit

def cache_memcached_pick(key, weights):
    """Cache::Memcached's (and nginx's `hash`) choice on the first try: ((crc32(KEY) >> 16) & 0x7fff) modulo the
    total weight, walked over the servers in order."""
    w = ((zlib.crc32(key.encode()) >> 16) & 0x7fff) % sum(weights)
    for i, wt in enumerate(weights):
        if w < wt:
            return i
        w -= wt


def ketama_pick(key, servers, weights):
    """Cache::Memcached::Fast's ketama ring (nginx's `hash ... consistent`): weight * 160 points per server, each
    crc32(HOST \\0 PORT PREV) with PREV the point before it (little-endian, 0 first); the key goes to the first
    point at or after crc32(KEY), past the last one back to the first."""
    points = {}
    for i, (s, wt) in enumerate(zip(servers, weights)):
        host, port = s.rsplit(':', 1)
        base, prev = (host + '\0' + port).encode(), 0
        for _ in range(wt * 160):
            prev = zlib.crc32(base + struct.pack('<I', prev))
            points.setdefault(prev, i)
    ring = sorted(points)
    h = zlib.crc32(key.encode())
    at = bisect.bisect_left(ring, h) % len(ring)
    return points[ring[at]]


@pytest.fixture
def three():
    yield from named_backends(3, b'%d')


@pytest.mark.parametrize('consistent', [False, True], ids=['hash', 'consistent'])
@pytest.mark.parametrize('weights', [(1, 1, 1), (2, 3, 1)], ids=['equal', 'weighted'])
def test_hash_picks_the_server_nginx_and_memcached_clients_pick(server, three, consistent, weights):
    """A key reaches the server nginx would send it to (nginx-tests upstream_hash_memcached.t): a cache sharded by
    an application's memcached client is read by `memcached_pass` (or proxied) from the same server."""
    servers = ['127.0.0.1:%d' % b.port for b in three]
    lines = ''.join('server %s weight=%d;' % sw for sw in zip(servers, weights))
    srv = server('''
http {
    upstream u { hash $arg_k%s; %s }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; } }
}
''' % (' consistent' if consistent else '', lines))
    for k in ['%d' % i for i in range(1, 41)] + ['user:42', '/images/logo.png']:
        want = ketama_pick(k, servers, weights) if consistent else cache_memcached_pick(k, weights)
        r = srv.get('/?k=' + k)
        assert r.body == b'%d' % want, (k, r.body)
