"""A bare threaded TCP peer for tests that speak a protocol by hand (SCGI, FastCGI records, an Upgrade tunnel):
it listens on 127.0.0.1 at a free port (or on a unix socket: path=) and hands each accepted connection to
`serve(conn)` on its own thread.

    class Peer(RawPeer):
        def serve(self, c): ...      # read and answer; close c when done
    p = Peer(); ... p.port ...; p.stop()

Also recv_head(c): the bytes up to a request head's blank line; ending(c): how the proxy ended a connection the
peer has shut down for writing (reset or FIN); fcgi_params(data): a FastCGI PARAMS stream (name-value pairs,
RFC-less "FastCGI 1.0" lengths of 1 or 4 bytes) decoded into a dict of str."""
import socket
import struct
import threading


class RawPeer:
    def __init__(self, backlog=16, path=None):
        """path: listen on that unix socket instead (self.port is then None)."""
        if path:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.bind(path)
            self.port = None
        else:
            self.sock = socket.socket()
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(('127.0.0.1', 0))
            self.port = self.sock.getsockname()[1]
        self.sock.listen(backlog)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        raise NotImplementedError

    def stop(self):
        self.sock.close()


def recv_head(c):
    """Reads until the head's blank line is in: the bytes read, or None if the connection closed before."""
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = c.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def ending(c, timeout=5.0):
    """After our shutdown(SHUT_WR), reads to the end: 'reset' (ECONNRESET), 'fin' (EOF), or 'timeout' (the other
    side kept the connection)."""
    c.settimeout(timeout)
    try:
        while True:
            if not c.recv(65536):
                return 'fin'
    except ConnectionResetError:
        return 'reset'
    except socket.timeout:
        return 'timeout'


def fcgi_params(data):
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
        n, v = ln(), ln()
        env[data[i:i + n].decode()] = data[i + n:i + n + v].decode()
        i += n + v
    return env
