"""A deterministic generator of hostile HTTP/2 client byte streams, and a loose reader of what comes back, for the
wire-level robustness test (test_h2_fuzz_wire.py). Everything is built by hand with struct: the connection preface,
frames of every type (valid-looking, then mutated: lengths, flags, padding, stream ids, truncation), and HPACK
blocks encoded from real requests with hpack.Encoder and then damaged (bit flips, unterminated and huge integers,
bad Huffman, indexes past the table, table size updates, huge literals, header list bombs, CONTINUATION chains).

    rng = random.Random(seed)
    case = gen_case(rng)          # Case: .data (bytes), .chunks (write sizes), .kind (str)
    out = run_case(port, case)    # Outcome: .frames, .goaway (error code or None), .statuses, .closed
"""
import random
import socket
import ssl
import struct
import time

import hpack

PREFACE = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
PRIORITY_UPDATE = 0x10
END_STREAM, ACK, END_HEADERS, PADDED, PRIO_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
ERRORS = {0: 'NO_ERROR', 1: 'PROTOCOL_ERROR', 2: 'INTERNAL_ERROR', 3: 'FLOW_CONTROL_ERROR', 4: 'SETTINGS_TIMEOUT',
          5: 'STREAM_CLOSED', 6: 'FRAME_SIZE_ERROR', 7: 'REFUSED_STREAM', 8: 'CANCEL', 9: 'COMPRESSION_ERROR',
          10: 'CONNECT_ERROR', 11: 'ENHANCE_YOUR_CALM', 12: 'INADEQUATE_SECURITY', 13: 'HTTP_1_1_REQUIRED'}
MARK = b'hyfuzzPG'  # the payload of the PING that ends every case: its ACK says the server read everything before


def frame(ftype, flags, sid, payload=b'', length=None):
    """A frame; `length` overrides the 24-bit length field (the payload sent stays as given)."""
    n = len(payload) if length is None else length
    return struct.pack('>I', n & 0xffffff)[1:] + bytes([ftype & 0xff, flags & 0xff]) + \
        struct.pack('>I', sid & 0xffffffff) + payload


def hint(value, prefix_bits, first=0):
    """An HPACK integer (RFC 7541 §5.1) with `first` in the bits above the prefix."""
    mx = (1 << prefix_bits) - 1
    if value < mx:
        return bytes([first | value])
    out = bytearray([first | mx])
    value -= mx
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hstr(s, huffman=False):
    return hint(len(s), 7, 0x80 if huffman else 0) + s


class Case:
    def __init__(self, kind, data, chunks, exact=True):
        self.kind, self.data, self.chunks, self.exact = kind, data, chunks, exact

    def __repr__(self):
        return 'Case(%s, %d bytes)' % (self.kind, len(self.data))


class Gen:
    """State of one connection being generated: the HPACK encoder (its dynamic table stays in step with what the
    server decoded as long as blocks are not damaged) and the stream ids used so far."""

    def __init__(self, rng):
        self.r = rng
        self.enc = hpack.Encoder()
        self.next_sid = 1
        self.used = []
        self.exact = True   # False once a frame's length field disagrees with what follows

    # ---- stream ids
    def new_sid(self):
        sid = self.next_sid
        self.next_sid += 2
        self.used.append(sid)
        return sid

    def sid(self):
        """A stream id, usually a fresh odd one, sometimes 0/even/huge/reserved-bit/reused/decreasing."""
        r = self.r.random()
        if r < 0.55 or not self.used:
            return self.new_sid()
        if r < 0.65:
            return 0
        if r < 0.72:
            return self.r.randrange(2, 64, 2)
        if r < 0.78:
            return self.r.choice([0x7fffffff, 0x7ffffffd, 0xffffffff, 0x80000000 | self.next_sid])
        if r < 0.9:
            return self.r.choice(self.used)                 # reused
        return max(1, self.used[-1] - 2 * self.r.randrange(1, 4)) | 1  # decreasing

    # ---- header blocks
    def request_fields(self):
        r = self.r
        method = r.choice(['GET', 'GET', 'GET', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'CONNECT', 'get', ''])
        path = r.choice(['/', '/', '/index.html', '/big.bin', '/echo', '/a?b=c', '/%zz', '*', '', 'noslash', '/' + 'p' * r.randrange(1, 3000),
                         '/../../etc/passwd', '/a\x00b'])
        fields = [(':method', method), (':scheme', r.choice(['http', 'http', 'https', 'ftp', ''])), (':path', path),
                  (':authority', r.choice(['localhost', 'localhost', 'a' * 300, '', 'x:99999', '[::1]']))]
        if r.random() < 0.1:
            del fields[r.randrange(len(fields))]
        if r.random() < 0.08:
            fields.append(r.choice(fields))                 # a duplicated pseudo-header
        if r.random() < 0.08:
            fields.append((':bogus', 'x'))
        for _ in range(r.choice([0, 0, 1, 2, 5, 40])):
            fields.append(r.choice([
                ('user-agent', 'fuzz'), ('accept', '*/*'), ('cookie', 'a=b'), ('cookie', 'c=' + 'd' * r.randrange(200)),
                ('x-h' + str(r.randrange(1000)), 'v' * r.randrange(0, 100)), ('content-length', r.choice(['0', '5', '-1', 'x', '99999999999999999999'])),
                ('connection', 'close'), ('te', r.choice(['trailers', 'gzip'])), ('transfer-encoding', 'chunked'),
                ('Upper-Case', 'x'), ('host', 'localhost'), ('bad name', 'v'), ('x', 'a\r\nb'), ('x', ' lead'),
                ('', 'empty-name'), ('x-bin', '\x01\x7f\xff'), ('keep-alive', '1'), ('upgrade', 'h2c')]))
        if r.random() < 0.06 and len(fields) > 1:
            r.shuffle(fields)                               # pseudo-headers after regular ones
        return fields

    def valid_block(self, fields=None):
        fields = fields or [(':method', 'GET'), (':scheme', 'http'), (':path', '/'), (':authority', 'localhost')]
        try:
            return self.enc.encode(fields, huffman=self.r.random() < 0.5)
        except Exception:
            return self.enc.encode([(':method', 'GET'), (':scheme', 'http'), (':path', '/'), (':authority', 'l')])

    def bad_block(self):
        """A header block encoded from a request and then damaged (or a hostile block built by hand)."""
        r = self.r
        blk = bytearray(self.valid_block(self.request_fields()))
        m = r.randrange(14)
        if m == 0:                                           # bit flips
            for _ in range(r.randrange(1, 4)):
                if blk:
                    blk[r.randrange(len(blk))] ^= 1 << r.randrange(8)
        elif m == 1:                                         # truncated anywhere
            blk = blk[:r.randrange(len(blk) + 1)]
        elif m == 2:                                         # an integer that never ends
            blk += bytes([r.choice([0xff, 0x7f, 0x3f, 0x1f, 0x0f])]) + b'\xff' * r.randrange(0, 12)
        elif m == 3:                                         # an integer past 2^32 / 2^64
            blk += b'\xff' + b'\xff' * r.randrange(5, 12) + b'\x7f'
        elif m == 4:                                         # index past the static + dynamic table
            blk += hint(r.choice([0, 62, 70, 200, 5000, 1 << 31]), 7, 0x80)
        elif m == 5:                                         # Huffman strings: bad padding, EOS, long padding
            bad = r.choice([b'\x18', b'\x1f\xff', b'\xff\xff\xff\xff', b'\xff\xff\xff\xfc', b'\x00', b'\xfe',
                            b'\x1f\xff\xff\xff\xff'])
            blk += b'\x00' + hstr(b'x-huff') + hint(len(bad), 7, 0x80) + bad if r.random() < 0.5 else \
                b'\x00' + hint(len(bad), 7, 0x80) + bad + hstr(b'v')
        elif m == 6:                                         # table size update mid-block, or huge at the start
            upd = hint(r.choice([0, 100, 4096, 4097, 1 << 20, 1 << 31]), 5, 0x20)
            blk = blk + upd + bytes(self.valid_block()) if r.random() < 0.5 else upd + blk
        elif m == 7:                                         # literal with a huge length
            blk += b'\x00' + hint(r.choice([1 << 14, 1 << 20, 1 << 30, (1 << 32) + 3]), 7, r.choice([0, 0x80])) + b'abc'
        elif m == 8:                                         # header list bomb: many tiny fields
            n = r.choice([500, 2000, 8000])
            blk += b'\x40' + hstr(b'x-a') + hstr(b'b') + b'\xbe' * n
        elif m == 9:                                         # index 0, empty name, literal never-indexed forms
            blk += r.choice([b'\x80', b'\x00\x00\x00', b'\x10\x00\x01v', b'\x40\x00\x00', b'\x0f\x00', b'\x4f'])
        elif m == 10:                                        # a big field that fills and evicts the table
            blk += b'\x40' + hstr(b'x-big') + hstr(b'v' * r.choice([4000, 4064, 5000, 70000]))
        elif m == 11:                                        # random bytes
            blk = bytearray(r.randbytes(r.randrange(1, 60)))
        elif m == 12:                                        # random bytes after a valid start
            blk += r.randbytes(r.randrange(1, 30))
        else:                                                # a valid request with hostile field values
            blk = bytearray(self.valid_block(self.request_fields()))
        return bytes(blk)

    def block(self):
        return self.valid_block(self.request_fields()) if self.r.random() < 0.5 else self.bad_block()

    # ---- frames
    def pad(self, flags, payload):
        """Applies PADDED: a pad length byte and padding, sometimes a pad length larger than the payload."""
        r = self.r
        if not flags & PADDED:
            return payload
        if r.random() < 0.3:
            return bytes([r.randrange(len(payload) + 1, 256) if len(payload) < 255 else 255]) + payload
        n = r.randrange(0, 40)
        return bytes([n]) + payload + b'\x00' * n

    def headers_frames(self, sid=None, block=None, end_stream=None):
        """HEADERS (+ CONTINUATIONs) for one block; random PADDED/PRIORITY/END_STREAM, split or not."""
        r = self.r
        sid = self.sid() if sid is None else sid
        block = self.block() if block is None else block
        flags = (END_STREAM if (r.random() < 0.7 if end_stream is None else end_stream) else 0)
        if r.random() < 0.15:
            flags |= PADDED
        prio = b''
        if r.random() < 0.15:
            flags |= PRIO_FLAG
            dep = r.choice([0, sid, sid + 2, 0x80000000 | 1, r.randrange(1 << 31)])
            prio = struct.pack('>IB', dep & 0xffffffff, r.randrange(256))
        if r.random() < 0.25 and block:                     # CONTINUATION chain
            how = r.random()
            if how < 0.3:
                size = 1
            else:
                size = r.randrange(1, max(2, len(block)))
            pieces = [block[i:i + size] for i in range(0, len(block), size)]
            if how > 0.85:
                pieces += [b''] * r.choice([10, 100, 1000])  # empty CONTINUATION flood
            if len(pieces) > 3000:
                pieces = pieces[:3000]
            out = frame(HEADERS, flags, sid, self.pad(flags, prio + pieces[0]))
            for i, p in enumerate(pieces[1:]):
                last = i == len(pieces) - 2
                cflags = END_HEADERS if last and r.random() < 0.9 else 0
                csid = sid if r.random() < 0.95 else self.sid()
                out += frame(CONTINUATION, cflags | (r.randrange(256) & ~END_HEADERS if r.random() < 0.05 else 0),
                             csid, p)
            if len(pieces) == 1:
                out = frame(HEADERS, flags | END_HEADERS, sid, self.pad(flags, prio + pieces[0]))
            return out
        if r.random() < 0.95:
            flags |= END_HEADERS
        return frame(HEADERS, flags, sid, self.pad(flags, prio + block))

    def settings_payload(self):
        r = self.r
        out = b''
        for _ in range(r.choice([0, 1, 2, 3, 6, 40])):
            ident = r.choice([1, 2, 3, 4, 5, 6, 8, 9, 0, 7, 0x10, 0xffff])
            val = r.choice([0, 1, 100, 4096, 16383, 16384, 65535, 65536, (1 << 24) - 1, 1 << 24, (1 << 31) - 1,
                            1 << 31, 0xffffffff, 2])
            out += struct.pack('>HI', ident, val)
        return out

    def one_frame(self):
        """One frame of a random type, valid-looking or lightly broken."""
        r = self.r
        t = r.choice([DATA, DATA, HEADERS, HEADERS, HEADERS, PRIORITY, RST_STREAM, SETTINGS, SETTINGS, PUSH_PROMISE,
                      PING, GOAWAY, WINDOW_UPDATE, WINDOW_UPDATE, CONTINUATION, PRIORITY_UPDATE, 'unknown'])
        flags = r.randrange(256) if r.random() < 0.1 else None
        if t == DATA:
            sid = self.sid()
            f = (END_STREAM if r.random() < 0.5 else 0) | (PADDED if r.random() < 0.2 else 0)
            body = r.randbytes(r.choice([0, 1, 10, 1000, 16384, 16375]))
            return frame(DATA, f if flags is None else flags, sid, self.pad(f, body))
        if t == HEADERS:
            return self.headers_frames()
        if t == PRIORITY:
            sid = self.sid()
            pl = struct.pack('>IB', r.choice([0, sid, sid + 2, 0x80000000 | sid, r.randrange(1 << 32)]) & 0xffffffff, r.randrange(256))
            pl = r.choice([pl, pl, pl, pl[:4], pl + b'\x00'])
            return frame(PRIORITY, flags or 0, sid, pl)
        if t == RST_STREAM:
            pl = struct.pack('>I', r.choice([0, 1, 8, 0xff, 0xffffffff]))
            pl = r.choice([pl, pl, pl[:3], pl + b'\x00'])
            return frame(RST_STREAM, flags or 0, self.sid(), pl)
        if t == SETTINGS:
            f = ACK if r.random() < 0.2 else 0
            pl = self.settings_payload() if not f or r.random() < 0.3 else b''
            if r.random() < 0.15:
                pl += b'\x00' * r.randrange(1, 6)            # not a multiple of 6
            return frame(SETTINGS, f if flags is None else flags, 0 if r.random() < 0.9 else self.sid(), pl)
        if t == PUSH_PROMISE:
            return frame(PUSH_PROMISE, flags or END_HEADERS, self.sid(), struct.pack('>I', r.randrange(2, 100, 2)) +
                         self.valid_block())
        if t == PING:
            pl = r.choice([b'\x00' * 8, r.randbytes(8), b'\x00' * 7, b'\x00' * 9])
            return frame(PING, (ACK if r.random() < 0.2 else 0) if flags is None else flags,
                         0 if r.random() < 0.9 else self.sid(), pl)
        if t == GOAWAY:
            pl = struct.pack('>II', r.choice([0, 1, 0x7fffffff, 0xffffffff]), r.choice([0, 1, 2, 11, 0xffffffff]))
            pl = r.choice([pl, pl + b'debug data', pl[:7], pl + r.randbytes(500)])
            return frame(GOAWAY, flags or 0, 0 if r.random() < 0.9 else self.sid(), pl)
        if t == WINDOW_UPDATE:
            pl = struct.pack('>I', r.choice([0, 1, 65535, 0x7fffffff, 0xffffffff, 1 << 30]))
            pl = r.choice([pl, pl, pl, pl[:3], pl + b'\x00'])
            sid = 0 if r.random() < 0.4 else self.sid()
            out = frame(WINDOW_UPDATE, flags or 0, sid, pl)
            if r.random() < 0.2:                              # overflow: max twice
                out += frame(WINDOW_UPDATE, 0, sid, struct.pack('>I', 0x7fffffff)) * 2
            return out
        if t == CONTINUATION:
            return frame(CONTINUATION, END_HEADERS if flags is None else flags, self.sid(), self.valid_block())
        if t == PRIORITY_UPDATE:
            pl = struct.pack('>I', r.choice([1, 3, 0, 0x7fffffff, self.next_sid])) + \
                r.choice([b'u=3, i', b'u=0', b'u=9', b'garbage(', b'', b'i=?2', b'u=' + b'7' * 100])
            pl = r.choice([pl, pl, pl[:2]])
            return frame(PRIORITY_UPDATE, flags or 0, 0 if r.random() < 0.8 else self.sid(), pl)
        return frame(r.randrange(0x0a, 0x100), r.randrange(256), r.choice([0, self.sid()]), r.randbytes(r.randrange(0, 50)))

    def length_mutation(self, f):
        """The same frame with a lying length field: shorter, longer, past the max frame size."""
        r = self.r
        n = len(f) - 9
        m = r.randrange(4)
        if m == 0:
            new = max(0, n - r.randrange(1, 10))
        elif m == 1:
            new = n + r.randrange(1, 10)
        elif m == 2:
            new = r.choice([16385, 1 << 20, (1 << 24) - 1])
        else:
            new = r.randrange(1 << 24)
        self.exact = False
        return struct.pack('>I', new)[1:] + f[3:]

    def spoil(self, frames):
        """One of the frames spoiled: random flags, a lying length, another stream, dropped or doubled."""
        r = self.r
        j = r.randrange(len(frames))
        f = frames[j]
        m = r.randrange(5)
        if m == 0:
            f = f[:4] + bytes([r.randrange(256)]) + f[5:]
        elif m == 1:
            f = self.length_mutation(f)
        elif m == 2:
            f = f[:5] + struct.pack('>I', self.sid() & 0xffffffff) + f[9:]
        elif m == 3:
            f = b''
        else:
            f = f + f
        return frames[:j] + [f] + frames[j + 1:]

    def body_request(self):
        """POST with DATA frames (padded or not) and maybe trailers; usually one frame spoiled."""
        r = self.r
        sid = self.new_sid()
        sizes = [r.choice([0, 1, 100, 1000, 5000, 16384]) for _ in range(r.randrange(1, 6))]
        fields = [(':method', 'POST'), (':scheme', 'http'), (':path', r.choice(['/echo', '/', '/index.html'])),
                  (':authority', 'localhost')]
        if r.random() < 0.6:
            fields.append(('content-length', str(sum(sizes) + r.choice([0, 0, 0, 1, -1]))))
        frames = [frame(HEADERS, END_HEADERS, sid, self.valid_block(fields))]
        trailers = r.random() < 0.3
        for k, n in enumerate(sizes):
            fl = END_STREAM if k == len(sizes) - 1 and not trailers else 0
            if r.random() < 0.2:
                fl |= PADDED
            frames.append(frame(DATA, fl, sid, self.pad(fl, r.randbytes(n))))
        if trailers:
            tr = [('x-trailer', 'v')] if r.random() < 0.7 else [(':path', '/x')]
            frames.append(frame(HEADERS, END_HEADERS | END_STREAM, sid, self.valid_block(tr)))
        if r.random() < 0.3:
            frames.insert(r.randrange(1, len(frames) + 1), frame(WINDOW_UPDATE, 0, sid, struct.pack('>I', 1000)))
        if r.random() < 0.7:
            frames = self.spoil(frames)
        return b''.join(frames)

    def dyn_requests(self):
        """Requests whose header blocks index into the dynamic table (resized by updates on the way), the client's
        SETTINGS_HEADER_TABLE_SIZE changed for the server's encoder, and a last block that may be damaged."""
        r = self.r
        out = frame(SETTINGS, 0, 0, struct.pack('>HI', 1, r.choice([0, 1, 64, 256, 4096, 1 << 20])))
        for _ in range(r.randrange(2, 7)):
            if r.random() < 0.3:
                self.enc.header_table_size = r.choice([0, 32, 100, 4096, 4096, 8192])
            fields = [(':method', 'GET'), (':scheme', 'http'), (':path', r.choice(['/', '/index.html', '/a'])),
                      (':authority', 'localhost')]
            fields += [('x-d%d' % r.randrange(20), 'v' * r.randrange(0, 300)) for _ in range(r.randrange(0, 12))]
            out += frame(HEADERS, END_HEADERS | END_STREAM, self.new_sid(), self.valid_block(fields))
        if r.random() < 0.6:
            out += self.headers_frames(sid=self.new_sid(), block=self.bad_block())
        return out

    def flow(self):
        """Responses held by flow control: small windows, GET of a big file, WINDOW_UPDATEs, the initial window
        changed under open streams (up to overflow), a stream reset mid-response, the connection closed on it."""
        r = self.r
        out = frame(SETTINGS, 0, 0, struct.pack('>HI', 4, r.choice([0, 1, 100, 16384])) +
                    (struct.pack('>HI', 5, r.choice([16384, 16777215])) if r.random() < 0.5 else b''))
        sids = []
        for _ in range(r.randrange(1, 5)):
            sid = self.new_sid()
            sids.append(sid)
            out += frame(HEADERS, END_HEADERS | END_STREAM, sid, self.valid_block(
                [(':method', r.choice(['GET', 'GET', 'HEAD'])), (':scheme', 'http'),
                 (':path', r.choice(['/big.bin', '/big.bin', '/'])), (':authority', 'localhost')]))
        for _ in range(r.randrange(0, 8)):
            m = r.randrange(5)
            if m == 0:
                out += frame(WINDOW_UPDATE, 0, r.choice([0] + sids), struct.pack('>I', r.choice([1, 100, 65535, 1 << 20])))
            elif m == 1:
                out += frame(SETTINGS, 0, 0, struct.pack('>HI', 4, r.choice([0, 1, 65535, 0x7fffffff, 0x80000000])))
            elif m == 2:
                out += frame(RST_STREAM, 0, r.choice(sids), struct.pack('>I', r.choice([0, 8])))
            elif m == 3:
                out += frame(WINDOW_UPDATE, 0, r.choice(sids), struct.pack('>I', 0x7fffffff))
            else:
                out += frame(PRIORITY, 0, r.choice(sids), struct.pack('>IB', r.choice([0] + sids), r.randrange(256)))
        return out

    def flood(self):
        """Many small frames: streams opened and reset at once (rapid reset), more streams than allowed, PINGs,
        SETTINGS, empty DATA, PRIORITY, WINDOW_UPDATE, unknown frames."""
        r = self.r
        n = r.choice([50, 200, 1000, 3000])
        m = r.randrange(7)
        out = b''
        for _ in range(n):
            if m == 0:
                sid = self.new_sid()
                out += frame(HEADERS, END_HEADERS | END_STREAM, sid, self.valid_block()) + \
                    frame(RST_STREAM, 0, sid, struct.pack('>I', 8))
            elif m == 1:
                out += frame(HEADERS, END_HEADERS, self.new_sid(), self.valid_block())
            elif m == 2:
                out += frame(PING, 0, 0, b'\x00' * 8)
            elif m == 3:
                out += frame(SETTINGS, 0, 0, struct.pack('>HI', 3, 100))
            elif m == 4:
                out += frame(DATA, 0, 1, b'')
            elif m == 5:
                out += frame(PRIORITY, 0, r.randrange(1, 1 << 20) | 1, struct.pack('>IB', 0, 16))
            else:
                out += frame(r.randrange(0x0a, 0x100), 0, 0, b'')
            if len(out) > 200000:
                break
        if m == 4:
            out = frame(HEADERS, END_HEADERS, 1, self.valid_block(
                [(':method', 'POST'), (':scheme', 'http'), (':path', '/echo'), (':authority', 'localhost')])) + out
        return out

    def oversized(self):
        """A frame longer than the default SETTINGS_MAX_FRAME_SIZE, actually sent: FRAME_SIZE_ERROR territory."""
        r = self.r
        n = r.choice([16385, 16400, 20000])
        t = r.choice([DATA, HEADERS, HEADERS, SETTINGS, PING, WINDOW_UPDATE, CONTINUATION, PRIORITY, 'x'])
        if t == 'x':
            t = r.randrange(0x0a, 0x100)
        sid = 0 if t in (SETTINGS, PING) else self.sid()
        pl = bytes(self.valid_block()) if t == HEADERS else b''
        return frame(t, END_HEADERS if t == HEADERS else 0, sid, pl + b'\x00' * (n - len(pl)))


def _chunks(rng, n):
    """Write sizes covering n bytes: one write, or up to 8 random cuts, or byte-by-byte for short streams."""
    r = rng.random()
    if r < 0.6 or n < 2:
        return [n]
    if r < 0.65 and n <= 200:
        return [1] * n
    cuts = sorted(set(rng.randrange(1, n) for _ in range(rng.randrange(1, 8))))
    return [b - a for a, b in zip([0] + cuts, cuts + [n])]


def gen_case(rng):
    """One client byte stream: the preface, (usually) SETTINGS, then frames; the kind names the recipe."""
    g = Gen(rng)
    r = rng.random()
    out = PREFACE
    if rng.random() < 0.9:
        out += frame(SETTINGS, 0, 0, g.settings_payload() if rng.random() < 0.3 else b'')
    if rng.random() < 0.3:
        out += frame(SETTINGS, ACK, 0)
    if r < 0.15:                                             # valid requests, with harmless frames around
        kind = 'valid'
        for _ in range(rng.randrange(1, 4)):
            if rng.random() < 0.3:
                out += rng.choice([frame(PING, 0, 0, b'\x01' * 8), frame(WINDOW_UPDATE, 0, 0, b'\x00\x01\x00\x00'),
                                   frame(PRIORITY, 0, g.next_sid + 2, b'\x00\x00\x00\x00\x10')])
            out += frame(HEADERS, END_HEADERS | END_STREAM, g.new_sid(), g.valid_block(
                [(':method', 'GET'), (':scheme', 'http'), (':path', rng.choice(['/', '/', '/index.html', '/big.bin'])),
                 (':authority', 'localhost'), ('user-agent', 'fuzz')]))
    elif r < 0.25:                                           # a request body (and trailers), one frame spoiled
        kind = 'body'
        out += g.body_request()
    elif r < 0.3:                                            # requests sharing the dynamic table, then a bad one
        kind = 'dyn'
        out += g.dyn_requests()
    elif r < 0.35:                                           # responses held by flow control
        kind = 'flow'
        out += g.flow()
    elif r < 0.38:                                           # floods of small frames
        kind = 'flood'
        out += g.flood()
    elif r < 0.52:                                           # a valid request, then a damaged header block
        kind = 'hpack'
        if rng.random() < 0.5:
            out += frame(HEADERS, END_HEADERS | END_STREAM, g.new_sid(), g.valid_block())
        out += g.headers_frames(sid=g.new_sid(), block=g.bad_block())
    elif r < 0.66:                                           # a sequence of random frames
        kind = 'frames'
        for _ in range(rng.randrange(1, 10)):
            out += g.one_frame()
    elif r < 0.72:                                           # a good stream damaged byte by byte after the preface
        kind = 'bytes'
        good = bytearray(rng.choice([g.body_request, g.dyn_requests, g.flow])())
        for _ in range(rng.randrange(1, 6)):
            if not good:
                break
            at = rng.randrange(len(good))
            m = rng.randrange(4)
            if m == 0:
                good[at] ^= 1 << rng.randrange(8)
            elif m == 1:
                good[at] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
            elif m == 2:
                del good[at:at + rng.randrange(1, 4)]
            else:
                good[at:at] = rng.randbytes(rng.randrange(1, 4))
        out += bytes(good)
        g.exact = False
    elif r < 0.84:                                           # a frame with a lying length, or one too big
        kind = 'length'
        if rng.random() < 0.4:
            out += g.oversized()
        else:
            out += g.length_mutation(g.one_frame())
        if rng.random() < 0.5:
            out += g.one_frame()
    elif r < 0.93:                                           # truncated mid-frame
        kind = 'truncated'
        body = b''.join(g.one_frame() for _ in range(rng.randrange(1, 4)))
        out += body[:rng.randrange(1, len(body))] if len(body) > 1 else body
        g.exact = False
    else:                                                    # a broken preface or plain garbage
        kind = 'preface'
        m = rng.randrange(4)
        if m == 0:
            p = bytearray(PREFACE)
            p[rng.randrange(len(p))] ^= 1 << rng.randrange(8)
            out = bytes(p) + out[len(PREFACE):]
        elif m == 1:
            out = PREFACE[:rng.randrange(1, len(PREFACE))]
            g.exact = False
        elif m == 2:
            out = rng.randbytes(rng.randrange(1, 200))
            g.exact = False
        else:
            out = PREFACE + rng.randbytes(rng.randrange(1, 200))
            g.exact = False
    return Case(kind, out, _chunks(rng, len(out)), g.exact)


class Outcome:
    def __init__(self):
        self.frames = []        # (type, flags, sid, payload)
        self.goaway = None      # error code of the first GOAWAY
        self.statuses = []      # :status of the responses decoded
        self.closed = False     # the server closed the connection
        self.send_error = None  # the server closed while we were still sending
        self.bad_hpack = False  # a response header block that python's hpack could not decode

    def __repr__(self):
        return 'Outcome(goaway=%s, statuses=%s, closed=%s, frames=%d)' % (
            ERRORS.get(self.goaway, self.goaway), self.statuses, self.closed, len(self.frames))


def parse(buf, out):
    """Frames of buf into out.frames, loosely; returns the unparsed rest."""
    while len(buf) >= 9:
        n = int.from_bytes(buf[:3], 'big')
        if len(buf) < 9 + n:
            break
        out.frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], 'big') & 0x7fffffff, buf[9:9 + n]))
        buf = buf[9 + n:]
    return buf


def decode(out):
    """Fills goaway and statuses from the frames read (a response's header block is decoded with the server's table)."""
    dec = hpack.Decoder()
    dec.max_header_list_size = 1 << 20
    dec.max_allowed_table_size = 1 << 20  # the largest SETTINGS_HEADER_TABLE_SIZE the generator sends
    block = None
    for t, fl, sid, pl in out.frames:
        if t == GOAWAY and out.goaway is None and len(pl) >= 8:
            out.goaway = struct.unpack('>I', pl[4:8])[0]
        if t == HEADERS:
            p = pl
            if fl & PADDED and p:
                p = p[1:len(p) - p[0]] if p[0] < len(p) else b''
            if fl & PRIO_FLAG:
                p = p[5:]
            block = p
            if not fl & END_HEADERS:
                continue
        elif t == CONTINUATION and block is not None:
            block += pl
            if not fl & END_HEADERS:
                continue
        else:
            continue
        try:
            for k, v in dec.decode(block):
                if k in (':status', b':status'):
                    out.statuses.append(int(v))
        except Exception:
            out.bad_hpack = True
        block = None


def connect(port, tls=False, timeout=2.0):
    s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(['h2'])
        s = ctx.wrap_socket(s, server_hostname='localhost')
    return s


def run_case(port, case, tls=False, read_timeout=1.0):
    """Sends the case (in its write sizes) and a marking PING, reads until the PING's ACK (then briefly for the
    rest), the server's close or read_timeout; half-closes to let a server waiting for more bytes see the end.
    The timeout bounds the reading; it is not a verdict."""
    out = Outcome()
    s = connect(port, tls)
    buf = b''
    try:
        data = case.data + frame(PING, 0, 0, MARK)
        pos = 0
        try:
            for n in case.chunks:
                s.sendall(data[pos:pos + n])
                pos += n
            s.sendall(data[pos:])
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError) as e:
            out.send_error = e
        deadline = time.monotonic() + read_timeout
        half_closed = False
        acked = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if acked:
                left = min(left, 0.05)
            elif not half_closed and not tls:
                left = min(left, 0.3)
            s.settimeout(left)
            try:
                got = s.recv(65536)
            except (socket.timeout, TimeoutError):
                if acked:
                    break
                if not half_closed and not tls:
                    half_closed = True
                    try:
                        s.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                continue
            except (ConnectionResetError, ssl.SSLError, OSError):
                got = b''
            if not got:
                out.closed = True
                break
            buf = parse(buf + got, out)
            if not acked and any(t == PING and fl & ACK and pl == MARK for t, fl, _, pl in out.frames):
                acked = True
    finally:
        s.close()
    decode(out)
    return out


def cases(seed, n):
    """The n cases of a run, deterministically from seed."""
    rng = random.Random(seed)
    return [gen_case(rng) for _ in range(n)]
