"""Master and workers: how many, respawn after a crash, privileges, the facts logged at start."""
import os
import grp
import pwd
import re
import shutil
import signal
import tempfile

import pytest

from conftest import IS_NGINX
from helpers.process import (master_conf, one_server, children, workers_of, wait_until, status_field, quick_get,
                             drop_log_lines, alive, wait_log)

FILES = {'html/a.txt': 'hello\n'}


def expected_auto_workers():
    """CPUs in our affinity mask, capped by the cgroup v2 cpu.max quota (hayate's rule for `auto`)."""
    n = len(os.sched_getaffinity(0))
    if IS_NGINX:
        return n
    try:
        with open('/sys/fs/cgroup/cpu.max') as f:
            quota, period = f.read().split()
        if quota != 'max':
            q = -(-int(quota) // int(period))
            n = min(n, max(q, 1))
    except (OSError, ValueError):
        pass
    return n


def test_worker_processes_3(server):
    s = server(master_conf(one_server('root {html};'), workers=3), files=FILES, full=True)
    kids = workers_of(s, 3)
    assert len(kids) == 3, kids
    assert s.proc.pid not in kids
    # the master serves nothing itself: every request is answered, whoever accepts it
    for _ in range(10):
        assert quick_get(s.port, '/a.txt') == (200, b'hello\n')


def test_worker_processes_auto(server):
    n = expected_auto_workers()
    s = server(master_conf(one_server('root {html};'), workers='auto'), files=FILES, full=True)
    kids = workers_of(s, n)
    assert len(kids) == n, (kids, n)
    assert quick_get(s.port, '/a.txt')[0] == 200


@pytest.mark.hayate_only
def test_start_logs_workers_and_limits(server):
    s = server(master_conf(one_server('root {html};'), workers=2, error_level='notice'), files=FILES, full=True)
    workers_of(s, 2)
    wait_until(lambda: s.error_log().count('start worker process ') >= 2, 5)
    log = s.error_log()
    assert 'using 2 worker processes (worker_processes)' in log, log
    assert 'limits: open files ' in log and 'worker_connections 1024' in log, log
    assert log.count('start worker process ') == 2, log


def test_respawn_after_sigkill(server):
    s = server(master_conf(one_server('root {html};'), workers=2), files=FILES, full=True)
    kids = workers_of(s, 2)
    assert len(kids) == 2, kids
    victim = kids[0]
    os.kill(victim, signal.SIGKILL)
    new = wait_until(lambda: (lambda k: k if len(k) == 2 and victim not in k else None)(children(s.proc.pid)), 5)
    assert new, children(s.proc.pid)
    assert kids[1] in new  # the other worker was left alone
    assert not alive(victim)
    for _ in range(10):
        assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    alert = r'\[alert\] \d+#\d+: worker process %d exited on signal 9' % victim
    assert wait_until(lambda: re.search(alert, s.error_log()), 5), s.error_log()
    assert s.alive()
    assert s.stop() == 0
    drop_log_lines(s, alert)  # expected: teardown fails on any other [alert]


def test_respawn_repeatedly(server):
    """Every worker killed a few times in a row: the master keeps the count and keeps serving."""
    s = server(master_conf(one_server('root {html};'), workers=2), files=FILES, full=True)
    killed = []
    for _ in range(3):
        kids = workers_of(s, 2)
        assert len(kids) == 2, kids
        for k in kids:
            os.kill(k, signal.SIGKILL)
            killed.append(k)
        assert wait_until(lambda: (lambda c: len(c) == 2 and not set(c) & set(killed))(children(s.proc.pid)), 5), \
            children(s.proc.pid)
    assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    assert s.stop() == 0
    drop_log_lines(s, r'\[alert\] \d+#\d+: worker process \d+ exited on signal 9')


def world_readable_docroot():
    d = tempfile.mkdtemp(prefix='hy-priv-', dir='/tmp')
    os.chmod(d, 0o755)
    with open(os.path.join(d, 'a.txt'), 'w') as f:
        f.write('public\n')
    os.chmod(os.path.join(d, 'a.txt'), 0o644)
    with open(os.path.join(d, 'secret.txt'), 'w') as f:
        f.write('root only\n')
    os.chmod(os.path.join(d, 'secret.txt'), 0o600)
    return d


def group_exists(name):
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


# `user nobody;` alone means group "nobody", which Debian does not have (it has nogroup); the default (no `user`
# directive) is nobody/nogroup on Debian for both servers.
@pytest.mark.parametrize('user_line', ['nobody nogroup', None], ids=['user_nobody_nogroup', 'default_user'])
def test_privileges_dropped(server, user_line):
    if os.geteuid() != 0:
        pytest.skip('needs root')
    try:
        nobody = pwd.getpwnam('nobody')
    except KeyError:
        pytest.skip('no user nobody')
    if not group_exists('nogroup'):
        pytest.skip('no group nogroup')
    docroot = world_readable_docroot()
    try:
        s = server(master_conf(one_server('root %s;' % docroot), workers=2, user=user_line), full=True)
        kids = workers_of(s, 2)
        assert len(kids) == 2, kids
        for k in kids:
            # a worker just forked may not have dropped its privileges yet: wait for it, with a deadline
            wait_until(lambda: [int(u) for u in status_field(k, 'Uid')] == [nobody.pw_uid] * 4, timeout=5)
            uids = status_field(k, 'Uid')
            assert [int(u) for u in uids] == [nobody.pw_uid] * 4, (k, uids)
            gids = status_field(k, 'Gid')
            assert int(gids[0]) != 0 and int(gids[1]) != 0, (k, gids)
            assert '0' not in (status_field(k, 'Groups') or []), (k, status_field(k, 'Groups'))
        assert [int(u) for u in status_field(s.proc.pid, 'Uid')] == [0, 0, 0, 0]
        assert quick_get(s.port, '/a.txt') == (200, b'public\n')
    finally:
        shutil.rmtree(docroot, ignore_errors=True)


def test_unprivileged_worker_gets_403_logged_as_error(server):
    """A file only root may read is out of the workers' reach: 403, logged at [error] as nginx does (EACCES is
    not a server fault; [crit] is for those)."""
    if os.geteuid() != 0 or not group_exists('nogroup'):
        pytest.skip('needs root and group nogroup')
    docroot = world_readable_docroot()
    try:
        s = server(master_conf(one_server('root %s;' % docroot), workers=1, user='nobody nogroup'), full=True)
        assert quick_get(s.port, '/secret.txt')[0] == 403
        m = wait_log(s, r'^.*open\(\) "%s/secret.txt" failed \(13: Permission denied\).*$' % re.escape(docroot))
        assert m, s.error_log()
        assert '[error]' in m.group(0), m.group(0)
    finally:
        shutil.rmtree(docroot, ignore_errors=True)


def test_user_with_missing_group_fails_the_config_test(prefix, run_cli, prog):
    """`user nobody;` means group nobody: where that group is missing nginx refuses the config (with -t and at
    start), instead of starting a master whose workers all die."""
    if os.geteuid() != 0:
        pytest.skip('needs root')
    if group_exists('nobody'):
        pytest.skip('this machine has a group nobody')
    path = prefix.write('conf/test.conf', prefix.render(master_conf(one_server('root {html};'), user='nobody')))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] .*getgrnam\("nobody"\) failed in %s:\d+' % re.escape(path), res.err), res.err
