"""secure_link (ngx_http_secure_link_module): $secure_link is "1" for a base64url MD5 of secure_link_md5's
text, "0" once the expiry has passed, empty (not found) otherwise; $secure_link_expires; the old
secure_link_secret form (/prefix/HEX-MD5/link); inheritance. Passes with nginx 1.22."""
import base64
import hashlib
import time

import pytest


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip('=')


CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        root {html};
        secure_link      $arg_h;
        secure_link_md5  "k$uri";

        location / {
            return 200 "[$secure_link][$secure_link_expires]";
        }
        location /exp/ {
            secure_link      $arg_h,$arg_e;
            secure_link_md5  "k$uri$arg_e";
            return 200 "[$secure_link][$secure_link_expires]";
        }
        location /nomd5/ {
            secure_link_md5 "other$uri";
            return 200 "[$secure_link]";
        }
        location /old/ {
            secure_link_secret s3cret;
            return 200 "[$secure_link]";
        }
        location /none/ {
            secure_link_secret s3cret;
            location /none/new/ {
                secure_link $arg_h;
                secure_link_md5 "n$uri";
                return 200 "[$secure_link]";
            }
        }
    }
}
'''


@pytest.fixture
def srv(server):
    return server(CONF)


def body(srv, path):
    r = srv.get(path)
    assert r.status == 200
    return r.body.decode()


def test_secure_link_valid_and_mismatch(srv):
    h = b64url(hashlib.md5(b'k/a').digest())
    assert body(srv, '/a?h=' + h) == '[1][]'
    assert body(srv, '/a?h=' + h + '==') == '[1][]'          # padding allowed
    assert body(srv, '/b?h=' + h) == '[][]'                  # other URI
    assert body(srv, '/a?h=' + h[:-1] + 'B') == '[][]'
    assert body(srv, '/a?h=' + h + 'QQ') == '[][]'           # too long
    assert body(srv, '/a?h=' + h.replace(h[0], '+')) == '[][]'  # not base64url
    assert body(srv, '/a') == '[][]'


def test_secure_link_expires(srv):
    for delta, want in ((3600, '1'), (-3600, '0')):
        e = str(int(time.time()) + delta)
        h = b64url(hashlib.md5(('k/exp/a' + e).encode()).digest())
        assert body(srv, '/exp/a?h=%s&e=%s' % (h, e)) == '[%s][%s]' % (want, e)
    h = b64url(hashlib.md5(b'k/exp/a0').digest())
    assert body(srv, '/exp/a?h=%s&e=0' % h) == '[][]'       # not a positive time
    h = b64url(hashlib.md5(b'k/exp/a').digest())
    assert body(srv, '/exp/a?h=%s' % h) == '[][]'           # "HASH," with no time


def test_secure_link_md5_inherited_and_overridden(srv):
    h = b64url(hashlib.md5(b'other/nomd5/x').digest())
    assert body(srv, '/nomd5/x?h=' + h) == '[1]'


def test_secure_link_secret(srv):
    good = hashlib.md5(b'f/g.txt' + b's3cret').hexdigest()
    assert body(srv, '/old/%s/f/g.txt' % good) == '[f/g.txt]'
    assert body(srv, '/old/%s/f/g.txt' % good.upper()) == '[f/g.txt]'
    assert body(srv, '/old/%s/f/h.txt' % good) == '[]'
    assert body(srv, '/old/abc/f/g.txt') == '[]'
    assert body(srv, '/old/%s/' % good) == '[]'


def test_secure_link_new_form_replaces_inherited_secret(srv):
    h = b64url(hashlib.md5(b'n/none/new/x').digest())
    assert body(srv, '/none/new/x?h=' + h) == '[1]'


def test_secure_link_secret_mixed_is_an_error(run_cli, prefix):
    conf = prefix.conf('http {\n server {\n  location / {\n   secure_link $arg_h;\n'
                       '   secure_link_secret x;\n  }\n }\n}\n')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert '"secure_link_secret" cannot be mixed with "secure_link" and "secure_link_md5"' in res.err, res.err


def test_secure_link_edge_forms(srv):
    """Hashes that cannot be base64url (a length of 4n+1), a time that is not a number or overflows, hex that is
    not hex, and secret-form URIs without the hash's slashes (nginx 1.22's answers)."""
    h = b64url(hashlib.md5(b'k/a').digest())
    assert body(srv, '/a?h=' + h + 'A') == '[][]'               # 23 characters: too long for 16 bytes
    assert body(srv, '/a?h=' + 'A' * 21) == '[][]'              # 4n+1: not base64
    e_hash = b64url(hashlib.md5(b'k/exp/a12x').digest())
    assert body(srv, '/exp/a?h=%s&e=12x' % e_hash) == '[][]'    # the time is not a number
    big = '9' * 25
    e_hash = b64url(hashlib.md5(('k/exp/a' + big).encode()).digest())
    assert body(srv, '/exp/a?h=%s&e=%s' % (e_hash, big)) == '[][]'  # too big to be a time
    good = hashlib.md5(b'f/g.txt' + b's3cret').hexdigest()
    assert body(srv, '/old/%s/f/g.txt' % ('g' + good[1:])) == '[]'   # not hex
    assert body(srv, '/old/%s/f/g.txt' % (good[:-1] + 'G')) == '[]'
    assert body(srv, '/old/' + good) == '[]'                   # no slash after the hash
