"""http core directives' configuration errors at -t: nginx's wording (checked against nginx 1.22's own -t on the
same configs) and the file:line of the offending directive; plus a few accepted forms whose values are parsed."""
import re

import pytest


def conf(server_body, http_extra=''):
    return '''http {
    %s
    server {
        listen 127.0.0.1:{port};
        %s
    }
}
''' % (http_extra, server_body)


def line_of(path, needle):
    lines = [i for i, l in enumerate(open(path), 1) if needle in l]
    assert lines, needle
    return lines[-1]


def run_t(prefix, run_cli, text):
    path = prefix.conf(text)
    return path, run_cli(['-t', '-c', path])


ERRORS = [
    # (server body, message, the text of the line it is reported at)
    ('client_body_temp_path /tmp/a 1 2;\n client_body_temp_path /tmp/b;',
     '"client_body_temp_path" directive is duplicate', '/tmp/b'),
    ('listen 127.0.0.1:{port2} so_keepalive=bad;', 'invalid so_keepalive value: "bad"', 'so_keepalive'),
    ('listen 127.0.0.1:{port2} so_keepalive=1h:x:3;', 'invalid so_keepalive value: "1h:x:3"', 'so_keepalive'),
    ('listen 127.0.0.1:{port2} bogus;', 'invalid parameter "bogus"', 'bogus'),
    ('location /a { root /x; root /y; }', '"root" directive is duplicate', 'root /y'),
    ('location /a { alias /x/; alias /y/; }', '"alias" directive is duplicate', 'alias /y'),
    ('location /a { root /x; alias /y; }',
     '"alias" directive is duplicate, "root" directive was specified earlier', 'alias /y'),
    ('location /a { alias /x/; root /y; }',
     '"root" directive is duplicate, "alias" directive was specified earlier', 'root /y'),
    ('location @n { alias /y; }', 'the "alias" directive cannot be used inside the named location', 'alias /y'),
    ('keepalive_timeout abc;', '"keepalive_timeout" directive invalid value', 'keepalive_timeout'),
    ('keepalive_timeout 10s abc;', '"keepalive_timeout" directive invalid value', 'keepalive_timeout'),
    ('keepalive_timeout 10s;\n keepalive_timeout 5s;', '"keepalive_timeout" directive is duplicate', '5s'),
    ('large_client_header_buffers 0 8k;', '"large_client_header_buffers" directive invalid value',
     'large_client'),
    ('large_client_header_buffers 4 abc;', '"large_client_header_buffers" directive invalid value',
     'large_client'),
    ('large_client_header_buffers 4 8k;\n large_client_header_buffers 2 8k;',
     '"large_client_header_buffers" directive is duplicate', 'buffers 2'),
    ('open_file_cache max=0;', 'invalid "open_file_cache" parameter "max=0"', 'open_file_cache'),
    ('open_file_cache max=10 inactive=abc;', 'invalid "open_file_cache" parameter "inactive=abc"',
     'open_file_cache'),
    ('open_file_cache max=10 bogus=1;', 'invalid "open_file_cache" parameter "bogus=1"', 'open_file_cache'),
    ('open_file_cache inactive=10s;', '"open_file_cache" must have the "max" parameter', 'open_file_cache'),
    ('open_file_cache max=10;\n open_file_cache off;', '"open_file_cache" directive is duplicate',
     'open_file_cache off'),
]


@pytest.mark.parametrize('body,message,needle', ERRORS, ids=[e[1][:40] + '-%d' % i for i, e in enumerate(ERRORS)])
def test_core_directive_errors(prefix, run_cli, body, message, needle):
    path, r = run_t(prefix, run_cli, conf(body))
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(message), re.escape(path),
                                                             line_of(path, needle)), r.err), r.err


def test_duplicate_listen_options(prefix, run_cli):
    """Socket options of one address given in two servers (nginx: "duplicate listen options"), reported at the
    server that repeats them."""
    text = '''http {
    server {
        listen 127.0.0.1:{port} backlog=100;
    }
    server {
        listen 127.0.0.1:{port} backlog=200;
    }
}
'''
    path, r = run_t(prefix, run_cli, text)
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] (\d+#\d+: )?duplicate listen options for 127\.0\.0\.1:%d in %s:\d+\n'
                     % (prefix.port, re.escape(path)), r.err), r.err


def test_conflicting_server_name_is_a_warning(prefix, run_cli, server):
    text = '''http {
    server {
        listen 127.0.0.1:{port};
        server_name a.test;
        location / { return 200 "first\\n"; }
    }
    server {
        listen 127.0.0.1:{port};
        server_name a.test;
        location / { return 200 "second\\n"; }
    }
}
'''
    path, r = run_t(prefix, run_cli, text)
    assert r.rc == 0, r
    assert re.search(r'\[warn\] (\d+#\d+: )?conflicting server name "a\.test" on 127\.0\.0\.1:%d, ignored' % prefix.port,
                     r.err), r.err
    s = server(text)
    r = s.get('/', host='a.test')
    assert (r.status, r.body) == (200, b'first\n')  # the first server keeps the name


def test_so_keepalive_idle_is_applied(server):
    """so_keepalive=idle:intvl:cnt: an accepted connection runs the keepalive timer from `idle` (ss shows it);
    an empty field keeps the system's value."""
    import socket
    import subprocess
    from helpers.process import wait_until
    s = server(conf('listen 127.0.0.1:{port2} so_keepalive=7m:25:4;\n listen 127.0.0.1:{port3} so_keepalive=:30:;\n'
                    ' location / { return 200 "ok\\n"; }'))
    sys_min = int(open('/proc/sys/net/ipv4/tcp_keepalive_time').read()) // 60
    for port, want in ((s.prefix.port2, r'timer:\(keepalive,(6min[45]\dsec|7min)'),
                       (s.prefix.port3, r'timer:\(keepalive,(%dmin|%dmin)' % (sys_min - 1, sys_min))):
        c = socket.create_connection(('127.0.0.1', port), timeout=5)
        try:
            c.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
            assert c.recv(4096).startswith(b'HTTP/1.1 200')

            def timer():
                out = subprocess.run(['ss', '-tnoH', 'state', 'established', '( sport = :%d )' % port],
                                     stdout=subprocess.PIPE, text=True).stdout
                return re.search(want, out) and out
            assert wait_until(timer, 5), subprocess.run(['ss', '-tno', '( sport = :%d )' % port],
                                                        stdout=subprocess.PIPE, text=True).stdout
        finally:
            c.close()
