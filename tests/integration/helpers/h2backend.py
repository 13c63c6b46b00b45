"""A small HTTP/2 backend (python3-h2, h2c with prior knowledge, or TLS with ALPN "h2") for the
proxy_http_version 2 tests.

    be = H2Backend()                   # 127.0.0.1, a free port; H2Backend(tls=(crt, key)) for TLS
    be.handler = lambda req: H2Reply(200, b'hello', headers=[('x-a', '1')], trailers=[('x-t', 'v')])
    be.start(); ...; be.stop()

It records every request (headers as a list of (name, value) str pairs, the body, which connection) and counts
accepted connections. The handler returns an H2Reply; its `action` makes edge cases: 'rst' (RST_STREAM with
`code` instead of an answer, or after the body with `after_body`), 'goaway' (answer, then GOAWAY), 'close'
(close the connection without answering). `window` sets the initial stream window it announces (SETTINGS), so
a request body must wait for its WINDOW_UPDATEs; `chunk` splits the response body into DATA frames of that size.
ping_all() sends a PING on every open connection (from the test's thread); `ping_acks` counts the answers.
"""
import ssl
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from helpers.backend import Backend


class H2Req:
    def __init__(self, headers, conn_no):
        self.headers = headers
        self.body = b''
        self.conn_no = conn_no

    def header(self, name, default=None):
        for k, v in self.headers:
            if k == name.lower():
                return v
        return default

    def header_all(self, name):
        return [v for k, v in self.headers if k == name.lower()]


class H2Reply:
    def __init__(self, status=200, body=b'', headers=None, trailers=None, action=None, code=0, after_body=False,
                 chunk=0):
        self.status, self.body, self.headers, self.trailers = status, body, headers or [], trailers
        self.action, self.code, self.after_body, self.chunk = action, code, after_body, chunk


class H2Backend(Backend):
    def __init__(self, tls=None, window=None):
        super().__init__()
        self.tls = None
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            ctx.set_alpn_protocols(['h2'])
            self.tls = ctx
        self.window = window
        self.alpn = []
        self.handler = lambda req: H2Reply(200, b'ok')
        self.conns = []  # (socket, H2Connection, lock) of the open connections
        self.ping_acks = 0

    def ping_all(self):
        """A PING on every open connection; returns how many were sent."""
        with self.lock:
            conns = list(self.conns)
        for c, conn, lk in conns:
            with lk:
                conn.ping(b'hy-ping!')
                c.sendall(conn.data_to_send())
        return len(conns)

    def _serve(self, c, conn_no):  # Backend's accept loop counts the connection and calls this
        try:
            if self.tls:
                c = self.tls.wrap_socket(c, server_side=True)
                with self.lock:
                    self.alpn.append(c.selected_alpn_protocol())
            self._run(c, conn_no)
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass
        finally:
            c.close()
            with self.cond:
                self.live.discard(c)
                self.open_connections -= 1
                self.cond.notify_all()

    def _run(self, c, conn_no):
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding='utf-8'))
        conn.initiate_connection()
        if self.window is not None:
            conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: self.window})
        c.sendall(conn.data_to_send())
        reqs = {}
        pending = {}  # stream -> remaining response body waiting for window
        lk = threading.Lock()
        with self.lock:
            self.conns.append((c, conn, lk))
        try:
            while not self.stopping:
                data = c.recv(65536)
                if not data:
                    return
                with lk:
                    if self._receive(c, conn, conn_no, data, reqs, pending) == 'close':
                        return
        finally:
            with self.lock:
                self.conns = [x for x in self.conns if x[0] is not c]

    def _receive(self, c, conn, conn_no, data, reqs, pending):
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                reqs[ev.stream_id] = H2Req(list(ev.headers), conn_no)
            elif isinstance(ev, h2.events.DataReceived):
                reqs[ev.stream_id].body += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                req = reqs.pop(ev.stream_id)
                with self.lock:
                    self.requests.append(req)
                if self._answer(c, conn, ev.stream_id, self.handler(req), pending) == 'close':
                    return 'close'
            elif isinstance(ev, h2.events.WindowUpdated):
                self._flush(conn, pending)
            elif isinstance(ev, h2.events.PingAckReceived):
                with self.lock:
                    self.ping_acks += 1
        out = conn.data_to_send()
        if out:
            c.sendall(out)
        return None

    def _answer(self, c, conn, sid, r, pending):
        if r.action == 'close':
            c.sendall(conn.data_to_send())
            return 'close'
        if r.action == 'rst' and not r.after_body:
            conn.reset_stream(sid, r.code)
            return None
        hdrs = [(':status', str(r.status))] + list(r.headers)
        end_head = not r.body and not r.trailers and r.action != 'rst'
        conn.send_headers(sid, hdrs, end_stream=end_head)
        if r.body or r.trailers or r.action == 'rst':
            pending[sid] = [r.body, r]
            self._flush(conn, pending)
        if r.action == 'goaway':
            conn.close_connection(last_stream_id=sid)
            c.sendall(conn.data_to_send())
        return None

    def _flush(self, conn, pending):
        for sid in list(pending):
            body, r = pending[sid]
            while body:
                room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, r.chunk or 1 << 30)
                if room <= 0:
                    break
                conn.send_data(sid, body[:room], end_stream=False)
                body = body[room:]
            pending[sid][0] = body
            if body:
                continue
            del pending[sid]
            if r.action == 'rst':
                conn.reset_stream(sid, r.code)
            elif r.trailers:
                conn.send_headers(sid, list(r.trailers), end_stream=True)
            else:
                conn.end_stream(sid)
