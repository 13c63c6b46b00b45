"""Real application servers from Debian as test backends: PHP-FPM (FastCGI), uWSGI with the python3 plugin
(uwsgi protocol), memcached, and a small SCGI peer written here (Debian has no SCGI server that runs a script as
is).

Each launcher starts the server on a unix socket or a loopback TCP port, waits until it accepts, and returns
an object with `.addr` (what goes after `fastcgi_pass`/`uwsgi_pass`/`scgi_pass`), `.stop()`, `.restart()` and
`.log()`. Use them as context managers or stop them in a finally.

    with php_fpm(prefix, scripts={'hello.php': '<?php echo "hi";'}) as fpm:
        srv = server('... location ~ \\.php$ { root {tmp}/php; include fastcgi.conf; fastcgi_pass %s; } ...'
                     % fpm.addr)
"""
import os
import shutil
import signal
import socket
import socketserver
import subprocess
import threading
import time
from helpers import ports

PHP_FPM = shutil.which('php-fpm8.2') or '/usr/sbin/php-fpm8.2'
UWSGI = shutil.which('uwsgi') or '/usr/bin/uwsgi'
MEMCACHED = shutil.which('memcached') or '/usr/bin/memcached'


def _free_port():
    return ports.free_port()


def _wait_accepting(addr, proc, timeout=10.0):
    """Wait until `addr` ('unix:/path' or 'host:port') accepts a connection; fail if `proc` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError('backend exited with %s before it accepted' % proc.returncode)
        try:
            if addr.startswith('unix:'):
                s = socket.socket(socket.AF_UNIX)
                s.connect(addr[5:])
            else:
                host, port = addr.rsplit(':', 1)
                s = socket.create_connection((host, int(port)), timeout=1)
            s.close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError('backend at %s did not accept within %ss' % (addr, timeout))


class Backend:
    def __init__(self, argv, addr, logpath, cwd, env=None, stop_signal=signal.SIGTERM):
        self.argv, self.addr, self.logpath, self.cwd, self.env = argv, addr, logpath, cwd, env
        self.stop_signal = stop_signal
        self.proc = None
        self.start()

    def start(self):
        if self.addr.startswith('unix:') and os.path.exists(self.addr[5:]):
            os.unlink(self.addr[5:])
        self.logf = open(self.logpath, 'ab')
        self.proc = subprocess.Popen(self.argv, cwd=self.cwd, stdout=self.logf, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True)
        _wait_accepting(self.addr, self.proc)

    def stop(self, sig=None):
        sig = sig or self.stop_signal
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            # the leader is gone; its workers (which hold the listening socket too) may not be yet: a restart
            # binding the same port before they are would find it taken
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.killpg(self.proc.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.02)
        self.proc = None
        self.logf.close()

    def restart(self):
        self.stop()
        self.start()

    def log(self):
        try:
            with open(self.logpath, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _listen(tmp, name, unix):
    if unix:
        path = os.path.join(tmp, name + '.sock')
        return path, 'unix:' + path
    port = _free_port()
    return '127.0.0.1:%d' % port, '127.0.0.1:%d' % port


def php_fpm(tmp, scripts, unix=True, children=2, extra_pool='', request_terminate=None):
    """PHP-FPM in the foreground with one static pool. `scripts` maps names under TMP/php to PHP source."""
    root = os.path.join(tmp, 'php')
    os.makedirs(root, exist_ok=True)
    for name, src in scripts.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'w') as f:
            f.write(src)
    listen, addr = _listen(tmp, 'php-fpm', unix)
    conf = os.path.join(tmp, 'php-fpm.conf')
    with open(conf, 'w') as f:
        f.write('''[global]
pid = {tmp}/php-fpm.pid
error_log = {tmp}/php-fpm.log
daemonize = no
[www]
user = root
group = root
listen = {listen}
pm = static
pm.max_children = {children}
catch_workers_output = yes
decorate_workers_output = no
clear_env = no
php_admin_flag[log_errors] = on
{terminate}
{extra}
'''.format(tmp=tmp, listen=listen, children=children, extra=extra_pool,
           terminate='request_terminate_timeout = %s' % request_terminate if request_terminate else ''))
    return Backend([PHP_FPM, '-R', '-F', '-n', '-y', conf], addr, os.path.join(tmp, 'php-fpm.out'), tmp)


def uwsgi(tmp, app_source, unix=True, processes=2, extra=()):
    """uWSGI with the python3 plugin serving TMP/app.py's `application` over the uwsgi protocol."""
    app = os.path.join(tmp, 'wsgi_app.py')
    with open(app, 'w') as f:
        f.write(app_source)
    listen, addr = _listen(tmp, 'uwsgi', unix)
    argv = [UWSGI, '--plugin', 'python3', '--socket', listen, '--wsgi-file', app, '--master',
            '--processes', str(processes), '--die-on-term', '--buffer-size', '32768',
            '--chmod-socket=666'] + list(extra)
    # SIGKILL to the whole process group: uWSGI's own stop signals wait for its workers (up to its mercy
    # timeouts), and a crash is what "the app went down" means here anyway
    return Backend(argv, addr, os.path.join(tmp, 'uwsgi.log'), tmp, stop_signal=signal.SIGKILL)


class Memcached(Backend):
    """memcached with `.set(key, value, flags)` and `.connections()` (its total_connections counter)."""

    def _cmd(self, data):
        if self.addr.startswith('unix:'):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.addr[5:])
        else:
            host, port = self.addr.rsplit(':', 1)
            s = socket.create_connection((host, int(port)), timeout=5)
        with s:
            s.sendall(data)
            out = b''
            while not (out.endswith(b'STORED\r\n') or out.endswith(b'END\r\n') or out.endswith(b'ERROR\r\n')):
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
            return out

    def set(self, key, value, flags=0):
        value = value.encode() if isinstance(value, str) else value
        key = key.encode('latin-1') if isinstance(key, str) else key
        assert self._cmd(b'set %s %d 0 %d\r\n%s\r\n' % (key, flags, len(value), value)) == b'STORED\r\n'

    def connections(self):
        for line in self._cmd(b'stats\r\n').decode().splitlines():
            if line.startswith('STAT total_connections '):
                return int(line.split()[2])
        raise RuntimeError('no total_connections in stats')


def memcached(tmp, unix=False):
    """memcached on a loopback port (or a unix socket), one thread, no UDP: connections count one by one."""
    listen, addr = _listen(tmp, 'memcached', unix)
    argv = [MEMCACHED, '-U', '0', '-t', '1', '-m', '16'] + (['-u', 'root'] if os.geteuid() == 0 else [])
    argv += ['-s', listen, '-a', '0666'] if unix else ['-l', '127.0.0.1', '-p', listen.rsplit(':', 1)[1]]
    return Memcached(argv, addr, os.path.join(tmp, 'memcached.log'), tmp)


# ---------------------------------------------------------------- SCGI

SCGI_PEER = r'''
import os, socket, sys, threading
listen = sys.argv[1]
def netstring(f):
    n = b''
    while True:
        c = f.read(1)
        if not c:
            return None
        if c == b':':
            break
        n += c
    data = f.read(int(n))
    f.read(1)
    return data
def handle(c):
    f = c.makefile('rb')
    hdr = netstring(f)
    if hdr is None:
        c.close(); return
    items = hdr.split(b'\0')
    env = dict(zip(items[0::2], items[1::2]))
    body = f.read(int(env.get(b'CONTENT_LENGTH', b'0') or 0))
    uri = env.get(b'REQUEST_URI', b'')
    if uri.startswith(b'/status/'):
        code = uri.split(b'/')[2]
        out = b'Status: ' + code + b' Custom\r\nContent-Type: text/plain\r\n\r\nstatus ' + code
    else:
        lines = [k + b'=' + v for k, v in sorted(env.items())]
        text = b'\n'.join(lines) + b'\nBODY=' + body
        out = b'Status: 200 OK\r\nContent-Type: text/plain\r\nX-Scgi: yes\r\n\r\n' + text
    c.sendall(out)
    c.close()
if listen.startswith('unix:'):
    path = listen[5:]
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
else:
    h, p = listen.rsplit(':', 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((h, int(p)))
s.listen(64)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
'''


def scgi_peer(tmp, unix=True):
    """A small SCGI server: echoes its environment and body as `K=V` lines; /status/NNN answers that status."""
    script = os.path.join(tmp, 'scgi_peer.py')
    with open(script, 'w') as f:
        f.write(SCGI_PEER)
    _, addr = _listen(tmp, 'scgi', unix)
    return Backend(['/usr/bin/python3', script, addr], addr, os.path.join(tmp, 'scgi.log'), tmp)
