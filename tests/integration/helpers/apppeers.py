"""Small FastCGI and uwsgi peers written here, for what real app servers do not let a test observe: which
connection a request came on and the BEGIN_REQUEST flags (fastcgi_keep_conn), stderr records
(fastcgi_catch_stderr), the uwsgi packet's modifiers, a body arriving while the client still sends
(*_request_buffering off), and chosen statuses and fields (X-Accel-Redirect, *_intercept_errors,
*_next_upstream). Launchers return helpers.appservers.Backend objects.

FastCGI peer paths (REQUEST_URI): /conn → "conn=<n> flags=<f> nreq=<k> name=<peer name> src=<client address>"; /status/NNN → that
Status; /stderr/TEXT → TEXT on stderr, then "ok"; /bigstderr/N → N 1,000-byte stderr records in separate writes, then
"ok"; /accel/URI → X-Accel-Redirect: URI; /body → the body's length
and md5, and a file BODYSTARTED in the peer's directory once the first STDIN bytes arrived.
uwsgi peer: answers "m1=<modifier1> m2=<modifier2> <vars as K=V>" in an HTTP-like response.
"""
import os

from helpers.appservers import Backend, _listen

FCGI_PEER = r'''
import hashlib, os, socket, struct, sys, threading, time
listen, name, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
counter = [0]
lock = threading.Lock()
def rec(t, content):
    out = b''
    for i in range(0, max(len(content), 1), 65535):
        part = content[i:i + 65535]
        out += struct.pack('>BBHHBB', 1, t, 1, len(part), 0, 0) + part
    return out
def read_exact(f, n):
    b = f.read(n)
    return b if b is not None and len(b) == n else None
def params(data):
    env, i = {}, 0
    def ln():
        nonlocal i
        if data[i] < 128:
            i += 1
            return data[i - 1]
        v = struct.unpack('>I', data[i:i + 4])[0] & 0x7fffffff
        i += 4
        return v
    while i < len(data):
        kl = ln(); vl = ln()
        env[data[i:i + kl]] = data[i + kl:i + kl + vl]
        i += kl + vl
    return env
def handle(c):
    with lock:
        counter[0] += 1
        conn_id = counter[0]
    f = c.makefile('rb')
    nreq = 0
    while True:
        flags, pdata, body, started = 0, b'', b'', False
        while True:
            h = read_exact(f, 8)
            if h is None:
                c.close(); return
            _, t, rid, clen, pad, _ = struct.unpack('>BBHHBB', h)
            content = read_exact(f, clen) if clen else b''
            if pad:
                read_exact(f, pad)
            if t == 1:
                flags = content[2]
            elif t == 4:
                pdata += content
            elif t == 5:
                if clen == 0:
                    break
                body += content
                if not started:
                    started = True
                    open(os.path.join(workdir, 'BODYSTARTED'), 'w').close()
        nreq += 1
        env = params(pdata)
        uri = env.get(b'REQUEST_URI', b'').decode()
        err = b''
        if uri == '/conn':
            src = c.getpeername()[0] if c.family != socket.AF_UNIX else 'unix'
            head, text = b'Status: 200 OK\r\nContent-Type: text/plain\r\n\r\n', ('conn=%d flags=%d nreq=%d name=%s src=%s' % (conn_id, flags, nreq, name, src)).encode()
        elif uri.startswith('/status/'):
            code = uri.split('/')[2].encode()
            head, text = b'Status: ' + code + b' Custom\r\nContent-Type: text/plain\r\n\r\n', b'app status ' + code + b' from ' + name.encode()
        elif uri.startswith('/stderr/'):
            err = uri[8:].encode()
            head, text = b'Content-Type: text/plain\r\n\r\n', b'ok'
        elif uri.startswith('/bigstderr/'):  # N records of 1,000 bytes on stderr, each in its own write, then "ok"
            for i in range(int(uri[11:])):
                c.sendall(rec(7, b'%03d' % i + b'e' * 997))
                time.sleep(0.005)
            head, text = b'Content-Type: text/plain\r\n\r\n', b'ok'
        elif uri.startswith('/accel/'):
            head, text = b'X-Accel-Redirect: ' + uri[6:].encode() + b'\r\nContent-Type: text/plain\r\n\r\n', b'not this'
        elif uri == '/body':
            head, text = b'Content-Type: text/plain\r\n\r\n', ('%d %s' % (len(body), hashlib.md5(body).hexdigest())).encode()
        else:
            head, text = b'Content-Type: text/plain\r\n\r\n', b'\n'.join(k + b'=' + v for k, v in sorted(env.items()))
        out = b''
        if err:
            out += rec(7, err + b'\n')
        out += rec(6, head + text) + rec(6, b'') + rec(3, b'\0\0\0\0\0\0\0\0')
        c.sendall(out)
        if not flags & 1:
            c.close(); return
def serve():
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
serve()
'''

UWSGI_PEER = r'''
import os, socket, struct, sys, threading
listen = sys.argv[1]
def handle(c):
    f = c.makefile('rb')
    h = f.read(4)
    m1, size, m2 = h[0], struct.unpack('<H', h[1:3])[0], h[3]
    data, i, env = f.read(size), 0, {}
    while i + 2 <= size:  # the vars; what does not parse as one is uwsgi_string's tail
        kl = struct.unpack('<H', data[i:i + 2])[0]
        if i + 2 + kl + 2 > size:
            break
        vl = struct.unpack('<H', data[i + 2 + kl:i + 4 + kl])[0]
        if i + 4 + kl + vl > size:
            break
        env[data[i + 2:i + 2 + kl]] = data[i + 4 + kl:i + 4 + kl + vl]; i += 4 + kl + vl
    tail = data[i:]
    body = f.read(int(env.get(b'CONTENT_LENGTH', b'0') or 0))
    text = b'm1=%d m2=%d ' % (m1, m2) + b' '.join(k + b'=' + v for k, v in sorted(env.items()))
    text += (b' tail=' + tail if tail else b'') + b' body=' + body
    c.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n' + text)
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


def fcgi_peer(tmp, name='a', unix=True):
    """The FastCGI peer above, named `name` (its answers say which peer served), working in TMP/fcgi-NAME/."""
    work = os.path.join(tmp, 'fcgi-' + name)
    os.makedirs(work, exist_ok=True)
    script = os.path.join(work, 'peer.py')
    with open(script, 'w') as f:
        f.write(FCGI_PEER)
    _, addr = _listen(work, 'fcgi', unix)
    b = Backend(['/usr/bin/python3', script, addr, name, work], addr, os.path.join(work, 'peer.log'), work)
    b.workdir = work
    return b


def uwsgi_peer(tmp, unix=True):
    """The uwsgi peer above: echoes the packet's modifiers, its vars, the bytes after them (uwsgi_string), the body."""
    script = os.path.join(tmp, 'uwsgi_peer.py')
    with open(script, 'w') as f:
        f.write(UWSGI_PEER)
    _, addr = _listen(tmp, 'uwsgi-peer', unix)
    return Backend(['/usr/bin/python3', script, addr], addr, os.path.join(tmp, 'uwsgi_peer.log'), tmp)
