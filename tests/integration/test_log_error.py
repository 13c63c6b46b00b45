"""error_log: nginx's line format (so tools that parse nginx error logs keep working), levels, several logs.
Passes with HY_BIN=/usr/sbin/nginx."""
import os
import re
import time

import pytest

from conftest import IS_NGINX

FILES = {'html/a.txt': 'abc'}

LINE_RE = re.compile(r'^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) \[(\w+)\] (\d+)#(\d+): (\*(\d+) )?(.*)$')


def conf(extra=''):
    return '''
http {
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        root {html};
        %s
    }
}
''' % extra


def wait_for(srv, rel, needle, timeout=3.0):
    path = os.path.join(srv.tmp, rel)
    deadline = time.monotonic() + timeout
    text = ''
    while time.monotonic() < deadline:
        try:
            with open(path, errors='replace') as f:
                text = f.read()
        except FileNotFoundError:
            text = ''
        if needle in text:
            break
        time.sleep(0.02)
    return text


def find_line(text, needle):
    for line in text.splitlines():
        if needle in line:
            return line
    raise AssertionError('no line with %r in:\n%s' % (needle, text))


def test_not_found_line_format(server):
    s = server(conf(), files=FILES)
    r = s.get('/nope.txt?x=1', host='localhost')
    assert r.status == 404
    line = find_line(wait_for(s, 'logs/error.log', 'nope.txt'), 'nope.txt')
    m = LINE_RE.match(line)
    assert m, line
    assert m.group(2) == 'error'
    assert int(m.group(3)) == s.proc.pid and int(m.group(4)) == s.proc.pid
    assert m.group(6) is not None
    assert m.group(7) == ('open() "%s/nope.txt" failed (2: No such file or directory), client: 127.0.0.1, '
                          'server: localhost, request: "GET /nope.txt?x=1 HTTP/1.1", host: "localhost"' % s.html)
    # the time is local time, now
    t = time.strptime(m.group(1), '%Y/%m/%d %H:%M:%S')
    assert abs(time.mktime(t) - time.time()) < 5


def test_connection_numbers_increase(server):
    s = server(conf(), files=FILES)
    s.get('/x1')
    s.get('/x2')
    text = wait_for(s, 'logs/error.log', '/x2')
    c1 = int(LINE_RE.match(find_line(text, '/x1"')).group(6))
    c2 = int(LINE_RE.match(find_line(text, '/x2"')).group(6))
    assert c2 > c1


def test_log_not_found_off(server):
    s = server(conf('log_not_found off; location /loud/ { log_not_found on; }'), files=FILES)
    s.get('/quiet.txt')
    s.get('/loud/x.txt')
    # barrier: the later request's line is there, so the earlier one would be too
    assert '/loud/x.txt' in wait_for(s, 'logs/error.log', '/loud/x.txt')
    assert 'quiet.txt' not in s.error_log()


def test_levels_and_several_logs(server):
    # the conftest's globals already have "error_log logs/error.log info"; add two more at other levels
    s = server(conf(), files=FILES, args=['-g', 'error_log %s/logs/crit.log crit; error_log %s/logs/warn.log warn;'
                                          % (server.prefix.tmp, server.prefix.tmp)])
    s.get('/missing.txt')
    s.stop()
    info = s.error_log()
    warn = open(os.path.join(s.tmp, 'logs/warn.log')).read()
    crit = open(os.path.join(s.tmp, 'logs/crit.log')).read()
    assert 'missing.txt' in info and 'missing.txt' in warn  # [error] passes both
    assert '[notice]' in info and '[notice]' not in warn      # the exit/signal notices
    assert crit == ''
    for line in (info + warn).splitlines():
        assert LINE_RE.match(line), line


def test_invalid_level(run_cli, prefix):
    path = prefix.conf(conf('error_log logs/x.log loud;'))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', path])
    assert r.rc != 0 and 'invalid log level "loud"' in r.err, r.err


def test_host_as_sent_and_referrer(server):
    s = server(conf(), files=FILES)
    s.get('/ref.txt', host='LocalHost:%d' % s.port, headers={'Referer': 'http://r.example/x'})
    line = find_line(wait_for(s, 'logs/error.log', 'ref.txt'), 'ref.txt')
    assert line.endswith(', host: "LocalHost:%d", referrer: "http://r.example/x"' % s.port), line


@pytest.mark.hayate_only  # nginx writes control bytes raw and cuts its lines at 2048 bytes
@pytest.mark.parametrize('tail,kind', [('%01' + 'a' * 5000, 'plain'), ('%01' * 1500, 'escapes')])
def test_long_lines_with_control_bytes_are_cut_and_escaped(server, tail, kind):
    """A message longer than a log line (a decoded URI) is cut, control bytes become \\xHH even where the cut
    falls among them, and the line still ends with one newline: a client cannot forge a line."""
    s = server(conf(), files=FILES)
    r = s.raw(('GET /zz%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % tail).encode())
    assert r.status == 404
    text = wait_for(s, 'logs/error.log', '/zz\\x01')
    line = find_line(text, '/zz\\x01')
    raw = line.encode() + b'\n'
    assert len(raw) <= 4096, len(raw)
    assert len(raw) >= 2048 and LINE_RE.match(line), line[:200]  # cut, not dropped
    assert not any(c < 0x20 and c != 0x0a for c in raw) and raw.count(b'\n') == 1
    body = line.split('/zz', 1)[1]
    if kind == 'plain':
        assert body.startswith('\\x01' + 'a' * 1000), body[:20]
    else:
        assert re.fullmatch(r'(\\x01)+', body), body[-20:]
