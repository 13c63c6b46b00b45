"""A small DNS server for the resolver tests: UDP (and TCP, for answers too long for UDP) on 127.0.0.1, a free
port, answering from a table the test changes while it runs.

    dns = DnsServer().start()
    dns.set('app.test', a=['127.0.0.1'], ttl=1)        # A records (aaaa=[...] for AAAA), TTL in seconds
    dns.set('alias.test', cname='app.test')            # a CNAME (the target's records are added to the answer
                                                       # when the table has them, as a recursive server does)
    dns.set('gone.test', rcode=3)                      # NXDOMAIN (names not in the table are NXDOMAIN too)
    dns.set('_http._tcp.app.test', srv=[(1, 5, 8080, 'app.test')])  # SRV records (priority, weight, port,
                                                       # target); a target ending in the question's name is
                                                       # written compressed (a pointer into the question)
    dns.drop = {'slow.test'}                           # never answer these names ('*': none)
    dns.delay = 0.5                                    # seconds before each answer
    dns.truncate = {'big.test'}                        # answer over UDP with TC set and no records
    dns.wrong_id = {'evil.test'}                       # answer first with a wrong id, then the right answer
    dns.count('app.test', 'A')                         # questions received for (name, type); type None: all
    dns.stop()
"""
import socket
import struct
import threading
import time

TYPES = {1: 'A', 5: 'CNAME', 28: 'AAAA', 33: 'SRV'}


def _name(msg, off):
    labels = []
    hops = 0
    end = None
    while True:
        n = msg[off]
        if n & 0xc0 == 0xc0:
            if end is None:
                end = off + 2
            off = ((n & 0x3f) << 8) | msg[off + 1]
            hops += 1
            if hops > 20:
                raise ValueError('loop')
            continue
        if n == 0:
            return '.'.join(labels), (end if end is not None else off + 1)
        labels.append(msg[off + 1:off + 1 + n].decode('ascii', 'replace'))
        off += 1 + n


def _enc(name):
    out = b''
    for label in name.rstrip('.').split('.'):
        out += bytes([len(label)]) + label.encode()
    return out + b'\0'


def _enc_against(target, qname):
    """target's labels, ending in a pointer to the question's name (offset 12) or to one of its suffixes when
    target ends with it"""
    labels = target.rstrip('.').split('.') if target.strip('.') else []
    q = qname.rstrip('.').split('.')
    for k in range(len(q)):  # the longest suffix of the question's name that target ends with
        suffix = q[k:]
        if len(suffix) <= len(labels) and [x.lower() for x in labels[len(labels) - len(suffix):]] == suffix:
            off = 12 + sum(1 + len(x) for x in q[:k])
            out = b''
            for label in labels[:len(labels) - len(suffix)]:
                out += bytes([len(label)]) + label.encode()
            return out + struct.pack('!H', 0xc000 | off)
    return _enc(target) if labels else b'\0'


class DnsServer:
    def __init__(self, port=0):
        # UDP and TCP on the same port number: a free UDP port may be taken for TCP (an ephemeral port of some
        # client connection), so with port 0 pairs are tried until both bind; TCP is left out only for a port
        # given by the caller that TCP cannot have
        tries = 100 if port == 0 else 1
        for attempt in range(tries):
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(('127.0.0.1', port))
            self.port = self.udp.getsockname()[1]
            self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                self.tcp.bind(('127.0.0.1', self.port))
                self.tcp.listen(16)
                break
            except OSError:
                self.tcp.close()
                self.tcp = None
                if attempt + 1 < tries:
                    self.udp.close()
        self.table = {}
        self.drop = set()
        self.delay = 0
        self.truncate = set()
        self.wrong_id = set()
        self.queries = []  # (name, type, transport)
        self.lock = threading.Lock()
        self.stopping = False
        self.threads = []

    def start(self):
        for fn in (self._serve_udp,) + ((self._serve_tcp,) if self.tcp else ()):
            t = threading.Thread(target=fn, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def stop(self):
        self.stopping = True
        for s in (self.udp, self.tcp):
            if s:
                try:
                    s.close()
                except OSError:
                    pass

    def set(self, name, a=None, aaaa=None, cname=None, ttl=60, rcode=0, srv=None):
        with self.lock:
            self.table[name.lower()] = {'a': list(a or []), 'aaaa': list(aaaa or []), 'cname': cname, 'ttl': ttl,
                                        'rcode': rcode, 'srv': list(srv or [])}

    def remove(self, name):
        with self.lock:
            self.table.pop(name.lower(), None)

    def count(self, name, qtype=None, transport=None):
        with self.lock:
            return sum(1 for n, t, tr in self.queries if n == name.lower() and (qtype is None or t == qtype)
                       and (transport is None or tr == transport))

    def wait_count(self, name, n, qtype=None, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count(name, qtype) >= n:
                return True
            time.sleep(0.02)
        return False

    # ---- answering

    def _records(self, name, qtype, depth=0):
        """(rcode, [(owner, type, ttl, rdata bytes)])"""
        e = self.table.get(name)
        if e is None:
            return 3, []
        if e['rcode']:
            return e['rcode'], []
        if e['cname']:
            rr = [(name, 5, e['ttl'], _enc(e['cname']))]
            if depth < 8 and e['cname'].lower() in self.table:
                rc, more = self._records(e['cname'].lower(), qtype, depth + 1)
                return (0 if rc == 3 else rc), rr + more
            return 0, rr
        if qtype == 1:
            return 0, [(name, 1, e['ttl'], socket.inet_pton(socket.AF_INET, x)) for x in e['a']]
        if qtype == 28:
            return 0, [(name, 28, e['ttl'], socket.inet_pton(socket.AF_INET6, x)) for x in e['aaaa']]
        if qtype == 33:
            return 0, [(name, 33, e['ttl'], ('srv', pri, w, port, target)) for pri, w, port, target in e['srv']]
        return 0, []

    def _answer(self, msg, transport):
        """None (no answer) or a list of messages to send."""
        if len(msg) < 12:
            return None
        qid, flags, qd = struct.unpack('!HHH', msg[:6])
        if qd != 1:
            return None
        name, off = _name(msg, 12)
        qtype, qclass = struct.unpack('!HH', msg[off:off + 4])
        question = msg[12:off + 4]
        name = name.lower()
        with self.lock:
            self.queries.append((name, TYPES.get(qtype, str(qtype)), transport))
            if name in self.drop or '*' in self.drop:
                return None
            rcode, rrs = self._records(name, qtype)
            trunc = transport == 'udp' and name in self.truncate
            evil = name in self.wrong_id
        out = []
        if evil:
            out.append(struct.pack('!HHHHHH', (qid + 1) & 0xffff, 0x8180, 1, 1, 0, 0) + question +
                       b'\xc0\x0c' + struct.pack('!HHIH', 1, 1, 60, 4) + bytes([10, 6, 6, 6]))
        if trunc:
            rrs = []
        hdr = struct.pack('!HHHHHH', qid, 0x8180 | (0x0200 if trunc else 0) | rcode, 1, len(rrs), 0, 0)
        body = b''
        for owner, t, ttl, rdata in rrs:
            if isinstance(rdata, tuple):  # SRV: the target compressed against the question's name when it can be
                rdata = struct.pack('!HHH', *rdata[1:4]) + _enc_against(rdata[4], name)
            body += _enc(owner) + struct.pack('!HHIH', t, 1, ttl, len(rdata)) + rdata
        out.append(hdr + question + body)
        return out

    def _serve_udp(self):
        while not self.stopping:
            try:
                msg, peer = self.udp.recvfrom(4096)
            except OSError:
                return
            try:
                replies = self._answer(msg, 'udp')
            except Exception:
                replies = None
            if not replies:
                continue
            if self.delay:
                time.sleep(self.delay)
            for r in replies:
                try:
                    self.udp.sendto(r, peer)
                except OSError:
                    return

    def _serve_tcp(self):
        while not self.stopping:
            try:
                c, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._tcp_conn, args=(c,), daemon=True).start()

    def _tcp_conn(self, c):
        c.settimeout(10)
        buf = b''
        try:
            while True:
                while len(buf) < 2 or len(buf) < 2 + struct.unpack('!H', buf[:2])[0]:
                    d = c.recv(4096)
                    if not d:
                        return
                    buf += d
                n = struct.unpack('!H', buf[:2])[0]
                msg, buf = buf[2:2 + n], buf[2 + n:]
                replies = self._answer(msg, 'tcp') or []
                if self.delay:
                    time.sleep(self.delay)
                for r in replies:
                    c.sendall(struct.pack('!H', len(r)) + r)
        except OSError:
            pass
        finally:
            c.close()
