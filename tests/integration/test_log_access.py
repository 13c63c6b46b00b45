"""Access log: log_format (escape=default|json|none), access_log (several, inheritance, off, buffer=, flush=,
if=), the default combined log, USR1 reopen, config errors. Expected lines are nginx 1.22's (this file passes
with HY_BIN=/usr/sbin/nginx)."""
import json
import os
import re
import signal
import time

import pytest

from conftest import IS_NGINX, PROG

TIME_LOCAL = r'\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}'


def read_lines(srv, rel, n=1, timeout=3.0):
    """Wait until the log has at least n lines (the line is written after the response), return them all."""
    path = os.path.join(srv.tmp, rel)
    deadline = time.monotonic() + timeout
    data = b''
    while time.monotonic() < deadline:
        try:
            with open(path, 'rb') as f:
                data = f.read()
        except FileNotFoundError:
            data = b''
        if data.count(b'\n') >= n:
            break
        time.sleep(0.02)
    return data.split(b'\n')[:-1] if data.endswith(b'\n') else data.split(b'\n')


def file_bytes(srv, rel):
    try:
        with open(os.path.join(srv.tmp, rel), 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return b''


def http(server_body, http_extra=''):
    return '''
http {
    %s
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        root {html};
        %s
    }
}
''' % (http_extra, server_body)


FILES = {'html/a.txt': 'abc', 'html/dir/b.txt': 'bbbb'}

# what a hostile client sends: quotes, backslash, tab, DEL and control bytes (through %XX in the path, which
# $uri shows decoded), bytes >= 0x80 that are not UTF-8, and a long value
HOSTILE_UA = b'q"uo\\te\ttab \xc3\xa9 \xff\xfe end'
HOSTILE_PATH = b'/a%01%1F%7F%22%5C%C3%A9%FF.txt'
HOSTILE_URI = b'/a\x01\x1f\x7f"\\\xc3\xa9\xff.txt'


def hostile_request(srv):
    req = (b'GET ' + HOSTILE_PATH + b'?k=v%22 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ' + HOSTILE_UA +
           b'\r\nX-Long: ' + b'L' * 3000 + b'\r\nConnection: close\r\n\r\n')
    return srv.raw(req)


def esc_default(b):
    out = b''
    for c in b:
        if c < 0x20 or c >= 0x7f or c in (0x22, 0x5c):
            out += b'\\x%02X' % c
        else:
            out += bytes([c])
    return out


def esc_json(b):
    short = {0x22: b'\\"', 0x5c: b'\\\\', 0x0a: b'\\n', 0x0d: b'\\r', 0x09: b'\\t', 0x08: b'\\b', 0x0c: b'\\f'}
    out = b''
    for c in b:
        if c in short:
            out += short[c]
        elif c < 0x20:
            out += b'\\u%04X' % c
        else:
            out += bytes([c])
    return out


def test_combined_line(server):
    s = server(http('access_log logs/c.log combined;'), files=FILES)
    r = s.get('/a.txt?x=1', headers={'User-Agent': 'ua/1.0', 'Referer': 'http://r/'})
    assert r.status == 200
    (line,) = read_lines(s, 'logs/c.log')
    assert re.fullmatch(rb'127\.0\.0\.1 - - \[' + TIME_LOCAL.encode() +
                        rb'\] "GET /a\.txt\?x=1 HTTP/1\.1" 200 3 "http://r/" "ua/1\.0"', line), line


def test_default_format_is_combined(server):
    s = server(http('access_log logs/c.log;'), files=FILES)
    s.get('/a.txt')
    (line,) = read_lines(s, 'logs/c.log')
    assert re.fullmatch(rb'127\.0\.0\.1 - - \[' + TIME_LOCAL.encode() + rb'\] "GET /a\.txt HTTP/1\.1" 200 3 "-" "-"',
                        line), line


def test_escape_default_hostile(server):
    s = server(http('access_log logs/e.log e;', "log_format e '$uri|$http_user_agent|$args|$http_x_long';"),
               files=FILES)
    r = hostile_request(s)
    assert r.status == 404
    (line,) = read_lines(s, 'logs/e.log')
    assert line == b'|'.join([esc_default(HOSTILE_URI), esc_default(HOSTILE_UA), b'k=v%22', b'L' * 3000])


def test_escape_json_hostile(server):
    s = server(http('access_log logs/j.log j;',
                    "log_format j escape=json '{\"uri\":\"$uri\",\"ua\":\"$http_user_agent\",\"nf\":\"$http_nope\"}';"),
               files=FILES)
    hostile_request(s)
    (line,) = read_lines(s, 'logs/j.log')
    assert line == (b'{"uri":"' + esc_json(HOSTILE_URI) + b'","ua":"' + esc_json(HOSTILE_UA) + b'","nf":""}')
    # bytes >= 0x80 are passed through, so decode leniently; everything else is valid JSON
    doc = json.loads(line.decode('latin-1'))
    assert doc['nf'] == '' and doc['uri'].startswith('/a\x01\x1f\x7f"\\')


def test_escape_none(server):
    s = server(http('access_log logs/n.log n;', "log_format n escape=none '$uri|$http_user_agent|$http_nope|';"),
               files=FILES)
    hostile_request(s)
    (line,) = read_lines(s, 'logs/n.log')
    assert line == HOSTILE_URI + b'|' + HOSTILE_UA + b'||'


def test_json_parses(server):
    fmt = ("log_format j escape=json '{\"t\":\"$time_iso8601\",\"s\":$status,\"req\":\"$request\","
           "\"ua\":\"$http_user_agent\",\"ref\":\"$http_referer\"}';")
    s = server(http('access_log logs/j.log j;', fmt), files=FILES)
    s.get('/a.txt?a="b"', headers={'User-Agent': 'x\\y "z"\tq'})
    (line,) = read_lines(s, 'logs/j.log')
    doc = json.loads(line)
    assert doc['s'] == 200 and doc['ref'] == '' and doc['ua'] == 'x\\y "z"\tq'
    assert doc['req'] == 'GET /a.txt?a="b" HTTP/1.1'
    assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d', doc['t'])


def test_literal_text_is_not_escaped_and_words_concatenate(server):
    s = server(http('access_log logs/l.log l;', "log_format l 'a\"b\\\\c ' '$status' ' ${status}x';"), files=FILES)
    s.get('/a.txt')
    (line,) = read_lines(s, 'logs/l.log')
    assert line == b'a"b\\c 200 200x'


def test_several_logs_and_inheritance(server):
    body = '''
        access_log logs/s1.log f;
        access_log logs/s2.log f;
        location /dir/ { access_log logs/loc.log f; }
        location /off/ { access_log off; }
    '''
    s = server(http(body, "log_format f '$uri $status'; access_log logs/h.log f;"), files=FILES)
    s.get('/a.txt')
    s.get('/dir/b.txt')
    s.get('/off/x')
    assert read_lines(s, 'logs/s1.log') == [b'/a.txt 200']
    assert read_lines(s, 'logs/s2.log') == [b'/a.txt 200']
    assert read_lines(s, 'logs/loc.log') == [b'/dir/b.txt 200']
    # a request's logs are written together, so the lines waited for above are the barrier: h.log had its chance
    assert file_bytes(s, 'logs/h.log') == b''  # replaced at the server level
    assert file_bytes(s, 'logs/s1.log').count(b'\n') == 1  # nothing from /dir/ nor /off/


def test_inherited_from_http(server):
    s = server(http('location /x/ { }', "log_format f '$uri'; access_log logs/h.log f;"), files=FILES)
    s.get('/a.txt')
    s.get('/x/y')
    assert read_lines(s, 'logs/h.log', 2) == [b'/a.txt', b'/x/y']


def test_if_condition(server):
    extra = '''log_format f '$uri $status';
    map $status $loggable { ~^[23] 0; default 1; }'''
    s = server(http('access_log logs/i.log f if=$loggable; access_log logs/all.log f if=$arg_log;', extra),
               files=FILES)
    s.get('/a.txt')
    s.get('/missing')
    s.get('/a.txt?log=0')
    s.get('/a.txt?log=yes')
    assert read_lines(s, 'logs/all.log') == [b'/a.txt 200']
    # the last request's line in all.log is the barrier: every earlier request's i.log line is written by then
    assert read_lines(s, 'logs/i.log') == [b'/missing 404']


def test_buffer_flush_timer(server):
    s = server(http('access_log logs/b.log f buffer=32k flush=1s; access_log logs/ctl.log f;',
                    "log_format f '$uri';"), files=FILES)
    s.get('/a.txt')
    # the unbuffered control log of the same request is the barrier: written, while b.log keeps its line
    assert read_lines(s, 'logs/ctl.log') == [b'/a.txt']
    assert file_bytes(s, 'logs/b.log') == b''  # still in the buffer
    assert read_lines(s, 'logs/b.log', 1, timeout=4) == [b'/a.txt']


def test_buffer_flushed_on_quit(server):
    s = server(http('access_log logs/b.log f buffer=64k; access_log logs/ctl.log f;', "log_format f '$uri';"),
               files=FILES)
    for _ in range(3):
        s.get('/a.txt')
    assert read_lines(s, 'logs/ctl.log', 3) == [b'/a.txt'] * 3    # barrier: the same requests, unbuffered
    assert file_bytes(s, 'logs/b.log') == b''
    assert s.stop() == 0
    assert file_bytes(s, 'logs/b.log') == b'/a.txt\n' * 3


def test_buffer_flushed_when_full(server):
    s = server(http('access_log logs/b.log f buffer=1k;', "log_format f '$uri $http_x_pad';"), files=FILES)
    for _ in range(5):
        s.get('/a.txt', headers={'X-Pad': 'p' * 300})
    data = b''
    for _ in range(100):
        data = file_bytes(s, 'logs/b.log')
        if data:
            break
        time.sleep(0.02)
    assert 0 < data.count(b'\n') < 5
    s.stop()
    assert file_bytes(s, 'logs/b.log') == (b'/a.txt ' + b'p' * 300 + b'\n') * 5


def test_usr1_reopens_after_rename(server):
    s = server(http('access_log logs/r.log f buffer=64k;', "log_format f '$uri';"), files=FILES)
    s.get('/a.txt')
    os.rename(os.path.join(s.tmp, 'logs/r.log'), os.path.join(s.tmp, 'logs/r.log.1'))
    s.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 3
    while not os.path.exists(os.path.join(s.tmp, 'logs/r.log')) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert file_bytes(s, 'logs/r.log.1') == b'/a.txt\n'  # the buffer went to the old file first
    s.get('/dir/b.txt')
    s.stop()
    assert file_bytes(s, 'logs/r.log') == b'/dir/b.txt\n'
    assert file_bytes(s, 'logs/r.log.1') == b'/a.txt\n'


def test_request_time_and_msec(server):
    s = server(http('access_log logs/t.log f;', "log_format f '$request_time $msec';"), files=FILES)
    before = time.time()
    s.get('/a.txt')
    (line,) = read_lines(s, 'logs/t.log')
    rt, msec = line.split()
    assert re.fullmatch(rb'\d+\.\d{3}', rt) and float(rt) < 2.0
    assert re.fullmatch(rb'\d+\.\d{3}', msec) and before - 2 < float(msec) < time.time() + 2


def test_default_access_log(server):
    """Nothing configured: combined to <prefix>logs/access.log (nginx via conftest's injected line)."""
    s = server(http(''), files=FILES)
    s.get('/a.txt')
    (line,) = read_lines(s, 'logs/access.log')
    assert b'"GET /a.txt HTTP/1.1" 200 3 "-" "-"' in line


@pytest.mark.hayate_only
def test_default_access_log_creates_logs_dir(run_cli, tmp_path):
    """A config without access_log in a prefix without logs/: the default log's directory is created."""
    pre = tmp_path / 'fresh'
    (pre / 'conf').mkdir(parents=True)
    (pre / 'conf' / 'x.conf').write_text(
        'error_log stderr; events { } http { server { listen 127.0.0.1:1; } }\n')
    r = run_cli(['-p', str(pre) + '/', '-t', '-c', str(pre / 'conf' / 'x.conf')])
    assert r.rc == 0, r.err
    assert (pre / 'logs' / 'access.log').exists()


def test_access_log_off_everywhere(server):
    s = server(http('', "access_log off;"), files=FILES)
    s.get('/a.txt')
    s.get('/missing.txt')
    # barrier: the error-log line of the last request is written before its access-log line would be
    deadline = time.monotonic() + 3
    while 'missing.txt' not in s.error_log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert 'missing.txt' in s.error_log()
    assert file_bytes(s, 'logs/access.log') == b''


@pytest.mark.parametrize('extra,msg', [
    ("access_log logs/x.log nosuch;", 'unknown log format "nosuch"'),
    ("access_log logs/x.log combined flush=1s;", 'no buffer is defined for access_log "logs/x.log"'),
    ("access_log logs/x.log combined buffer=foo;", 'invalid buffer size "foo"'),
    ("access_log logs/x.log combined bar;", 'invalid parameter "bar"'),
    ("access_log off combined;", 'invalid parameter "combined"'),
    ("log_format combined 'a';", 'duplicate "log_format" name "combined"'),
    ("log_format x 'a'; log_format x 'b';", 'duplicate "log_format" name "x"'),
    ("log_format x escape=foo 'a';", 'unknown log format escaping "foo"'),
    ("log_format x '$';", 'invalid parameter "$"'),
    ("log_format x 'a ${ba';", 'the closing bracket in "ba" variable is missing'),
    ("log_format x '$nosuchvar';", 'unknown "nosuchvar" variable'),
    ("access_log logs/x.log combined buffer=4k; access_log logs/x.log combined buffer=8k;",
     'access_log "logs/x.log" already defined with conflicting parameters'),
    ("access_log /nonexistent-dir/x/y.log;", 'open() "/nonexistent-dir/x/y.log" failed (2: No such file or directory)'),
])
def test_config_errors(run_cli, prefix, extra, msg):
    conf = prefix.conf(http('', extra))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', conf])
    assert r.rc != 0
    assert msg in r.err, r.err


def test_buffered_and_unbuffered_share_a_file(run_cli, prefix):
    conf = prefix.conf(http('', "access_log logs/x.log combined buffer=4k; access_log logs/x.log combined;"))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', conf])
    assert r.rc == 0, r.err


def test_open_log_file_cache_accepted(run_cli, prefix):
    conf = prefix.conf(http('open_log_file_cache max=10 inactive=20s valid=1m min_uses=2;',
                            'open_log_file_cache off;'))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', conf])
    assert r.rc == 0, r.err


@pytest.mark.parametrize('extra,msg', [
    ("access_log logs/x.log combined buffer=4k flush=0;", 'invalid flush time "0"'),
    ("access_log logs/x.log combined gzip=10;", 'invalid compression level "10"'),
    ("access_log logs/x.log combined if=$;", 'invalid variable name'),
    ("open_log_file_cache max=0;", '"open_log_file_cache" must have "max" parameter'),
    ("open_log_file_cache max=1 inactive=abc;", 'invalid "open_log_file_cache" parameter "inactive=abc"'),
    ("open_log_file_cache max=1 min_uses=abc;", 'invalid "open_log_file_cache" parameter "min_uses=abc"'),
    ("open_log_file_cache max=1 bogus;", 'invalid "open_log_file_cache" parameter "bogus"'),
    ("open_log_file_cache max=x;", 'invalid "open_log_file_cache" parameter "max=x"'),
])
def test_more_config_errors_with_file_line(run_cli, prefix, extra, msg):
    """nginx 1.22's words (checked with its -t), at the directive's line."""
    conf = prefix.conf(http('', extra + '\n'))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', conf])
    line = [i for i, l in enumerate(open(conf), 1) if extra in l][0]
    assert r.rc == 1 and re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(msg), re.escape(conf), line),
                                   r.err), r.err


@pytest.mark.parametrize('params', ['', 'buffer=64', 'gzip buffer=4k'], ids=['unbuffered', 'line_over_buffer',
                                                                           'gzip'])
def test_write_failures_are_logged_and_served(server, params):
    """A log that cannot be written (/dev/full: ENOSPC) costs an [alert] per failed write, never a request."""
    from helpers.process import drop_log_lines
    s = server(http('access_log /dev/full combined %s;' % params), files=FILES)
    for _ in range(2):
        r = s.get('/a.txt', headers={'User-Agent': 'x' * 200})  # a line longer than 64 bytes
        assert (r.status, r.body) == (200, b'abc')
    if params.startswith('gzip'):
        s.stop()  # the gzip buffer goes out at exit
    deadline = time.monotonic() + 3
    pat = r'\[alert\] \d+#\d+: (\*\d+ )?write\(\) to "/dev/full" failed \(28: No space left on device\)'
    while not re.search(pat, s.error_log()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert re.search(pat, s.error_log()), s.error_log()
    if not s.stopped:
        s.stop()
    drop_log_lines(s, r'write\(\) to "/dev/full" failed')
