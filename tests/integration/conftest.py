"""pytest fixtures for hayate's integration tests.

The suite runs against the binary named by $HY_BIN (default /work/main/build/hayate). It is written and
validated against real nginx (HY_BIN=/usr/sbin/nginx): a test that passes against nginx encodes nginx's
behaviour, which is hayate's spec. Where hayate intentionally differs (program name in messages and in
the Server header), the expected value is derived from the `prog` fixture.

    def test_x(server):
        srv = server('''
            http { server { listen 127.0.0.1:{port}; root {html}; } }
        ''', files={'html/a.txt': 'hello'})
        r = srv.get('/a.txt')
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from helpers.http1 import Conn, Response, build_request  # noqa: E402
from helpers import ports  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
HY_BIN = os.environ.get('HY_BIN', os.path.join(REPO, 'build', 'hayate'))
PROG = os.path.basename(HY_BIN)
IS_NGINX = PROG == 'nginx'

SANITIZER_RE = re.compile(r'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|'
                          r'ThreadSanitizer|MemorySanitizer')

GLOBALS = '''daemon off;
master_process off;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
'''
EVENTS = '''events {
    worker_connections 1024;
}
'''


def pytest_configure(config):
    config.addinivalue_line('markers', 'hayate_only: behaviour specific to hayate (skipped for nginx)')
    config.addinivalue_line('markers', 'nginx_only: behaviour only checked against nginx')


def pytest_collection_modifyitems(config, items):
    for item in items:
        if IS_NGINX and 'hayate_only' in item.keywords:
            item.add_marker(pytest.mark.skip(reason='hayate-specific behaviour'))
        if not IS_NGINX and 'nginx_only' in item.keywords:
            item.add_marker(pytest.mark.skip(reason='nginx-specific behaviour'))


def pytest_report_header(config):
    return 'HY_BIN=%s (prog=%s)' % (HY_BIN, PROG)


# ---------------------------------------------------------------- ports

def free_port():
    """A loopback TCP port nobody listens on now and that this run has not handed out yet, below the ephemeral
    range so that no outgoing connection takes it before the server binds it (helpers/ports.py)."""
    return ports.free_port()


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope='session')
def prog():
    """Basename of the binary under test: 'nginx' or 'hayate'."""
    return PROG


@pytest.fixture(scope='session')
def hy_bin():
    if not os.path.exists(HY_BIN):
        pytest.fail('binary %s not built (set HY_BIN)' % HY_BIN, pytrace=False)
    return HY_BIN


def mime_types_source():
    if IS_NGINX:
        return '/etc/nginx/mime.types'
    for p in (os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(HY_BIN))), 'conf', 'mime.types'),
              os.path.join(REPO, 'conf', 'mime.types'), '/etc/nginx/mime.types'):
        if os.path.exists(p):
            return p
    return None


def render(template, tmp, ports):
    s = template
    s = s.replace('{port}', str(ports[0])).replace('{port2}', str(ports[1])).replace('{port3}', str(ports[2]))
    s = s.replace('{html}', tmp + '/html').replace('{tmp}', tmp)
    return s


class Prefix:
    """A temp prefix: conf/, logs/, html/ and mime.types, with ports allocated."""

    def __init__(self, tmp_path):
        self.tmp = str(tmp_path)
        for d in ('conf', 'logs', 'html'):
            os.makedirs(os.path.join(self.tmp, d), exist_ok=True)
        src = mime_types_source()
        if src:
            shutil.copy(src, os.path.join(self.tmp, 'conf', 'mime.types'))
        self.ports = [free_port(), free_port(), free_port()]
        self.port, self.port2, self.port3 = self.ports
        self.html = self.tmp + '/html'
        self.conf_path = self.tmp + '/conf/test.conf'

    def path(self, rel):
        return os.path.join(self.tmp, rel)

    def write(self, rel, content, mode=None):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        with open(p, 'wb') as f:
            f.write(content)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def render(self, template):
        return render(template, self.tmp, self.ports)

    def conf(self, template, full=False, rel='conf/test.conf'):
        """Render and write a config; unless full, prepend the standard main-context globals and events."""
        text = template if full else GLOBALS + EVENTS + template
        text = self.render(text)
        if IS_NGINX and not full:
            # keep nginx's access log out of /var/log/nginx; hayate gets the config as written
            text = re.sub(r'(^|\n)(\s*http\s*\{)', r'\1\2\n    access_log ' + self.tmp + '/logs/access.log;',
                          text, count=1)
        self.write(rel, text)
        return self.path(rel)

    def error_log(self):
        try:
            with open(self.path('logs/error.log'), errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''


class Server:
    def __init__(self, prefix, proc, stdout_path, stderr_path):
        self.prefix = prefix
        self.proc = proc
        self.tmp = prefix.tmp
        self.html = prefix.html
        self.port = prefix.port
        self.port2 = prefix.port2
        self.port3 = prefix.port3
        self.stdout_path = stdout_path
        self.stderr_path = stderr_path
        self.conns = []
        # a regex for [alert]/[crit] lines a test provokes on purpose (nginx logs a refused unix-socket
        # connect at crit); teardown fails on any other
        self.ignore_log = None
        self.stopped = False
        self.proto = 'h1'  # 'h2': get()/head() go over h2c with prior knowledge (the `proto` fixture)

    # ---- logs
    def error_log(self):
        return self.prefix.error_log()

    def stderr(self):
        with open(self.stderr_path, errors='replace') as f:
            return f.read()

    def stdout(self):
        with open(self.stdout_path, errors='replace') as f:
            return f.read()

    def write(self, rel, content, mode=None):
        return self.prefix.write(rel, content, mode)

    # ---- clients
    def conn(self, port=None, host='127.0.0.1', timeout=5.0, rcvbuf=None):
        c = Conn(host, port or self.port, timeout=timeout, rcvbuf=rcvbuf)
        self.conns.append(c)
        return c

    def raw(self, data, port=None, method=None):
        """Send raw bytes on a new connection and read one response."""
        c = self.conn(port)
        try:
            return c.request(data, method)
        finally:
            c.close()

    def get(self, path='/', headers=None, host='localhost', method='GET', port=None, body=None,
            version='HTTP/1.1'):
        if self.proto == 'h2' and version == 'HTTP/1.1':
            return h2_get(port or self.port, path, headers, host, method, body)
        hdrs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        if not any(k.lower() == 'connection' for k, _ in hdrs) and version == 'HTTP/1.1':
            hdrs.append(('Connection', 'close'))
        data = build_request(method, path, host, hdrs, body, version)
        return self.raw(data, port, method)

    def head(self, path='/', **kw):
        return self.get(path, method='HEAD', **kw)

    # ---- lifecycle
    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGQUIT, timeout=5.0):
        """Stop the server; returns the exit code (None if it had to be killed)."""
        for c in self.conns:
            c.close()
        self.stopped = True
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode

    def check_logs(self):
        problems = []
        log = self.error_log()
        bad = [l for l in log.splitlines() if ('[alert]' in l or '[crit]' in l)
               and not (self.ignore_log and re.search(self.ignore_log, l))]
        if bad:
            problems.append('error log has alert/crit lines:\n' + '\n'.join(bad[:20]))
        err = self.stderr()
        if SANITIZER_RE.search(err):
            problems.append('sanitizer report on stderr:\n' + err[-4000:])
        return problems


def wait_port(port, proc, timeout=5.0, host='127.0.0.1'):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        fam = socket.AF_INET6 if ':' in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            s.connect((host, port))
            return True
        except OSError:
            time.sleep(0.02)
        finally:
            s.close()
    return False


@pytest.fixture
def prefix(tmp_path):
    """A bare temp prefix (conf/, logs/, html/, mime.types, ports) for CLI tests."""
    return Prefix(tmp_path)


def h2_get(port, path, headers, host, method, body):
    """One request over a new h2c connection, as an HTTP/1 Response (headers in wire order, version
    "HTTP/2.0"), so tests written against server.get() run unchanged over HTTP/2."""
    from helpers.h2client import H2
    hdrs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    hdrs = [(k.lower(), v) for k, v in hdrs if k.lower() not in ('connection', 'host', 'keep-alive')]
    if body is not None and isinstance(body, str):
        body = body.encode('latin-1')
    c = H2(port)
    try:
        sid = c.request(path, method=method, headers=hdrs, body=body, authority=host or 'localhost')
        status, hd, data = c.response(sid)
        import h2.events
        wire = []
        for ev in c.events:
            if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                wire = [(k, v) for k, v in ev.headers if not k.startswith(':')]
        return Response('HTTP/2.0', status, '', wire, data, b'')
    finally:
        c.close()


@pytest.fixture(params=['h1', 'h2'])
def proto(request):
    """Opt-in parametrisation of a feature test over HTTP/1.1 and HTTP/2: a test that takes `proto` runs twice;
    under 'h2' the `server` fixture turns `http2 on` in the http{} block and server.get()/head() speak h2c."""
    return request.param


@pytest.fixture
def server(hy_bin, prefix, request):
    """Factory: server(template, files=None, full=False, wait=True, args=None, expect_fail=False).

    Renders `template` ({port}, {port2}, {port3}, {tmp}, {html}) into <tmp>/conf/test.conf, writes
    `files` ({relpath: str|bytes} under the prefix), starts the binary in the foreground and waits until
    {port} (or `wait_port_on`) accepts. Teardown stops it with SIGQUIT and checks exit code and logs."""
    started = []

    def start(template, files=None, full=False, wait=True, args=None, wait_host='127.0.0.1',
              wait_port_on=None):
        for rel, content in (files or {}).items():
            prefix.write(rel, content)
        want_h2 = 'proto' in request.fixturenames and request.getfixturevalue('proto') == 'h2'
        if want_h2:
            template = re.sub(r'(^|\n)(\s*http\s*\{)', r'\1\2\n    http2 on;', template, count=1)
        conf = prefix.conf(template, full=full)
        out = prefix.path('logs/stdout.txt')
        err = prefix.path('logs/stderr.txt')
        cmd = [hy_bin, '-p', prefix.tmp + '/', '-c', conf] + list(args or [])
        with open(out, 'wb') as fo, open(err, 'wb') as fe:
            proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, cwd=prefix.tmp)
        srv = Server(prefix, proc, out, err)
        srv.proto = 'h2' if want_h2 else 'h1'
        started.append(srv)
        if wait:
            ok = wait_port(wait_port_on or prefix.port, proc, 5.0, wait_host)
            if not ok:
                alive = proc.poll() is None
                srv.stop(signal.SIGKILL)
                srv.expect_nonzero = True
                pytest.fail('server did not start (%s)\ncmd: %s\nstderr:\n%s\nerror.log:\n%s' % (
                    'still running, port not accepting' if alive else 'exit code %s' % proc.returncode,
                    ' '.join(cmd), srv.stderr(), srv.error_log()))
        return srv

    start.prefix = prefix
    yield start

    problems = []
    for srv in started:
        was_alive = srv.alive()
        if srv.stopped and not was_alive:
            rc = srv.proc.returncode
        else:
            rc = srv.stop()
        if rc is None:
            problems.append('server did not exit within 5 s of SIGQUIT (killed)')
        elif rc != 0 and not getattr(srv, 'expect_nonzero', False):
            problems.append('server exit code %s\nstderr:\n%s' % (rc, srv.stderr()[-2000:]))
        problems += srv.check_logs()
    if problems:
        pytest.fail('\n'.join(problems), pytrace=False)


class CliResult:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return 'CliResult(rc=%r, out=%r, err=%r)' % (self.rc, self.out, self.err)


@pytest.fixture
def run_cli(hy_bin, prefix):
    """run_cli(args, timeout=10) -> CliResult(rc, out, err); runs HY_BIN with args (cwd = prefix)."""
    def run(args, timeout=10.0):
        p = subprocess.run([hy_bin] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, cwd=prefix.tmp, timeout=timeout)
        res = CliResult(p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace'))
        assert not SANITIZER_RE.search(res.err), res.err
        return res
    return run


# ---------------------------------------------------------------- convenience

def simple(server_body, http_extra='', listen='listen 127.0.0.1:{port};'):
    """An http block with one server listening on {port}."""
    return '''
http {
    include mime.types;
    default_type application/octet-stream;
    %s
    server {
        %s
        %s
    }
}
''' % (http_extra, listen, server_body)
