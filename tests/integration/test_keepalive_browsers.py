"""keepalive_disable (msie6 by default, safari) and keepalive_time, as nginx: a connection keeps alive unless the
browser is one nginx gives up on, or the connection is older than keepalive_time. Runs against nginx too."""
import socket
import time

from conftest import simple

CONF = simple('''
        location /r { return 200 "ok\\n"; }
        location /safari { keepalive_disable safari; return 200 "ok\\n"; }
        location /none { keepalive_disable none; return 200 "ok\\n"; }
        location /both { keepalive_disable msie6 safari; return 200 "ok\\n"; }
        location /time { keepalive_time 1s; return 200 "ok\\n"; }
''')


def exchange(sock, method, path, ua=None):
    """One request on sock; the response head (lower-cased), read up to its 3-byte body."""
    hdrs = 'Host: localhost\r\n'
    if ua:
        hdrs += 'User-Agent: %s\r\n' % ua
    if method == 'POST':
        hdrs += 'Content-Length: 0\r\n'
    sock.sendall(('%s %s HTTP/1.1\r\n%s\r\n' % (method, path, hdrs)).encode())
    data = b''
    while not data.endswith(b'ok\n'):
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    return data.split(b'\r\n\r\n')[0].decode().lower()


def connection_of(port, method, path, ua=None):
    with socket.create_connection(('127.0.0.1', port), timeout=5) as s:
        head = exchange(s, method, path, ua)
    assert head.startswith('http/1.1 200'), head
    return 'close' if '\r\nconnection: close' in head else 'keep-alive'


def test_msie6_by_default(server):
    s = server(CONF)
    cases = [('POST', '/r', 'Mozilla/4.0 (compatible; MSIE 5.0; Windows 98)', 'close'),
             ('POST', '/r', 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)', 'close'),
             ('POST', '/r', 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)', 'keep-alive'),
             ('POST', '/r', 'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)', 'keep-alive'),
             ('POST', '/r', 'Opera/9.0 (compatible; MSIE 5.0)', 'keep-alive'),
             ('GET', '/r', 'Mozilla/4.0 (compatible; MSIE 5.0; Windows 98)', 'keep-alive'),
             ('POST', '/none', 'Mozilla/4.0 (compatible; MSIE 5.0; Windows 98)', 'keep-alive'),
             ('POST', '/r', None, 'keep-alive')]
    for method, path, ua, want in cases:
        assert connection_of(s.port, method, path, ua) == want, (method, path, ua)


def test_safari_when_named(server):
    s = server(CONF)
    safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/605.1.15'
    chrome = ('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) '
              'Chrome/120.0 Safari/537.36')
    linux_safari = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/605.1.15'
    assert connection_of(s.port, 'GET', '/r', safari) == 'keep-alive'  # not in the default
    assert connection_of(s.port, 'GET', '/safari', safari) == 'close'
    assert connection_of(s.port, 'GET', '/both', safari) == 'close'
    assert connection_of(s.port, 'GET', '/safari', chrome) == 'keep-alive'
    assert connection_of(s.port, 'GET', '/safari', linux_safari) == 'keep-alive'


def test_keepalive_time_ends_an_old_connection(server):
    s = server(CONF)
    with socket.create_connection(('127.0.0.1', s.port), timeout=5) as c:
        assert '\r\nconnection: keep-alive' in exchange(c, 'GET', '/time')
        time.sleep(1.2)  # the connection ages past keepalive_time (1s): what is tested, not a synchronisation
        assert '\r\nconnection: close' in exchange(c, 'GET', '/time')
        assert c.recv(1) == b''
    with socket.create_connection(('127.0.0.1', s.port), timeout=5) as c:  # a young one is unaffected
        for _ in range(3):
            assert '\r\nconnection: keep-alive' in exchange(c, 'GET', '/r')
