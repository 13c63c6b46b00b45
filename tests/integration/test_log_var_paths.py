"""access_log paths with variables and open_log_file_cache (nginx's ngx_http_log_module docs): the file is named
per request (a relative path is under the prefix), nothing is logged unless the request's root directory exists,
buffered logs cannot have variables; with open_log_file_cache the descriptors of files used min_uses times stay
open (so writing to a renamed file goes on while `valid` lasts), at most `max` of them."""
import os

import pytest

from conftest import simple
from helpers.process import wait_until


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ''


CONF = simple('''
        root {html};
        location /rel { access_log logs/rel_$arg_n.log test; return 200 ok; }
        location /abs { access_log {tmp}/dir/abs_$arg_n test; return 200 ok; }
        location /noroot { root {tmp}/missing; access_log {tmp}/noroot_$arg_n test; return 200 ok; }
        location /cache {
            open_log_file_cache max=3 inactive=20s valid=1m min_uses=2;
            access_log {tmp}/dir/cache_$arg_n test;
            return 200 ok;
        }
''', http_extra='log_format test "$uri:$args";')


@pytest.fixture
def srv(server):
    os.makedirs(server.prefix.path('dir'), exist_ok=True)
    return server(CONF)


def test_relative_path_under_prefix_per_request(srv):
    for n in ('a', 'b', 'a'):
        assert srv.get('/rel?n=' + n).status == 200
    a, b = srv.prefix.path('logs/rel_a.log'), srv.prefix.path('logs/rel_b.log')
    assert wait_until(lambda: read(a).count('\n') == 2), read(a)
    assert read(a) == '/rel:n=a\n/rel:n=a\n'
    assert wait_until(lambda: read(b) == '/rel:n=b\n'), read(b)


def test_no_log_without_root_directory(srv):
    assert srv.get('/noroot?n=x').status == 200
    assert srv.get('/abs?n=after').status == 200   # a later line proves the first request's log phase ran
    assert wait_until(lambda: read(srv.prefix.path('dir/abs_after')))
    assert not os.path.exists(srv.prefix.path('noroot_x'))
    assert wait_until(lambda: 'testing "%s/missing" existence failed' % srv.prefix.tmp in srv.error_log())


def test_open_failure_logged(srv):
    os.rename(srv.prefix.path('dir'), srv.prefix.path('gone'))
    try:
        assert srv.get('/abs?n=x').status == 200
        msg = 'open() "%s/dir/abs_x" failed (2: No such file or directory)' % srv.prefix.tmp
        assert wait_until(lambda: msg in srv.error_log())
        assert '[crit]' in srv.error_log()
    finally:
        os.rename(srv.prefix.path('gone'), srv.prefix.path('dir'))
        open(srv.prefix.path('logs/error.log'), 'w').close()  # the crit line was expected


def test_cache_keeps_descriptors_of_files_used_min_uses_times(srv):
    for n in ('lru', 'lru', 'once', 'first', 'first', 'second', 'second'):
        srv.get('/cache?n=' + n)
    d = srv.prefix.path('dir')
    assert wait_until(lambda: read(d + '/cache_second').count('\n') == 2)
    os.rename(d, d + '_moved')
    try:
        for n in ('lru', 'once', 'first', 'second'):
            srv.get('/cache?n=' + n)
        m = d + '_moved'
        # first and second have open descriptors: their lines go to the moved files
        assert wait_until(lambda: read(m + '/cache_first').count('\n') == 3 and read(m + '/cache_second').count('\n') == 3)
        assert read(m + '/cache_lru').count('\n') == 2    # evicted when the fourth name came (max=3)
        assert read(m + '/cache_once').count('\n') == 1   # used once before: not kept
    finally:
        os.rename(d + '_moved', d)
        open(srv.prefix.path('logs/error.log'), 'w').close()  # the failed opens were expected


def test_without_cache_every_line_opens_the_file(srv):
    d = srv.prefix.path('dir')
    srv.get('/abs?n=f')
    assert wait_until(lambda: read(d + '/abs_f') == '/abs:n=f\n')
    os.rename(d + '/abs_f', d + '/abs_f.old')
    srv.get('/abs?n=f')
    assert wait_until(lambda: read(d + '/abs_f') == '/abs:n=f\n')
    assert read(d + '/abs_f.old') == '/abs:n=f\n'


@pytest.mark.parametrize('loc,message', [
    ('access_log logs/$host.log combined buffer=4k;', 'buffered logs cannot have variables in name'),
    ('access_log logs/$host.log combined gzip;', 'buffered logs cannot have variables in name'),
    ('open_log_file_cache max=1; open_log_file_cache off;', '"open_log_file_cache" directive is duplicate'),
    ('open_log_file_cache inactive=1s;', '"open_log_file_cache" must have "max" parameter'),
    ('open_log_file_cache max=2 valid=x;', 'invalid "open_log_file_cache" parameter "valid=x"'),
])
def test_conf_errors(prefix, run_cli, loc, message):
    conf = prefix.conf(simple('location / { %s }' % loc))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err, r.err
