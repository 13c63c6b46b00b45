"""Listening sockets inherited through the environment (process/upgrade.c; nginx's NGINX variable, hayate's
HAYATE): a socket already bound to a configured address is used as it is (no bind, so no EADDRINUSE even though
the address is taken), one of an address the configuration does not name is not used, and a datagram socket
ends the list with nginx's emerg."""
import os
import re
import signal
import socket
import subprocess

import pytest

from conftest import IS_NGINX, simple, wait_port
from helpers.process import wait_until

VAR = 'NGINX' if IS_NGINX else 'HAYATE'


def start(hy_bin, prefix, fds, value):
    conf = prefix.conf('''daemon off;
master_process on;
worker_processes 1;
user root;
error_log {tmp}/logs/error.log info;
pid {tmp}/logs/hy.pid;
events {}
''' + simple('location / { return 200 "inherited\\n"; }'), full=True)
    env = dict(os.environ)
    env[VAR] = value
    err = open(prefix.path('logs/stderr.txt'), 'wb')
    p = subprocess.Popen([hy_bin, '-p', prefix.tmp + '/', '-c', conf], env=env, pass_fds=fds,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=prefix.tmp)
    err.close()
    return p


def stop(p):
    p.send_signal(signal.SIGQUIT)
    try:
        return p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def get(port):
    c = socket.create_connection(('127.0.0.1', port), timeout=5)
    c.sendall(b'GET / HTTP/1.0\r\nHost: x\r\n\r\n')
    data = b''
    while True:
        d = c.recv(4096)
        if not d:
            break
        data += d
    c.close()
    return data


def test_inherited_socket_of_a_configured_address_is_used(hy_bin, prefix):
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(('127.0.0.1', prefix.port))
    held.listen(16)
    other = socket.socket()  # an address the configuration does not name
    other.bind(('127.0.0.1', 0))
    other.listen(1)
    p = start(hy_bin, prefix, [held.fileno(), other.fileno()], '%d;%d;' % (held.fileno(), other.fileno()))
    try:
        held.close()  # only the server's copy is left
        assert wait_port(prefix.port, p), open(prefix.path('logs/stderr.txt')).read() + prefix.error_log()
        assert get(prefix.port).endswith(b'\r\n\r\ninherited\n')
        if not IS_NGINX:
            assert wait_until(lambda: re.search(r'using 2 inherited listening sockets', prefix.error_log()), 5), \
                prefix.error_log()
        assert 'Address already in use' not in prefix.error_log()
    finally:
        rc = stop(p)
        other.close()
    assert rc == 0


@pytest.mark.hayate_only  # nginx 1.22 does not check the socket's type
def test_datagram_socket_ends_the_list(hy_bin, prefix):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(('127.0.0.1', 0))
    p = start(hy_bin, prefix, [udp.fileno()], '%d;' % udp.fileno())
    try:
        assert wait_port(prefix.port, p)
        assert get(prefix.port).endswith(b'inherited\n')
        err = open(prefix.path('logs/stderr.txt')).read() + prefix.error_log()
        assert re.search(r'\[emerg\] .*invalid socket number "%d" in %s environment variable, ignoring the rest '
                         r'of the variable' % (udp.fileno(), VAR), err), err
    finally:
        rc = stop(p)
        udp.close()
    assert rc == 0
