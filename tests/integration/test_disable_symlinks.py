"""disable_symlinks (ngx_http_core_module): off follows links; on refuses a link in any component of the path with
403 (404 when the link stands for a directory on the way); if_not_owner follows a link only when it and its target have the same owner; from= leaves a prefix of the path
unchecked. It applies to static files, index files, try_files, "if (-f ...)" and to open_file_cache entries, which
are reused only under the setting they were opened with. As in nginx, a symbolic link loop is 403 too."""
import os

import pytest

from conftest import simple

OTHER_UID = 65534  # nobody: a target owned by someone else for if_not_owner


def make_tree(html, tmp):
    """html/<loc>/{real.txt, link.txt -> real.txt, other.txt -> a file owned by OTHER_UID, dirlink -> sub/}"""
    ext = os.path.join(tmp, 'ext.txt')
    with open(ext, 'w') as f:
        f.write('external')
    os.chown(ext, OTHER_UID, OTHER_UID)
    for loc in ('off', 'on', 'owner', 'try', 'if', 'idx', 'from'):
        d = os.path.join(html, loc)
        os.makedirs(os.path.join(d, 'sub'), exist_ok=True)
        with open(os.path.join(d, 'real.txt'), 'w') as f:
            f.write('real ' + loc)
        with open(os.path.join(d, 'sub', 'in.txt'), 'w') as f:
            f.write('in ' + loc)
        with open(os.path.join(d, 'sub', 'index.html'), 'w') as f:
            f.write('index ' + loc)
        os.symlink('real.txt', os.path.join(d, 'link.txt'))
        os.symlink(ext, os.path.join(d, 'other.txt'))
        os.symlink('sub', os.path.join(d, 'dirlink'))


CONF = simple('''
        root {html};
        location /off/ { }
        location /on/ { disable_symlinks on; }
        location /owner/ { disable_symlinks if_not_owner; }
        location /try/ {
            disable_symlinks on;
            try_files $uri /try/real.txt;
        }
        location /if/ {
            disable_symlinks on;
            if (-f $request_filename) { return 200 "file $uri"; }
            return 200 "no file $uri";
        }
        location /idx/ { disable_symlinks on; }
        location /rootlink/ {
            alias {tmp}/rl/;
            disable_symlinks on from=$document_root;
        }
        location /strict/ {
            alias {tmp}/rl/;
            disable_symlinks on;
        }
        location /loop { }
''')


@pytest.fixture
def srv(server):
    if os.geteuid() != 0:
        pytest.skip('if_not_owner needs a file of another owner (chown as root)')
    s = server(CONF)
    make_tree(s.html, s.tmp)
    # a root that is itself a link: {tmp}/rl -> html/from
    os.symlink(os.path.join(s.html, 'from'), os.path.join(s.tmp, 'rl'))
    os.symlink('loop', os.path.join(s.html, 'loop'))
    s.ignore_log = r'openat\(\) .* failed \(40: '  # nginx logs try_files' and "if"'s refused links at crit
    return s


@pytest.mark.parametrize('path,status,body', [
    ('/off/real.txt', 200, 'real off'),
    ('/off/link.txt', 200, 'real off'),
    ('/off/other.txt', 200, 'external'),
    ('/off/dirlink/in.txt', 200, 'in off'),
    ('/on/real.txt', 200, 'real on'),
    ('/on/sub/in.txt', 200, 'in on'),
    ('/on/link.txt', 403, None),
    ('/on/other.txt', 403, None),
    ('/on/dirlink/in.txt', 404, None),  # a link as a directory: not a directory (nginx)
    ('/owner/link.txt', 200, 'real owner'),
    ('/owner/dirlink/in.txt', 200, 'in owner'),
    ('/owner/other.txt', 403, None),
])
def test_static(srv, path, status, body):
    r = srv.get(path)
    assert r.status == status, (path, r.status, r.body)
    if body is not None:
        assert r.body.decode() == body


def test_refusal_is_logged(srv):
    assert srv.get('/on/link.txt').status == 403
    log = srv.error_log()
    assert 'link.txt" failed (40: Too many levels of symbolic links)' in log, log


def test_try_files_skips_a_link(srv):
    r = srv.get('/try/link.txt')
    assert r.status == 200 and r.body == b'real try'  # the link is not a file: the fallback
    assert srv.get('/try/sub/in.txt').body == b'in try'


def test_if_file_test_sees_no_link(srv):
    assert srv.get('/if/real.txt').body == b'file /if/real.txt'
    assert srv.get('/if/link.txt').body == b'no file /if/link.txt'


def test_index_through_a_directory_link(srv):
    assert srv.get('/idx/sub/').body == b'index idx'
    assert srv.get('/idx/dirlink/').status == 404


def test_from_document_root(srv):
    # the root is reached through a link: from=$document_root leaves that part unchecked, not the rest
    assert srv.get('/rootlink/real.txt').body == b'real from'
    assert srv.get('/rootlink/sub/in.txt').body == b'in from'
    assert srv.get('/rootlink/link.txt').status == 403
    # without from= the same root's link is refused
    assert srv.get('/strict/real.txt').status == 404


def test_symlink_loop_is_403(srv):
    assert srv.get('/loop').status == 403


def test_open_file_cache_respects_the_setting(server):
    s = server(simple('''
        open_file_cache max=16 inactive=60s;
        open_file_cache_valid 30s;
        open_file_cache_min_uses 1;
        open_file_cache_errors on;
        location /off/ { alias {html}/c/; }
        location /on/ { alias {html}/c/; disable_symlinks on; }
        location /owner/ { alias {html}/c/; disable_symlinks if_not_owner; }
'''), files={'html/c/real.txt': 'cached', 'ext.txt': 'external'})
    os.symlink('real.txt', os.path.join(s.html, 'c', 'link.txt'))
    os.symlink(os.path.join(s.tmp, 'ext.txt'), os.path.join(s.html, 'c', 'other.txt'))
    if os.geteuid() == 0:
        os.chown(os.path.join(s.tmp, 'ext.txt'), OTHER_UID, OTHER_UID)
    for _ in range(2):
        assert s.get('/off/link.txt').body == b'cached'
        assert s.get('/on/link.txt').status == 403
        assert s.get('/off/link.txt').status == 200
        assert s.get('/owner/link.txt').status == 200
        if os.geteuid() == 0:
            assert s.get('/off/other.txt').status == 200
            assert s.get('/owner/other.txt').status == 403
            assert s.get('/off/other.txt').status == 200


def test_implicit_cache_respects_the_setting(server):
    # no open_file_cache configured: the same path under off and on alternately
    s = server(simple('''
        location /off/ { alias {html}/c/; }
        location /on/ { alias {html}/c/; disable_symlinks on; }
'''), files={'html/c/real.txt': 'plain'})
    os.symlink('real.txt', os.path.join(s.html, 'c', 'link.txt'))
    for _ in range(2):
        assert s.get('/off/link.txt').status == 200
        assert s.get('/on/link.txt').status == 403


def test_trailing_slash_on_a_file_link(server):
    s = server(simple('''
        location ~ ^/t(/.+/)on$ { alias {html}$1; disable_symlinks on; }
        location ~ ^/t(/.+/)owner$ { alias {html}$1; disable_symlinks if_not_owner; }
        location ~ ^/t(/.+/)off$ { alias {html}$1; }
'''), files={'html/real.txt': 'x'})
    os.symlink('real.txt', os.path.join(s.html, 'link'))
    assert s.get('/t/link/on').status in (403, 404)
    assert s.get('/t/link/owner').status == 404
    assert s.get('/t/link/off').status == 404


@pytest.mark.parametrize('args,msg', [
    ('off from=/x', '"from=" cannot be used with "off" parameter'),
    ('maybe', 'invalid parameter "maybe"'),
])
def test_config_errors(run_cli, prefix, args, msg):
    conf = prefix.conf(simple('location / { disable_symlinks %s; }' % args))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert res.rc != 0
    assert msg in res.err, res.err
