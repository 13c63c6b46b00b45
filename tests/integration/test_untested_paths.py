"""Paths no test reached before issue 18's coverage run: worker_shutdown_timeout, the master killing workers
that do not exit, reloads that fail (a log that cannot be opened, an address that cannot be bound),
`expires @time` / `expires modified`, gzip_proxied's values, access-log lines longer than the log buffer."""
import calendar
import email.utils
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from conftest import IS_NGINX, simple
from helpers.http1 import build_request
from helpers.process import master_conf, one_server, workers_of, wait_until, wait_log, quick_get, alive

BIG = 64 * 1024 * 1024


def slow_client(port, path='/big.bin'):
    """A connection that asked for a big response and reads only its first bytes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(('127.0.0.1', port))
    sock.sendall(build_request('GET', path, 'localhost', [('Connection', 'close')]))
    assert sock.recv(4096).startswith(b'HTTP/1.1 200')
    return sock


def drain(sock):
    total = 0
    try:
        while True:
            d = sock.recv(1 << 20)
            if not d:
                break
            total += len(d)
    except (ConnectionResetError, socket.timeout):
        pass
    sock.close()
    return total


# ---------------------------------------------------------------- worker_shutdown_timeout

def test_worker_shutdown_timeout_ends_a_stalled_drain(server):
    s = server(master_conf(one_server('root {html};'), workers=1, main='worker_shutdown_timeout 1s;'),
               files={'html/big.bin': b'z' * BIG}, full=True)
    workers_of(s, 1)
    sock = slow_client(s.port)
    os.kill(s.proc.pid, signal.SIGQUIT)
    # the client never reads: without the timeout the worker would wait for it forever
    s.proc.wait(15)
    s.stopped = True
    assert s.proc.returncode == 0
    assert drain(sock) < BIG
    if not IS_NGINX:
        assert 'worker_shutdown_timeout expired, closing 1 connection(s)' in s.error_log()


# ---------------------------------------------------------------- the master kills workers that do not exit

@pytest.mark.hayate_only
def test_master_kills_workers_that_ignore_term(server):
    # nginx's master waits for its workers without a deadline; hayate's sends SIGKILL after 5 s
    s = server(master_conf(one_server('root {html};'), workers=1), files={'html/a.txt': 'A'}, full=True)
    (w,) = workers_of(s, 1)
    os.kill(w, signal.SIGSTOP)      # a worker that cannot act on SIGTERM
    try:
        os.kill(s.proc.pid, signal.SIGTERM)
        s.proc.wait(15)
        s.stopped = True
    finally:
        if alive(w):
            os.kill(w, signal.SIGKILL)
    assert s.proc.returncode == 0
    assert 'workers did not exit in time, sending SIGKILL' in s.error_log()
    assert wait_until(lambda: not alive(w), 5)


# ---------------------------------------------------------------- reloads that fail

def reload_and_expect_failure(s, text, pattern):
    s.prefix.conf(text, full=True)
    old = workers_of(s, 1)
    os.kill(s.proc.pid, signal.SIGHUP)
    assert wait_log(s, pattern), s.error_log()
    # the old generation keeps serving, with the same worker
    assert quick_get(s.port, '/a.txt') == (200, b'A')
    assert workers_of(s, 1) == old


def test_reload_with_unopenable_log_keeps_old_config(server):
    base = master_conf(one_server('root {html};'), workers=1)
    s = server(base, files={'html/a.txt': 'A'}, full=True)
    bad = base.replace('error_log {tmp}/logs/error.log info;',
                       'error_log {tmp}/logs/error.log info;\nerror_log {tmp}/html/a.txt/sub.log;')
    assert bad != base
    reload_and_expect_failure(s, bad, r'open\(\) ".*/html/a.txt/sub.log" failed \(20: Not a directory\)')


def test_reload_with_unbindable_address_keeps_old_config(server):
    base = master_conf(one_server('root {html};'), workers=1)
    s = server(base, files={'html/a.txt': 'A'}, full=True)
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        blocker.bind(('127.0.0.1', s.port2))
        blocker.listen(1)
        bad = master_conf(one_server('root {html};', listen='listen 127.0.0.1:{port}; listen 127.0.0.1:{port2};'),
                          workers=1)
        reload_and_expect_failure(s, bad, r'bind\(\) to 127\.0\.0\.1:%d failed \(98: Address already in use\)'
                                  % s.port2)
    finally:
        blocker.close()


# ---------------------------------------------------------------- expires @time and modified

def http_time(v):
    return calendar.timegm(email.utils.parsedate(v))


def test_expires_daily(server, monkeypatch):
    monkeypatch.setenv('TZ', 'UTC')
    s = server(simple('root {html};\n        expires @15h30m;'), files={'html/a.txt': 'A'})
    r = s.get('/a.txt')
    exp = http_time(r.header('Expires'))
    date = http_time(r.header('Date'))
    tm = time.gmtime(exp)
    assert (tm.tm_hour, tm.tm_min, tm.tm_sec) == (15, 30, 0)
    assert 0 < exp - date <= 86400
    assert r.header('Cache-Control') == 'max-age=%d' % (exp - date)


def test_expires_modified(server):
    s = server(simple('root {html};\n        location /m/ { expires modified +2h; }\n'
                      '        location /p/ { expires modified -1; }'),
               files={'html/m/a.txt': 'A', 'html/p/a.txt': 'P'})
    mtime = time.time() - 600
    os.utime(os.path.join(s.html, 'm/a.txt'), (mtime, mtime))
    r = s.get('/m/a.txt')
    lm = http_time(r.header('Last-Modified'))
    assert http_time(r.header('Expires')) == lm + 7200
    age = int(r.header('Cache-Control').split('=')[1])
    assert abs(age - (lm + 7200 - http_time(r.header('Date')))) <= 1
    # a time in the past: "no-cache", as nginx
    os.utime(os.path.join(s.html, 'p/a.txt'), (mtime, mtime))
    r = s.get('/p/a.txt')
    assert r.header('Cache-Control') == 'no-cache'
    assert http_time(r.header('Expires')) == http_time(r.header('Last-Modified')) - 1


# ---------------------------------------------------------------- gzip_proxied

# nginx's ngx_http_gzip_ok is permissive: a proxied response is refused only by what it carries (an Expires
# not in the past, a Cache-Control without the listed directives, an ETag with no_etag); for a static file
# Last-Modified is added after the gzip filter runs, so no_last_modified does not refuse it (checked against
# nginx 1.22).
PROXIED = [
    # (gzip_proxied value, location extras, request headers, compressed?)
    ('off', '', {}, False),
    ('any', 'expires 1h; etag on;', {}, True),
    ('auth', '', {}, True),
    ('auth', 'add_header Cache-Control public;', {}, False),
    ('auth', 'add_header Cache-Control public;', {'Authorization': 'Basic eDp5'}, True),
    ('expired', '', {}, True),
    ('expired', 'expires 1h;', {}, False),
    ('expired', 'expires -1;', {}, True),
    ('expired', 'expires epoch;', {}, True),
    ('no-cache', 'add_header Cache-Control no-cache;', {}, True),
    ('no-cache', 'add_header Cache-Control public;', {}, False),
    ('no-store', 'add_header Cache-Control "max-age=0, no-store";', {}, True),
    ('no-store', 'add_header Cache-Control no-cache;', {}, False),
    ('private', 'add_header Cache-Control private;', {}, True),
    ('private', 'add_header Cache-Control public;', {}, False),
    ('no_last_modified', '', {}, True),
    ('no_etag', 'etag off;', {}, True),
    ('no_etag', '', {}, False),
]


@pytest.mark.parametrize('value,extra,headers,compressed', PROXIED)
def test_gzip_proxied_values(server, value, extra, headers, compressed):
    body = ('gzip me please ' * 400).encode()
    s = server(simple('root {html};\n        location / { %s }' % extra,
                      http_extra='gzip on; gzip_types text/plain; gzip_min_length 10; gzip_proxied %s;' % value),
               files={'html/a.txt': body})
    h = {'Accept-Encoding': 'gzip', 'Via': '1.1 proxy'}
    h.update(headers)
    r = s.get('/a.txt', headers=h)
    assert r.status == 200
    assert (r.header('Content-Encoding') == 'gzip') == compressed, r
    # without Via the request is not proxied: gzip_proxied does not apply
    assert s.get('/a.txt', headers={'Accept-Encoding': 'gzip'}).header('Content-Encoding') == 'gzip'


# ---------------------------------------------------------------- access-log lines longer than the buffer

def test_access_log_line_longer_than_buffer(server):
    s = server(simple('root {html};',
                      http_extra='log_format u "$request_uri";\n    access_log {tmp}/logs/u.log u buffer=4k;'),
               files={'html/a.txt': 'A'})
    short = '/a.txt?s=1'
    long_uri = '/a.txt?' + 'q' * 6000
    c = s.conn()
    for uri in (short, long_uri, short):
        r = c.request(build_request('GET', uri, 'localhost', []))
        assert r.status == 200
    c.close()
    s.stop()        # the buffer is flushed on exit

    with open(s.prefix.path('logs/u.log')) as f:
        lines = f.read().splitlines()
    # the long line went straight to the file after the buffered short one: order kept, nothing cut
    assert lines == [short, long_uri, short]


# ---------------------------------------------------------------- daemon on

def test_daemon_on_detaches_and_serves(prefix, hy_bin):
    conf = prefix.conf(master_conf(one_server('root {html};'), workers=1).replace('daemon off;', 'daemon on;'),
                       full=True)
    prefix.write('html/a.txt', 'A')
    pidfile = prefix.path('logs/hy.pid')
    launcher = subprocess.run([hy_bin, '-p', prefix.tmp + '/', '-c', conf], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, cwd=prefix.tmp)
    assert launcher.returncode == 0, launcher.stderr      # the started process returns once detached
    pid = None
    try:
        assert wait_until(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), 5)
        pid = int(open(pidfile).read())
        assert alive(pid)
        assert os.getsid(pid) == pid                      # its own session: setsid()
        assert wait_until(lambda: quick_get(prefix.port, '/a.txt') == (200, b'A'), 5)
        os.kill(pid, signal.SIGQUIT)
        assert wait_until(lambda: not alive(pid), 10)
        pid = None
    finally:
        if pid is not None and alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not os.path.exists(pidfile)


# ---------------------------------------------------------------- worker_cpu_affinity auto

@pytest.mark.parametrize('value,expect', [('auto', lambda a, b: [[a], [b]]),
                                          ('auto 01', lambda a, b: [[0], [0]])])
def test_worker_cpu_affinity_auto(server, value, expect):
    cpus = sorted(os.sched_getaffinity(0))
    if cpus[:2] != [0, 1]:
        pytest.skip('needs CPUs 0 and 1')
    s = server(master_conf(one_server('root {html};'), workers=2, main='worker_cpu_affinity %s;' % value), full=True)
    pids = workers_of(s, 2)
    want = expect(0, 1)

    def masks():
        return sorted(sorted(os.sched_getaffinity(p)) for p in pids)
    wait_until(lambda: masks() == want, 5)
    assert masks() == want


# ---------------------------------------------------------------- the error log when none is configured

def test_error_log_from_e_option(server):
    # no error_log in the configuration: -e names it (nginx's -e)
    conf = master_conf(one_server('root {html};'), workers=1).replace('error_log {tmp}/logs/error.log info;', '')
    s = server(conf, full=True, args=['-e', 'logs/e.log'])
    assert s.get('/missing.txt').status == 404
    assert wait_log(s, r'\[error\] .*open\(\) ".*/missing.txt" failed', path=s.prefix.path('logs/e.log'))


@pytest.mark.hayate_only
def test_default_error_log(server):
    # neither error_log nor -e: <prefix>logs/error.log at [error] (Debian's nginx uses its compiled-in path)
    conf = master_conf(one_server('root {html};'), workers=1).replace('error_log {tmp}/logs/error.log info;', '')
    s = server(conf, full=True)
    assert s.get('/missing.txt').status == 404
    assert wait_log(s, r'\[error\] .*open\(\) ".*/missing.txt" failed')
    assert '[notice]' not in s.error_log()      # the default level is error


@pytest.mark.hayate_only
def test_default_error_log_directory_created(run_cli, tmp_path):
    """A prefix without logs/: the default error log's directory is created (nginx fails to open the log)."""
    pre = tmp_path / 'fresh'
    (pre / 'conf').mkdir(parents=True)
    (pre / 'conf' / 'x.conf').write_text('events { } http { access_log off; server { listen 127.0.0.1:1; } }\n')
    r = run_cli(['-p', str(pre) + '/', '-t', '-c', str(pre / 'conf' / 'x.conf')])
    assert r.rc == 0, r.err
    assert (pre / 'logs' / 'error.log').exists()


# ---------------------------------------------------------------- the command line's error paths

@pytest.mark.parametrize('args,message', [
    (['foo'], 'invalid option: "foo"'),
    (['-x'], 'invalid option: "x"'),
    (['-p'], 'option "-p" requires directory name'),
    (['-c'], 'option "-c" requires file name'),
    (['-g'], 'option "-g" requires parameter'),
])
def test_cli_bad_options(run_cli, args, message):
    r = run_cli(args)
    assert r.rc == 1 and message in r.err, r


def test_signal_with_bad_pid_file(prefix, run_cli):
    path = prefix.conf(simple('root {html};'))
    prefix.write('logs/hy.pid', 'abc\n')
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-s', 'reload'])
    assert r.rc == 1 and 'invalid PID number "abc" in "%s/logs/hy.pid"' % prefix.tmp in r.err, r


def test_signal_to_a_gone_process(prefix, run_cli):
    path = prefix.conf(simple('root {html};'))
    gone = subprocess.Popen(['true'])
    gone.wait()                     # a pid that no longer exists (reaped)
    prefix.write('logs/hy.pid', '%d\n' % gone.pid)
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-s', 'stop'])
    assert r.rc == 1 and 'kill(%d, 15) failed (3: No such process)' % gone.pid in r.err, r


def test_default_prefix_without_p(prefix, run_cli):
    # no -p: the prefix is derived from the binary's place; an absolute -c and no relative paths work anywhere
    conf = prefix.write('conf/abs.conf', 'error_log stderr;\nevents { }\nhttp { access_log off; '
                        'server { listen 127.0.0.1:1; } }\n')
    r = run_cli(['-t', '-c', conf])
    assert r.rc == 0 and 'the configuration file %s syntax is ok' % conf in r.err, r


# ---------------------------------------------------------------- main and events directives: nginx's errors

@pytest.mark.parametrize('main,events,message', [
    ('worker_processes x;', '', '"worker_processes" directive invalid value'),
    ('worker_processes 2; worker_processes 2;', '', '"worker_processes" directive is duplicate'),
    ('error_log {tmp}/logs/e.log bogus;', '', 'invalid log level "bogus"'),
    ('worker_priority x;', '', '"worker_priority" directive invalid number'),
    ('worker_priority 1; worker_priority 2;', '', '"worker_priority" directive is duplicate'),
    ('user root; user root;', '', '"user" directive is duplicate'),
    ('worker_cpu_affinity 0x1;', '', 'invalid character "x" in "worker_cpu_affinity"'),
    ('worker_cpu_affinity 01; worker_cpu_affinity 10;', '', '"worker_cpu_affinity" directive is duplicate'),
    ('', 'use kqueue;', 'invalid event type "kqueue"'),
    ('', 'use epoll; use epoll;', '"use" directive is duplicate'),
])
def test_core_directive_errors(prefix, run_cli, main, events, message):
    text = ('error_log stderr;\npid {tmp}/logs/hy.pid;\n%s\nevents { %s }\n' % (main, events) +
            simple('root {html};'))
    conf = prefix.conf(text, full=True)
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err and 'test.conf:' in r.err, r


def test_events_twice(prefix, run_cli):
    conf = prefix.conf('error_log stderr;\nevents { }\nevents { }\n' + simple('root {html};'), full=True)
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and '"events" directive is duplicate' in r.err, r


# ---------------------------------------------------------------- variables in less common states

def log_line(s, rel, n=1, timeout=5.0):
    """The log's lines once it has at least n (lines are written after the responses)."""
    path = s.prefix.path(rel)

    def read():
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return None
        return lines if len(lines) >= n else None
    return wait_until(read, timeout)


@pytest.mark.parametrize('names,host,want', [
    ('*.example.com', 'a.example.com', '*.example.com'),
    ('www.example.*', 'www.example.org', 'www.example.*'),
    ('.example.net', 'example.net', 'example.net'),         # nginx stores ".x" as "x" (and "*.x")
    ('~^(?<sub>.+)\\.example\\.io$', 'x.example.io', '~^(?<sub>.+)\\x5C.example\\x5C.io$'),  # log escaping
])
def test_server_name_variable(server, names, host, want):
    s = server(simple('server_name %s;\n        root {html};' % names,
                      http_extra='log_format sn "$server_name";\n    access_log {tmp}/logs/sn.log sn;'),
               files={'html/a.txt': 'A'})
    assert s.get('/a.txt', host=host).status == 200
    assert log_line(s, 'logs/sn.log') == [want]


def test_sent_http_variables_before_the_head(server):
    # add_header evaluates while the response head is being built: the fields as they stand then
    hdr = ('add_header X-Seen "$sent_http_content_type|$sent_http_content_length|$sent_http_last_modified|'
           '$sent_http_etag|$sent_http_location";')
    s = server(simple('root {html};\n        location / { %s }' % hdr), files={'html/a.txt': 'hello'})
    r = s.get('/a.txt')
    ct, cl, lm, etag, loc = r.header('X-Seen').split('|')
    assert (ct, cl, lm, etag, loc) == ('text/plain', '5', r.header('Last-Modified'), r.header('ETag'), '')
    # (a redirect's $sent_http_location differs: nginx shows the relative URI there, hayate the absolute one)


def test_connection_and_request_variables_over_ipv6(server):
    fmt = ('$remote_addr|$server_addr|$server_port|$binary_remote_addr|$remote_user|$http_cookie|'
           '$http_x_forwarded_for|$document_root|$realpath_root|$server_protocol|$args|$content_length')
    s = server(simple('root {html};\n        location /al/ { alias {html}/real/; }',
                      listen='listen [::1]:{port};',
                      http_extra='log_format v "%s";\n    access_log {tmp}/logs/v.log v;' % fmt),
               files={'html/real/a.txt': 'A'}, wait_host='::1')
    c = s.conn(host='::1')
    hdrs = [('Authorization', 'Basic dXNlcjpwYXNz'), ('Cookie', 'a=1'), ('Cookie', 'b=2'),
            ('X-Forwarded-For', '10.0.0.1'), ('X-Forwarded-For', '10.0.0.2')]
    r = c.request(build_request('GET', '/al/a.txt?x=1', 'localhost', hdrs))
    assert r.status == 200
    r = c.request(build_request('GET', '/al/a.txt', 'localhost', [('Authorization', 'Basic !!!!')]))
    assert r.status == 200
    c.close()
    lines = log_line(s, 'logs/v.log', 2)
    assert lines and len(lines) == 2, lines
    f = lines[0].split('|')
    assert f[0] == '::1' and f[1] == '::1' and f[2] == str(s.port)
    assert f[3] == '\\x00' * 15 + '\\x01'                     # 16 bytes of ::1, log-escaped
    assert f[4] == 'user'
    assert f[5] == 'a=1; b=2' and f[6] == '10.0.0.1, 10.0.0.2'  # nginx 1.22 joins these two
    assert f[7] == s.html + '/real/' and f[8] == os.path.realpath(s.html + '/real')
    assert f[9:] == ['HTTP/1.1', 'x=1', '-']
    g = lines[1].split('|')
    assert g[4] == '-'                                          # not base64: no user


@pytest.mark.hayate_only
@pytest.mark.parametrize('case', ['syntax', 'log', 'bind'])
def test_single_process_reload_failures_keep_serving(server, case):
    # master_process off: the one process reloads in place (nginx's single-process reload is not reliable)
    s = server(simple('root {html};'), files={'html/a.txt': 'A'})
    blocker = None
    if case == 'syntax':
        bad = simple('root {html};\n        no_such_directive_here;')
    elif case == 'log':
        bad = simple('root {html};', http_extra='error_log {tmp}/html/a.txt/sub.log;')
    else:
        blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        blocker.bind(('127.0.0.1', s.port2))
        blocker.listen(1)
        bad = simple('root {html};', listen='listen 127.0.0.1:{port}; listen 127.0.0.1:{port2};')
    try:
        # a served request first: the port accepts as soon as it is bound, the signal handling comes after
        assert s.get('/a.txt').body == b'A'
        s.prefix.conf(bad)
        os.kill(s.proc.pid, signal.SIGHUP)
        pattern = {'syntax': r'unknown directive "no_such_directive_here"',
                   'log': r'open\(\) ".*/html/a.txt/sub.log" failed \(20: Not a directory\)',
                   'bind': r'bind\(\) to 127\.0\.0\.1:%d failed \(98: Address already in use\)' % s.port2}[case]
        assert wait_log(s, pattern), s.error_log()
        assert s.get('/a.txt').body == b'A'
        assert s.alive()
    finally:
        if blocker is not None:
            blocker.close()
