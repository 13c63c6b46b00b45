"""Process edges: worker_priority and working_directory as the workers run with them (nginx's core module
docs), a reload whose error log cannot be opened (the old configuration stays, as nginx), and the permission
part of `hayate --doctor` for paths it has to skip or take apart (roots with variables or a trailing slash,
logs to stderr, to syslog, at the top of the tree, in a directory not made yet; single-process mode, where the
workers are the user who starts it)."""
import os
import re
import shutil
import signal

import pytest

from conftest import IS_NGINX
from helpers.process import master_conf, one_server, workers_of, wait_until, quick_get, proc_stat, wait_log
from test_doctor import doctor, limit_lines, nobody_ids, public_dir

FILES = {'html/a.txt': 'hello\n'}


def test_worker_priority_and_working_directory(server, prefix):
    wd = public_dir()
    try:
        s = server(master_conf(one_server('root {html};'), workers=1,
                               main='worker_priority 7;\nworking_directory %s;' % wd), files=FILES, full=True)
        w = workers_of(s, 1)[0]
        # the worker sets both up after it was forked: wait until it has
        assert wait_until(lambda: os.readlink('/proc/%d/cwd' % w) == wd), os.readlink('/proc/%d/cwd' % w)
        assert wait_until(lambda: int(proc_stat(w)[16]) == 7), proc_stat(w)  # nice
        assert int(proc_stat(s.proc.pid)[16]) == 0  # the master keeps its own
        assert quick_get(s.prefix.port, '/a.txt')[0] == 200
    finally:
        shutil.rmtree(wd, ignore_errors=True)


def test_reload_with_an_error_log_that_cannot_be_opened(server, prefix):
    s = server(master_conf(one_server('location / { return 200 "one\\n"; }'), workers=1), full=True)
    old = workers_of(s, 1)
    s.ignore_log = r'reconfiguration failed|No such file or directory|Not a directory|open\(\)'
    blocker = prefix.write('blocker', 'a file, not a directory\n')
    prefix.conf(master_conf(one_server('location / { return 200 "two\\n"; }'), workers=1)
                .replace('error_log {tmp}/logs/error.log info;',
                         'error_log {tmp}/logs/error.log info;\nerror_log %s/sub/error.log;' % blocker), full=True)
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_log(s, r'reconfiguration failed|open\(\) ".*blocker/sub/error.log" failed'), s.error_log()
    assert quick_get(s.prefix.port, '/')[1] == b'one\n'
    assert workers_of(s, 1) == old


@pytest.mark.hayate_only
def test_doctor_paths_it_skips_or_trims(run_cli, prefix):
    if os.geteuid() != 0 or nobody_ids() is None:
        pytest.skip('needs root and nobody/nogroup')
    d = public_dir()
    try:
        os.mkdir(d + '/locked', 0o700)  # nobody cannot enter it
        os.mkdir(d + '/locked/site', 0o755)
        body = ('root %s/locked/site//;\n'  # trailing slashes: the directories are checked without them
                ' location /v/ { root %s/locked/$host; }\n'  # variables: known only per request, not checked
                ' access_log %s/not-yet/access.log;\n'  # a directory made at start: no finding
                ' access_log syslog:server=127.0.0.1:9;' % (d, d, d))
        conf = master_conf(one_server(body), user='nobody nogroup')
        conf = conf.replace('error_log {tmp}/logs/error.log info;',
                            'error_log stderr;\nerror_log syslog:server=127.0.0.1:9;\nerror_log /hy-ct-top.log;')
        res = doctor(run_cli, prefix, conf)
        lines = [ln for ln in limit_lines(res.out) if d in ln]
        want = (r'the workers\' user "nobody" cannot reach the document root "%s/locked/site/*": no search \(x\) '
                r'permission on "%s/locked" ' % (re.escape(d), re.escape(d)))
        assert len(lines) == 1 and re.search(want, lines[0]), res.out
        assert 'hy-ct-top.log' not in res.out and 'not-yet' not in res.out, res.out
        # master_process off: the one process is the user who starts it (root here): nothing to report
        single = conf.replace('master_process on;', 'master_process off;')
        res = doctor(run_cli, prefix, single)
        assert not [ln for ln in limit_lines(res.out) if d in ln], res.out
        assert 'reachable by the workers\' user' in res.out, res.out
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if os.path.exists('/hy-ct-top.log'):
            os.unlink('/hy-ct-top.log')


def test_worker_killed_at_once_is_respawned(server):
    """A worker that dies within its first second is forked again (after a short pause, so that one that always
    dies at start does not spin the master)."""
    s = server(master_conf(one_server('location / { return 200 "ok\\n"; }'), workers=1), full=True)
    s.ignore_log = r'exited on signal 9'
    first = workers_of(s, 1)[0]
    os.kill(first, signal.SIGKILL)
    assert wait_until(lambda: workers_of(s, 1) and workers_of(s, 1)[0] != first, 10)
    assert wait_log(s, r'worker process %d exited on signal 9' % first), s.error_log()
    assert quick_get(s.prefix.port, '/')[1] == b'ok\n'
