"""Issue 18 (honest status): directives documented as `supported` change behaviour, and `accepted` ones are
checked as nginx checks them. Each test here fails when its directive's effect is removed."""
import os

import pytest

from conftest import simple
from helpers.process import wait_until


def logged_offset(s):
    """The UTC offset of $time_local in the first access-log line (the file is written after the response)."""
    path = os.path.join(s.tmp, 'logs', 'tz.log')

    def read():
        try:
            with open(path) as f:
                parts = f.readline().split()
        except FileNotFoundError:
            return None
        return parts[1] if len(parts) == 2 else None
    return wait_until(read)


TZ_LOG = 'log_format tz "[$time_local]";\n    access_log {tmp}/logs/tz.log tz;'


# ---------------------------------------------------------------- env
# /proc/PID/environ shows the environment a process started with, not what it changed, so the effect is
# observed through TZ (local time in the access log); the removal of other variables is tested in
# tests/unit/process/env_test.c.

def test_env_inherits_tz(server, monkeypatch):
    monkeypatch.setenv('TZ', 'XST-9')
    s = server(simple('root {html};', http_extra=TZ_LOG), files={'html/a.txt': 'A'})
    assert s.get('/a.txt').status == 200
    assert logged_offset(s) == '+0900]'


@pytest.mark.hayate_only
def test_env_sets_tz(server, monkeypatch):
    # nginx sets TZ in the worker's environment but keeps the zone libc read at start (docs/DIFFERENCES.md)
    monkeypatch.setenv('TZ', 'XST-9')
    s = server('env TZ=YST-3;\n' + simple('root {html};', http_extra=TZ_LOG), files={'html/a.txt': 'A'})
    assert s.get('/a.txt').status == 200
    assert logged_offset(s) == '+0300]'


# ---------------------------------------------------------------- ignore_invalid_headers

INVALID = b'GET /a.txt HTTP/1.1\r\nHost: a\r\nFoo@Bar: 1\r\nConnection: close\r\n\r\n'


def test_ignore_invalid_headers_on_serves(server):
    s = server(simple('root {html};\n        ignore_invalid_headers on;'), files={'html/a.txt': 'A'})
    r = s.raw(INVALID)
    assert r.status == 200 and r.body == b'A'


def test_ignore_invalid_headers_default_is_on(server):
    s = server(simple('root {html};'), files={'html/a.txt': 'A'})
    assert s.raw(INVALID).status == 200


@pytest.mark.hayate_only
def test_ignore_invalid_headers_off_refuses(server):
    # nginx passes such a field on; hayate refuses it (docs/DIFFERENCES.md)
    s = server(simple('root {html};\n        ignore_invalid_headers off;'), files={'html/a.txt': 'A'})
    assert s.raw(INVALID).status == 400


def test_invalid_header_whitespace_still_400(server):
    s = server(simple('root {html};'), files={'html/a.txt': 'A'})
    assert s.raw(b'GET /a.txt HTTP/1.1\r\nHost: a\r\nFoo Bar: 1\r\n\r\n').status == 400


# ---------------------------------------------------------------- msie_padding

MSIE = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)'
PAD = b'<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n' * 6


@pytest.mark.parametrize('ua,padded', [(MSIE, True), ('Mozilla/5.0 Chrome/120.0', True),
                                       ('Mozilla/5.0 Gecko/20100101 Firefox/1 Chrome/1', False),
                                       ('Opera/9.80 (MSIE 6.0)', False), ('curl/8', False)])
def test_msie_padding_on_by_default(server, ua, padded):
    s = server(simple('root {html};'))
    r = s.get('/missing', headers={'User-Agent': ua})
    assert r.status == 404
    assert r.body.endswith(PAD) == padded
    assert int(r.header('Content-Length')) == len(r.body)
    plain = s.get('/missing')
    assert len(r.body) == len(plain.body) + (len(PAD) if padded else 0)


def test_msie_padding_off(server):
    s = server(simple('root {html};\n        msie_padding off;'))
    r = s.get('/missing', headers={'User-Agent': MSIE})
    assert r.status == 404 and not r.body.endswith(PAD)


def test_msie_padding_not_on_success(server):
    s = server(simple('root {html};'), files={'html/a.txt': 'A'})
    assert s.get('/a.txt', headers={'User-Agent': MSIE}).body == b'A'


# ---------------------------------------------------------------- source_charset

def test_source_charset_without_map_refused(prefix, run_cli):
    conf = prefix.conf(simple('root {html};', http_extra='charset utf-8; source_charset koi8-r;'))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and 'no "charset_map" between the charsets "koi8-r" and "utf-8"' in r.err


def test_source_charset_same_as_charset_loads(prefix, run_cli):
    conf = prefix.conf(simple('root {html};', http_extra='charset utf-8; source_charset utf-8;'))
    assert run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf]).rc == 0


# ---------------------------------------------------------------- accepted: checked as nginx checks

@pytest.mark.parametrize('main,http,message', [
    ('pcre_jit bogus;', '', 'invalid value "bogus" in "pcre_jit" directive, it must be "on" or "off"'),
    ('', 'types_hash_max_size xyz;', '"types_hash_max_size" directive invalid number'),
    ('', 'server_names_hash_bucket_size 64k;', '"server_names_hash_bucket_size" directive invalid number'),
    ('', 'keepalive_time notatime;', '"keepalive_time" directive invalid value'),
    ('', 'client_body_in_single_buffer x;', 'invalid value "x" in "client_body_in_single_buffer" directive'),
    ('', 'keepalive_disable msie6 foo;', 'invalid value "foo"'),
    ('', 'open_file_cache_events maybe;', 'invalid value "maybe" in "open_file_cache_events" directive'),
])
def test_accepted_directives_reject_bad_values(prefix, run_cli, main, http, message):
    conf = prefix.conf(main + '\n' + simple('root {html};', http_extra=http))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1, r
    assert message in r.err and 'test.conf:' in r.err


def test_accepted_directives_take_nginx_values(prefix, run_cli):
    http = ('types_hash_max_size 2048; server_names_hash_bucket_size 128; keepalive_time 1h; '
            'client_body_in_single_buffer on; keepalive_disable msie6 safari; '
            'open_file_cache_events on;')
    conf = prefix.conf('pcre_jit on;\n' + simple('root {html};', http_extra=http))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 0, r


# ---------------------------------------------------------------- open_file_cache keeps the descriptor

def cache_conf(min_uses):
    return simple('root {html};\n        open_file_cache max=100 inactive=60s;\n'
                  '        open_file_cache_valid 60s;\n        open_file_cache_min_uses %d;' % min_uses)


def test_open_file_cache_serves_from_cached_fd(server):
    # a file deleted after it was cached is still served while the entry is valid: the cache is in use
    s = server(cache_conf(1), files={'html/f.txt': 'cached bytes'})
    assert s.get('/f.txt').body == b'cached bytes'
    os.unlink(os.path.join(s.html, 'f.txt'))
    r = s.get('/f.txt')
    assert r.status == 200 and r.body == b'cached bytes'


def test_open_file_cache_off_sees_deletion(server):
    s = server(simple('root {html};\n        open_file_cache off;'), files={'html/f.txt': 'bytes'})
    assert s.get('/f.txt').status == 200
    os.unlink(os.path.join(s.html, 'f.txt'))
    assert s.get('/f.txt').status == 404


def test_open_file_cache_min_uses(server):
    # min_uses 3: the first two uses do not keep the descriptor, the third does
    s = server(cache_conf(3), files={'html/f.txt': 'first', 'html/g.txt': 'gee'})
    assert s.get('/f.txt').status == 200
    os.unlink(os.path.join(s.html, 'f.txt'))
    assert s.get('/f.txt').status == 404          # one use: nothing was kept
    for _ in range(3):
        assert s.get('/g.txt').body == b'gee'
    os.unlink(os.path.join(s.html, 'g.txt'))
    r = s.get('/g.txt')                            # three uses: the descriptor is kept
    assert r.status == 200 and r.body == b'gee'


# ---------------------------------------------------------------- worker_cpu_affinity

def test_worker_cpu_affinity_masks(server):
    from helpers.process import master_conf, one_server, workers_of
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip('needs two CPUs')
    a, b = cpus[:2]
    masks = ['1' + '0' * a, '1' + '0' * b]
    s = server(master_conf(one_server('root {html};'), workers=2, main='worker_cpu_affinity %s;' % ' '.join(masks)),
               full=True)
    pids = workers_of(s, 2)

    def masks_now():       # a worker applies its mask right after the fork: wait for it
        return sorted(sorted(os.sched_getaffinity(pid)) for pid in pids)
    wait_until(lambda: masks_now() == [[a], [b]], 5)
    assert masks_now() == [[a], [b]]


@pytest.mark.hayate_only
@pytest.mark.parametrize('http,message', [
    # the ngx_brotli / zstd-nginx-module names: nginx from Debian has neither module
    ('brotli_buffers 16 x;', 'invalid value "x" in "brotli_buffers" directive'),
    ('zstd_buffers x 8k;', 'invalid value "x" in "zstd_buffers" directive'),
    ('brotli_window huge;', '"brotli_window" directive invalid value'),
])
def test_accepted_module_directives_reject_bad_values(prefix, run_cli, http, message):
    conf = prefix.conf(simple('root {html};', http_extra=http))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err, r
