"""Every error-log line names the process that wrote it ("PID#TID: "): the master its own pid, each worker its
own, also after a worker was respawned and after a reload (the pid is cached per process and reset in a forked
child; a stale cache would show the master's pid in a worker's lines). Works against nginx too."""
import os
import re
import signal
import urllib.request

from helpers.process import master_conf, one_server, children, wait_until


def get(port, path):
    try:
        urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=5).read()
    except Exception:
        pass


def worker_line_pids(s, name):
    pat = r'\[error\] (\d+)#(\d+): \*\d+ open\(\) "[^"]*/%s" failed' % re.escape(name)
    return [(int(a), int(b)) for a, b in re.findall(pat, s.error_log())]


def serve_missing(s, name):
    """Ask for a missing file until a worker logged it; the (pid, tid) pairs of its lines."""
    assert wait_until(lambda: (get(s.port, '/' + name), worker_line_pids(s, name))[1], 5), s.error_log()
    return worker_line_pids(s, name)


def test_master_and_worker_lines_carry_their_own_pid(server):
    s = server(master_conf(one_server('root {tmp}/html;'), workers=2), full=True)
    s.ignore_log = r'exited on signal 9'
    master = s.proc.pid
    assert wait_until(lambda: len(children(master)) == 2, 5)
    workers = set(children(master))
    ids = serve_missing(s, 'first.html')
    for pid, tid in ids:
        assert pid in workers and tid == pid, (ids, workers, master)

    # a worker killed and respawned: the new one's lines carry the new pid
    gone = ids[0][0]
    os.kill(gone, signal.SIGKILL)
    # one scan per try: a killed worker is still listed until it is a zombie, the new one comes after
    assert wait_until(lambda: (lambda k: len(k) == 2 and gone not in k)(children(master)), 10)
    workers = set(children(master))
    assert re.search(r'\[alert\] %d#%d: worker process %d exited on signal 9' % (master, master, gone),
                     s.error_log()), s.error_log()
    for i in range(20):
        ids = serve_missing(s, 'after-kill-%d.html' % i)
        assert all(pid in workers and tid == pid for pid, tid in ids), (ids, workers)

    # a reload: the master's notice lines keep its pid, the new workers log with theirs
    s.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: re.search(r'\[notice\] %d#%d: signal 1 \(SIGHUP\) received' % (master, master),
                                        s.error_log()), 5), s.error_log()
    assert wait_until(lambda: (lambda k: len(k) == 2 and not k & workers)(set(children(master))), 10)
    workers = set(children(master))
    ids = serve_missing(s, 'after-reload.html')
    assert all(pid in workers and tid == pid for pid, tid in ids), (ids, workers)
