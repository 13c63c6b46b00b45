"""`set` on a prefixed variable name ($http_*, $cookie_*, $arg_*, $sent_http_*) keeps the prefix's own meaning
where the `set` did not run: in another location $http_bar is still the request's Bar field (nginx's rewrite
module gives such names no getter of its own)."""
from conftest import simple


def test_set_in_another_location_leaves_the_field(server):
    srv = server(simple('''
        location /t1 { set $http_foo "set_foo"; return 200 "X${http_foo}X"; }
        location /t2 { return 200 "X${http_bar}X${arg_a}X${cookie_c}X"; }
        location /other { set $http_bar "set_bar"; set $arg_a "x"; set $cookie_c "y"; }'''))
    r = srv.get('/t1', headers={'Foo': 'from-request'})
    assert r.body == b'Xset_fooX'
    r = srv.get('/t2?a=1', headers={'Bar': 'http_bar', 'Cookie': 'c=2'})
    assert r.body == b'Xhttp_barX1X2X'
    r = srv.get('/t2')
    assert r.body == b'XXXX'
