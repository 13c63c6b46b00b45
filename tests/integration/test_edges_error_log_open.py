"""Opening the error logs at start (process/cycle_load.c): a missing logs/ directory is created (one level, as a
fresh prefix needs), a deeper missing path is nginx's emerg open() failure with its errno, and -e names the log
used when the configuration has none."""
import os
import re

import pytest

from conftest import simple


def test_error_log_two_levels_missing_fails(prefix, run_cli, prog):
    path = prefix.conf('error_log {tmp}/nope/deeper/e.log;\nevents {}\n' + simple('return 204;'), full=True)
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert r.rc == 1, r
    assert re.search(r'\[emerg\] .*open\(\) "%s/nope/deeper/e.log" failed \(2: No such file or directory\)'
                     % re.escape(prefix.tmp), r.err), r.err


@pytest.mark.hayate_only  # nginx does not create the log's directory
def test_dash_e_names_the_log_when_the_config_has_none(prefix, run_cli):
    path = prefix.conf('events {}\n' + simple('return 204;'), full=True)
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-e', 'elsewhere/e.log', '-t'])
    assert r.rc == 0, r
    assert os.path.exists(prefix.tmp + '/elsewhere/e.log')  # relative to the prefix, its directory created
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-e', 'stderr', '-t'])
    assert r.rc == 0, r
