"""Single behaviours nginx's test suite found different (s7), each written from nginx's documented behaviour and
checked against Debian's nginx."""
from conftest import simple


def test_rewrite_redirect_escapes_captures_of_an_escaped_uri(server):
    # nginx escapes a capture of a %-escaped URI in a redirect's replacement, then unescapes the redirect (all but
    # the bytes below '%'): "/t4/blah%20%3Fblah" gives "blah%20?blah", as rewrite_unescape.t shows for nginx
    srv = server(simple('''
        location /t4 { rewrite ^(.*) http://example.com$1 redirect; }
        location /t3 { rewrite ^ http://example.com$uri redirect; }
    '''))
    r = srv.get('/t4/blah%20%3Fblah')
    assert r.status == 302
    assert r.header('Location') == 'http://example.com/t4/blah%20?blah'
    r = srv.get('/t4/plain')
    assert r.header('Location') == 'http://example.com/t4/plain'
    # a variable is not escaped (nginx)
    r = srv.get('/t3/blah%20%3Fblah')
    assert r.header('Location') == 'http://example.com/t3/blah ?blah'
