"""Listening ports for the servers and backends a test starts.

A port the kernel hands out for `bind(('127.0.0.1', 0))` comes from the ephemeral range
(net.ipv4.ip_local_port_range, 32768-60999 by default). So did the ports this suite used to give the server under
test, picked by binding port 0 and closing again. Between that pick and the server's bind, the same port could be
handed out again: to a backend peer that binds port 0 (test_proxy_buffering's Peer did, in a CI rehearsal: the
server's bind failed with EADDRINUSE, the fixture's "is the port accepting" check found the peer listening there,
and the test talked to the peer directly and passed, until the teardown saw the server's exit code), or as the
local port of any outgoing connection. Ports below the ephemeral range are never handed out by the kernel, so they
are picked from there, checked free on 127.0.0.1 (and ::1 where there is IPv6), and not handed out again until
RECENT other ports have been: the tests that had them are long over then. (Never handing one out twice ran the
12,000 ports out once the suite passed about 3,900 tests: a CI rehearsal failed with "no free port".)
"""
import collections
import random
import socket
import threading

RECENT = 4000  # a port handed out is not handed out again before this many others (a third of the range)

_lock = threading.Lock()
_handed_out = set()
_order = collections.deque()  # _handed_out, oldest first
_rng = random.Random()  # its own: a test that seeds `random` does not make the picks repeat


def _ephemeral_low():
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(family, host, port):
    s = None
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.bind((host, port))
        return True
    except OSError as e:
        # no IPv6 on this machine: only 127.0.0.1 matters
        return family == socket.AF_INET6 and e.errno in (97, 99)  # EAFNOSUPPORT, EADDRNOTAVAIL
    finally:
        if s is not None:
            s.close()


_HIGH = min(_ephemeral_low(), 65536)  # read once: the range does not change under a test run
_LOW = max(1024, _HIGH - 12000)


def free_port():
    """A loopback TCP port below the ephemeral range, free on 127.0.0.1 and ::1 now, not among the last RECENT
    handed out in this process. No fallback to a kernel-chosen port: that is the race this module exists to
    avoid."""
    with _lock:
        for _ in range(500):
            port = _rng.randrange(_LOW, _HIGH)
            if port in _handed_out:
                continue
            if _bindable(socket.AF_INET, '127.0.0.1', port) and _bindable(socket.AF_INET6, '::1', port):
                _handed_out.add(port)
                _order.append(port)
                if len(_order) > RECENT:
                    _handed_out.discard(_order.popleft())
                return port
    raise RuntimeError('no free port below the ephemeral range (%d-%d)' % (_LOW, _HIGH - 1))
