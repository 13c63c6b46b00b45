"""`hayate --doctor`: a plain-words report of what the configuration asks for and what the machine allows, exit
status 0 when nothing limits the configured capacity, 1 otherwise (hayate only: nginx has nothing like it)."""
import grp
import os
import pwd
import re
import resource
import shutil
import socket
import subprocess
import tempfile

import pytest

from conftest import HY_BIN, SANITIZER_RE
from helpers.process import master_conf, one_server, wait_log

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
    # no conf/hayate.conf under the prefix: the embedded default. The prefix is one the workers' user (nobody,
    # when run as root) can reach, else --doctor rightly reports the document root.
    d = tempfile.mkdtemp(prefix='hy-doctor-', dir='/tmp')
    os.chmod(d, 0o755)
    os.mkdir(d + '/html', 0o755)
    try:
        res = run_cli(['-p', d + '/', '--doctor'], timeout=20)
    finally:
        shutil.rmtree(d, ignore_errors=True)
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


# ---------------------------------------------------------------- issue 15: limits as they really are, ports,
# permissions



def nobody_ids():
    try:
        return pwd.getpwnam('nobody').pw_uid, grp.getgrnam('nogroup').gr_gid
    except KeyError:
        return None


def public_dir():
    d = tempfile.mkdtemp(prefix='hy-doctor-', dir='/tmp')
    os.chmod(d, 0o755)
    return d


def test_doctor_as_unprivileged_user_with_low_hard_limit(run_cli):
    """worker_rlimit_nofile promises 65536, but an ordinary user with a 1024 hard limit cannot raise it: the
    report must say the limit is 1024 and exit 1 (it used to trust worker_rlimit_nofile)."""
    ids = nobody_ids()
    if os.geteuid() != 0 or ids is None or not shutil.which('setpriv') or not shutil.which('prlimit'):
        pytest.skip('needs root, nobody/nogroup, setpriv and prlimit')
    d = public_dir()
    try:
        conf = os.path.join(d, 'doctor.conf')
        with open(conf, 'w') as f:
            f.write('worker_processes 1;\nworker_rlimit_nofile 65536;\nerror_log stderr;\npid %s/hy.pid;\n'
                    'events { worker_connections 32000; }\n'
                    'http { access_log off; server { listen 127.0.0.1:1; root %s; } }\n' % (d, d))
        os.chmod(conf, 0o644)
        p = subprocess.run(['prlimit', '--nofile=1024:1024', 'setpriv', '--reuid=%d' % ids[0], '--regid=%d' % ids[1],
                            '--clear-groups', HY_BIN, '-p', d + '/', '-c', conf, '--doctor'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, universal_newlines=True)
        assert not SANITIZER_RE.search(p.stderr), p.stderr
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert re.search(r'soft 1024, hard 1024 for this user \(uid %d\); hayate keeps 1024' % ids[0], p.stdout), \
            p.stdout
        limits = limit_lines(p.stdout)
        assert any('worker_rlimit_nofile 65536 is above this user\'s hard limit 1024' in l for l in limits), limits
        assert any('worker_connections 32000' in l and 'the limit is 1024' in l for l in limits), limits
        assert any('may not bind ports below 1024' in l for l in limits), limits
        assert 'nothing on this machine limits' not in p.stdout
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_doctor_port_held_by_another_process(run_cli, prefix):
    holder = socket.socket()
    holder.bind(('127.0.0.1', prefix.port))
    holder.listen(1)
    try:
        res = doctor(run_cli, prefix, master_conf(one_server('root {html};')))
    finally:
        holder.close()
    assert res.rc == 1, res
    want = 'listen 127.0.0.1:%d: the address is already in use by pid %d (' % (prefix.port, os.getpid())
    assert any(want in l for l in limit_lines(res.out)), res.out


def test_doctor_port_free(run_cli, prefix):
    res = doctor(run_cli, prefix, master_conf(one_server('root {html};')))
    assert not [l for l in limit_lines(res.out) if 'already in use' in l], res.out


def unreadable_root():
    d = public_dir()
    os.mkdir(d + '/site', 0o700)  # root's: nobody cannot enter it
    with open(d + '/site/a.txt', 'w') as f:
        f.write('a\n')
    return d


def test_doctor_root_the_workers_cannot_read(run_cli, prefix):
    if os.geteuid() != 0 or nobody_ids() is None:
        pytest.skip('needs root and nobody/nogroup')
    d = unreadable_root()
    try:
        res = doctor(run_cli, prefix, master_conf(one_server('root %s/site;' % d), user='nobody nogroup'))
        assert res.rc == 1, res
        want = ('the workers\' user "nobody" cannot reach the document root "%s/site": no search (x) permission '
                'on "%s/site" (drwx------ root:root)' % (d, d))
        assert any(want in l for l in limit_lines(res.out)), res.out
        os.chmod(d + '/site', 0o755)
        res = doctor(run_cli, prefix, master_conf(one_server('root %s/site;' % d), user='nobody nogroup'))
        assert not [l for l in limit_lines(res.out) if 'document root' in l], res.out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_start_warns_about_a_root_the_workers_cannot_read(server):
    if os.geteuid() != 0 or nobody_ids() is None:
        pytest.skip('needs root and nobody/nogroup')
    d = unreadable_root()
    try:
        s = server(master_conf(one_server('root %s/site;' % d), workers=1, user='nobody nogroup'), full=True)
        m = wait_log(s, r'^.*\[warn\] .*cannot reach the document root "%s/site".*$' % re.escape(d))
        assert m, s.error_log()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_doctor_access_log_the_workers_cannot_reach(run_cli, prefix):
    """Access logs are log files too: a directory the workers' user cannot enter is reported (as error logs)."""
    if os.geteuid() != 0 or nobody_ids() is None:
        pytest.skip('needs root and nobody/nogroup')
    d = tempfile.mkdtemp(prefix='hy-alog-')
    os.chmod(d, 0o700)
    try:
        conf = master_conf(one_server('root %s; access_log %s/logs/access.log;' % (d, d)), user='nobody nogroup')
        os.makedirs(d + '/logs', exist_ok=True)
        os.chmod(d + '/logs', 0o700)
        res = doctor(run_cli, prefix, conf)
        assert res.rc == 1, res
        assert any('access log "%s/logs/access.log"' % d in l for l in limit_lines(res.out)), res.out
        os.chmod(d, 0o755)
        os.chmod(d + '/logs', 0o777)
        res = doctor(run_cli, prefix, conf)
        assert not [l for l in limit_lines(res.out) if 'access log "%s' % d in l], res.out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def perm_lines(res, what='document root'):
    return [l for l in limit_lines(res.out) if what in l]


def test_doctor_document_root_checks(run_cli, prefix):
    """Read permission on the root itself, the group's bits when the workers' group owns it, a root that does
    not exist, and roots given in nested locations."""
    if os.geteuid() != 0 or nobody_ids() is None:
        pytest.skip('needs root and nobody/nogroup')
    uid, gid = nobody_ids()
    d = public_dir()
    try:
        os.mkdir(d + '/site', 0o711)  # enterable, not readable
        os.mkdir(d + '/grp', 0o750)
        os.mkdir(d + '/nested', 0o700)
        conf = master_conf(one_server('root %s/site;\n location /g/ { root %s/grp; }\n'
                                      ' location /n/ { location /n/m/ { alias %s/nested/; } }\n'
                                      ' location /gone/ { root %s/gone/deeper; }' % (d, d, d, d)),
                           user='nobody nogroup')
        res = doctor(run_cli, prefix, conf)
        assert res.rc == 1, res
        lines = perm_lines(res)
        want = ('the workers\' user "nobody" cannot read the document root "%s/site" (drwx--x--x root:root); '
                '`chmod o+r %s/site`, or set `user` to one who can' % (d, d))
        assert any(want in l for l in lines), res.out
        assert any('cannot reach the document root "%s/grp"' % d in l for l in lines), res.out  # root:root 750
        assert any('cannot reach the document root "%s/nested/"' % d in l for l in lines), res.out
        assert any('the document root "%s/gone/deeper" does not exist ("%s/gone" is missing)' % (d, d) in l
                   for l in lines), res.out
        # the workers' group owns it: its bits decide
        os.chown(d + '/grp', 0, gid)
        os.chmod(d + '/site', 0o755)
        os.chmod(d + '/nested', 0o755)
        os.makedirs(d + '/gone/deeper')
        res = doctor(run_cli, prefix, conf)
        assert not perm_lines(res), res.out
        # ... and the owner's bits decide for the owner, even against the other bits
        os.chown(d + '/grp', uid, gid)
        os.chmod(d + '/grp', 0o075)
        res = doctor(run_cli, prefix, conf)
        assert any('cannot reach the document root "%s/grp"' % d in l for l in perm_lines(res)), res.out
    finally:
        shutil.rmtree(d, ignore_errors=True)
