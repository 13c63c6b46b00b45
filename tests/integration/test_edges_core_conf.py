"""Edges of the main-context directives (process/core_conf.c): worker_priority's signs take effect in the
workers, and values hayate refuses with the directive's file:line (worker_processes above 1024, a nice value
outside -20..20, nginx's memory: error log)."""
import re

import pytest

from helpers.process import master_conf, one_server, children, wait_until, proc_stat


def nice_of(pid):
    st = proc_stat(pid)
    return int(st[16]) if st else None  # field 19 of /proc/PID/stat; index 0 here is field 3


@pytest.mark.parametrize('value,nice', [('+5', 5), ('-3', -3), ('7', 7)])
def test_worker_priority_applies(server, value, nice):
    s = server(master_conf(one_server('location / { return 200 "x"; }'), workers=1,
                           main='worker_priority %s;' % value), full=True)
    assert wait_until(lambda: len(children(s.proc.pid)) == 1, 5)
    w = children(s.proc.pid)[0]
    assert wait_until(lambda: nice_of(w) == nice, 5), nice_of(w)
    assert nice_of(s.proc.pid) == 0  # the master keeps its own


@pytest.mark.hayate_only  # nginx takes any number here (and has memory: logs in debug builds)
@pytest.mark.parametrize('main,msg', [
    ('worker_processes 1025;', '"worker_processes" directive invalid value'),
    ('worker_processes 0;', '"worker_processes" directive invalid value'),
    ('worker_priority 21;', '"worker_priority" directive invalid number'),
    ('worker_priority -21;', '"worker_priority" directive invalid number'),
    ('worker_priority +;', '"worker_priority" directive invalid number'),
    ('error_log memory:1m;', 'memory error logs are not supported by hayate'),
])
def test_main_values_refused(prefix, run_cli, main, msg):
    text = master_conf(one_server('location / { return 200 "x"; }'), workers=1)
    text = text.replace('worker_processes 1;', main) if main.startswith('worker_processes') else \
        text.replace('worker_processes 1;', 'worker_processes 1;\n' + main)
    path = prefix.conf(text, full=True)
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    line = [i for i, l in enumerate(open(path).read().split('\n'), 1) if l.strip() == main][0]
    assert re.search(re.escape(msg) + r' in %s:%d' % (re.escape(path), line), r.err), r.err
