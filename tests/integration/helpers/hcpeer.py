"""An HTTP peer for the health-check tests, run as its own process (python3 -c), steered through files in its
directory so that a test can change what it answers while the server under test keeps checking it:

    status   the status of health-check requests (paths starting with /hc), default 200
    body     their body, default "alive"
    headers  extra header lines ("Name: value" per line) of their responses
    delay    seconds to wait before answering a health-check request

Other paths answer 200 with the peer's name as the body (and X-Peer: name). Every request is appended to `log`
in the directory as "<monotonic time> <path> <version> <Host> <status answered>".

With tls=(cert, key) the peer speaks HTTPS (client_ca: it asks for a client certificate from that CA and refuses a
handshake without one): each handshake appends the SNI name the client sent ("-" for none) to `sni`, and each
failed handshake a line to `tlsfail`.
"""
import os
import sys

from helpers.appservers import Backend, _free_port

HC_PEER = r'''
import os, ssl, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
port, name, d = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = None
if len(sys.argv) > 5:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    if len(sys.argv) > 6:
        ctx.load_verify_locations(sys.argv[6])
        ctx.verify_mode = ssl.CERT_REQUIRED
    def on_sni(sock, sni, c):
        with open(os.path.join(d, 'sni'), 'a') as f:
            f.write('%s\n' % (sni or '-'))
    ctx.sni_callback = on_sni
def rd(f, default):
    try:
        with open(os.path.join(d, f)) as fh:
            return fh.read()
    except FileNotFoundError:
        return default
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'
    def do_GET(self):
        extra = []
        if self.path.startswith('/hc'):
            delay = float(rd('delay', '0') or 0)
            if delay:
                time.sleep(delay)
            status = int(rd('status', '200').strip() or 200)
            body = rd('body', 'alive').encode()
            for line in rd('headers', '').splitlines():
                if ':' in line:
                    k, v = line.split(':', 1)
                    extra.append((k.strip(), v.strip()))
            ctype = 'text/html'
        else:
            status, body, ctype = 200, name.encode(), 'text/plain'
        with open(os.path.join(d, 'log'), 'a') as f:
            f.write('%.3f %s %s %s %d\n' % (time.monotonic(), self.path, self.request_version,
                                             self.headers.get('Host', '-'), status))
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('X-Peer', name)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    def finish_request(self, request, client_address):
        if ctx is None:
            H(request, client_address, self)
            return
        try:  # the handshake in the connection's thread
            request.settimeout(10)
            tls = ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            with open(os.path.join(d, 'tlsfail'), 'a') as f:
                f.write('%s\n' % e)
            return
        try:
            H(tls, client_address, self)
        finally:
            tls.close()
S(('127.0.0.1', port), H).serve_forever()
'''


class HcPeer(Backend):
    def __init__(self, workdir, name, port=None, tls=None, client_ca=None):
        self.dir = os.path.join(workdir, 'peer-' + name)
        os.makedirs(self.dir, exist_ok=True)
        self.name = name
        self.port = port or _free_port()
        extra = list(tls) if tls else []
        if tls and client_ca:
            extra.append(client_ca)
        super().__init__([sys.executable, '-c', HC_PEER, str(self.port), name, self.dir] + extra,
                         '127.0.0.1:%d' % self.port, os.path.join(self.dir, 'stderr'), self.dir)

    def set(self, **files):
        """set(status='500', body='dead', headers='X-Bad: 1', delay='1.5'); None removes the file."""
        for k, v in files.items():
            p = os.path.join(self.dir, k)
            if v is None:
                if os.path.exists(p):
                    os.unlink(p)
                continue
            tmp = p + '.tmp'
            with open(tmp, 'w') as f:
                f.write(str(v))
            os.replace(tmp, p)

    def entries(self):
        """[(time, path, version, host, status)] of the requests so far."""
        try:
            with open(os.path.join(self.dir, 'log')) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            parts = line.split(' ')
            if len(parts) == 5:
                out.append((float(parts[0]), parts[1], parts[2], parts[3], int(parts[4])))
        return out

    def _lines(self, f):
        try:
            with open(os.path.join(self.dir, f)) as fh:
                return fh.read().splitlines()
        except FileNotFoundError:
            return []

    def sni(self):
        """The SNI names of the TLS handshakes so far ("-": none sent)."""
        return self._lines('sni')

    def tls_failures(self):
        return self._lines('tlsfail')

    def checks(self):
        return [e for e in self.entries() if e[1].startswith('/hc')]

    def traffic(self):
        return [e for e in self.entries() if not e[1].startswith('/hc')]
