"""Client side of the health-check tests (test_health_check*.py, test_edges_cu_health.py): one request per
connection to the front, which peers served a series of them, and the error-log lines a check's state change
writes (docs/DIFFERENCES.md, active health checks)."""
from helpers.http1 import Conn


def get(port, path='/'):
    """GET path on its own connection (Connection: close); the parsed response."""
    c = Conn("127.0.0.1", port)
    try:
        c.send(b'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' % path.encode())
        return c.read_response()
    finally:
        c.close()


def served_by(port, n=8):
    """The bodies of n requests: each peer answers its own name."""
    return [get(port).body.decode() for _ in range(n)]


def unhealthy_line(port, upstream='backend'):
    """A regex for the start of the warn line of peer 127.0.0.1:port turning unhealthy, up to its reason."""
    return r'\[warn\] .*peer 127\.0\.0\.1:%d of upstream "%s" is unhealthy: ' % (port, upstream)


def unhealthy_reason(port, upstream='backend'):
    """unhealthy_line with the reason as group 1."""
    return unhealthy_line(port, upstream) + r'(.*) \(health_check in '


def healthy_line(port, upstream='backend'):
    """A regex for the warn line of peer 127.0.0.1:port healthy again."""
    return r'\[warn\] .*peer 127\.0\.0\.1:%d of upstream "%s" is healthy again' % (port, upstream)
