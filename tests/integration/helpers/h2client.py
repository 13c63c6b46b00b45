"""A frame-level HTTP/2 client on python3-h2 for the tests: h2c with prior knowledge or TLS with ALPN h2."""
import socket
import ssl
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings


class H2:
    def __init__(self, port, tls=False, settings=None, timeout=5.0, host='127.0.0.1', rcvbuf=None):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        raw.connect((host, port))
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(['h2'])
            raw = ctx.wrap_socket(raw, server_hostname='localhost')
            assert raw.selected_alpn_protocol() == 'h2'
        self.sock = raw
        cfg = h2.config.H2Configuration(client_side=True, header_encoding='utf-8')
        self.conn = h2.connection.H2Connection(config=cfg)
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.events = []
        self.closed = False
        self.inbuf = b''
        self.after_goaway = False

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_raw(self, data):
        self.sock.sendall(data)

    def read(self, timeout=5.0):
        """Read once (blocking up to timeout); returns new events ([] on timeout); sets closed on EOF."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, TimeoutError):
            return []
        except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
            data = b''
        if not data:
            self.closed = True
            return []
        # frames are fed one at a time: python-h2 treats a received GOAWAY as the end of the connection, while
        # HTTP/2 lets the streams below its last stream id finish; after a GOAWAY the frames are decoded here
        self.inbuf += data
        evs = []
        while len(self.inbuf) >= 9:
            length = int.from_bytes(self.inbuf[0:3], 'big')
            if len(self.inbuf) < 9 + length:
                break
            frame, self.inbuf = self.inbuf[:9 + length], self.inbuf[9 + length:]
            if self.after_goaway:
                evs += self.raw_frame(frame)
                continue
            try:
                got = self.conn.receive_data(frame)
            except h2.exceptions.ProtocolError:
                got = []
            evs += got
            if any(isinstance(e, h2.events.ConnectionTerminated) for e in got):
                self.after_goaway = True
        self.events += evs
        self.flush_quiet()
        return evs

    def raw_ack(self, sid, n):
        upd = n.to_bytes(4, 'big')
        try:
            self.send_raw(b'\x00\x00\x04\x08\x00' + sid.to_bytes(4, 'big') + upd +
                          b'\x00\x00\x04\x08\x00\x00\x00\x00\x00' + upd)
        except OSError:
            self.closed = True

    def raw_frame(self, frame):
        ftype, flags, sid = frame[3], frame[4], int.from_bytes(frame[5:9], 'big') & 0x7fffffff
        payload = frame[9:]
        out = []
        if ftype in (0, 1) and flags & 0x8:  # PADDED
            pad = payload[0]
            payload = payload[1:len(payload) - pad]
        if ftype == 0:
            ev = h2.events.DataReceived()
            ev.stream_id, ev.data, ev.flow_controlled_length = sid, bytes(payload), len(frame) - 9
            ev.raw = True
            out.append(ev)
            if len(frame) > 9:
                self.raw_ack(sid, len(frame) - 9)
        elif ftype == 1:
            if flags & 0x20:  # PRIORITY
                payload = payload[5:]
            ev = h2.events.ResponseReceived()
            ev.stream_id = sid
            ev.headers = [(k.decode() if isinstance(k, bytes) else k, v.decode() if isinstance(v, bytes) else v)
                          for k, v in self.conn.decoder.decode(bytes(payload))]
            out.append(ev)
        elif ftype == 3:
            ev = h2.events.StreamReset()
            ev.stream_id, ev.error_code = sid, int.from_bytes(payload[0:4], 'big')
            out.append(ev)
        elif ftype == 7:
            ev = h2.events.ConnectionTerminated()
            ev.last_stream_id = int.from_bytes(payload[0:4], 'big') & 0x7fffffff
            ev.error_code = int.from_bytes(payload[4:8], 'big')
            out.append(ev)
        if ftype in (0, 1) and flags & 0x1:
            ev = h2.events.StreamEnded()
            ev.stream_id = sid
            out.append(ev)
        return out

    def flush_quiet(self):
        try:
            self.flush()
        except OSError:
            self.closed = True

    def request(self, path, method='GET', headers=None, body=None, authority='localhost', end=True):
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(':method', method), (':path', path), (':scheme', 'http'), (':authority', authority)]
        hdrs += list(headers or [])
        self.conn.send_headers(sid, hdrs, end_stream=end and body is None)
        if body is not None:
            self.send_body(sid, body, end=end)
        self.flush()
        return sid

    def send_body(self, sid, body, end=True):
        """Send body respecting flow control, reading while the window is closed."""
        off = 0
        while off < len(body):
            win = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if win <= 0:
                self.flush()
                if not self.read(5.0) and self.closed:
                    raise EOFError('closed while sending body')
                continue
            chunk = body[off:off + win]
            try:
                self.conn.send_data(sid, chunk)
            except h2.exceptions.StreamClosedError:
                return  # the server answered early and stopped the body (RST_STREAM NO_ERROR)
            off += len(chunk)
            self.flush()
        if end:
            try:
                self.conn.end_stream(sid)
            except h2.exceptions.StreamClosedError:
                return
            self.flush()

    def response(self, sid, timeout=10.0, ack=True):
        """Wait for stream sid to end: (status, headers dict, body bytes). ack: acknowledge data as received."""
        deadline = time.monotonic() + timeout
        status, hdrs, body = None, {}, b''
        i = 0
        while True:
            while i < len(self.events):
                ev = self.events[i]
                i += 1
                if getattr(ev, 'stream_id', None) != sid:
                    continue
                if isinstance(ev, h2.events.ResponseReceived):
                    hdrs = {k: v for k, v in ev.headers}
                    status = int(hdrs[':status'])
                elif isinstance(ev, h2.events.DataReceived):
                    body += ev.data
                    if ack and not getattr(ev, 'raw', False) and ev.flow_controlled_length:
                        if self.after_goaway:
                            self.raw_ack(sid, ev.flow_controlled_length)
                        else:
                            self.conn.acknowledge_received_data(ev.flow_controlled_length, sid)
                            self.flush_quiet()
                elif isinstance(ev, h2.events.StreamEnded):
                    return status, hdrs, body
                elif isinstance(ev, h2.events.StreamReset):
                    raise ConnectionError('stream %d reset: %s' % (sid, ev.error_code))
            if time.monotonic() > deadline:
                raise TimeoutError('no end of stream %d' % sid)
            if self.closed:
                raise EOFError('connection closed before stream %d ended' % sid)
            self.read(max(0.05, deadline - time.monotonic()))

    def get(self, path, **kw):
        return self.response(self.request(path, **kw))

    def wait_for(self, cls, timeout=5.0):
        """Read until an event of type cls arrives (returns it) or the deadline (None)."""
        deadline = time.monotonic() + timeout
        i = 0
        while time.monotonic() < deadline:
            while i < len(self.events):
                if isinstance(self.events[i], cls):
                    return self.events[i]
                i += 1
            if self.closed:
                return None
            self.read(max(0.05, deadline - time.monotonic()))
        return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
