"""TLS test helpers: certificates made with the `openssl` command at test time (never committed), and clients
(Python's ssl, `openssl s_client`)."""
import os
import socket
import ssl
import subprocess
import time


def openssl(*args, input=None, timeout=20):
    return subprocess.run(['openssl'] + list(args), input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def make_cert(dirpath, name, cn, kind='rsa', sans=None, password=None):
    """A self-signed certificate and key in dirpath: (cert_path, key_path). kind 'rsa' (2048) or 'ec' (P-256)."""
    crt = os.path.join(dirpath, name + '.crt')
    key = os.path.join(dirpath, name + '.key')
    if os.path.exists(crt) and os.path.exists(key):
        return crt, key
    keyopt = ['-newkey', 'rsa:2048'] if kind == 'rsa' else ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']
    san = ','.join('DNS:' + s for s in (sans or [cn]))
    args = ['req', '-x509'] + keyopt + ['-keyout', key, '-out', crt, '-days', '2', '-subj', '/CN=' + cn,
                                        '-addext', 'subjectAltName=' + san]
    args += ['-passout', 'pass:' + password] if password else ['-nodes']
    r = openssl(*args)
    assert r.returncode == 0, r.stderr.decode()
    return crt, key


def cert_der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def client_ctx(minv=None, maxv=None, ciphers=None, alpn=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if minv:
        ctx.minimum_version = minv
    if maxv:
        ctx.maximum_version = maxv
    if ciphers:
        ctx.set_ciphers(ciphers)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def tls_connect(port, sni=None, ctx=None, timeout=5.0, session=None):
    ctx = ctx or client_ctx()
    raw = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    try:
        return ctx.wrap_socket(raw, server_hostname=sni, session=session)
    except Exception:
        raw.close()
        raise


def read_response(s):
    """One HTTP/1.1 response (Content-Length framed) from a socket: (status, headers dict, body bytes)."""
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError('connection closed before the head: %r' % data)
        data += chunk
    head, body = data.split(b'\r\n\r\n', 1)
    lines = head.decode('latin-1').split('\r\n')
    status = int(lines[0].split()[1])
    headers = {}
    for ln in lines[1:]:
        k, v = ln.split(':', 1)
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get('content-length', '0'))
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def https_get(port, path='/', host='localhost', sni='localhost', ctx=None, close=True, session=None):
    """GET over a new TLS connection: (status, headers, body, sslsocket or None)."""
    s = tls_connect(port, sni=sni, ctx=ctx, session=session)
    s.sendall(('GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n' % (path, host, 'Connection: close\r\n' if close else ''))
              .encode())
    st, h, b = read_response(s)
    if close:
        s.close()
        return st, h, b, None
    return st, h, b, s


def make_ca(dirpath, name='ca'):
    """A CA certificate and key: (crt, key)."""
    crt = os.path.join(dirpath, name + '.crt')
    key = os.path.join(dirpath, name + '.key')
    r = openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key,
                '-out', crt, '-days', '2', '-subj', '/CN=Test CA ' + name, '-addext', 'basicConstraints=critical,CA:TRUE',
                '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    assert r.returncode == 0, r.stderr.decode()
    return crt, key


def make_client_cert(dirpath, name, cn, ca, serial, ocsp_url=None):
    """A certificate signed by ca (crt, key): (crt, key). With ocsp_url, an Authority Information Access extension
    names that OCSP responder."""
    key = os.path.join(dirpath, name + '.key')
    csr = os.path.join(dirpath, name + '.csr')
    crt = os.path.join(dirpath, name + '.crt')
    r = openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key,
                '-out', csr, '-subj', '/O=Hayate Test/CN=' + cn)
    assert r.returncode == 0, r.stderr.decode()
    ext = []
    if ocsp_url:
        extfile = os.path.join(dirpath, name + '.ext')
        with open(extfile, 'w') as f:
            f.write('authorityInfoAccess = OCSP;URI:%s\n' % ocsp_url)
        ext = ['-extfile', extfile]
    r = openssl('x509', '-req', '-in', csr, '-CA', ca[0], '-CAkey', ca[1], '-set_serial', str(serial), '-days', '2',
                '-out', crt, *ext)
    assert r.returncode == 0, r.stderr.decode()
    return crt, key


def make_crl(dirpath, ca, revoked):
    """A CRL of ca revoking the certificate files in `revoked`: its path."""
    db = os.path.join(dirpath, 'crl-index.txt')
    open(db, 'w').close()
    with open(os.path.join(dirpath, 'crlnumber'), 'w') as f:
        f.write('01\n')
    cfg = os.path.join(dirpath, 'crl.cnf')
    with open(cfg, 'w') as f:
        f.write('[ca]\ndefault_ca = d\n[d]\ndatabase = %s\ncrlnumber = %s/crlnumber\ndefault_md = sha256\n'
                'default_crl_days = 2\n' % (db, dirpath))
    for crt in revoked:
        r = openssl('ca', '-config', cfg, '-keyfile', ca[1], '-cert', ca[0], '-revoke', crt)
        assert r.returncode == 0, r.stderr.decode()
    out = os.path.join(dirpath, 'ca.crl')
    r = openssl('ca', '-config', cfg, '-keyfile', ca[1], '-cert', ca[0], '-gencrl', '-out', out)
    assert r.returncode == 0, r.stderr.decode()
    return out


def ocsp_index(dirpath, entries):
    """An `openssl ca` index file: entries are (cert_path, 'V' valid | 'R' revoked). Its path."""
    idx = os.path.join(dirpath, 'ocsp-index.txt')
    with open(idx, 'w') as f:
        for cert, state in entries:
            serial = openssl('x509', '-in', cert, '-noout', '-serial').stdout.decode().strip().split('=')[1]
            subj = openssl('x509', '-in', cert, '-noout', '-subject', '-nameopt', 'compat').stdout.decode()
            subj = subj.strip().split('=', 1)[1].strip()
            revoked = '240101000000Z' if state == 'R' else ''
            f.write('%s\t301231000000Z\t%s\t%s\tunknown\t%s\n' % (state, revoked, serial, subj))
    return idx


OCSP_RESPONDER = r'''
import base64, http.server, subprocess, sys, tempfile, os, urllib.parse
port, idx, ca_crt, sig_crt, sig_key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
lf_only = len(sys.argv) > 6
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, der):
        with tempfile.TemporaryDirectory() as d:
            rq, rs = os.path.join(d, 'rq'), os.path.join(d, 'rs')
            open(rq, 'wb').write(der)
            r = subprocess.run(['openssl', 'ocsp', '-index', idx, '-rsigner', sig_crt, '-rkey', sig_key, '-CA', ca_crt,
                                '-reqin', rq, '-respout', rs, '-ndays', '1'], capture_output=True)
            body = open(rs, 'rb').read() if r.returncode == 0 and os.path.exists(rs) else b''
        if not body:
            self.send_response(500); self.end_headers(); return
        if lf_only:  # a head with bare LF line ends (nginx accepts it)
            self.wfile.write(b'HTTP/1.1 200 OK\nConnection: close\nContent-Type: application/ocsp-response\n\n' + body)
            return
        self.send_response(200)
        self.send_header('Content-Type', 'application/ocsp-response')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.answer(base64.b64decode(urllib.parse.unquote(self.path.rsplit('/', 1)[1])))
    def do_POST(self):
        self.answer(self.rfile.read(int(self.headers['Content-Length'])))
    def log_message(self, fmt, *a):
        sys.stderr.write((fmt % a) + '\n'); sys.stderr.flush()
http.server.HTTPServer(('127.0.0.1', port), H).serve_forever()
'''


def ocsp_responder(dirpath, ca, entries, port, signer=None, lf_only=False):
    """An OCSP responder on 127.0.0.1:port for ca's certificates (entries as for ocsp_index), its responses signed
    by ca or by `signer` (a (crt, key) pair): a small HTTP server
    process answering each GET or POST with `openssl ocsp -reqin ... -respout ...` (`openssl ocsp -port` would
    listen on every interface). A Popen; the caller kills it."""
    idx = ocsp_index(dirpath, entries)
    script = os.path.join(dirpath, 'ocsp_responder.py')
    with open(script, 'w') as f:
        f.write(OCSP_RESPONDER)
    log = open(os.path.join(dirpath, 'ocsp-responder.log'), 'wb')
    signer = signer or ca
    p = subprocess.Popen(['python3', script, str(port), idx, ca[0], signer[0], signer[1]] + (['lf'] if lf_only else []),
                         stdout=log, stderr=subprocess.STDOUT)
    for _ in range(100):
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError('the OCSP responder did not start')


def make_ocsp_response(dirpath, ca, cert):
    """A DER OCSP response from ca saying `cert` (signed by ca) is good: its path."""
    idx = os.path.join(dirpath, 'ocsp-index.txt')
    serial = openssl('x509', '-in', cert, '-noout', '-serial').stdout.decode().strip().split('=')[1]
    subj = openssl('x509', '-in', cert, '-noout', '-subject', '-nameopt', 'compat').stdout.decode().strip()
    subj = subj.split('=', 1)[1].strip()
    with open(idx, 'w') as f:
        f.write('V\t301231000000Z\t\t%s\tunknown\t%s\n' % (serial, subj))
    out = os.path.join(dirpath, 'ocsp.der')
    r = openssl('ocsp', '-index', idx, '-rsigner', ca[0], '-rkey', ca[1], '-CA', ca[0], '-issuer', ca[0],
                '-cert', cert, '-respout', out, '-ndays', '1')
    assert r.returncode == 0 and os.path.getsize(out) > 0, r.stderr.decode()
    return out


def conf_with(cert, key, extra=''):
    """An http block with one TLS server on {port} using cert/key, `extra` at server level, answering "ok"."""
    return '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        %s
        location / { return 200 "ok\\n"; }
    }
}
''' % (cert, key, extra)


def line_of(path, needle):
    """The number of the first line of the file at path that holds needle."""
    with open(path) as f:
        for i, ln in enumerate(f, 1):
            if needle in ln:
                return i
    raise AssertionError(needle)


def make_signed_cert(dirpath, name, cn, ca, serial, sans=None, is_ca=False, password=None):
    """A certificate for cn signed by ca ((crt, key)), with DNS/IP subjectAltNames (sans, default [cn]); is_ca makes
    it an intermediate CA. The key is encrypted with `password` when given. (crt, key)."""
    key = os.path.join(dirpath, name + '.key')
    csr = os.path.join(dirpath, name + '.csr')
    crt = os.path.join(dirpath, name + '.crt')
    keyargs = ['-passout', 'pass:' + password] if password else ['-nodes']
    r = openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', *keyargs, '-keyout', key,
                '-out', csr, '-subj', '/CN=' + cn)
    assert r.returncode == 0, r.stderr.decode()
    extfile = os.path.join(dirpath, name + '.ext')
    with open(extfile, 'w') as f:
        if is_ca:
            f.write('basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n')
        else:
            alt = ','.join(('IP:' if s.replace('.', '').isdigit() else 'DNS:') + s for s in (sans or [cn]))
            f.write('subjectAltName=%s\n' % alt)
    r = openssl('x509', '-req', '-in', csr, '-CA', ca[0], '-CAkey', ca[1], '-set_serial', str(serial), '-days', '2',
                '-out', crt, '-extfile', extfile)
    assert r.returncode == 0, r.stderr.decode()
    return crt, key


def _backend_class():
    from helpers.backend import Backend

    class TlsBackend(Backend):
        """helpers.backend.Backend over TLS. Per accepted connection (its number, as Req.conn_no) tls_info holds
        what the handshake saw: 'sni' (the name the client sent, or None), 'reused' (session resumed), 'version',
        'cipher', 'client_cn' (the verified client certificate's CN, or None); failed counts failed handshakes.
        client_ca with require_client asks for (and requires) a client certificate from that CA."""

        def __init__(self, cert, key, client_ca=None, require_client=False, port=None, maxv=None, minv=None):
            super().__init__(port=port)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            if maxv:
                ctx.maximum_version = maxv
            if minv:
                ctx.minimum_version = minv
            if client_ca:
                ctx.load_verify_locations(client_ca)
                ctx.verify_mode = ssl.CERT_REQUIRED if require_client else ssl.CERT_OPTIONAL

            def on_sni(sock, name, c):
                sock.hy_sni = name
            ctx.sni_callback = on_sni
            self.ctx = ctx
            self.tls_info = {}
            self.failed = 0

        def _serve(self, c, no):
            try:
                c.settimeout(10)
                s = self.ctx.wrap_socket(c, server_side=True)
            except (ssl.SSLError, OSError):
                with self.cond:
                    self.failed += 1
                    self.live.discard(c)
                    self.open_connections -= 1
                    self.cond.notify_all()
                c.close()
                return
            cert = s.getpeercert()
            cn = None
            for rdn in (cert or {}).get('subject', ()):
                for k, v in rdn:
                    if k == 'commonName':
                        cn = v
            with self.cond:
                self.tls_info[no] = {'sni': getattr(s, 'hy_sni', None), 'reused': s.session_reused,
                                     'version': s.version(), 'cipher': s.cipher()[0], 'client_cn': cn}
                self.live.discard(c)
                self.live.add(s)
                self.cond.notify_all()
            super()._serve(s, no)

    return TlsBackend


def tls_backend(*args, **kw):
    """A started TLS backend (see TlsBackend in _backend_class); stop() it."""
    return _backend_class()(*args, **kw).start()
