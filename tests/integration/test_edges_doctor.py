"""Edges of `hayate --doctor` (process/doctor.c) beyond test_doctor*.py: an address this host does not have is
a LIMIT line naming bind()'s error, a unix-socket listener is reported with its one shared queue and is not
bind-tested (hayate only: nginx has no --doctor)."""
import pytest

from helpers.process import master_conf, one_server

pytestmark = pytest.mark.hayate_only


def doctor(run_cli, prefix, conf):
    args = ['-p', prefix.tmp + '/', '--doctor', '-c', prefix.write('conf/doctor.conf', prefix.render(conf))]
    return run_cli(args, timeout=20)


def limit_lines(out):
    return [l.strip() for l in out.splitlines() if l.strip().startswith('LIMIT:')]


def test_doctor_address_not_on_this_host(run_cli, prefix):
    res = doctor(run_cli, prefix, master_conf(one_server('root {html};', listen='listen 192.0.2.1:{port};')))
    assert res.rc == 1, res
    want = 'listen 192.0.2.1:%d: bind() failed (99: Cannot assign requested address)' % prefix.port
    assert any(want in l for l in limit_lines(res.out)), res.out


def test_doctor_unix_listener(run_cli, prefix):
    res = doctor(run_cli, prefix, master_conf(one_server('root {html};', listen='listen unix:{tmp}/d.sock;')))
    lines = [l for l in res.out.splitlines() if 'unix:%s/d.sock' % prefix.tmp in l]
    assert lines and '(unix: one shared queue)' in lines[0], res.out
    assert not [l for l in limit_lines(res.out) if 'd.sock' in l], res.out
