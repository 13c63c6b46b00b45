"""`hayate --doctor`: a plain-words report of what the configuration asks for and what the machine allows, exit
status 0 when nothing limits the configured capacity, 1 otherwise (hayate only: nginx has nothing like it)."""
import os
import re
import resource

import pytest

from helpers.process import master_conf, one_server

pytestmark = pytest.mark.hayate_only


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError):
        return -1


def machine_is_roomy():
    """What hayate's default config needs from this machine (else --doctor rightly exits 1)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return (hard == resource.RLIM_INFINITY or hard >= 10032) and read_int('/proc/sys/net/core/somaxconn') >= 1024


def doctor(run_cli, prefix, conf=None):
    args = ['-p', prefix.tmp + '/', '--doctor']
    if conf is not None:
        args += ['-c', prefix.write('conf/doctor.conf', prefix.render(conf))]
    return run_cli(args, timeout=20)


def limit_lines(out):
    return [l for l in out.splitlines() if l.strip().startswith('LIMIT:')]


def test_doctor_default_config(run_cli, prefix):
    if not machine_is_roomy():
        pytest.skip('this machine limits the default config (hard nofile < 10032 or somaxconn < 1024)')
    res = doctor(run_cli, prefix)  # no conf/hayate.conf under the prefix: the embedded default
    out = res.out
    assert 'configuration (embedded)' in out.splitlines()[0], out
    for section in ('workers', 'connections', 'listen queues'):
        assert re.search(r'^%s$' % section, out, re.M), (section, out)
    ncpu = len(os.sched_getaffinity(0))
    m = re.search(r'^\s+worker processes\s+(\d+) \((.*)\)$', out, re.M)
    assert m and 'auto' in m.group(2), out
    assert int(m.group(1)) <= ncpu
    assert re.search(r'^\s+CPUs allowed\s+%d$' % ncpu, out, re.M), out
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert re.search(r'open files \(RLIMIT_NOFILE\)\s+soft %d, hard %d' % (soft, hard), out), out
    assert re.search(r'^\s+worker_connections\s+%d per worker \(default' % (hard - 32), out, re.M), out
    somaxconn = read_int('/proc/sys/net/core/somaxconn')
    assert re.search(r'^\s+net\.core\.somaxconn\s+%d$' % somaxconn, out, re.M), out
    assert re.search(r'0\.0\.0\.0:8080\s+backlog %d' % somaxconn, out), out
    assert re.search(r'^\s+ListenOverflows\s+\d+', out, re.M), out
    limits = limit_lines(out)
    # the only LIMIT another process on this machine could cause while we look: listen queues overflowing now
    if limits and all('overflowing right now' in l for l in limits):
        assert res.rc == 1
        pytest.skip('listen queues overflowed on this machine during the check')
    assert limits == [], out
    assert res.rc == 0, res
    assert 'result: nothing on this machine limits the configured capacity' in out


def test_doctor_fd_limit_too_low(run_cli, prefix):
    conf = master_conf(one_server('root {html};'), main='worker_rlimit_nofile 100;',
                       events='worker_connections 100000;')
    res = doctor(run_cli, prefix, conf)
    assert res.rc == 1, res
    limits = limit_lines(res.out)
    assert limits, res.out
    assert any('worker_rlimit_nofile' in l and '100000' in l for l in limits), limits
    assert 'result: something limits the configured capacity' in res.out


def test_doctor_backlog_above_somaxconn(run_cli, prefix):
    somaxconn = read_int('/proc/sys/net/core/somaxconn')
    if somaxconn <= 0 or somaxconn >= 65535:
        pytest.skip('somaxconn unknown or at its maximum')
    want = somaxconn * 2
    conf = master_conf(one_server('root {html};', listen='listen 127.0.0.1:{port} backlog=%d;' % want))
    res = doctor(run_cli, prefix, conf)
    assert res.rc == 1, res
    assert any('net.core.somaxconn=%d' % want in l for l in limit_lines(res.out)), res.out


def test_doctor_broken_config(run_cli, prefix):
    res = doctor(run_cli, prefix, 'events {}\nhttp { no_such_directive; }\n')
    assert res.rc == 1, res
    assert '[emerg]' in res.err and 'no_such_directive' in res.err, res
