"""auth_basic_user_file chosen per request by a variable: more files than the worker's cache holds (the least
recently used is dropped and read again), a relative name resolved against the configuration's directory.
(crypt() failing is not reachable with Debian's libxcrypt: it answers a failure token, a mismatch.)"""
import base64

import pytest

from conftest import simple


def basic(user, pw):
    return [('Authorization', 'Basic ' + base64.b64encode(('%s:%s' % (user, pw)).encode()).decode())]


def test_many_files_through_a_variable(server):
    files = {'pw/f%d' % i: 'u%d:{PLAIN}p%d\n' % (i, i) for i in range(40)}
    files['html/x.txt'] = 'X'
    srv = server(simple('location / { auth_basic "r"; auth_basic_user_file {tmp}/pw/$arg_f; root {html}; }'),
                 files=files)
    for rnd in range(2):  # the second round finds the first files evicted (40 > the cache's 32) and reads again
        for i in range(40):
            assert srv.get('/x.txt?f=f%d' % i, headers=basic('u%d' % i, 'p%d' % i)).status == 200
            assert srv.get('/x.txt?f=f%d' % i, headers=basic('u%d' % i, 'wrong')).status == 401
    assert srv.get('/x.txt?f=none', headers=basic('u1', 'p1')).status == 403  # no such file


def test_relative_file_with_a_variable_is_under_the_conf_dir(server):
    srv = server(simple('location / { auth_basic "r"; auth_basic_user_file pw_$arg_f; root {html}; }'),
                 files={'conf/pw_a': 'alice:{PLAIN}secret\n', 'html/x.txt': 'X'})
    assert srv.get('/x.txt?f=a', headers=basic('alice', 'secret')).status == 200
    assert srv.get('/x.txt?f=a', headers=basic('alice', 'nope')).status == 401
