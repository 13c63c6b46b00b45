"""Upstream tries: every server marked down ("no live upstreams", 502), proxy_next_upstream_tries bounding the
tries below the number of servers, proxy_socket_keepalive on, a proxy_bind address that cannot be bound."""
import pytest

from conftest import free_port, IS_NGINX, simple
from helpers.backend import Backend
from helpers.process import wait_log


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def test_all_servers_down_is_502(server, be):
    srv = server('''
http {
    upstream u { server 127.0.0.1:%d down; server 127.0.0.1:%d down; }
    server { listen 127.0.0.1:{port}; location / { proxy_pass http://u; } }
}
''' % (be.port, free_port()))
    assert srv.get('/').status == 502
    wait_log(srv, r'no live upstreams while connecting to upstream')
    assert be.requests == []


def test_tries_bounded_below_the_servers(server, be):
    dead = [free_port() for _ in range(3)]
    srv = server('''
http {
    log_format ua '$upstream_addr';
    access_log {tmp}/logs/ua.log ua;
    upstream u { server 127.0.0.1:%d; server 127.0.0.1:%d; server 127.0.0.1:%d; server 127.0.0.1:%d backup; }
    server { listen 127.0.0.1:{port};
             location / { proxy_pass http://u; proxy_next_upstream_tries 2; proxy_socket_keepalive on; } }
}
''' % (dead[0], dead[1], dead[2], be.port))
    assert srv.get('/').status == 502
    srv.stop()
    tried = open(srv.tmp + '/logs/ua.log').read().split()[0]
    assert tried.count(',') == 1, tried  # two tries, not three (and not the backup)


def test_socket_keepalive_serves(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_socket_keepalive on; }' % be.port))
    assert srv.get('/').status == 200


def test_bind_to_an_address_not_here_is_502(server, be):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:%d; proxy_bind 192.0.2.1; }' % be.port))
    srv.ignore_log = r'\[crit\].*bind'
    # nginx 1.22 answers 500 without trying another server; hayate counts it as a failed try (502). Reported,
    # not yet aligned (upstream/upstream.c).
    assert srv.get('/').status == (500 if IS_NGINX else 502)
    wait_log(srv, r'\[crit\].*bind.*\(99: Cannot assign requested address\)')
    assert be.requests == []
