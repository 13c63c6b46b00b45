"""A small HTTP/1.x backend for the proxy tests, with knobs.

    be = Backend()                      # 127.0.0.1, a free port; Backend(unix='/path') for a unix socket
    be.handler = lambda req: be.reply(200, b'hello', [('X-A', '1')])
    be.start(); ...; be.stop()

It records every request (method, target, version, headers, body, which connection), counts accepted
connections, and answers with what the handler returns: bytes (sent as they are), a list of bytes/float/callable
items (bytes are sent, a float sleeps that many seconds, a callable is called: to wait on an event), or None (close without answering).
Knobs: close_after (close each connection after N responses), close_reused (close a connection that
carries a second request without answering it, once per connection), delay (seconds before answering).
"""
import os
import socket
import threading
import time


class Req:
    def __init__(self, method, target, version, headers, body, conn_no, conn_req):
        self.method, self.target, self.version = method, target, version
        self.headers, self.body = headers, body
        self.conn_no, self.conn_req = conn_no, conn_req
        self.chunked = False

    def header(self, name, default=None):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return default

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]


class Backend:
    def __init__(self, port=None, unix=None):
        self.unix = unix
        if unix:
            if os.path.exists(unix):
                os.unlink(unix)
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(unix)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(('127.0.0.1', port or 0))
            self.port = self.sock.getsockname()[1]
        self.sock.listen(128)
        self.requests = []
        self.connections = 0
        self.open_connections = 0
        self.handler = lambda req: self.reply(200, b'ok')
        self.close_after = 0
        self.close_reused = False
        self.delay = 0
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.stopping = False
        self.threads = []
        self.live = set()  # accepted sockets still open (kill() resets them)

    # ---- responses
    @staticmethod
    def reply(status, body=b'', headers=None, reason=None, version='HTTP/1.1', length=True):
        reasons = {200: 'OK', 201: 'Created', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found',
                   304: 'Not Modified', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error',
                   502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout'}
        head = '%s %d %s\r\n' % (version, status, reason if reason is not None else reasons.get(status, 'X'))
        for k, v in headers or []:
            head += '%s: %s\r\n' % (k, v)
        if length:
            head += 'Content-Length: %d\r\n' % len(body)
        return head.encode() + b'\r\n' + body

    @staticmethod
    def chunked(status, chunks, headers=None):
        head = 'HTTP/1.1 %d OK\r\nTransfer-Encoding: chunked\r\n' % status
        for k, v in headers or []:
            head += '%s: %s\r\n' % (k, v)
        out = [head.encode() + b'\r\n']
        for c in chunks:
            if isinstance(c, float):
                out.append(c)
            else:
                out.append(b'%x\r\n%s\r\n' % (len(c), c))
        out.append(b'0\r\n\r\n')
        return out

    # ---- lifecycle
    def start(self):
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)
        return self

    def stop(self):
        self.stopping = True
        try:
            self.sock.close()
        except OSError:
            pass
        if self.unix and os.path.exists(self.unix):
            os.unlink(self.unix)

    def kill(self):
        """Like a crashed backend: stop listening and reset every open connection."""
        self.stop()
        with self.lock:
            live = list(self.live)
        for c in live:
            try:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def wait_requests(self, n, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError('backend saw %d requests, expected %d' % (len(self.requests), n))
                self.cond.wait(left)

    def wait_open(self, n, timeout=10.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.open_connections != n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError('backend has %d open connections, expected %d'
                                         % (self.open_connections, n))
                self.cond.wait(left)

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.cond:
                self.live.add(c)
                self.connections += 1
                self.open_connections += 1
                no = self.connections
                self.cond.notify_all()
            t = threading.Thread(target=self._serve, args=(c, no), daemon=True)
            t.start()

    def _serve(self, c, no):
        buf = b''
        served = 0
        try:
            c.settimeout(30)
            while True:
                req, buf = self._read_request(c, buf, no, served + 1)
                if req is None:
                    return
                with self.cond:
                    self.requests.append(req)
                    self.cond.notify_all()
                if self.close_reused and served >= 1:
                    return
                if self.delay:
                    time.sleep(self.delay)
                out = self.handler(req)
                if out is None:
                    return
                if isinstance(out, bytes):
                    out = [out]
                for item in out:
                    if isinstance(item, float):
                        time.sleep(item)
                    elif callable(item):
                        item()
                    elif item == b'':
                        pass
                    else:
                        c.sendall(item)
                served += 1
                if self.close_after and served >= self.close_after:
                    return
                if (req.header('Connection') or '').lower() == 'close' or req.version == 'HTTP/1.0':
                    return
        except OSError:
            return
        finally:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
            with self.cond:
                self.live.discard(c)
                self.open_connections -= 1
                self.cond.notify_all()

    @staticmethod
    def _recv(c, buf):
        d = c.recv(65536)
        if not d:
            raise EOFError
        return buf + d

    def _read_request(self, c, buf, no, n):
        try:
            while b'\r\n\r\n' not in buf:
                buf = self._recv(c, buf)
        except (EOFError, OSError):
            return None, b''
        head, buf = buf.split(b'\r\n\r\n', 1)
        lines = head.decode('latin-1').split('\r\n')
        method, target, version = lines[0].split(' ', 2)
        headers = []
        for line in lines[1:]:
            k, v = line.split(':', 1)
            headers.append((k, v.strip()))
        req = Req(method, target, version, headers, b'', no, n)
        try:
            if (req.header('Transfer-Encoding') or '').lower() == 'chunked':
                req.chunked = True
                body = b''
                while True:
                    while b'\r\n' not in buf:
                        buf = self._recv(c, buf)
                    line, buf = buf.split(b'\r\n', 1)
                    size = int(line.split(b';')[0], 16)
                    while len(buf) < size + 2:
                        buf = self._recv(c, buf)
                    body += buf[:size]
                    buf = buf[size + 2:]
                    if size == 0:
                        break
                req.body = body
            elif req.header('Content-Length') is not None:
                n = int(req.header('Content-Length'))
                while len(buf) < n:
                    buf = self._recv(c, buf)
                req.body, buf = buf[:n], buf[n:]
        except (EOFError, OSError):
            return None, b''
        return req, buf
