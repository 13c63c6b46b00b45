"""Installation (issue 15, item 7): `make install` with PREFIX and DESTDIR, compiled-in paths following the
prefix, the man page, the systemd unit and logrotate snippet, and `make deb` building a package that installs
(extracted into a temporary root) and starts cleanly."""
import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import REPO, free_port, wait_port
from helpers.process import quick_get

pytestmark = pytest.mark.hayate_only


def run(cmd, timeout=600, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                       errors='replace', timeout=timeout, **kw)
    return p.returncode, p.stdout


@pytest.fixture
def root():
    d = tempfile.mkdtemp(prefix='hy-install-', dir='/tmp')
    os.chmod(d, 0o755)  # the workers' user must be able to reach what is installed here
    yield d
    shutil.rmtree(d, ignore_errors=True)


def configure_args(binary):
    rc, out = run([binary, '-V'])
    assert rc == 0, out
    m = re.search(r'^configure arguments: (.*)$', out, re.M)
    assert m, out
    return dict(a[2:].split('=', 1) for a in m.group(1).split() if '=' in a)


def check_unit(unit, root):
    """systemd-analyze verify on the unit, its commands pointed into the temporary root."""
    text = open(unit).read()
    assert 'Type=notify' in text and 'ExecReload=' in text and 'KillSignal=SIGQUIT' in text, text
    if not shutil.which('systemd-analyze'):
        return
    copy = os.path.join(root, 'hayate.service')
    with open(copy, 'w') as f:
        f.write(text.replace('/usr/sbin/hayate', root + '/usr/sbin/hayate')
                    .replace('/usr/local/sbin/hayate', root + '/usr/local/sbin/hayate'))
    rc, out = run(['systemd-analyze', 'verify', '--man=no', copy], timeout=60)
    assert rc == 0, out
    assert 'hayate.service:' not in out, out  # no ignored or unknown setting


def serve_installed(root, binary, conf):
    """Start the installed binary on its installed configuration, moved into `root` and onto a test port."""
    port = free_port()
    text = open(conf).read()
    text = re.sub(r'(?<=[ \t])(/(?:usr|var|etc)/)', root + r'\1', text)  # every installed path, into root
    text = re.sub(r'listen \[::\]:80 default_server;', '', text)
    text = re.sub(r'listen 80 default_server;', 'listen 127.0.0.1:%d default_server;' % port, text)
    moved = os.path.join(os.path.dirname(conf), 'test.conf')  # beside mime.types
    with open(moved, 'w') as f:
        f.write(text)
    os.makedirs(root + '/var/log/hayate', exist_ok=True)
    g = 'daemon off; master_process on; pid %s/hayate.pid;' % root
    rc, out = run([binary, '-c', moved, '-g', g, '-t'])
    assert rc == 0, out
    proc = subprocess.Popen([binary, '-c', moved, '-g', g], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        assert wait_port(port, proc, 10), proc.communicate(timeout=5)
        st, body = quick_get(port, '/')
        assert st == 200 and b'hayate' in body.lower(), (st, body[:200])
    finally:
        proc.send_signal(signal.SIGQUIT)
        out = proc.communicate(timeout=10)[0].decode(errors='replace')
    assert proc.returncode == 0, out
    log = open(root + '/var/log/hayate/error.log').read()
    assert not re.search(r'\[(emerg|alert|crit)\]', log), log


@pytest.mark.parametrize('prefix,sysconf', [('/usr', '/etc'), ('/usr/local', '/usr/local/etc')])
def test_make_install_layout(root, prefix, sysconf):
    rc, out = run(['make', '-C', REPO, '--no-print-directory', 'install', 'PREFIX=' + prefix, 'DESTDIR=' + root])
    assert rc == 0, out
    binary = root + prefix + '/sbin/hayate'
    for p in (binary, root + sysconf + '/hayate/hayate.conf', root + sysconf + '/hayate/mime.types',
              root + sysconf + '/hayate/fastcgi_params', root + sysconf + '/hayate/fastcgi.conf',
              root + sysconf + '/hayate/uwsgi_params', root + sysconf + '/hayate/scgi_params',
              root + sysconf + '/hayate/koi-utf', root + sysconf + '/hayate/koi-win', root + sysconf + '/hayate/win-utf',
              root + prefix + '/share/hayate/html/index.html',
              root + prefix + '/share/man/man8/hayate.8', root + '/etc/logrotate.d/hayate'):
        assert os.path.isfile(p), (p, sorted(glob.glob(root + '/**', recursive=True)))
    assert os.path.isdir(root + '/var/log/hayate')
    assert os.access(binary, os.X_OK)
    # compiled-in paths follow the prefix
    args = configure_args(binary)
    assert args['prefix'] == prefix + '/share/hayate/', args
    assert args['conf-path'] == sysconf + '/hayate/hayate.conf', args
    assert args['error-log-path'] == '/var/log/hayate/error.log', args
    assert args['http-log-path'] == '/var/log/hayate/access.log', args
    assert args['pid-path'] == '/run/hayate.pid', args
    # the man page renders
    rc, out = run(['man', '-l', '-P', 'cat', root + prefix + '/share/man/man8/hayate.8'], timeout=60,
                  env=dict(os.environ, MANWIDTH='100'))
    assert rc == 0, out
    assert 'HAYATE(8)' in out and '--doctor' in out and 'USR2' in out, out[:2000]
    # logrotate reopens through -s
    rot = open(root + '/etc/logrotate.d/hayate').read()
    assert '/var/log/hayate/*.log' in rot and prefix + '/sbin/hayate -s reopen' in rot, rot
    unitdir = '/lib/systemd/system' if prefix == '/usr' else prefix + '/lib/systemd/system'
    check_unit(root + unitdir + '/hayate.service', root)
    serve_installed(root, binary, root + sysconf + '/hayate/hayate.conf')


def test_make_deb_installs_and_starts(root):
    if not os.path.exists('/usr/bin/dh') and os.geteuid() != 0:
        pytest.skip('debhelper not installed, and only root can let make deb install it')
    rc, out = run(['make', '-C', REPO, '--no-print-directory', 'deb'], timeout=900)
    assert rc == 0, out
    debs = [d for d in glob.glob(os.path.join(REPO, 'build-deb', 'hayate_*.deb'))]
    assert len(debs) == 1, debs
    rc, out = run(['dpkg-deb', '-I', debs[0]])
    assert rc == 0 and 'Package: hayate' in out and 'libpcre2-8-0' in out, out
    if os.path.isdir('/run/systemd/system'):
        # a chrootless install would run the unit's postinst (systemctl daemon-reload, start) against this
        # machine's systemd: unpack only
        rc, out = run(['dpkg-deb', '-x', debs[0], root])
        assert rc == 0, out
    else:
        # a real dpkg install into an empty root (maintainer scripts run with DPKG_ROOT set)
        for d in ('var/lib/dpkg/info', 'var/lib/dpkg/updates'):
            os.makedirs(os.path.join(root, d))
        open(os.path.join(root, 'var/lib/dpkg/status'), 'w').close()
        rc, out = run(['dpkg', '--root=' + root, '--force-depends', '--force-script-chrootless', '-i', debs[0]])
        assert rc == 0, out
        assert 'Setting up hayate' in out, out
        assert re.search(r'^Package: hayate\nStatus: install ok installed$',
                         open(os.path.join(root, 'var/lib/dpkg/status')).read(), re.M)
    ctl = os.path.join(root, 'DEBIAN')
    rc, out = run(['dpkg-deb', '-e', debs[0], ctl])
    assert rc == 0, out
    assert 'hayate.service' in open(os.path.join(ctl, 'postinst')).read()  # enabled and started by systemd
    assert '/etc/hayate/hayate.conf' in open(os.path.join(ctl, 'conffiles')).read()
    check_unit(root + '/lib/systemd/system/hayate.service', root)
    args = configure_args(root + '/usr/sbin/hayate')
    assert args['conf-path'] == '/etc/hayate/hayate.conf', args
    serve_installed(root, root + '/usr/sbin/hayate', root + '/etc/hayate/hayate.conf')


def test_copied_development_binary_does_not_use_its_parent_as_prefix(root, hy_bin):
    """A development build copied to .../sbin/ (no conf/mime.types above it) must not take the directory above
    as its prefix, or its first -t creates .../logs there (/usr/local/logs for /usr/local/sbin)."""
    os.makedirs(root + '/sbin')
    shutil.copy(hy_bin, root + '/sbin/hayate')
    args = configure_args(root + '/sbin/hayate')
    if args['conf-path'].startswith('/etc/') or not args['prefix'].startswith('/'):
        pytest.skip('an installed build: its prefix is compiled in')
    assert args['prefix'] != root + '/', args
    assert args['prefix'] == '/usr/local/hayate/', args
    # with conf/mime.types above it, the tree is a prefix (a checkout, or nginx's /usr/local/nginx layout)
    os.makedirs(root + '/conf')
    shutil.copy(os.path.join(REPO, 'conf', 'mime.types'), root + '/conf/mime.types')
    assert configure_args(root + '/sbin/hayate')['prefix'] == root + '/'
