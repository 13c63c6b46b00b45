"""A small, strict HTTP/1.x response reader over raw sockets.

The reader never trusts the server: every read is bounded by a socket timeout and by a size limit, and
it raises ProtocolError on anything malformed instead of guessing.
"""
import socket
import time

MAX_RESPONSE = 64 * 1024 * 1024


class ProtocolError(Exception):
    pass


class Response:
    def __init__(self, version, status, reason, headers, body, raw_head):
        self.version = version      # "HTTP/1.1"
        self.status = status        # int
        self.reason = reason        # str
        self.headers = headers      # list of (name, value) in wire order, names as sent
        self.body = body            # bytes
        self.raw_head = raw_head    # bytes of the status line + headers

    def header(self, name, default=None):
        """First value of header `name` (case-insensitive)."""
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def has(self, name):
        return self.header(name) is not None

    @property
    def text(self):
        return self.body.decode('latin-1')

    def __repr__(self):
        return '<Response %s %d %r headers=%r body=%d bytes>' % (self.version, self.status, self.reason,
                                                                  self.headers, len(self.body))


class Conn:
    """A client connection with its own read buffer so pipelined responses can be read one by one."""

    def __init__(self, host, port, timeout=5.0, family=None, rcvbuf=None):
        if family is None:
            family = socket.AF_INET6 if ':' in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.buf = b''
        self.eof = False
        self.timeout = timeout

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode('latin-1')
        self.sock.sendall(data)

    def send_lenient(self, data):
        """Send, ignoring EPIPE/ECONNRESET (the server may have answered and closed already)."""
        if isinstance(data, str):
            data = data.encode('latin-1')
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _fill(self):
        if self.eof:
            return False
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b''
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        if len(self.buf) > MAX_RESPONSE:
            raise ProtocolError('response too large')
        return True

    def _read_line(self):
        while True:
            i = self.buf.find(b'\n')
            if i >= 0:
                line = self.buf[:i + 1]
                self.buf = self.buf[i + 1:]
                if not line.endswith(b'\r\n'):
                    raise ProtocolError('bare LF in response: %r' % line)
                return line[:-2]
            if not self._fill():
                raise ProtocolError('connection closed in the middle of a line (have %r)' % self.buf[:200])

    def _read_exact(self, n):
        while len(self.buf) < n:
            if not self._fill():
                raise ProtocolError('connection closed after %d of %d body bytes' % (len(self.buf), n))
        data = self.buf[:n]
        self.buf = self.buf[n:]
        return data

    def read_head(self):
        """Read a status line and headers; returns (version, status, reason, headers, raw)."""
        # an empty connection is an error the caller can detect
        while not self.buf:
            if not self._fill():
                raise ProtocolError('connection closed before a response')
        raw = []
        line = self._read_line()
        raw.append(line)
        parts = line.split(b' ', 2)
        if len(parts) < 2 or not parts[0].startswith(b'HTTP/') or not parts[1].isdigit() or len(parts[1]) != 3:
            raise ProtocolError('bad status line %r' % line)
        version = parts[0].decode()
        status = int(parts[1])
        reason = parts[2].decode('latin-1') if len(parts) > 2 else ''
        headers = []
        while True:
            line = self._read_line()
            raw.append(line)
            if line == b'':
                break
            if b':' not in line or line[:1] in (b' ', b'\t'):
                raise ProtocolError('bad header line %r' % line)
            k, v = line.split(b':', 1)
            if k != k.strip() or not k:
                raise ProtocolError('bad header name %r' % line)
            headers.append((k.decode('latin-1'), v.strip(b' \t').decode('latin-1')))
        return version, status, reason, headers, b'\r\n'.join(raw) + b'\r\n'

    def _read_chunked(self):
        body = b''
        while True:
            line = self._read_line()
            size_s = line.split(b';', 1)[0].strip()
            try:
                size = int(size_s, 16)
            except ValueError:
                raise ProtocolError('bad chunk size %r' % line)
            if size == 0:
                break
            body += self._read_exact(size)
            if self._read_exact(2) != b'\r\n':
                raise ProtocolError('chunk not followed by CRLF')
        while self._read_line() != b'':   # trailers
            pass
        return body

    def read_response(self, method='GET', allow_interim=False):
        """Read one full response. 1xx interim responses are returned only with allow_interim=True,
        otherwise they are skipped."""
        while True:
            version, status, reason, headers, raw = self.read_head()
            r = Response(version, status, reason, headers, b'', raw)
            if 100 <= status < 200:
                if allow_interim:
                    return r
                continue
            break
        if method == 'HEAD' or status in (204, 304):
            return r
        te = r.header('Transfer-Encoding')
        cl = r.header_all('Content-Length')
        if te is not None:
            if te.lower() != 'chunked':
                raise ProtocolError('unexpected transfer-encoding %r' % te)
            if cl:
                raise ProtocolError('both Content-Length and Transfer-Encoding')
            r.body = self._read_chunked()
        elif cl:
            if len(set(cl)) != 1 or not cl[0].isdigit():
                raise ProtocolError('bad Content-Length %r' % cl)
            r.body = self._read_exact(int(cl[0]))
        else:
            while self._fill():
                pass
            r.body, self.buf = self.buf, b''
        return r

    def request(self, data, method=None):
        """Send raw bytes and read one response."""
        if method is None:
            s = data if isinstance(data, str) else data.decode('latin-1')
            method = s.split(' ', 1)[0]
        self.send(data)
        return self.read_response(method)

    def is_closed(self, timeout=10.0):
        """True if the server closes the connection (EOF/RST) within `timeout` seconds and sends nothing
        else meanwhile. Returns False if the connection is still open at the deadline."""
        if self.eof:
            return True
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(min(left, 1.0))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                self.eof = True
                return True
            finally:
                self.sock.settimeout(self.timeout)
            if not chunk:
                self.eof = True
                return True
            self.buf += chunk

    def still_open(self, wait=0.3):
        """True if nothing (no data, no EOF) arrives within `wait` seconds."""
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return True
        except ConnectionResetError:
            self.eof = True
            return False
        finally:
            self.sock.settimeout(self.timeout)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return False


def build_request(method='GET', path='/', host='localhost', headers=None, body=None, version='HTTP/1.1'):
    """Render a request as bytes. headers: list of (name, value) or dict. Host is sent first unless
    host is None."""
    lines = ['%s %s %s' % (method, path, version)]
    if host is not None:
        lines.append('Host: %s' % host)
    if headers:
        items = headers.items() if isinstance(headers, dict) else headers
        for k, v in items:
            lines.append('%s: %s' % (k, v))
    if body is not None and not any(k.lower() in ('content-length', 'transfer-encoding')
                                    for k, _ in (headers.items() if isinstance(headers, dict) else
                                                 (headers or []))):
        lines.append('Content-Length: %d' % len(body))
    data = ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1')
    if body is not None:
        data += body if isinstance(body, bytes) else body.encode('latin-1')
    return data


def parse_multipart_byteranges(body, boundary):
    """Parse a multipart/byteranges body into a list of (headers dict lower-cased, data bytes)."""
    delim = b'--' + boundary.encode()
    parts = []
    pos = body.find(delim)
    if pos < 0:
        raise ProtocolError('no boundary in multipart body')
    while True:
        pos += len(delim)
        if body[pos:pos + 2] == b'--':
            break
        if body[pos:pos + 2] != b'\r\n':
            raise ProtocolError('boundary not followed by CRLF at %d' % pos)
        pos += 2
        end_head = body.find(b'\r\n\r\n', pos)
        if end_head < 0:
            raise ProtocolError('unterminated part headers')
        hdrs = {}
        for line in body[pos:end_head].split(b'\r\n'):
            k, v = line.split(b':', 1)
            hdrs[k.decode().strip().lower()] = v.decode().strip()
        pos = end_head + 4
        nxt = body.find(b'\r\n' + delim, pos)
        if nxt < 0:
            raise ProtocolError('unterminated part')
        parts.append((hdrs, body[pos:nxt]))
        pos = nxt + 2
    return parts
