"""sub_filter beyond test_sub_filter.py: search strings from variables (upper case, a digit first, empty: matches
nothing), replacements with variables, an empty body, sub_filter_types inherited from the server, unknown variables
at -t. nginx's ngx_http_sub_module semantics; these run against nginx too."""
import re

import pytest

from conftest import simple


@pytest.mark.parametrize('m,want', [
    ('WORLD', b'hello [x=WORLD] 1st'),   # the search is case-insensitive, the variable's value lower-cased
    ('1st', b'hello world [x=1st]'),
    ('', b'hello world 1st'),            # an empty search string matches nothing
])
def test_search_string_from_a_variable(server, m, want):
    srv = server(simple('''
        root {html};
        location / { sub_filter $arg_m "[x=$arg_m]"; sub_filter_types text/plain; }'''),
        files={'html/a.txt': 'hello world 1st'})
    r = srv.get('/a.txt?m=' + m)
    assert r.status == 200 and r.body == want


def test_types_inherited_from_the_server_and_empty_body(server):
    srv = server(simple('''
        root {html};
        sub_filter_types text/plain;
        location / { sub_filter a b; }
        location /h/ { sub_filter_types text/css; sub_filter a b; }'''),
        files={'html/a.txt': 'aaa', 'html/e.txt': '', 'html/h/a.txt': 'aaa', 'html/h/a.css': 'aaa'})
    assert srv.get('/a.txt').body == b'baa'
    r = srv.get('/e.txt')
    assert r.status == 200 and r.body == b''
    assert srv.get('/h/a.txt').body == b'aaa'  # the location's own list replaces the server's
    assert srv.get('/h/a.css').body == b'baa'


@pytest.mark.parametrize('body,msg', [
    ('sub_filter $nope x;', 'unknown "nope" variable'),
    ('sub_filter x $nope;', 'unknown "nope" variable'),
])
def test_unknown_variables(prefix, run_cli, body, msg):
    path = prefix.conf(simple('location / { %s return 204; }' % body))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1 and msg in r.err, r
