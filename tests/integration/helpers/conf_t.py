"""`-t` checks shared by the test_edges_*.py files: a config fails with a message at a directive's file:line."""
import re


def line_of(path, needle):
    return [i for i, l in enumerate(open(path), 1) if needle in l][0]


def fails_at(prefix, run_cli, text, needle, message, regex=False):
    """-t exits 1 with `[emerg] message in FILE:LINE`, LINE being the first config line holding `needle`."""
    path = prefix.conf(text)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1, res
    msg = message if regex else re.escape(message)
    want = r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (msg, re.escape(path), line_of(path, needle))
    assert re.search(want, res.err), (want, res.err)
    return res


def passes(prefix, run_cli, text):
    path = prefix.conf(text)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 0, res
    return res


def http_srv(body, http_extra=''):
    """An http block with one server on {port} holding `body` (one directive per line)."""
    return 'http {\n    %s\n    server {\n        listen 127.0.0.1:{port};\n        %s\n    }\n}\n' % (
        http_extra, body)
