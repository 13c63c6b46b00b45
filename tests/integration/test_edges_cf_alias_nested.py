"""A location nested in an alias location inherits the alias with the parent's prefix (nginx keeps the length of
the location that set it); a named location and a regex one inside it too."""
from conftest import simple


def test_nested_location_inherits_the_alias(server):
    srv = server(simple('''
        location /a/ {
            alias {html}/x/;
            location /a/b/ { add_header X-In nested; add_header X-F $request_filename; }
            location ~ \\.css$ { add_header X-In regex; }
        }'''), files={'html/x/b/f.txt': 'nested file', 'html/x/s.css': 'css', 'html/x/top.txt': 'top'})
    r = srv.get('/a/top.txt')
    assert r.status == 200 and r.body == b'top'
    r = srv.get('/a/b/f.txt')
    assert r.status == 200 and r.body == b'nested file' and r.header('X-In') == 'nested'
    assert r.header('X-F') == srv.html + '/x/b/f.txt'
