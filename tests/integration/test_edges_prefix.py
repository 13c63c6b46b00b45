"""The prefix hayate shows in -V and uses for relative paths (main.c): -p given relative to the working
directory, and without -p the directory above the binary's when it holds conf/mime.types (a checkout or an
installed tree), else /usr/local/hayate/ (hayate only: nginx's prefix is compiled in)."""
import re
import shutil
import subprocess

import pytest

from conftest import HY_BIN

pytestmark = pytest.mark.hayate_only


def configure_args(binary, args=(), cwd=None):
    p = subprocess.run([binary] + list(args) + ['-V'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       cwd=cwd, timeout=10)
    assert p.returncode == 0, p
    m = re.search(r'^configure arguments: (.*)$', p.stderr.decode(), re.M)
    assert m, p.stderr
    return dict(a[2:].split('=', 1) for a in m.group(1).split() if '=' in a)


def test_relative_p_is_taken_from_the_working_directory(tmp_path):
    a = configure_args(HY_BIN, ['-p', 'rel/x'], cwd=str(tmp_path))
    assert a['prefix'] == str(tmp_path) + '/rel/x/'
    assert a['conf-path'].startswith(str(tmp_path) + '/rel/x/')
    a = configure_args(HY_BIN, ['-p', str(tmp_path) + '/'], cwd='/')
    assert a['prefix'] == str(tmp_path) + '/'


def test_default_prefix_follows_the_binary(tmp_path):
    sbin = tmp_path / 'tree' / 'sbin'
    sbin.mkdir(parents=True)
    copy = str(sbin / 'hayate')
    shutil.copy(HY_BIN, copy)
    # no conf/mime.types beside it: nginx's style default
    got = configure_args(copy)['prefix']
    if got != '/usr/local/hayate/' and got == configure_args(HY_BIN)['prefix']:
        pytest.skip('built with a fixed prefix (HY_PATH_PREFIX)')
    assert got == '/usr/local/hayate/'
    # a tree with conf/mime.types: that tree
    (tmp_path / 'tree' / 'conf').mkdir()
    (tmp_path / 'tree' / 'conf' / 'mime.types').write_text('types { }\n')
    assert configure_args(copy)['prefix'] == str(tmp_path / 'tree') + '/'
