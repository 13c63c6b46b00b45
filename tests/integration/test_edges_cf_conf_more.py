"""More directive variants: listen parameters hayate ignores or refuses (fastopen=, setfib=, accept_filter= warn;
quic refused), a root with a trailing slash, open_file_cache off, large_client_header_buffers limits,
client_body_temp_path given twice."""
import re

import pytest

from conftest import IS_NGINX, simple


def check(prefix, run_cli, server_body, http_extra=''):
    path = prefix.conf(simple(server_body + '\n        location / { return 204; }', http_extra=http_extra))
    return path, run_cli(['-t', '-c', path])


@pytest.mark.parametrize('opt', ['fastopen=16', 'accept_filter=dataready', 'setfib=1'])
@pytest.mark.hayate_only  # nginx on Linux takes fastopen; accept_filter and setfib are BSD-only there
def test_ignored_listen_parameters_warn(prefix, run_cli, opt):
    path, r = check(prefix, run_cli, 'listen 127.0.0.1:{port2} %s;' % opt)
    assert r.rc == 0, r
    name = opt.split('=')[0]
    assert re.search(r'\[warn\].*the "%s" parameter of the "listen" directive is ignored by hayate in %s:\d+'
                     % (name, re.escape(path)), r.err), r.err


@pytest.mark.hayate_only
@pytest.mark.parametrize('opt', ['quic', 'http3'])
def test_quic_is_refused(prefix, run_cli, opt):
    path, r = check(prefix, run_cli, 'listen 127.0.0.1:{port2} %s;' % opt)
    assert r.rc == 1 and 'the "%s" parameter of the "listen" directive is not supported' % opt in r.err, r


@pytest.mark.hayate_only  # nginx takes any number of buffers
def test_too_many_large_header_buffers(prefix, run_cli):
    path, r = check(prefix, run_cli, 'large_client_header_buffers 2000 8k;')
    assert r.rc == 1 and '"large_client_header_buffers" directive invalid value' in r.err, r


def test_client_body_temp_path_twice(prefix, run_cli):
    path, r = check(prefix, run_cli, 'client_body_temp_path a; client_body_temp_path b;')
    assert r.rc == 1 and '"client_body_temp_path" directive is duplicate' in r.err, r


def test_root_with_a_trailing_slash_and_open_file_cache_off(server):
    srv = server(simple('''
        location / { root {html}/; open_file_cache off; add_header X-F $request_filename; }'''),
        files={'html/a.txt': 'A'})
    r = srv.get('/a.txt')
    assert r.status == 200 and r.body == b'A'
    assert r.header('X-F') == srv.html + '/a.txt'  # no "//": the slash is dropped
