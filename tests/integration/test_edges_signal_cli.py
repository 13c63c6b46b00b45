"""-s against the pid file (main.c): a pid written with CRLF is read as nginx reads it, a pid file that is a
directory is refused, and -g with an empty string adds nothing."""
import os
import re

import pytest

from conftest import simple
from helpers.process import wait_until


def test_s_reads_a_pid_with_crlf(server, run_cli, prog):
    s = server(simple('return 204;'))
    pidfile = s.tmp + '/logs/hy.pid'
    assert wait_until(lambda: os.path.exists(pidfile), 5)
    with open(pidfile, 'w') as f:
        f.write('%d\r\n' % s.proc.pid)
    r = run_cli(['-p', s.tmp + '/', '-c', s.prefix.conf_path, '-s', 'reopen'])
    assert r.rc == 0, r
    assert wait_until(lambda: re.search(r'signal 10 \(SIGUSR1\) received', s.error_log()), 5), s.error_log()


@pytest.mark.hayate_only  # nginx words the read failure differently
def test_s_with_a_directory_as_pid_file(prefix, run_cli):
    path = prefix.conf(simple('return 204;'))
    os.makedirs(prefix.tmp + '/logs/hy.pid')
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-s', 'stop'])
    assert r.rc == 1, r
    assert 'invalid PID number "" in "%s/logs/hy.pid"' % prefix.tmp in r.err, r.err


def test_g_empty_adds_nothing(prefix, run_cli):
    path = prefix.conf(simple('return 204;'))
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-g', '', '-t'])
    assert r.rc == 0, r
