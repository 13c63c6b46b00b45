"""secure_link edges (nginx's ngx_http_secure_link_module docs): a hash longer than an MD5 in base64url, an
expiry of 0, secure_link without secure_link_md5, old-form URIs cut short, and duplicates rejected at -t."""
import base64
import hashlib

import pytest

from helpers.conf_t import fails_at, http_srv

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        location /n/ {
            secure_link $arg_h,$arg_e;
            secure_link_md5 "k$uri$arg_e";
            return 200 "[$secure_link][$secure_link_expires]";
        }
        location /nomd5/ {
            secure_link $arg_h;
            return 200 "[$secure_link][$secure_link_expires]";
        }
        location /old/ {
            secure_link_secret s3cret;
            return 200 "[$secure_link]";
        }
    }
}
'''


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip('=')


@pytest.fixture
def srv(server):
    return server(CONF, full=False)


def test_new_form_edges(srv):
    h = b64url(hashlib.md5(b'k/n/a').digest())
    assert srv.get('/n/a?h=' + h).text == '[][]'                     # "h,": an empty expiry is not a time
    assert srv.get('/n/a?h=' + h + 'AAA').text == '[][]'            # 25 characters: longer than any MD5
    h0 = b64url(hashlib.md5(b'k/n/a0').digest())
    assert srv.get('/n/a?h=%s&e=0' % h0).text == '[][]'             # an expiry of 0 is not a time
    he = b64url(hashlib.md5(b'k/n/a2000000000').digest())
    assert srv.get('/n/a?h=%s&e=2000000000' % he).text == '[1][2000000000]'
    hp = b64url(hashlib.md5(b'k/n/a1000000000').digest())
    assert srv.get('/n/a?h=%s&e=1000000000' % hp).text == '[0][1000000000]'  # in the past


def test_secure_link_without_md5_is_never_valid(srv):
    h = b64url(hashlib.md5(b'/nomd5/a').digest())
    assert srv.get('/nomd5/a?h=' + h).text == '[][]'


def test_old_form_cut_short(srv):
    good = hashlib.md5(b'f' + b's3cret').hexdigest()
    assert srv.get('/old/%s/f' % good).text == '[f]'
    assert srv.get('/old/').text == '[]'                                # nothing after the prefix
    assert srv.get('/old/%s' % good[:20]).text == '[]'                  # no slash after the hash
    assert srv.get('/old/%s/f' % good[:31]).text == '[]'                # 31 hex digits
    assert srv.get('/old/%s/f' % (good[:30] + '::')).text == '[]'       # not hex
    assert srv.get('/old/%s/f' % good.upper()).text == '[f]'


@pytest.mark.parametrize('directive,message', [
    ('secure_link $arg_a; secure_link $arg_b;', '"secure_link" directive is duplicate'),
    ('secure_link_md5 a; secure_link_md5 b;', '"secure_link_md5" directive is duplicate'),
    ('secure_link_secret a; secure_link_secret b;', '"secure_link_secret" directive is duplicate'),
])
def test_duplicates_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv('location / {\n            %s\n        }' % directive), directive, message)
