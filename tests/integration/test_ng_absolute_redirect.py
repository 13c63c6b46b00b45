"""Redirects built by the server: an early 400 (invalid Host) goes through the default server's error_page, and
a redirect made there names the local address (no valid Host to use); a directory redirect escapes the
characters RFC 3986 does not allow in a URI, as nginx 1.25+ does (Debian's 1.22 leaves '"<>\\^`{|}' as they
are: hayate_only)."""
import os

import pytest

from conftest import simple


def test_error_page_for_invalid_host_redirects_to_local_address(server):
    s = server(simple('''
        server_name on;
        error_page 400 /return301;
        location /return301 { return 301 /redirect; }
'''))
    r = s.raw(b'GET / HTTP/1.1\r\nHost: .\r\nConnection: close\r\n\r\n')
    assert r.status == 301, r
    assert r.header('Location') == 'http://127.0.0.1:%d/redirect' % s.port, r


@pytest.mark.hayate_only
def test_directory_redirect_escapes_rfc3986_disallowed(server, prefix):
    name = 'd "#%<>?\\^`{|}'
    os.makedirs(os.path.join(prefix.html, name))
    s = server(simple('location / { root {html}; }'))
    r = s.get('/d%20%22%23%25%3C%3E%3F%5C%5E%60%7B%7C%7D')
    assert r.status == 301, r
    assert r.header('Location').endswith('/d%20%22%23%25%3C%3E%3F%5C%5E%60%7B%7C%7D/'), r
