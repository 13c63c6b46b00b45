"""Issue 17 (hardening): what an external robustness run found, with the exact bytes from the issue.

1. an absolute-form target does not skip the Host checks (RFC 9112 §3.2);
2. a line ending in a bare CR is answered 400 at once, not at client_header_timeout;
4. control characters a client smuggles into the error log (a decoded %0d%0a) cannot start a new log line;
5. a second If-Modified-Since (and the other unique conditionals) is 400, as in nginx.
"""
import re
import time

import pytest

# client_header_timeout is long on purpose: a bare CR that waits for it would time the client out (10 s)
CONF = '''
http {
    client_header_timeout 30s;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location = /echo { return 200 "host=$host http_host=$http_host\\n"; }
    }
}
'''
FILES = {'html/index.html': 'hello\n'}


def answer_or_close(s, data):
    """Send raw bytes; return the status code of the answer, or None if the server closes without one. The
    client's timeout (10 s) is well below client_header_timeout (30 s): a hang fails the test."""
    c = s.conn(timeout=10.0)
    try:
        c.send(data)
        r = c.read_response('GET')
        return r.status
    finally:
        c.close()


# ---------------------------------------------------------------- 1. absolute-form and Host

def test_absolute_form_without_host_is_400(server):
    s = server(CONF, files=FILES)
    assert answer_or_close(s, b'GET http://localhost/index.html HTTP/1.1\r\n\r\n') == 400
    # HTTP/1.0 needs no Host
    assert answer_or_close(s, b'GET http://localhost/index.html HTTP/1.0\r\n\r\n') == 200


@pytest.mark.parametrize('host', [b'a b', b'../..', b'', b'\t'])
def test_absolute_form_with_invalid_host_is_400(server, host):
    s = server(CONF, files=FILES)
    req = b'GET http://localhost/index.html HTTP/1.1\r\nHost: ' + host + b'\r\nConnection: close\r\n\r\n'
    assert answer_or_close(s, req) == 400


@pytest.mark.hayate_only  # nginx accepts these hosts (docs/DIFFERENCES.md)
@pytest.mark.parametrize('host', [b'a@b', b'x:abc', b'a\\b', b'.evil'])
def test_absolute_form_with_stricter_host_rejections_is_400(server, host):
    s = server(CONF, files=FILES)
    for target in (b'/index.html', b'http://localhost/index.html'):
        req = b'GET ' + target + b' HTTP/1.1\r\nHost: ' + host + b'\r\nConnection: close\r\n\r\n'
        assert answer_or_close(s, req) == 400, (target, host)


def test_absolute_form_host_still_wins_for_routing(server):
    s = server(CONF, files=FILES)
    c = s.conn()
    r = c.request(b'GET http://Target.Example/echo HTTP/1.1\r\nHost: header.example\r\nConnection: close\r\n\r\n')
    assert r.status == 200
    assert r.body == b'host=target.example http_host=header.example\n'


# ---------------------------------------------------------------- 2. bare CR

def test_bare_cr_line_ends_are_400_at_once(server):
    s = server(CONF, files=FILES)
    assert answer_or_close(s, b'GET / HTTP/1.1\rHost: localhost\r\r') == 400


def test_bare_cr_after_version_in_a_later_read_is_400(server):
    """The request line arrives first (the parser waits for its end), then the bare CR: the cheap path for a
    partial line must not skip it."""
    s = server(CONF, files=FILES)
    c = s.conn(timeout=10.0)
    c.send(b'GET / HTTP/1.1')
    assert c.still_open(0.2)
    c.send(b'\rHost: localhost\r\r')
    assert c.read_response('GET').status == 400
    c.close()


def test_bare_cr_at_the_end_of_a_read_waits_for_its_lf(server):
    s = server(CONF, files=FILES)
    c = s.conn(timeout=10.0)
    c.send(b'GET /index.html HTTP/1.1\r')
    assert c.still_open(0.2)
    c.send(b'\nHost: localhost\r\nConnection: close\r\n\r\n')
    r = c.read_response('GET')
    assert r.status == 200 and r.body == b'hello\n'
    c.close()


# ---------------------------------------------------------------- 4. error-log injection

@pytest.mark.hayate_only  # nginx writes the fake line
def test_crlf_in_uri_cannot_forge_an_error_log_line(server):
    s = server(CONF, files=FILES)
    r = s.raw(b'GET /x%0d%0a2026/11/30%2000:00:00%20[alert]%20FAKE HTTP/1.1\r\nHost: localhost\r\n'
              b'Connection: close\r\n\r\n')
    assert r.status == 404
    deadline = time.monotonic() + 10
    while 'FAKE' not in s.error_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [l for l in s.error_log().splitlines() if 'FAKE' in l]
    assert len(lines) == 1, lines
    assert not re.match(r'\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[alert\] FAKE', lines[0])
    assert '/x\\x0d\\x0a2026/11/30 00:00:00 [alert] FAKE' in lines[0], lines[0]
    assert not any(l.startswith('2026/11/30 00:00:00 [alert]') for l in s.error_log().splitlines())
    # the escaped "[alert]" inside the [error] line would trip the fixture's check for alert lines
    open(s.prefix.path('logs/error.log'), 'w').close()


# ---------------------------------------------------------------- 5. duplicate unique headers

@pytest.mark.parametrize('name,value', [
    (b'If-Modified-Since', b'Thu, 01 Jan 1970 00:00:00 GMT'),
    (b'If-Unmodified-Since', b'Thu, 01 Jan 2037 00:00:00 GMT'),
    (b'If-None-Match', b'"x"'),
    (b'If-Match', b'*'),
    (b'If-Range', b'"x"'),
    (b'Expect', b'100-continue'),
])
def test_second_conditional_header_is_400(server, name, value):
    s = server(CONF, files=FILES)
    one = b'GET /index.html HTTP/1.1\r\nHost: localhost\r\n' + name + b': ' + value + b'\r\nConnection: close\r\n'
    assert answer_or_close(s, one + b'\r\n') in (200, 304, 412, 417)
    assert answer_or_close(s, one + name + b': ' + value + b'\r\n\r\n') == 400
    log = s.error_log()
    assert 'client sent duplicate header line: "%s: ' % name.decode() in log, log[-2000:]
