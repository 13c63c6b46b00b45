"""Process titles as nginx shows them, and workers that do not outlive their master (issue 15, item 2)."""
import os
import signal

import pytest

from conftest import PROG, HY_BIN
from helpers.process import (master_conf, one_server, workers_of, wait_until, quick_get, alive, kill_quietly,
                             drop_log_lines)

FILES = {'html/a.txt': 'hello\n'}


def title(pid):
    """What ps shows: /proc/PID/cmdline up to the first NUL."""
    with open('/proc/%d/cmdline' % pid, 'rb') as f:
        return f.read().split(b'\0')[0].decode(errors='replace')


def test_master_and_worker_titles(server):
    s = server(master_conf(one_server('root {html};'), workers=2), files=FILES, full=True)
    kids = workers_of(s, 2)
    assert len(kids) == 2, kids
    want = '%s: master process %s -p %s/ -c %s' % (PROG, HY_BIN, s.tmp, s.prefix.conf_path)
    assert wait_until(lambda: title(s.proc.pid) == want, 5), (title(s.proc.pid), want)
    for k in kids:
        assert wait_until(lambda: title(k) == '%s: worker process' % PROG, 5), title(k)


def test_worker_title_while_shutting_down(server):
    """A worker finishing a request after QUIT says so in its title."""
    s = server(master_conf(one_server('root {html};'), workers=1), files=FILES, full=True)
    kids = workers_of(s, 1)
    assert len(kids) == 1, kids
    c = s.conn()
    c.send(b'GET /a.txt HTTP/1.1\r\nHost: x\r\n')  # an unfinished request keeps the worker busy
    assert wait_until(lambda: title(kids[0]) == '%s: worker process' % PROG, 5), title(kids[0])
    os.kill(kids[0], signal.SIGQUIT)
    assert wait_until(lambda: not alive(kids[0]) or title(kids[0]) == '%s: worker process is shutting down' % PROG,
                      5)
    assert alive(kids[0]), 'the worker left with a request in flight'
    assert title(kids[0]) == '%s: worker process is shutting down' % PROG
    c.close()


@pytest.mark.hayate_only  # nginx 1.22 workers outlive a master killed with -9 (docs/DIFFERENCES.md)
@pytest.mark.parametrize('user', ['nobody nogroup', 'root'])
def test_workers_exit_when_master_is_killed(server, user):
    """PR_SET_PDEATHSIG is cleared by setuid(): it must be set after the privilege drop."""
    if os.geteuid() != 0:
        pytest.skip('needs root')
    s = server(master_conf(one_server('root {html};'), workers=2, user=user), files=FILES, full=True)
    kids = workers_of(s, 2)
    assert len(kids) == 2, kids
    assert quick_get(s.port, '/a.txt')[0] in (200, 403)  # 403: the temp root is not nobody's to read
    s.proc.kill()
    s.proc.wait()
    gone = wait_until(lambda: not any(alive(k) for k in kids), 3)
    for k in kids:
        kill_quietly(k)
    assert gone, 'workers outlived their master: %s' % [k for k in kids if alive(k)]
    s.stopped = True
    s.expect_nonzero = True
