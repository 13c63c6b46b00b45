"""Edges of syslog: targets (core/syslog.c hy_syslog_parse) as error_log reads them: IPv6 servers in brackets,
a missing host, an unknown host, tags and parameters refused, each with nginx's words and the file:line."""
import re

import pytest

from conftest import simple


def check(prefix, run_cli, target):
    path = prefix.conf('error_log %s;\nevents {}\n' % target + simple('return 204;'), full=True)
    return path, run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])


@pytest.mark.parametrize('target', [
    'syslog:server=[::1]:5514',
    'syslog:server=[::1]',
    'syslog:server=127.0.0.1,tag=Hy_1,nohostname',
    'syslog:server=localhost:5514,facility=local0,severity=debug',
    'syslog:server=127.0.0.1,tag=',  # an empty tag
])
def test_syslog_targets_accepted(prefix, run_cli, target):
    path, r = check(prefix, run_cli, target)
    assert r.rc == 0, r


@pytest.mark.parametrize('target,msg', [
    ('syslog:server=[::1', 'invalid host in syslog server "[::1"'),
    ('syslog:server=:5514', 'no host in syslog server ":5514"'),
    ('syslog:server=127.0.0.1:0', 'invalid port in syslog server "127.0.0.1:0"'),
    ('syslog:server=127.0.0.1:5x', 'invalid port in syslog server "127.0.0.1:5x"'),
    ('syslog:server=no-such-host.invalid', 'host not found in syslog server "no-such-host.invalid"'),
    ('syslog:server=127.0.0.1,tag=a-b', 'syslog "tag" only allows alphanumeric characters and underscore'),
    ('syslog:server=127.0.0.1,tag=' + 'a' * 33, 'syslog tag length exceeds 32'),
    ('syslog:server=127.0.0.1,nohostnamex', 'unknown syslog parameter "nohostnamex"'),
    ('syslog:server=127.0.0.1,server=127.0.0.2', 'duplicate syslog "server"'),
    ('syslog:tag=x', 'no syslog server specified'),
])
def test_syslog_target_errors(prefix, run_cli, target, msg):
    path, r = check(prefix, run_cli, target)
    assert r.rc == 1, r
    assert re.search(re.escape(msg) + r'.* in %s:1' % re.escape(path), r.err), r.err
