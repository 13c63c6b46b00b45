"""Edges of the process model (process/master.c, process/worker.c) beyond test_process_*.py: a worker that
cannot enter its working_directory ends with nginx's fatal code 2 and is not respawned; a new binary (USR2) that
dies is reaped by the old master, which takes its pid file back (nginx's ngx_reap_children); the same with
master_process off, where the single process is the new binary's parent."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import wait_port
from helpers.process import master_conf, one_server, children, alive, wait_until, kill_quietly
from helpers.daemon import read_pid, serving, start_daemon, usr2, stop_daemons


# ---------------------------------------------------------------- working_directory

def test_working_directory_missing_is_fatal_for_the_worker(server):
    """nginx: the worker logs chdir() failed at alert and exits with code 2; the master does not respawn it."""
    s = server(master_conf(one_server('location / { return 200 "x"; }'), workers=1,
                           main='working_directory {tmp}/no-such-dir;'), full=True, wait=False)
    s.ignore_log = r'chdir\(|exited with fatal code 2'
    assert wait_until(lambda: 'exited with fatal code 2 and cannot be respawned' in s.error_log(), 10), \
        s.error_log()
    log = s.error_log()
    assert re.search(r'\[alert\] \d+#\d+: chdir\("%s/no-such-dir"\) failed \(2: No such file or directory\)'
                     % re.escape(s.tmp), log), log
    assert re.search(r'\[alert\] \d+#\d+: worker process \d+ exited with fatal code 2 and cannot be respawned',
                     log), log
    assert s.alive() and children(s.proc.pid) == []  # the master stays, with no worker
    assert len(re.findall(r'chdir\(', log)) == 1      # not respawned


# ---------------------------------------------------------------- a new binary that dies

@pytest.fixture
def daemon(hy_bin, prefix, request):
    """A daemonized hayate (master_process on, or off with param True); yields (prefix, pid, seen pids)."""
    pid = start_daemon(hy_bin, prefix, single=getattr(request, 'param', False), workers=1)
    seen = {pid}
    state = {'ignore': None}
    yield prefix, pid, seen, state
    stop_daemons(prefix, seen, state['ignore'])


def start_new_binary(prefix, old, seen):
    new = usr2(prefix, old, seen)
    assert wait_until(lambda: serving(prefix.port), 5)
    return new


def test_new_binary_killed_gives_the_pid_file_back(daemon):
    prefix, old, seen, state = daemon
    pidfile = prefix.path('logs/hy.pid')
    state['ignore'] = r'new binary process \d+ exited on signal 9|worker process \d+ exited on signal'
    new = start_new_binary(prefix, old, seen)
    new_workers = children(new)
    os.kill(new, signal.SIGKILL)
    assert wait_until(lambda: read_pid(pidfile) == old and not os.path.exists(pidfile + '.oldbin'), 5), \
        (os.listdir(prefix.path('logs')), prefix.error_log())
    assert re.search(r'\[alert\] %d#\d+: new binary process %d exited on signal 9' % (old, new),
                     prefix.error_log()), prefix.error_log()
    for w in new_workers:  # orphaned: they wind down (PDEATHSIG / their own check)
        kill_quietly(w, signal.SIGQUIT)
    assert serving(prefix.port)
    assert alive(old)


@pytest.mark.hayate_only  # nginx 1.22 ignores USR2 with master_process off (docs/DIFFERENCES.md)
@pytest.mark.parametrize('daemon', [True], ids=['master_process_off'], indirect=True)
def test_single_process_reaps_its_new_binary(daemon):
    """master_process off: a second USR2 while the new binary runs is refused (alert); when the new binary
    exits, the single process reaps it, logs it and takes the pid file back."""
    prefix, old, seen, state = daemon
    pidfile = prefix.path('logs/hy.pid')
    state['ignore'] = r'the changing binary signal is ignored'
    new = start_new_binary(prefix, old, seen)
    os.kill(old, signal.SIGUSR2)
    assert wait_until(lambda: 'the changing binary signal is ignored' in prefix.error_log(), 5), prefix.error_log()
    assert children(old) == [new]
    os.kill(new, signal.SIGQUIT)
    assert wait_until(lambda: not alive(new), 5)
    assert wait_until(lambda: re.search(r'\[notice\] %d#\d+: new binary process %d exited' % (old, new),
                                        prefix.error_log()), 5), prefix.error_log()
    assert wait_until(lambda: read_pid(pidfile) == old and not os.path.exists(pidfile + '.oldbin'), 5), \
        os.listdir(prefix.path('logs'))
    assert serving(prefix.port)
    # and a later USR2 works again
    newer = start_new_binary(prefix, old, seen)
    assert newer != new


def test_new_binary_gone_after_winch_brings_the_old_workers_back(daemon):
    """USR2, WINCH (the old workers leave), then the new binary exits: the old master starts its workers again
    (nginx's ngx_reap_children with ngx_noaccepting) and serves."""
    prefix, old, seen, state = daemon
    pidfile = prefix.path('logs/hy.pid')
    new = start_new_binary(prefix, old, seen)
    os.kill(old, signal.SIGWINCH)
    assert wait_until(lambda: children(old) == [new], 5), children(old)
    os.kill(new, signal.SIGQUIT)
    assert wait_until(lambda: not alive(new), 5)
    assert wait_until(lambda: read_pid(pidfile) == old and not os.path.exists(pidfile + '.oldbin'), 5), \
        os.listdir(prefix.path('logs'))
    assert wait_until(lambda: len(children(old)) == 1, 5), children(old)
    assert wait_until(lambda: serving(prefix.port), 5)


def test_sigint_master_exits_at_once(server):
    s = server(master_conf(one_server('location / { return 200 "x"; }'), workers=2), full=True)
    assert wait_until(lambda: len(children(s.proc.pid)) == 2, 5)
    pidfile = s.tmp + '/logs/hy.pid'
    assert read_pid(pidfile) == s.proc.pid
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(10) == 0
    s.stopped = True
    assert re.search(r'\[notice\] %d#\d+: signal 2 \(SIGINT\) received from \d+, exiting' % s.proc.pid,
                     s.error_log()), s.error_log()
    assert not os.path.exists(pidfile)


@pytest.mark.hayate_only  # nginx's master escalates on its own schedule, with other words
def test_term_kills_a_worker_that_does_not_exit(server):
    """A worker that cannot act on SIGTERM (stopped): after 5 s the master sends SIGKILL and exits."""
    s = server(master_conf(one_server('location / { return 200 "x"; }'), workers=1), full=True)
    assert wait_until(lambda: len(children(s.proc.pid)) == 1, 5)
    w = children(s.proc.pid)[0]
    os.kill(w, signal.SIGSTOP)
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(15) == 0
    s.stopped = True
    assert 'workers did not exit in time, sending SIGKILL' in s.error_log(), s.error_log()
    assert wait_until(lambda: not alive(w), 5)


@pytest.mark.hayate_only  # nginx 1.22's single process: other words
def test_single_process_signals(server):
    """master_process off: USR1 reopens the logs (a rotated error log is created again), INT exits at once."""
    s = server('http { server { listen 127.0.0.1:{port}; location / { return 200 "x"; } } }')
    log = s.tmp + '/logs/error.log'
    os.rename(log, log + '.1')
    s.proc.send_signal(signal.SIGUSR1)
    assert wait_until(lambda: os.path.exists(log), 5)
    with open(log + '.1') as f:
        assert re.search(r'signal 10 \(SIGUSR1\) received from \d+, reopening logs', f.read())
    assert s.get('/').status == 200
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(10) == 0
    s.stopped = True
    assert re.search(r'\[notice\] \d+#\d+: signal 2 \(SIGINT\) received from \d+, exiting', s.error_log()), \
        s.error_log()


@pytest.mark.hayate_only  # nginx writes its pid file with pwrite(), which a FIFO refuses (ESPIPE)
@pytest.mark.parametrize('master', [False, True], ids=['single', 'master'])
def test_a_signal_sent_once_the_port_accepts_is_not_fatal(server, master):
    """A control signal sent as soon as the port accepts connections, before the server has set up the reading
    of its signals, waits for it: it must not end the process by the signal's default action (CI, 2026-12-03:
    SIGUSR1 killed a single process under ASan). The window is held open here by the pid file, a FIFO whose
    open() blocks until a reader comes; hayate writes it after it opens the listening sockets, as nginx does."""
    body = one_server('location / { return 200 "x"; }')
    conf = master_conf(body, workers=1) if master else 'http {%s}' % body
    fifo = server.prefix.path('logs/hy.pid')
    os.mkfifo(fifo)
    s = server(conf, full=master, wait=False)
    assert wait_port(s.port, s.proc), s.stderr()
    s.proc.send_signal(signal.SIGUSR1)
    time.sleep(0.2)  # the signal is delivered (and, before the fix, fatal) while open() still blocks
    assert s.alive(), 'exit code %s' % s.proc.returncode
    with open(fifo) as f:  # lets the server go on
        assert f.read().strip() == str(s.proc.pid)
    assert wait_until(lambda: 'reopening logs' in s.error_log(), 5), s.error_log()
    assert re.search(r'signal 10 \(SIGUSR1\) received from \d+, reopening logs', s.error_log())
    assert s.get('/').status == 200


def test_winch_without_daemon_is_ignored(server):
    """nginx: WINCH stops the workers only of a daemonized master; in the foreground it is ignored."""
    s = server(master_conf(one_server('location / { return 200 "x"; }'), workers=2), full=True)
    assert wait_until(lambda: len(children(s.proc.pid)) == 2, 5)
    before = children(s.proc.pid)
    s.proc.send_signal(signal.SIGWINCH)
    s.proc.send_signal(signal.SIGUSR1)  # a signal after it, to know the master has read WINCH
    assert wait_until(lambda: 'reopening logs' in s.error_log(), 5), s.error_log()
    assert children(s.proc.pid) == before
    assert 'stop accepting connections' not in s.error_log()
    assert s.get('/').status == 200


def test_worker_connections_above_the_open_file_limit_warns(hy_bin, prefix):
    """nginx's warning at start when worker_connections exceed RLIMIT_NOFILE (the hard limit here, which the
    server cannot raise)."""
    import resource
    conf = prefix.conf('daemon off;\nmaster_process off;\nerror_log {tmp}/logs/error.log info;\n'
                       'pid {tmp}/logs/hy.pid;\nevents { worker_connections 5000; }\n'
                       'http { access_log off; server { listen 127.0.0.1:{port}; location / { return 200 "x"; } } }',
                       full=True)

    def low():
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))
    err = open(prefix.path('logs/stderr.txt'), 'wb')
    p = subprocess.Popen([hy_bin, '-p', prefix.tmp + '/', '-c', conf], preexec_fn=low, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=err, cwd=prefix.tmp)
    err.close()
    try:
        assert wait_until(lambda: 'worker_connections exceed open file resource limit' in prefix.error_log(), 5), \
            prefix.error_log()
        assert re.search(r'\[warn\] \d+#\d+: \d+ worker_connections exceed open file resource limit: 512',
                         prefix.error_log()), prefix.error_log()
    finally:
        p.send_signal(signal.SIGQUIT)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
