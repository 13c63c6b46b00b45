"""Binary upgrade as nginx does it (issue 15, item 1): USR2 starts the binary again with the listening sockets
inherited (pid file renamed to .oldbin, the new master writes its own), WINCH sends the old workers away
gracefully, HUP on the old master brings them back (rollback), QUIT ends a master; not one request fails
under load while it happens."""
import os
import re
import shutil
import signal
import socket
import subprocess
import threading

import pytest

from conftest import HY_BIN, IS_NGINX, simple
from helpers.process import children, alive, wait_until, quick_get, kill_quietly
from helpers.daemon import daemon_conf, read_pid, masters_under, start_daemon, usr2, stop_daemons

AB = shutil.which('ab')


class Load:
    """Clients on fresh connections until stopped (and ab beside them when installed); every failure is kept."""

    def __init__(self, port, tmp):
        self.port = port
        self.stop_ev = threading.Event()
        self.failures = []
        self.ok = 0
        self.threads = [threading.Thread(target=self.run) for _ in range(2)]
        self.ab = None
        if AB:
            self.ab_out = open(os.path.join(tmp, 'logs/ab.txt'), 'w+')
            self.ab = subprocess.Popen([AB, '-q', '-n', '20000', '-c', '4', '-s', '10',
                                        'http://127.0.0.1:%d/a.txt' % port], stdout=self.ab_out,
                                       stderr=subprocess.STDOUT)
        for t in self.threads:
            t.start()

    def run(self):
        while not self.stop_ev.is_set():
            try:
                st, body = quick_get(self.port, '/a.txt')
                if (st, body) != (200, b'hello\n'):
                    self.failures.append((st, body))
                else:
                    self.ok += 1
            except OSError as e:
                self.failures.append(repr(e))

    def wait_some(self, n=20):
        start = self.ok
        assert wait_until(lambda: self.ok >= start + n or self.failures, 10), 'load made no progress'

    def finish(self):
        self.stop_ev.set()
        for t in self.threads:
            t.join(10)
        ab_report = ''
        if self.ab:
            self.ab.wait(60)
            self.ab_out.seek(0)
            ab_report = self.ab_out.read()
        return ab_report


@pytest.fixture
def daemon(hy_bin, prefix, request):
    """Starts a daemonized master; yields (prefix, old master pid); kills whatever is left at the end."""
    master = start_daemon(hy_bin, prefix, single=getattr(request, 'param', False))
    seen = {master}
    yield prefix, master, seen
    stop_daemons(prefix, seen)


def upgrade(prefix, old, seen):
    """USR2 on `old`: returns the new master's pid once it serves with its workers."""
    new = usr2(prefix, old, seen)
    if not IS_NGINX:  # two workers: one SO_REUSEPORT socket each, all of them taken over
        assert wait_until(lambda: re.search(r'\[notice\] %d#\d+: using 2 inherited listening sockets' % new,
                                            prefix.error_log()), 5), prefix.error_log()
    assert wait_until(lambda: len(children(new)) == 2, 5), children(new)
    return new


def old_workers(old, new):
    return [k for k in children(old) if k != new]


def test_upgrade_usr2_winch_quit_under_load(daemon):
    prefix, old, seen = daemon
    pidfile = prefix.path('logs/hy.pid')
    load = Load(prefix.port, prefix.tmp)
    try:
        load.wait_some()
        new = upgrade(prefix, old, seen)
        load.wait_some()
        os.kill(old, signal.SIGWINCH)  # old workers finish and leave; the new ones take every connection
        assert wait_until(lambda: not old_workers(old, new), 5), old_workers(old, new)
        load.wait_some()
        os.kill(old, signal.SIGQUIT)
        assert wait_until(lambda: not alive(old), 5)
        load.wait_some()
        assert read_pid(pidfile) == new and not os.path.exists(pidfile + '.oldbin'), os.listdir(prefix.path('logs'))
        assert len(children(new)) == 2
    finally:
        ab = load.finish()
    assert not load.failures, load.failures[:10]
    if AB:
        assert re.search(r'^Complete requests:\s+20000$', ab, re.M), ab
        assert re.search(r'^Failed requests:\s+0$', ab, re.M), ab
        assert 'Non-2xx' not in ab, ab
    # the upgraded master is a master like any other: -s reaches it through the pid file
    res = subprocess.run([HY_BIN, '-p', prefix.tmp + '/', '-c', prefix.path('conf/test.conf'), '-s', 'quit'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    assert res.returncode == 0, res
    assert wait_until(lambda: not alive(new), 5)


def test_upgrade_rollback_with_hup(daemon):
    prefix, old, seen = daemon
    pidfile = prefix.path('logs/hy.pid')
    load = Load(prefix.port, prefix.tmp)
    try:
        load.wait_some()
        new = upgrade(prefix, old, seen)
        os.kill(old, signal.SIGWINCH)
        assert wait_until(lambda: not old_workers(old, new), 5), old_workers(old, new)
        load.wait_some()
        # the new binary misbehaves: bring the old workers back, then send the new master away
        os.kill(old, signal.SIGHUP)
        assert wait_until(lambda: len(old_workers(old, new)) == 2, 5), children(old)
        load.wait_some()
        os.kill(new, signal.SIGQUIT)
        assert wait_until(lambda: not alive(new), 5)
        load.wait_some()
        # the old master took its pid file name back
        assert wait_until(lambda: read_pid(pidfile) == old and not os.path.exists(pidfile + '.oldbin'), 5), \
            os.listdir(prefix.path('logs'))
        assert len(children(old)) == 2
    finally:
        ab = load.finish()
    assert not load.failures, load.failures[:10]
    if AB:
        assert re.search(r'^Failed requests:\s+0$', ab, re.M), ab


@pytest.mark.hayate_only
def test_usr2_twice_is_refused(daemon):
    prefix, old, seen = daemon
    new = upgrade(prefix, old, seen)
    os.kill(old, signal.SIGUSR2)
    assert wait_until(lambda: 'the changing binary signal is ignored' in prefix.error_log(), 5)
    assert children(old).count(new) == 1 and len(children(old)) == 3
    os.kill(new, signal.SIGQUIT)
    assert wait_until(lambda: not alive(new), 5)
    # drop the expected [alert] so that the fixture's log check passes
    p = prefix.path('logs/error.log')
    text = open(p).read()
    with open(p, 'w') as f:
        f.write('\n'.join(l for l in text.splitlines() if 'changing binary signal is ignored' not in l))


@pytest.mark.hayate_only  # nginx 1.22 ignores USR2 with master_process off (docs/DIFFERENCES.md)
@pytest.mark.parametrize('daemon', [True], ids=['master_process_off'], indirect=True)
def test_upgrade_single_process_under_load(daemon):
    """master_process off: USR2 starts the new binary on the same sockets; QUIT then ends the old process."""
    prefix, old, seen = daemon
    pidfile = prefix.path('logs/hy.pid')
    load = Load(prefix.port, prefix.tmp)
    try:
        load.wait_some()
        os.kill(old, signal.SIGUSR2)
        assert wait_until(lambda: read_pid(pidfile + '.oldbin') == old and read_pid(pidfile) not in (0, old), 5), \
            (os.listdir(prefix.path('logs')), prefix.error_log())
        new = read_pid(pidfile)
        seen.add(new)
        load.wait_some()
        os.kill(old, signal.SIGQUIT)
        assert wait_until(lambda: not alive(old), 5)
        load.wait_some()
        assert alive(new) and read_pid(pidfile) == new
    finally:
        ab = load.finish()
    assert not load.failures, load.failures[:10]
    if AB:
        assert re.search(r'^Failed requests:\s+0$', ab, re.M), ab


def start_master(binary, prefix, text):
    """Starts a daemonized master from `binary` with config `text`; returns its pid once its workers run."""
    path = prefix.write('conf/test.conf', text)
    pidfile = prefix.path('logs/hy.pid')
    res = subprocess.run([binary, '-p', prefix.tmp + '/', '-c', path], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, cwd=prefix.tmp)
    assert res.returncode == 0, res
    assert wait_until(lambda: read_pid(pidfile), 5), 'no pid file'
    master = read_pid(pidfile)
    assert wait_until(lambda: len(children(master)) == 2, 5), children(master)
    return master


def stop_masters(prefix, pids):
    pids = set(pids) | set(masters_under(prefix.tmp))
    for pid in pids:
        kill_quietly(pid, signal.SIGQUIT)
    ok = wait_until(lambda: not any(alive(p) for p in pids), 5)
    for pid in pids:
        for k in children(pid):
            kill_quietly(k)
        kill_quietly(pid)
    assert ok, 'masters did not exit on QUIT'


def connect_refused(family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(addr)
        return False
    except ConnectionRefusedError:
        return True
    finally:
        s.close()


def unix_get(path, uri):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b'GET %s HTTP/1.0\r\nHost: x\r\n\r\n' % uri.encode())
    data = b''
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    return data


@pytest.mark.hayate_only  # the count of inherited sockets is hayate's notice
def test_upgrade_inherits_ipv6_and_unix_sockets_and_closes_what_the_new_config_dropped(hy_bin, prefix):
    """Every address family is matched to the new configuration's listens; a socket whose address the
    configuration (edited before USR2) no longer names is closed by the new master."""
    prefix.write('html/a.txt', 'hello\n')
    sock = prefix.path('logs/hy.sock')
    text = daemon_conf(prefix).replace('listen 127.0.0.1:{port};'.replace('{port}', str(prefix.port)),
                                'listen 127.0.0.1:%d; listen [::1]:%d; listen [::1]:%d; listen unix:%s;'
                                % (prefix.port, prefix.port, prefix.port2, sock))
    old = start_master(hy_bin, prefix, text)
    seen = {old}
    try:
        assert unix_get(sock, '/a.txt').endswith(b'\r\n\r\nhello\n')
        # the next binary is told to listen no more on [::1]:port2
        prefix.write('conf/test.conf', text.replace(' listen [::1]:%d;' % prefix.port2, ''))
        pidfile = prefix.path('logs/hy.pid')
        os.kill(old, signal.SIGUSR2)
        assert wait_until(lambda: read_pid(pidfile) not in (0, old), 5), prefix.error_log()
        new = read_pid(pidfile)
        seen.add(new)
        # 2 workers: one reuseport socket each for the three TCP addresses, one shared unix socket
        assert wait_until(lambda: re.search(r'\[notice\] %d#\d+: using 7 inherited listening sockets' % new,
                                            prefix.error_log()), 5), prefix.error_log()
        assert wait_until(lambda: len(children(new)) == 2, 5), children(new)
        os.kill(old, signal.SIGQUIT)
        assert wait_until(lambda: not alive(old), 5)
        # the new master serves on what it kept, over each family ...
        assert quick_get(prefix.port, '/a.txt') == (200, b'hello\n')
        s = socket.create_connection(('::1', prefix.port), timeout=5)
        s.sendall(b'GET /a.txt HTTP/1.0\r\n\r\n')
        data = b''
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
        assert data.startswith(b'HTTP/1.1 200 ') and data.endswith(b'\r\n\r\nhello\n'), data
        assert unix_get(sock, '/a.txt').endswith(b'\r\n\r\nhello\n')
        # ... and the dropped address is closed: not even a listen backlog left behind
        assert connect_refused(socket.AF_INET6, ('::1', prefix.port2))
    finally:
        stop_masters(prefix, seen)
    bad = [l for l in prefix.error_log().splitlines() if '[alert]' in l or '[crit]' in l or '[emerg]' in l]
    assert not bad, '\n'.join(bad)


def test_upgrade_with_the_binary_gone_keeps_the_old_master(hy_bin, prefix):
    """USR2 when the binary's file is gone: exec fails in the child (logged with nginx's wording), the old
    master takes its pid file name back and serves on."""
    prefix.write('html/a.txt', 'hello\n')
    os.makedirs(prefix.path('bin'), exist_ok=True)
    binary = prefix.path('bin/hayate')
    shutil.copy2(hy_bin, binary)
    old = start_master(binary, prefix, daemon_conf(prefix))
    try:
        os.unlink(binary)
        pidfile = prefix.path('logs/hy.pid')
        os.kill(old, signal.SIGUSR2)
        assert wait_until(lambda: 'exited with code 1' in prefix.error_log(), 5), prefix.error_log()
        log = prefix.error_log()
        assert re.search(r'\[alert\] \d+#\d+: execve\(\) failed while executing new binary process "%s" '
                         r'\(2: No such file or directory\)' % re.escape(binary), log), log
        assert re.search(r'\[notice\] %d#\d+: new binary process \d+ exited with code 1' % old, log), log
        assert wait_until(lambda: read_pid(pidfile) == old and not os.path.exists(pidfile + '.oldbin'), 5), \
            os.listdir(prefix.path('logs'))
        assert quick_get(prefix.port, '/a.txt') == (200, b'hello\n')
        assert len(children(old)) == 2
    finally:
        stop_masters(prefix, {old})


@pytest.mark.hayate_only  # nginx names its variable NGINX
@pytest.mark.parametrize('value,shown', [('abc;', 'abc'), ('0;', '0'), ('-5', '-5')])
def test_bad_inherited_socket_variable_is_reported_and_ignored(server, value, shown):
    """A HAYATE variable naming no stream socket: nginx's emerg on stderr, the rest is ignored, and the server
    opens its own sockets."""
    old = os.environ.get('HAYATE')
    os.environ['HAYATE'] = value
    try:
        srv = server('''daemon off;
master_process on;
worker_processes 1;
user root;
error_log {tmp}/logs/error.log info;
events {}
''' + simple('root {html};'), files={'html/a.txt': 'hello\n'}, full=True)
    finally:
        if old is None:
            del os.environ['HAYATE']
        else:
            os.environ['HAYATE'] = old
    assert srv.get('/a.txt').status == 200
    assert ('[emerg] invalid socket number "%s" in HAYATE environment variable, ignoring the rest of the '
            'variable' % shown) in srv.stderr(), srv.stderr()
    assert re.search(r'\[notice\] \d+#\d+: using 0 inherited listening sockets', srv.error_log()), srv.error_log()
