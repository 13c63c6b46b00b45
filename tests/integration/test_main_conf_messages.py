"""Main and events directives rejected at -t in nginx 1.22's words (checked with its -t) at file:line."""
import re

import pytest

MAIN = [
    ('worker_processes abc;', '"worker_processes" directive invalid value'),
    ('worker_rlimit_nofile abc;', '"worker_rlimit_nofile" directive invalid number'),
    ('user nosuchuser;', 'getpwnam("nosuchuser") failed'),
    ('user root nosuchgroup;', 'getgrnam("nosuchgroup") failed'),
    ('worker_priority abc;', '"worker_priority" directive invalid number'),
    ('worker_shutdown_timeout abc;', '"worker_shutdown_timeout" directive invalid value'),
    ('daemon maybe;', 'invalid value "maybe" in "daemon" directive, it must be "on" or "off"'),
    ('master_process maybe;', 'invalid value "maybe" in "master_process" directive, it must be "on" or "off"'),
    ('pcre_jit maybe;', 'invalid value "maybe" in "pcre_jit" directive, it must be "on" or "off"'),
    ('error_log {tmp}/logs/x.log nolevel;', 'invalid log level "nolevel"'),
    ('env;', 'invalid number of arguments in "env" directive'),
    ('pid a b;', 'invalid number of arguments in "pid" directive'),
    ('working_directory a b;', 'invalid number of arguments in "working_directory" directive'),
]

EVENTS = [
    ('use kqueue;', 'invalid event type "kqueue"'),
    ('multi_accept maybe;', 'invalid value "maybe" in "multi_accept" directive, it must be "on" or "off"'),
]


def check(prefix, run_cli, text, needle, message):
    path = prefix.conf(text, full=True)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    line = [i for i, l in enumerate(open(path), 1) if needle in l][0]
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(message), re.escape(path), line),
                     res.err), res.err


@pytest.mark.parametrize('directive,message', MAIN, ids=[c[0] for c in MAIN])
def test_main(prefix, run_cli, directive, message):
    check(prefix, run_cli, 'error_log {tmp}/logs/error.log;\npid {tmp}/logs/p.pid;\n%s\nevents {}\nhttp {}\n'
          % directive, directive.replace('{tmp}', prefix.tmp), message)


@pytest.mark.parametrize('directive,message', EVENTS, ids=[c[0] for c in EVENTS])
def test_events(prefix, run_cli, directive, message):
    check(prefix, run_cli, 'error_log {tmp}/logs/error.log;\npid {tmp}/logs/p.pid;\nevents {\n    %s\n}\nhttp {}\n'
          % directive, directive, message)
