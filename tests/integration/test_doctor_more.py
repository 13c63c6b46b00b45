"""`hayate --doctor` findings test_doctor.py does not reach: master_process off (one process), an IPv6 listen
address held by another process, worker_rlimit_nofile above fs.nr_open."""
import os
import socket

import pytest

from helpers.process import master_conf, one_server
from test_doctor import doctor, limit_lines, read_int

pytestmark = pytest.mark.hayate_only


def test_master_process_off_is_one_worker(run_cli, prefix):
    res = doctor(run_cli, prefix, master_conf(one_server('root {html};')).replace('master_process on;',
                                                                                   'master_process off;'))
    assert 'worker processes' in res.out and '1 (master_process off)' in res.out, res.out


def test_ipv6_port_held(run_cli, prefix):
    holder = socket.socket(socket.AF_INET6)
    holder.bind(('::1', prefix.port))
    holder.listen(1)
    try:
        res = doctor(run_cli, prefix, master_conf(one_server('root {html};', listen='listen [::1]:{port};')))
    finally:
        holder.close()
    assert res.rc == 1, res
    want = 'listen [::1]:%d: the address is already in use by pid %d (' % (prefix.port, os.getpid())
    assert any(want in l for l in limit_lines(res.out)), res.out


def test_rlimit_above_nr_open(run_cli, prefix):
    nr_open = read_int('/proc/sys/fs/nr_open')
    if nr_open <= 0 or nr_open >= 2 ** 31 - 2:
        pytest.skip('fs.nr_open unknown or at its maximum')
    res = doctor(run_cli, prefix, master_conf(one_server('root {html};'), main='worker_rlimit_nofile %d;' % (nr_open + 1)))
    assert res.rc == 1, res
    want = 'worker_rlimit_nofile %d is above fs.nr_open (%d): `sysctl -w fs.nr_open=%d`' % (nr_open + 1, nr_open,
                                                                                          nr_open + 1)
    assert any(want in l for l in limit_lines(res.out)), res.out
