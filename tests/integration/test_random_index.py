"""random_index (ngx_http_random_index_module), from nginx's documentation: `random_index on` in a location
answers a URI ending in '/' with a file picked at random from the directory (names starting with '.' are never
picked), before the index module."""
import os

import pytest

from conftest import simple


def conf(body):
    return simple('root {html};\n' + body)


def test_picks_every_file_and_only_files(server):
    files = {'html/r/a.html': 'A', 'html/r/b.html': 'B', 'html/r/c.txt': 'C',
             'html/r/.hidden': 'HIDDEN', 'html/r/sub/x.html': 'SUB', 'html/r/index.html': 'I'}
    srv = server(conf('location /r/ { random_index on; }'), files=files)
    os.symlink(srv.prefix.path('html/r/sub'), srv.prefix.path('html/r/dirlink'))
    seen = set()
    for _ in range(200):
        r = srv.get('/r/')
        assert r.status == 200
        seen.add(r.body)
        if seen == {b'A', b'B', b'C', b'I'}:
            break
    # every regular file comes up; never a dot file, a directory or a link to one
    assert seen == {b'A', b'B', b'C', b'I'}


def test_symlink_to_a_file_counts(server):
    srv = server(conf('location / { random_index on; }'), files={'html/target': 'RIGHT'})
    os.makedirs(srv.prefix.path('html/x/dir'))
    os.symlink(srv.prefix.path('html/x/dir'), srv.prefix.path('html/x/dir-link'))
    os.symlink(srv.prefix.path('html/target'), srv.prefix.path('html/x/file-link'))
    r = srv.get('/x/')
    assert r.status == 200 and r.body == b'RIGHT'


def test_the_picked_file_is_served_with_its_type(server):
    srv = server(conf('location / { random_index on; }'), files={'html/t/only.css': 'p{}'})
    r = srv.get('/t/?q=1')
    assert r.status == 200 and r.body == b'p{}'
    assert r.header('Content-Type') == 'text/css'


def test_off_by_default_and_no_files_fall_through(server):
    srv = server(conf('''
        location /off/ { alias {html}/d/; }
        location /empty/ { random_index on; autoindex on; }
    '''), files={'html/d/one.html': '1', 'html/d/index.html': 'IDX', 'html/empty/.dot': 'x'})
    os.makedirs(srv.prefix.path('html/empty/dir'))
    assert srv.get('/off/').body == b'IDX'
    # nothing to pick: index, then autoindex answer
    r = srv.get('/empty/')
    assert r.status == 200 and b'dir/' in r.body and b'.dot' not in r.body


def test_missing_directory_404_and_not_a_dir_uri(server):
    srv = server(conf('location / { random_index on; }'), files={'html/f.html': 'F'})
    assert srv.get('/nope/').status == 404
    assert 'opendir() "' in srv.error_log()
    assert srv.get('/f.html').body == b'F'


@pytest.mark.parametrize('method', ['PUT', 'DELETE'])
def test_other_methods_not_handled(server, method):
    srv = server(conf('location / { random_index on; }'), files={'html/d/a.html': 'A'})
    assert srv.get('/d/', method=method).status != 200


@pytest.mark.parametrize('where', ['server', 'http'])
def test_location_only(prefix, run_cli, where):
    if where == 'server':
        prefix.conf(simple('random_index on;'))
    else:
        prefix.conf(simple('', http_extra='random_index on;'))
    res = run_cli(['-t', '-c', prefix.path('conf/test.conf')])
    assert res.rc != 0
    assert '"random_index" directive is not allowed here' in res.err and 'test.conf:' in res.err
