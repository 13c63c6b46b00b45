"""A daemonized hayate (or nginx) for the process tests (binary upgrade, signals): the config, starting it, the
new binary of a USR2, and the end of a test (QUIT to every master seen, then the error log must hold no alert).

    master = start_daemon(hy_bin, prefix, single=False, workers=2)   # serving /a.txt ("hello\\n")
    seen = {master}; new = usr2(prefix, master, seen); ...; stop_daemons(prefix, seen)
"""
import os
import re
import signal
import subprocess

from conftest import SANITIZER_RE
from helpers.process import children, alive, wait_until, quick_get, kill_quietly


def daemon_conf(prefix, single=False, workers=2):
    return prefix.render('''daemon on;
master_process %s;
worker_processes %d;
user root;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
events { worker_connections 1024; }
http {
    include mime.types;
    access_log off;
    server {
        listen 127.0.0.1:{port};
        root {html};
    }
}
''' % ('off' if single else 'on', workers))


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def serving(port):
    try:
        return quick_get(port, '/a.txt')[0] == 200
    except OSError:
        return False


def masters_under(tmp):
    """Pids of every master process whose command line names this test's prefix."""
    found = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % d, 'rb') as f:
                cmd = f.read().decode(errors='replace')
        except OSError:
            continue
        if 'master process' in cmd and tmp + '/' in cmd:
            found.append(int(d))
    return found


def start_daemon(hy_bin, prefix, single=False, workers=2):
    """Writes html/a.txt and the config, starts the daemon; its master's pid once it serves (with its workers)."""
    prefix.write('html/a.txt', 'hello\n')
    path = prefix.write('conf/test.conf', daemon_conf(prefix, single, workers))
    pidfile = prefix.path('logs/hy.pid')
    res = subprocess.run([hy_bin, '-p', prefix.tmp + '/', '-c', path], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, cwd=prefix.tmp)
    assert res.returncode == 0, res
    assert wait_until(lambda: read_pid(pidfile), 5), 'no pid file'
    master = read_pid(pidfile)
    if single:
        assert wait_until(lambda: serving(prefix.port), 5)
    else:
        assert wait_until(lambda: len(children(master)) == workers, 5), children(master)
        assert wait_until(lambda: serving(prefix.port), 5)
    return master


def usr2(prefix, old, seen):
    """USR2 on `old`: the new master's pid (added to seen) once the pid files say so; it is old's child."""
    pidfile = prefix.path('logs/hy.pid')
    os.kill(old, signal.SIGUSR2)
    assert wait_until(lambda: read_pid(pidfile + '.oldbin') == old and read_pid(pidfile) not in (0, old), 5), \
        (os.listdir(prefix.path('logs')), prefix.error_log())
    new = read_pid(pidfile)
    seen.add(new)
    assert new in children(old), (new, children(old))  # nginx's model: the new master is the old one's child
    return new


def stop_daemons(prefix, seen, ignore=None):
    """QUIT to every pid seen (and any master a broken upgrade left behind), kill what stays; then the error log
    must hold no [alert]/[crit]/[emerg] line (but those matching the regex `ignore`) and no sanitizer report."""
    seen.update(masters_under(prefix.tmp))
    for pid in list(seen):
        kill_quietly(pid, signal.SIGQUIT)
    ok = wait_until(lambda: not any(alive(p) for p in seen), 5)
    for pid in list(seen):
        for k in children(pid):
            kill_quietly(k)
        kill_quietly(pid)
    assert ok, 'masters did not exit on QUIT'
    log = prefix.error_log()
    bad = [l for l in log.splitlines() if ('[alert]' in l or '[crit]' in l or '[emerg]' in l)
           and not (ignore and re.search(ignore, l))]
    assert not bad, '\n'.join(bad)
    assert not SANITIZER_RE.search(log)
