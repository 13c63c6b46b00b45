"""Logging to syslog (nginx's "Logging to syslog" docs): error_log and access_log take
syslog:server=ADDR[:PORT][,facility=][,severity=][,tag=][,nohostname]; each message is one datagram
"<PRI>Mmm dd hh:mm:ss HOST TAG: MESSAGE" (RFC 3164), PRI = facility * 8 + severity (local7 and info by default;
an error_log message has its own level as severity), the tag "nginx" by default."""
import re
import socket

import pytest

from conftest import simple

HDR = re.compile(r'^<(\d+)>([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (?:(\S+) )?(\w+): (.*)$', re.S)


@pytest.fixture
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', 0))
    s.settimeout(5)
    yield s
    s.close()


def recv(s):
    data = s.recv(8192).decode()
    m = HDR.match(data)
    assert m, data
    return m


def conf(port):
    return simple('''
        root {html};
        location /a { access_log syslog:server=127.0.0.1:%(p)d short; }
        location /af { access_log syslog:server=127.0.0.1:%(p)d,facility=user,severity=alert,tag=web_1 short; }
        location /an { access_log syslog:server=127.0.0.1:%(p)d,nohostname short; }
        location /e { access_log off; error_log syslog:server=127.0.0.1:%(p)d; }
        location /ef { access_log off; error_log syslog:server=127.0.0.1:%(p)d,facility=daemon,severity=emerg; }
    ''' % {'p': port}, http_extra='log_format short "$uri:$status";')


def test_access_log_to_syslog(server, udp):
    s = server(conf(udp.getsockname()[1]))
    s.get('/a')
    m = recv(udp)
    assert int(m.group(1)) == 23 * 8 + 6          # local7.info
    assert m.group(7) == socket.gethostname().lower()
    assert m.group(8) == 'nginx'
    assert m.group(9) == '/a:404'                   # the line, no newline


def test_facility_severity_tag_nohostname(server, udp):
    s = server(conf(udp.getsockname()[1]))
    s.get('/af')
    m = recv(udp)
    assert int(m.group(1)) == 1 * 8 + 1 and m.group(8) == 'web_1' and m.group(9) == '/af:404'
    s.get('/an')
    data = udp.recv(8192).decode()
    assert re.match(r'^<190>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d nginx: /an:404$', data), data


def test_error_log_to_syslog(server, udp):
    s = server(conf(udp.getsockname()[1]))
    s.get('/e')
    m = recv(udp)
    assert int(m.group(1)) == 23 * 8 + 3           # the message's level (error), not the severity parameter
    assert re.match(r'\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[error\] \d+#\d+: \*\d+ open\(\) ".*/e" failed', m.group(9))
    s.get('/ef')
    m = recv(udp)
    assert int(m.group(1)) == 3 * 8 + 3            # daemon.err: severity=emerg does not apply to error_log


def test_receiver_gone_then_back(server, udp):
    port = udp.getsockname()[1]
    s = server(conf(port))
    s.get('/a')
    recv(udp)
    udp.close()
    for _ in range(3):
        assert s.get('/a').status == 404     # sends fail (refused): nothing breaks
    again = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    again.bind(('127.0.0.1', port))
    again.settimeout(5)
    try:
        s.get('/a')
        s.get('/a')  # the first send after a failure may still be the one that notices it
        assert recv(again).group(9) == '/a:404'
    finally:
        again.close()


@pytest.mark.parametrize('directive,message', [
    ('access_log syslog:server=127.0.0.1,facility=nope;', 'unknown syslog facility "nope"'),
    ('access_log syslog:server=127.0.0.1,severity=loud;', 'unknown syslog severity "loud"'),
    ('access_log syslog:server=127.0.0.1,tag=a-b;', 'syslog "tag" only allows alphanumeric characters and underscore'),
    ('access_log syslog:server=127.0.0.1,tag=' + 'a' * 33 + ';', 'syslog tag length exceeds 32'),
    ('access_log syslog:facility=user;', 'no syslog server specified'),
    ('access_log syslog:server=127.0.0.1,bogus;', 'unknown syslog parameter "bogus"'),
    ('access_log syslog:server=127.0.0.1 combined buffer=4k;', 'logs to syslog cannot be buffered'),
    ('error_log syslog:server=127.0.0.1,facility=nope;', 'unknown syslog facility "nope"'),
])
def test_conf_errors(prefix, run_cli, directive, message):
    conf_path = prefix.conf(simple('location / { %s }' % directive))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf_path])
    assert r.rc == 1 and message in r.err, r.err


def test_reload_keeps_logging_and_closes_old_sockets(server, udp):
    import os
    import signal
    from helpers.process import wait_until
    port = udp.getsockname()[1]
    s = server(conf(port))
    s.get('/a')
    assert recv(udp).group(9) == '/a:404'

    def fds():
        return len(os.listdir('/proc/%d/fd' % s.proc.pid))

    counts = []
    for i in range(4):
        s.prefix.conf(conf(port).replace('root {html};', 'root {html}; location = /gen%d { return 204; }' % i))
        s.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: s.get('/gen%d' % i).status == 204)
        s.get('/a')
        assert recv(udp).group(9) == '/a:404'
        counts.append(fds())
    assert counts[-1] <= counts[0], counts   # each generation's syslog socket is closed with it
