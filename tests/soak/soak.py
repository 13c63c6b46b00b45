#!/usr/bin/env python3
"""Sanitizer soak: a few thousand mixed connections against a sanitizer build, then a clean shutdown.

Starts $HY_BIN (an ASan+UBSan build; `make soak` builds build-asan/hayate) in the foreground with a real config
(static files, gzip, ranges, autoindex, return, a map, an access log) in single-process mode (worker processes
leave with _exit, so only this mode runs LeakSanitizer over the serving code) and sends CONNS connections from
THREADS client threads, each of one kind:
  keepalive  several requests on one connection, read one by one
  pipelined  several requests in one write, then all responses
  malformed  a bad request (bare CR, smuggling, bad Host, huge line, NUL, bad chunked body ...)
  abandoned  half a request head, then the client goes away
  body       a POST with a Content-Length or chunked body that is discarded
Then SIGQUIT; the server must exit with 0 within the deadline, and neither stderr nor the error log may hold a
sanitizer or leak report (LeakSanitizer runs when each process exits) or an [alert]/[crit] line. The client
side is bounded: every socket has a timeout, the run a deadline (SECONDS). Only 127.0.0.1.

Usage: HY_BIN=build-asan/hayate tests/soak/soak.py [--conns N] [--threads N] [--seconds S] [--seed N]
Exit status 0 when clean; 1 with the reason on stderr.
"""
import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SANITIZER_RE = re.compile(r'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:')

CONF = '''daemon off;
master_process off;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
events {{ worker_connections 1024; }}
http {{
    client_header_timeout 2s;
    client_body_timeout 2s;
    keepalive_timeout 5s;
    keepalive_requests 50;
    gzip on;
    gzip_types text/plain;
    gzip_min_length 10;
    map $arg_m $mv {{ default d; ~^a(.*)$ x$1; }}
    log_format soak '$remote_addr "$request" $status $body_bytes_sent "$http_host" $mv';
    access_log {tmp}/logs/access.log soak;
    server {{
        listen 127.0.0.1:{port};
        root {tmp}/html;
        location /dir/ {{ autoindex on; }}
        location = /ret {{ return 200 "m=$mv u=$uri a=$args\\n"; }}
        location /redir {{ return 302 /ret?from=$uri; }}
    }}
}}
'''

GOOD = [
    b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /big.txt HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n',
    b'GET /big.txt HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-9,100-199,-5\r\n\r\n',
    b'HEAD /big.txt HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /dir/ HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /ret?m=abc HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /redir%0d%0aX:1 HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET /big.txt HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: "x"\r\n'
    b'If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n',
]
BAD = [
    b'GET / HTTP/1.1\rHost: localhost\r\r',
    b'GET http://localhost/index.html HTTP/1.1\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: a b\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    b'GET /' + b'a' * 20000 + b' HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: localhost\r\nX: a\x00b\r\n\r\n',
    b'GET /../../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: localhost\r\nIf-Modified-Since: x\r\nIf-Modified-Since: y\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: localhost\r\n X: folded\r\n\r\n',
    b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' + bytes(range(256)),
    b'GET / HTTP/2.0\r\n\r\n',
    b'GET /%00 HTTP/1.1\r\nHost: localhost\r\n\r\n',
]


def recv_until_close(s, limit=1 << 22):
    got = 0
    try:
        while got < limit:
            d = s.recv(65536)
            if not d:
                break
            got += len(d)
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    return got


def read_responses(s, n):
    """Read until n status lines were seen or the server closes (a rough count, enough to pace the client)."""
    buf = b''
    try:
        while buf.count(b'HTTP/1.1 ') < n:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except (socket.timeout, ConnectionResetError):
        pass
    return buf


def one_conn(port, kind, rng):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    try:
        if kind == 'keepalive':
            for _ in range(rng.randint(2, 6)):
                s.sendall(rng.choice(GOOD))
                if not read_responses(s, 1):
                    break
        elif kind == 'pipelined':
            reqs = [rng.choice(GOOD) for _ in range(rng.randint(2, 8))]
            s.sendall(b''.join(reqs) + b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
            recv_until_close(s)
        elif kind == 'malformed':
            data = rng.choice(BAD)
            if rng.random() < 0.5:  # a good request first, so the bad one arrives on a kept-alive connection
                data = rng.choice(GOOD) + data
            s.sendall(data)
            recv_until_close(s)
        elif kind == 'abandoned':
            req = rng.choice(GOOD + BAD)
            s.sendall(req[:rng.randint(1, max(1, len(req) - 4))])
            if rng.random() < 0.5:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')  # RST
        else:  # body
            if rng.random() < 0.5:
                body = b'x' * rng.randint(0, 70000)
                s.sendall(b'POST /ret HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n' % len(body) + body)
            else:
                s.sendall(b'POST /ret HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n'
                          b'5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n')
            read_responses(s, 1)
    except (socket.timeout, ConnectionResetError, BrokenPipeError, ConnectionRefusedError):
        pass
    finally:
        s.close()


def wait_port(port, proc, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--conns', type=int, default=3000)
    ap.add_argument('--threads', type=int, default=8)
    ap.add_argument('--seconds', type=float, default=120)
    ap.add_argument('--seed', type=int, default=17)
    ap.add_argument('--keep', action='store_true', help='keep the temporary prefix')
    a = ap.parse_args()
    hy_bin = os.path.abspath(os.environ.get('HY_BIN', 'build-asan/hayate'))

    tmp = tempfile.mkdtemp(prefix='hy-soak-')
    os.makedirs(tmp + '/logs')
    os.makedirs(tmp + '/html/dir')
    with open(tmp + '/html/index.html', 'w') as f:
        f.write('hello\n')
    with open(tmp + '/html/big.txt', 'w') as f:
        f.write(''.join('line %d of a text file\n' % i for i in range(5000)))
    for i in range(20):
        open(tmp + '/html/dir/f%02d.txt' % i, 'w').close()
    port = free_port()
    with open(tmp + '/soak.conf', 'w') as f:
        f.write(CONF.format(tmp=tmp, port=port))
    env = dict(os.environ)
    env.setdefault('ASAN_OPTIONS', 'detect_leaks=1:abort_on_error=0')
    env.setdefault('UBSAN_OPTIONS', 'print_stacktrace=1:halt_on_error=1')
    err_path = tmp + '/logs/stderr.txt'
    with open(err_path, 'wb') as fe:
        proc = subprocess.Popen([hy_bin, '-p', tmp + '/', '-c', tmp + '/soak.conf'], stdout=fe, stderr=fe,
                                stdin=subprocess.DEVNULL, cwd=tmp, env=env)
    problems = []
    start = time.monotonic()
    deadline = start + a.seconds
    counts = {}
    try:
        if not wait_port(port, proc, time.monotonic() + 10):
            problems.append('server did not start')
        else:
            kinds = ['keepalive', 'pipelined', 'malformed', 'abandoned', 'body']
            lock = threading.Lock()
            todo = [a.conns]

            def worker(tid):
                rng = random.Random(a.seed * 1000 + tid)
                while time.monotonic() < deadline:
                    with lock:
                        if todo[0] == 0:
                            return
                        todo[0] -= 1
                    kind = rng.choice(kinds)
                    one_conn(port, kind, rng)
                    with lock:
                        counts[kind] = counts.get(kind, 0) + 1

            ts = [threading.Thread(target=worker, args=(i,)) for i in range(a.threads)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            if sum(counts.values()) < a.conns:
                print('soak: deadline reached after %d of %d connections' % (sum(counts.values()), a.conns),
                      file=sys.stderr)
            # still serving after all that
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
            if not read_responses(s, 1).startswith(b'HTTP/1.1 200 '):
                problems.append('no 200 for a plain request after the soak')
            s.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGQUIT)
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = None
    if rc is None:
        problems.append('server did not exit within 30 s of SIGQUIT (killed)')
    elif rc != 0:
        problems.append('server exit code %s' % rc)
    with open(err_path, errors='replace') as f:
        err = f.read()
    with open(tmp + '/logs/error.log', errors='replace') as f:
        elog = f.read()
    for name, text in (('stderr', err), ('error log', elog)):
        if SANITIZER_RE.search(text):
            problems.append('sanitizer report in %s:\n%s' % (name, text[-6000:]))
    bad = [l for l in elog.splitlines() if '[alert]' in l or '[crit]' in l or '[emerg]' in l]
    if bad:
        problems.append('error log has alert/crit/emerg lines:\n' + '\n'.join(bad[:20]))
    n = sum(counts.values())
    print('soak: %d connections (%s) in %.1f s, exit code %s' % (
        n, ', '.join('%s %d' % kv for kv in sorted(counts.items())), time.monotonic() - start, rc))
    if a.keep or problems:
        print('soak: prefix kept in %s' % tmp, file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        print('soak: FAILED\n' + '\n'.join(problems), file=sys.stderr)
        return 1
    print('soak: clean (no sanitizer or leak report, clean exit)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
