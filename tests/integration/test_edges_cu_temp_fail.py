"""A proxied response that does not fit proxy_buffers while the client is slow goes to a temp file; when the
file cannot be made (proxy_temp_path under a regular file), hayate logs it and keeps the rest in memory: the
client still gets the whole response. (nginx ends such a response early: hayate only.)"""
import os
import socket
import threading

import pytest

from conftest import simple
from helpers.backend import Backend

pytestmark = pytest.mark.hayate_only


def test_temp_file_that_cannot_be_made_keeps_the_body_in_memory(server, prefix):
    body = os.urandom(3 * 1024 * 1024)
    sent = threading.Event()
    be = Backend().start()
    be.handler = lambda req: [Backend.reply(200, body), sent.set]
    try:
        prefix.write('blocker', 'a regular file')
        srv = server(simple('''
        location / {
            proxy_pass http://127.0.0.1:%d;
            proxy_buffers 4 8k;
            proxy_temp_path {tmp}/blocker/sub 1 2;
        }''' % be.port, listen='listen 127.0.0.1:{port} sndbuf=32k;'))
        srv.ignore_log = r'\[crit\].*open\(\) ".*blocker/sub'
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        s.connect(('127.0.0.1', srv.port))
        s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
        # the client reads nothing until the backend sent it all: hayate read the upstream to its end
        assert sent.wait(20), 'the backend is still blocked'
        s.settimeout(20)
        data = b''
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            data += d
        s.close()
        head, _, got = data.partition(b'\r\n\r\n')
        assert head.startswith(b'HTTP/1.1 200'), head
        assert len(got) == len(body) and got == body
        log = srv.error_log()
        assert '[crit]' in log and 'blocker/sub' in log, log
        assert 'an upstream response is buffered to a temporary file' not in log
    finally:
        be.stop()
