"""A unix-domain listener with several workers (one shared socket), and a stale socket file left by a server
that was killed."""
import os
import signal
import stat

import pytest

from helpers.process import master_conf, one_server, workers_of, wait_until, unix_get, alive, quick_get

FILES = {'html/a.txt': 'over unix\n'}


def unix_conf(workers=2):
    # also on TCP {port}, which is what the fixture waits for
    return master_conf(one_server('root {html};', listen='listen unix:{tmp}/hy.sock; listen 127.0.0.1:{port};'),
                       workers=workers)


def test_unix_socket_with_two_workers(server):
    s = server(unix_conf(), files=FILES, full=True)
    workers_of(s, 2)
    path = s.prefix.path('hy.sock')
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    for _ in range(20):
        assert unix_get(path, '/a.txt') == (200, b'over unix\n')
    assert quick_get(s.port, '/a.txt') == (200, b'over unix\n')
    assert s.stop() == 0
    assert not os.path.exists(path)  # a clean stop removes the socket file


def test_unix_socket_survives_reload(server):
    s = server(unix_conf(), files=FILES, full=True)
    old = workers_of(s, 2)
    path = s.prefix.path('hy.sock')
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_until(lambda: not any(alive(p) for p in old), 5)
    assert os.path.exists(path)
    for _ in range(10):
        assert unix_get(path, '/a.txt') == (200, b'over unix\n')


@pytest.mark.hayate_only  # nginx refuses to start: bind() ... failed (98: Address already in use)
def test_stale_unix_socket_file(server):
    s = server(unix_conf(), files=FILES, full=True)
    kids = workers_of(s, 2)
    path = s.prefix.path('hy.sock')
    # killed without a chance to clean up: the socket file stays behind
    for p in [s.proc.pid] + kids:
        os.kill(p, signal.SIGKILL)
    s.proc.wait(5)
    s.stopped = True
    s.expect_nonzero = True
    assert wait_until(lambda: not any(alive(p) for p in kids), 5)
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    s2 = server(unix_conf(), full=True)
    workers_of(s2, 2)
    for _ in range(5):
        assert unix_get(path, '/a.txt') == (200, b'over unix\n')


@pytest.mark.hayate_only
def test_unix_socket_in_use_is_not_stolen(server, prefix):
    """A socket file somebody still listens on is not unlinked: the start fails instead."""
    import socket
    path = prefix.path('hy.sock')
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(path)
    other.listen(1)
    try:
        s = server(unix_conf(), files=FILES, full=True, wait=False)
        assert s.proc.wait(5) != 0
        s.stopped = True
        s.expect_nonzero = True
        assert 'Address already in use' in s.stderr() + s.error_log()
        assert stat.S_ISSOCK(os.stat(path).st_mode)
    finally:
        other.close()
