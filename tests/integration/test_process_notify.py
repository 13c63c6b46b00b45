"""systemd's notification protocol (issue 15, item 7): with $NOTIFY_SOCKET set, hayate sends READY=1 once it
serves, RELOADING=1 then READY=1 around a reload, STOPPING=1 when it stops; the test binds the socket itself."""
import os
import signal
import socket

import pytest

from helpers.process import master_conf, one_server, quick_get

pytestmark = pytest.mark.hayate_only

FILES = {'html/a.txt': 'hello\n'}


def fields(msg):
    return dict(l.split('=', 1) for l in msg.decode().split('\n') if '=' in l)


def recv(sock):
    data = sock.recv(4096)  # the socket has a timeout: a missing message fails the test, nothing sleeps
    return fields(data)


@pytest.fixture
def notify_socket(prefix, monkeypatch, request):
    abstract = getattr(request, 'param', False)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = 'hy-notify-test-%d-%d' % (os.getpid(), prefix.port)
        s.bind('\0' + name)
        monkeypatch.setenv('NOTIFY_SOCKET', '@' + name)
    else:
        path = prefix.path('notify.sock')
        s.bind(path)
        monkeypatch.setenv('NOTIFY_SOCKET', path)
    s.settimeout(5)
    yield s
    s.close()


@pytest.mark.parametrize('notify_socket', [False, True], ids=['path', 'abstract'], indirect=True)
def test_master_ready_reloading_stopping(server, notify_socket):
    s = server(master_conf(one_server('root {html};'), workers=2), files=FILES, full=True)
    m = recv(notify_socket)
    assert m.get('READY') == '1' and m.get('MAINPID') == str(s.proc.pid), m
    assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    os.kill(s.proc.pid, signal.SIGHUP)
    m = recv(notify_socket)
    assert m.get('RELOADING') == '1' and int(m['MONOTONIC_USEC']) > 0, m
    m = recv(notify_socket)
    assert m.get('READY') == '1', m
    assert quick_get(s.port, '/a.txt') == (200, b'hello\n')
    assert s.stop(signal.SIGQUIT) == 0
    m = recv(notify_socket)
    assert m.get('STOPPING') == '1', m


def test_single_process_ready_and_stopping(server, notify_socket):
    s = server('''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
    }
}
''', files=FILES)
    m = recv(notify_socket)
    assert m.get('READY') == '1', m
    os.kill(s.proc.pid, signal.SIGHUP)
    assert recv(notify_socket).get('RELOADING') == '1'
    assert recv(notify_socket).get('READY') == '1'
    assert s.stop(signal.SIGTERM) == 0
    assert recv(notify_socket).get('STOPPING') == '1'
