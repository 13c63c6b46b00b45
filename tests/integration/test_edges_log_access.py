"""access_log / log_format / open_log_file_cache edges (nginx's ngx_http_log_module docs): a line longer than the
buffer is written at once, $pipe marks a pipelined request, escape=default, the same file declared twice with
the same or conflicting buffers, a reopen that cannot open the file, and the values rejected at -t."""
import os
import re
import shutil
import signal
import socket
import time

import pytest

from conftest import simple
from helpers.conf_t import fails_at, passes, http_srv


def wait_file(path, pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    data = b''
    while time.monotonic() < deadline:
        try:
            with open(path, 'rb') as f:
                data = f.read()
        except FileNotFoundError:
            data = b''
        if pred(data):
            break
        time.sleep(0.02)
    return data


def test_line_longer_than_the_buffer_is_written_at_once(server):
    s = server(simple('access_log logs/big.log u buffer=1k flush=1h;\n        location / { return 204; }',
                      http_extra="log_format u '$request_uri';"))
    s.get('/short')
    uri = '/' + 'x' * 3000
    assert s.get(uri).status == 204
    # /short waits in the buffer (flushed first, to keep the order), the long line goes straight to the file
    data = wait_file(os.path.join(s.tmp, 'logs/big.log'), lambda d: uri.encode() in d)
    assert data == b'/short\n' + uri.encode() + b'\n'


def test_pipe_marks_the_pipelined_request(server):
    s = server(simple('access_log logs/p.log p;\n        location / { return 200 "$uri"; }',
                      http_extra="log_format p '$uri $pipe';"))
    c = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    c.sendall(b'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    got = b''
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        got += chunk
    c.close()
    assert got.count(b'HTTP/1.1 200') == 2
    data = wait_file(os.path.join(s.tmp, 'logs/p.log'), lambda d: d.count(b'\n') >= 2)
    assert data == b'/a .\n/b p\n'


def test_escape_default_and_byte_counts(server):
    s = server(simple('access_log logs/e.log d;\n        location / { return 200 "12345"; }',
                      http_extra="log_format d escape=default '$http_x_a|$body_bytes_sent|$status';"))
    assert s.get('/', headers={'X-A': 'a"b\\c'}).text == '12345'
    data = wait_file(os.path.join(s.tmp, 'logs/e.log'), lambda d: b'\n' in d)
    assert data == b'a\\x22b\\x5Cc|5|200\n'


def test_same_file_twice_with_the_same_buffer(server):
    s = server(simple('location /a { access_log logs/s.log u buffer=4k; return 204; }\n'
                      '        location /b { access_log logs/s.log u buffer=4k; return 204; }',
                      http_extra="log_format u '$uri';"))
    s.get('/a')
    s.get('/b')
    s.stop()
    with open(os.path.join(s.tmp, 'logs/s.log'), 'rb') as f:
        assert f.read() == b'/a\n/b\n'  # one buffer, one file


@pytest.mark.hayate_only  # nginx reopens in the master and words the failure its own way
def test_reopen_that_fails_keeps_the_old_file(server):
    s = server(simple('access_log {tmp}/alog/a.log u;\n        location / { return 204; }',
                      http_extra="log_format u '$uri';"))
    s.ignore_log = r'open\(\) ".*/alog/a\.log" failed'
    s.get('/one')
    old = os.path.join(s.tmp, 'alog/a.log')
    wait_file(old, lambda d: d == b'/one\n')
    kept = os.open(old, os.O_RDONLY)
    shutil.rmtree(os.path.join(s.tmp, 'alog'))
    s.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 5
    while not re.search(r'\[alert\].*open\(\) ".*/alog/a\.log" failed \(2: No such file or directory\)',
                        s.error_log()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert re.search(r'open\(\) ".*/alog/a\.log" failed \(2: No such file or directory\)', s.error_log())
    assert s.get('/two').status == 204  # still serving, the line goes to the old (unlinked) file
    deadline = time.monotonic() + 5
    data = b''
    while time.monotonic() < deadline:
        os.lseek(kept, 0, os.SEEK_SET)
        data = os.read(kept, 100)
        if b'/two' in data:
            break
        time.sleep(0.02)
    os.close(kept)
    assert data == b'/one\n/two\n'


ERRORS = [
    ('access_log logs/a.log combined gzip=0;', 'invalid compression level "0"'),
    ('access_log logs/a.log combined gzip=10;', 'invalid compression level "10"'),
    ('access_log logs/a.log combined flush=abc buffer=1k;', 'invalid flush time "abc"'),
    ('access_log logs/a.log combined bogus=1;', 'invalid parameter "bogus=1"'),
    ('access_log off combined;', 'invalid parameter "combined"'),
    ('access_log logs/a.log nosuchformat;', 'unknown log format "nosuchformat"'),
    ('access_log logs/$host.log combined buffer=4k;', 'buffered logs cannot have variables in name'),
    ('access_log logs/c.log combined buffer=4k; access_log logs/c.log combined buffer=4k flush=1s;',
     'access_log "logs/c.log" already defined with conflicting parameters'),
    ('access_log logs/c.log combined buffer=4k; access_log logs/c.log combined buffer=8k;',
     'access_log "logs/c.log" already defined with conflicting parameters'),
    ('access_log logs/c.log combined gzip=1; access_log logs/c.log combined gzip=2;',
     'access_log "logs/c.log" already defined with conflicting parameters'),
    ('open_log_file_cache max=10; open_log_file_cache off;', '"open_log_file_cache" directive is duplicate'),
    ('open_log_file_cache max=-1;', 'invalid "open_log_file_cache" parameter "max=-1"'),
    ('open_log_file_cache max=10 inactive=abc;', 'invalid "open_log_file_cache" parameter "inactive=abc"'),
    ('open_log_file_cache max=10 valid=abc;', 'invalid "open_log_file_cache" parameter "valid=abc"'),
    ('open_log_file_cache max=10 min_uses=abc;', 'invalid "open_log_file_cache" parameter "min_uses=abc"'),
    ('open_log_file_cache max=10 size=1;', 'invalid "open_log_file_cache" parameter "size=1"'),
    ('open_log_file_cache inactive=10s;', '"open_log_file_cache" must have "max" parameter'),
]


@pytest.mark.parametrize('directive,message', ERRORS, ids=[e[0] for e in ERRORS])
def test_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv(directive), directive, message)


@pytest.mark.parametrize('block,message', [
    ("log_format a '$uri'; log_format a '$uri';", 'duplicate "log_format" name "a"'),
    ("log_format a escape=xml '$uri';", 'unknown log format escaping "xml"'),
])
def test_format_rejected_at_t(prefix, run_cli, block, message):
    fails_at(prefix, run_cli, 'http {\n    %s\n}\n' % block, block, message)


@pytest.mark.hayate_only  # nginx takes any size
def test_huge_buffer_rejected(prefix, run_cli):
    fails_at(prefix, run_cli, http_srv('access_log logs/a.log combined buffer=100m;'), 'buffer=100m',
             'invalid buffer size "100m"')


def test_open_log_file_cache_off_and_full_accepted(prefix, run_cli):
    passes(prefix, run_cli, http_srv('open_log_file_cache max=10 inactive=20s valid=1m min_uses=2;\n'
                                     '        location / { open_log_file_cache off; }'))
