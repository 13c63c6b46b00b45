"""autoindex edges (ngx_http_autoindex_module): autoindex_exact_size off and its K/M/G rounding, the 19-column
exact sizes, autoindex_localtime with the server's TZ, the 50-column name cut counted in characters when the
listing's charset is utf-8, directories listed before files, dangling and looping symlinks still listed (nginx
falls back to lstat), HEAD without a body. Written from nginx's documentation and behaviour; they run against
Debian's nginx too."""
import os
import re

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        autoindex on;
        location /approx/ { alias {html}/d/; autoindex_exact_size off; }
        location /local/ { alias {html}/d/; autoindex_localtime on; }
        location /u/ { alias {html}/u/; charset utf-8; }
        location /b/ { alias {html}/u/; }
    }
}
'''

G = 1024 * 1024 * 1024
SIZES = {'zero': 0, 'k9999': 9999, 'k10000': 10000, 'k10751': 10751, 'm15': 1536 * 1024 - 1,
         'm16': 1536 * 1024, 'g3': 3 * G + 1}
MTIME = 1700000000  # 2023-11-14 22:13:20 UTC


@pytest.fixture
def srv(server, prefix, monkeypatch):
    d = prefix.path('html/d')
    os.makedirs(d + '/sub')
    for name, size in SIZES.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.truncate(size)
        os.utime(os.path.join(d, name), (MTIME, MTIME))
    os.symlink('nowhere', os.path.join(d, 'dangling'))
    os.symlink('loop', os.path.join(d, 'loop'))
    u = prefix.path('html/u')
    os.makedirs(u)
    for n in ('é' * 60, '€' * 10, '😀' * 49 + 'x', 'ab' + 'é' * 48):
        with open(os.path.join(u, n), 'wb') as f:
            f.write(b'x')
    # POSIX TZ: three hours east of UTC; nginx and hayate both keep TZ for their workers
    monkeypatch.setenv('TZ', 'XYZ-3')
    return server(CONF)


def line_of(body, name):
    for l in body.decode('utf-8', 'replace').split('\r\n'):
        if ('>%s<' % name) in l or ('>%s/<' % name) in l:
            return l
    raise AssertionError('%s not listed in %r' % (name, body))


def test_exact_sizes_and_directories_first(srv):
    r = srv.get('/d/')
    assert r.status == 200
    for name, size in SIZES.items():
        assert line_of(r.body, name).endswith(' %19d' % size)
    assert line_of(r.body, 'sub').endswith(' %19s' % '-')
    # directories before files, whatever the names
    b = r.body.decode()
    assert b.index('href="sub/"') < b.index('href="g3"') < b.index('href="zero"')


@pytest.mark.parametrize('name,want', [('zero', '0'), ('k9999', '9999'), ('k10000', '10K'), ('k10751', '10K'),
                                       ('m15', '1M'), ('m16', '2M'), ('g3', '3G')])
def test_approximate_sizes(srv, name, want):
    r = srv.get('/approx/')
    assert r.status == 200
    assert line_of(r.body, name).endswith(' %7s' % want), line_of(r.body, name)
    assert line_of(r.body, 'sub').endswith(' %7s' % '-')


def test_localtime(srv):
    gmt = line_of(srv.get('/d/').body, 'k9999')
    local = line_of(srv.get('/local/').body, 'k9999')
    assert '14-Nov-2023 22:13' in gmt, gmt
    assert '15-Nov-2023 01:13' in local, local


def test_dangling_and_looping_symlinks_are_listed(srv):
    r = srv.get('/d/')
    assert r.status == 200
    assert 'href="dangling"' in r.body.decode() and 'href="loop"' in r.body.decode()


def test_head_has_no_body(srv):
    r = srv.head('/d/')
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Type').startswith('text/html')


def test_utf8_names_cut_in_characters(srv):
    r = srv.get('/u/')
    assert r.status == 200 and 'charset=utf-8' in r.header('Content-Type')
    b = r.body.decode('utf-8')
    # longer than 50 characters: 47 of them and "..>"
    assert '>' + 'é' * 47 + '..&gt;</a>' in b
    assert '>' + '😀' * 49 + 'x</a> ' in b
    # 50 characters: shown whole, no padding
    assert '>ab' + 'é' * 48 + '</a> ' in b
    # 10 characters: padded to the 50th column with spaces
    assert '>' + '€' * 10 + '</a>' + ' ' * 40 + ' ' in b


def test_bytes_counted_without_utf8_charset(srv):
    b = srv.get('/b/').body.decode('utf-8', 'replace')
    # 30 bytes of "€": shown whole, padded to 50 bytes
    assert '>' + '€' * 10 + '</a>' + ' ' * 20 + ' ' in b
    # the three names over 50 bytes are cut
    assert b.count('..&gt;</a>') == 3
