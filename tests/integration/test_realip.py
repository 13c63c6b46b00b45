"""realip (ngx_http_realip_module): set_real_ip_from (CIDR v4/v6, unix:, host names), real_ip_header (X-Real-IP,
X-Forwarded-For chains over several fields, any header), real_ip_recursive, $realip_remote_addr/_port; applied at
POST_READ (before the server's rewrites) and PREACCESS (a location's settings); the access log, the error log's
client and geo see the replaced address; untrusted sources stay as they are."""
import os
import socket

import pytest

CONF = '''
http {
    log_format ra "$remote_addr|$binary_remote_addr|$remote_port|$realip_remote_addr";
    access_log {tmp}/logs/ra.log ra;
    add_header X-IP $remote_addr!$remote_port;
    add_header X-Real $realip_remote_addr!$realip_remote_port;
    add_header X-Geo $g;
    geo $g { default no; 192.0.2.0/24 doc; }
    set_real_ip_from 127.0.0.1/32;
    set_real_ip_from 10.0.1.0/24;
    set_real_ip_from 2001:db8:ffff::/48;
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        root {html};
        location / { }
        location /custom { real_ip_header X-Real-IP-Custom; }
        location /1 { real_ip_header X-Forwarded-For; real_ip_recursive off; }
        location /2 { real_ip_header X-Forwarded-For; real_ip_recursive on; }
        location /untrusted {
            set_real_ip_from 10.9.9.9;
            real_ip_header X-Forwarded-For;
        }
        location /missing { return 404; }
    }
    server {
        listen 127.0.0.1:{port2};
        real_ip_header X-Forwarded-For;
        return 204;  # server-level rewrite: realip ran before it (POST_READ)
    }
    server {
        listen unix:{tmp}/unix.sock;
        server_name localhost;
        root {html};
        location /u { set_real_ip_from unix:; }
        location /n { set_real_ip_from localhost; }
    }
    server {
        listen 127.0.0.1:{port3};
        root {html};
        location / { set_real_ip_from localhost; }
    }
}
'''

FILES = {'html/index.html': '', 'html/custom': '', 'html/1': '', 'html/2': '', 'html/untrusted': '',
         'html/u': '', 'html/n': ''}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def ip(srv, path, headers, port=None):
    r = srv.get(path, headers=headers, port=port)
    return r.header('X-IP')


def test_x_real_ip_default(srv):
    assert ip(srv, '/', [('X-Real-IP', '192.0.2.1')]) == '192.0.2.1!'
    assert ip(srv, '/', [('X-Real-IP', '192.0.2.1:8000')]) == '192.0.2.1!8000'
    assert ip(srv, '/', [('X-Real-IP', '[2001:db8::5]:443')]) == '2001:db8::5!443'
    assert ip(srv, '/', [('X-Real-IP', 'junk')]).startswith('127.0.0.1!')  # not an address: unchanged
    assert ip(srv, '/', []).startswith('127.0.0.1!')
    assert ip(srv, '/custom', [('X-Real-IP-Custom', '192.0.2.7')]) == '192.0.2.7!'
    # the server's settings (X-Real-IP by default) apply first, at POST_READ, as nginx's
    assert ip(srv, '/custom', [('X-Real-IP', '192.0.2.8')]) == '192.0.2.8!'


def test_forwarded_for_chains(srv):
    xff = lambda path, *v: ip(srv, path, [('X-Forwarded-For', x) for x in v])
    assert xff('/1', '10.0.0.1, 192.0.2.1') == '192.0.2.1!'
    assert xff('/1', '192.0.2.1, 10.0.1.1, 127.0.0.1') == '127.0.0.1!'  # off: the last element only
    assert xff('/2', '192.0.2.1, 10.0.1.1, 127.0.0.1') == '192.0.2.1!'  # on: past every trusted proxy
    assert xff('/2', '10.0.1.1, 192.0.2.1, 10.0.1.2,  ,') == '192.0.2.1!'
    assert xff('/2', '10.0.1.1, 10.0.1.2') == '10.0.1.1!'  # all trusted: the first
    assert xff('/2', '2001:db8::1, 2001:db8:ffff::2') == '2001:db8::1!'
    # several fields: one list, the last field first
    assert xff('/1', '192.0.2.1', '127.0.0.1, 10.0.1.1') == '10.0.1.1!'
    assert xff('/2', '10.0.1.1', '192.0.2.1', '127.0.0.1') == '192.0.2.1!'
    assert xff('/2', '10.0.1.1', '10.0.1.3') == '10.0.1.1!'


def test_untrusted_source_unchanged(srv):
    r = srv.get('/untrusted', headers=[('X-Forwarded-For', '192.0.2.1')])
    assert r.header('X-IP').startswith('127.0.0.1!') and r.header('X-Geo') == 'no'


def test_realip_variables_and_consumers(srv):
    c = srv.conn()
    port = c.sock.getsockname()[1]
    r = c.request(b'GET /2 HTTP/1.0\r\nHost: localhost\r\nX-Forwarded-For: 192.0.2.9:77\r\n\r\n')
    c.close()
    assert r.header('X-IP') == '192.0.2.9!77'
    assert r.header('X-Real') == '127.0.0.1!%d' % port
    assert r.header('X-Geo') == 'doc'  # geo reads the replaced address
    r = srv.get('/missing', headers=[('X-Real-IP', '192.0.2.4')])
    assert r.status == 404
    srv.stop()
    with open(srv.prefix.path('logs/ra.log'), 'rb') as f:
        lines = f.read().splitlines()
    assert lines[0] == b'192.0.2.9|\\xC0\\x00\\x02\\x09|77|127.0.0.1'
    assert lines[1].startswith(b'192.0.2.4|')


def test_post_read_before_server_rewrite(srv):
    r = srv.get('/', headers=[('X-Forwarded-For', '192.0.2.1')], port=srv.port2)
    assert r.status == 204 and r.header('X-IP') == '192.0.2.1!'


def test_error_log_client(srv):
    r = srv.get('/nothere', headers=[('X-Real-IP', '192.0.2.33')])
    assert r.status == 404
    assert 'client: 192.0.2.33' in srv.error_log()


def unix_get(srv, path, headers):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(srv.prefix.path('unix.sock'))
    s.sendall(('GET %s HTTP/1.0\r\nHost: localhost\r\n%s\r\n' % (
        path, ''.join('%s: %s\r\n' % h for h in headers))).encode())
    data = b''
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    for line in data.decode('latin-1').split('\r\n'):
        if line.startswith('X-IP:'):
            return line[5:].strip()


def test_unix_and_hostname(srv):
    assert unix_get(srv, '/u', [('X-Real-IP', '192.0.2.1')]) == '192.0.2.1!'
    assert unix_get(srv, '/n', [('X-Real-IP', '192.0.2.1')]) == 'unix:!'  # localhost is not the unix socket
    assert ip(srv, '/', [('X-Real-IP', '192.0.2.1')], port=srv.port3) == '192.0.2.1!'  # localhost → 127.0.0.1


def test_config_errors(server, prefix, run_cli):
    for bad, msg in (('set_real_ip_from 10.0.0.1/33;', 'host not found in set_real_ip_from "10.0.0.1/33"'),
                     ('set_real_ip_from no-such-host.invalid;', 'host not found in set_real_ip_from'),
                     ('real_ip_recursive maybe;', 'invalid value "maybe"')):
        conf = prefix.conf('http { %s server { listen 127.0.0.1:{port}; } }' % bad)
        r = run_cli(['-t', '-c', conf])
        assert r.rc != 0 and msg in r.err and 'test.conf:' in r.err, (bad, r.err)
    conf = prefix.conf('http { set_real_ip_from 10.0.0.1/8; server { listen 127.0.0.1:{port}; } }')
    r = run_cli(['-t', '-c', conf])
    assert r.rc == 0 and 'low address bits of 10.0.0.1/8 are meaningless' in r.err
