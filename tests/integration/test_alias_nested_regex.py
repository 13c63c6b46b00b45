"""An alias is inherited by nested locations with the prefix of the location that set it (nginx's clcf->alias
length), also by a nested regex location: `location /a/ { alias DIR/; location ~ html { try_files $uri =404; } }`
maps /a/f.html to DIR/f.html for try_files, the static handler and $request_filename."""
from conftest import simple


def test_nested_regex_location_under_alias(server):
    srv = server(simple('''
        location /alias-nested/ {
            alias {tmp}/data/;
            location ~ html {
                add_header X-File $request_filename;
                try_files $uri =404;
            }
            location ~ txt$ { }
        }'''), files={'data/found.html': 'SEE THIS', 'data/t.txt': 'text'})
    r = srv.get('/alias-nested/found.html')
    assert r.status == 200 and r.body == b'SEE THIS'
    assert r.header('X-File') == srv.prefix.path('data/found.html')
    r = srv.get('/alias-nested/t.txt')
    assert r.status == 200 and r.body == b'text'
    assert srv.get('/alias-nested/none.html').status == 404
