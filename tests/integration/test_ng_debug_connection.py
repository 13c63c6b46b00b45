"""debug_connection (https://nginx.org/en/docs/ngx_core_module.html#debug_connection): connections from the listed
addresses (or CIDR) log debug lines to every error_log, whatever that log's level; other clients' connections
do not."""
import socket
import time

from conftest import simple, GLOBALS

CONF = GLOBALS + '''
events { debug_connection ::1; debug_connection 192.0.2.0/24; }
''' + simple('''
        listen [::1]:{port};
        location / { return 200 "ok"; }
''', http_extra='error_log {tmp}/logs/d1.log alert; error_log {tmp}/logs/d2.log alert;')


def read(prefix, name):
    try:
        with open(prefix.path('logs/' + name), errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def get(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n')
    data = b''
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def wait_for(fn, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(0.05)
    return fn()


def test_listed_peer_logs_debug_to_every_error_log(server, prefix):
    s = server(CONF, full=True)
    assert get('127.0.0.1', s.port).endswith(b'ok')
    assert '[debug]' not in read(prefix, 'd1.log') + read(prefix, 'd2.log')
    assert get('::1', s.port).endswith(b'ok')
    assert wait_for(lambda: '[debug]' in read(prefix, 'd1.log') and '[debug]' in read(prefix, 'd2.log'))


def test_bad_address_is_refused(prefix, run_cli):
    path = prefix.conf(GLOBALS + 'events { debug_connection 300.1.1.1; }\n' + simple('return 204;'), full=True)
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    assert '300.1.1.1' in r.err, r.err


def test_unix_listens_in_debug(server, prefix):
    conf = GLOBALS + '''
events { debug_connection unix:; }
''' + simple('''
        listen unix:{tmp}/d.sock;
        location / { return 200 "ok"; }
''', http_extra='error_log {tmp}/logs/d1.log alert;')
    server(conf, full=True)
    assert get('127.0.0.1', prefix.port).endswith(b'ok')
    assert '[debug]' not in read(prefix, 'd1.log')
    u = socket.socket(socket.AF_UNIX)
    u.settimeout(5)
    u.connect(prefix.path('d.sock'))
    u.sendall(b'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n')
    data = b''
    while True:
        chunk = u.recv(4096)
        if not chunk:
            break
        data += chunk
    u.close()
    assert data.endswith(b'ok')
    assert wait_for(lambda: '[debug]' in read(prefix, 'd1.log'))
