"""listen with a port range (https://nginx.org/en/docs/http/ngx_http_core_module.html#listen, nginx 1.27.3+:
"listen 127.0.0.1:8080-8085"): one listening socket per port of the range, each answering with its own
$server_port; ports outside the range are not opened; a reversed or out-of-bounds range is an invalid port.
Debian's nginx 1.22 has no ranges: hayate_only."""
import socket

import pytest

from conftest import simple, free_port

pytestmark = pytest.mark.hayate_only


def free_run(n):
    """n consecutive free ports on 127.0.0.1."""
    for _ in range(50):
        base = free_port()
        if base + n > 65535:
            continue
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(('127.0.0.1', p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    pytest.skip('no run of free ports')


def test_each_port_of_the_range_listens(server):
    base = free_run(4)  # base and base+3 stay outside the range
    s = server(simple('location / { return 200 "$server_addr:$server_port"; }',
                      listen='listen 127.0.0.1:{port}; listen 127.0.0.1:%d-%d;' % (base + 1, base + 2)))
    for p in (base + 1, base + 2):
        r = s.get('/', port=p)
        assert r.status == 200 and r.body == b'127.0.0.1:%d' % p, r
    for p in (base, base + 3):
        with pytest.raises(OSError):
            socket.create_connection(('127.0.0.1', p), timeout=2).close()


def test_ipv6_range(server):
    base = free_run(2)
    s = server(simple('location / { return 200 "$server_port"; }',
                      listen='listen 127.0.0.1:{port}; listen [::1]:%d-%d;' % (base, base + 1)))
    for p in (base, base + 1):
        c = socket.create_connection(('::1', p), timeout=5)
        c.sendall(b'GET / HTTP/1.0\r\n\r\n')
        data = b''
        while True:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
        c.close()
        assert data.endswith(b'%d' % p), data


@pytest.mark.parametrize('addr', ['127.0.0.1:90-80', '127.0.0.1:65535-65536', '127.0.0.1:80-'])
def test_bad_range_is_an_invalid_port(prefix, run_cli, addr):
    path = prefix.conf(simple('return 204;', listen='listen %s;' % addr))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    assert 'invalid port in "%s"' % addr in r.err, r.err
