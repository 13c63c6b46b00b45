"""Log file ownership as nginx handles it (issue 15, item 6): the master opens the files; on USR1 it reopens
them and gives them to the workers' user (the owner only: a logrotate `create 0640 www-data adm` keeps its
group and mode); no line is lost across the reopen."""
import grp
import os
import pwd
import shutil
import stat
import tempfile

import pytest

from helpers.process import master_conf, workers_of, wait_until, quick_get, cli

N = 20


def conf(logdir):
    http = '''
    include mime.types;
    default_type application/octet-stream;
    access_log %s/access.log;
    server {
        listen 127.0.0.1:{port};
        root %s/html;
    }''' % (logdir, logdir)
    c = master_conf(http, workers=2, user='nobody nogroup')
    return c.replace('error_log {tmp}/logs/error.log info;', 'error_log %s/error.log info;' % logdir)


def make_log(path, gid, mode):
    with open(path, 'a'):
        pass
    os.chown(path, 0, gid)
    os.chmod(path, mode)


def lines(path):
    with open(path, errors='replace') as f:
        return f.read().splitlines()


def test_group_and_mode_kept_over_start_and_reopen(server):
    if os.geteuid() != 0:
        pytest.skip('needs root')
    try:
        nobody = pwd.getpwnam('nobody')
        adm = grp.getgrnam('adm')
        grp.getgrnam('nogroup')
    except KeyError:
        pytest.skip('needs user nobody, groups adm and nogroup')
    logdir = tempfile.mkdtemp(prefix='hy-logs-', dir='/tmp')
    os.chmod(logdir, 0o755)
    os.mkdir(logdir + '/html', 0o755)
    with open(logdir + '/html/a.txt', 'w') as f:
        f.write('a\n')
    os.chmod(logdir + '/html/a.txt', 0o644)
    try:
        acc, err = logdir + '/access.log', logdir + '/error.log'
        for p in (acc, err):
            make_log(p, adm.gr_gid, 0o640)
        s = server(conf(logdir), full=True)
        workers_of(s, 2)
        for p in (acc, err):  # start: nothing changed
            st = os.stat(p)
            assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, adm.gr_gid, 0o640), (p, st)
        for i in range(N):
            assert quick_get(s.port, '/a.txt?before=%d' % i)[0] == 200
        # logrotate: rename, create 0640 root adm, then reopen
        for p in (acc, err):
            os.rename(p, p + '.1')
            make_log(p, adm.gr_gid, 0o640)
        res = cli(s, '-s', 'reopen')
        assert res.returncode == 0, res
        assert wait_until(lambda: os.stat(acc).st_uid == nobody.pw_uid, 5), os.stat(acc)
        for p in (acc, err):
            st = os.stat(p)
            assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (nobody.pw_uid, adm.gr_gid, 0o640), (p, st)
        # both workers reopened: every request after this point lands in the new file
        def all_new():
            for i in range(N):
                assert quick_get(s.port, '/a.txt?after=%d' % i)[0] == 200
            return sum('after=' in l for l in lines(acc)) >= N
        assert wait_until(all_new, 5), lines(acc)
        assert s.stop() == 0
        old, new = lines(acc + '.1'), lines(acc)
        # no line lost, none in the wrong file once every worker had reopened
        assert sum('before=' in l for l in old + new) == N, (old, new)
        assert not [l for l in new if 'before=' in l], new
        assert 'reopen' in open(err + '.1').read() or 'reopen' in open(err).read()
        with open(err, errors='replace') as f:
            assert '[alert]' not in f.read()
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
