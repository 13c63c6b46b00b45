"""Edges of `listen` addresses (event/listen.c hy_listen_parse): each malformed address is refused by -t with
nginx's words, the directive and the file:line; the accepted spellings of IPv6, wildcard and host-only
addresses start."""
import re

import pytest

from conftest import simple

LONG = 'a' * 300


def line_of(text, needle):
    for i, l in enumerate(text.split('\n'), 1):
        if needle in l:
            return i
    raise AssertionError(needle)


@pytest.mark.parametrize('addr,msg', [
    ('127.0.0.1:0', 'invalid port in "127.0.0.1:0"'),
    ('127.0.0.1:65536', 'invalid port in "127.0.0.1:65536"'),
    ('127.0.0.1:x', 'invalid port in "127.0.0.1:x"'),
    ('[::1]:0', 'invalid port in "[::1]:0"'),
    ('[::1]x', 'invalid host in "[::1]x"'),
    ('[::1', 'invalid host in "[::1"'),
    ('[::zz]:80', 'invalid IPv6 address in "[::zz]:80"'),
    ('no-such-host.invalid:80', 'host not found in "no-such-host.invalid:80"'),
    ('no-such-host.invalid', 'host not found in "no-such-host.invalid"'),
    ('unix:', 'no path in the unix domain socket in "unix:"'),
    ('unix:/tmp/' + 'x' * 120, 'too long path in the unix domain socket in "unix:/tmp/'),
])
def test_listen_address_errors(prefix, run_cli, prog, addr, msg):
    text = prefix.render(simple('return 204;', listen='listen %s;' % addr))
    path = prefix.conf(simple('return 204;', listen='listen %s;' % addr))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    assert msg in r.err, r.err
    assert 'of the "listen" directive in %s:%d' % (path, line_of(open(path).read(), 'listen ')) in r.err, r.err


@pytest.mark.parametrize('addr', ['[::1]:{port}', '[::1]', '[::]:{port}', '*:{port}', '{port}', 'localhost:{port}',
                                  'localhost', 'unix:{tmp}/x.sock'])
def test_listen_address_spellings_accepted(prefix, run_cli, prog, addr):
    path = prefix.conf(simple('return 204;', listen='listen %s;' % addr))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r
    assert 'test is successful' in r.err


def test_listen_host_name_resolved(server):
    """A host name is resolved when the configuration is read: `localhost` listens on 127.0.0.1."""
    s = server(simple('return 200 "by name\\n";', listen='listen localhost:{port};'))
    r = s.get('/')
    assert (r.status, r.body) == (200, b'by name\n')
