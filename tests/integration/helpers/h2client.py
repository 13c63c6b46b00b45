"""A frame-level HTTP/2 client on python3-h2 for the tests: h2c with prior knowledge or TLS with ALPN h2."""
import socket
import ssl
import time

import h2.config
import h2.connection
import h2.events
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
        try:
            evs = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            evs = []
        self.events += evs
        self.flush_quiet()
        return evs

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
            self.conn.send_data(sid, chunk)
            off += len(chunk)
            self.flush()
        if end:
            self.conn.end_stream(sid)
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
                    if ack:
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
