"""valid_referers edges (nginx's ngx_http_referer_module docs): ".name" covers the name and its subdomains, the
longest matching wildcard decides, a URI prefix needs the Referer's path to start with it, server_names takes the
server's regex and wildcard names, and the values the directive rejects at -t."""
import pytest

from conftest import simple
from helpers.conf_t import fails_at, passes, http_srv

CONF = simple(r'''
        server_name localhost ~^re\d+\.test$ www.tail.*;
        valid_referers none srv.test;
        location /w {
            valid_referers .dot.test *.a.b.test/deep/ *.b.test pre.* pre.fix.*/only/ site.test/pics/;
            valid_referers other.test;
            return 200 "[$invalid_referer]";
        }
        location /sn { valid_referers server_names; return 200 "[$invalid_referer]"; }
        location /inherit { return 200 "[$invalid_referer]"; }
''')


@pytest.fixture
def srv(server):
    return server(CONF)


@pytest.mark.parametrize('referer,invalid', [
    ('http://dot.test/', ''),             # ".dot.test" covers dot.test itself
    ('http://x.dot.test/', ''),           # ... and its subdomains
    ('http://xdot.test/', '1'),
    ('http://x.a.b.test/deep/1', ''),     # the longest head wildcard decides: *.a.b.test with its prefix
    ('http://x.a.b.test/flat', '1'),
    ('http://x.c.b.test/flat', ''),       # only *.b.test matches
    ('http://pre.fix.io/only/x', ''),     # the longest tail wildcard decides: pre.fix.* with its prefix
    ('http://pre.fix.io/x', '1'),
    ('http://pre.io/x', ''),
    ('http://site.test', '1'),            # the URI prefix needs a path
    ('http://site.test/pic', '1'),        # shorter than the prefix
    ('http://site.test/pics/a', ''),
    ('http://other.test/', ''),           # a second valid_referers on the level adds to the list
    ('ftp://other.test/file', '1'),       # neither http:// nor https://: "blocked" is not listed
    ('http://a', '1'),                    # too short to hold a host
    ('https://srv.test/', '1'),           # the server's list is not merged into the location's own
    (None, '1'),
])
def test_wildcards_and_prefixes(srv, referer, invalid):
    headers = {'Referer': referer} if referer is not None else {}
    assert srv.get('/w', headers=headers).text == '[%s]' % invalid


@pytest.mark.parametrize('referer,invalid', [
    ('http://re12.test/', ''),            # a regex server name, against the host
    ('http://re.test/', '1'),
    ('http://www.tail.org/', ''),         # a tail wildcard server name
    ('http://localhost:8080/', ''),
    ('http://www.tail/', '1'),
])
def test_server_names_forms(srv, referer, invalid):
    assert srv.get('/sn', headers={'Referer': referer}).text == '[%s]' % invalid


@pytest.mark.parametrize('referer,invalid', [
    (None, ''), ('http://srv.test/a', ''), ('https://SRV.TEST', ''), ('http://w.test/', '1'), ('srv.test', '1')])
def test_location_inherits_the_server_list(srv, referer, invalid):
    headers = {'Referer': referer} if referer is not None else {}
    assert srv.get('/inherit', headers=headers).text == '[%s]' % invalid


ERRORS = [
    ('valid_referers a..b.test;', 'invalid hostname or wildcard "a..b.test"'),
    ('valid_referers *.a.*;', 'invalid hostname or wildcard "*.a.*"'),
    ('valid_referers x.test X.TEST;', 'conflicting parameter "x.test"'),
    ('valid_referers .x.test x.test;', 'conflicting parameter "x.test"'),
    ('valid_referers "";', 'invalid referer ""'),
    ('valid_referers ~;', 'empty regex in "~"'),
    ('valid_referers ~(x;', 'pcre2_compile() failed: missing closing parenthesis in "(x"'),
    ('referer_hash_max_size abc;', '"referer_hash_max_size" directive invalid number'),
]


@pytest.mark.parametrize('directive,message', ERRORS, ids=[e[0] for e in ERRORS])
def test_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv('location / {\n            %s\n        }' % directive), directive, message)


@pytest.mark.hayate_only  # nginx reports the merge-time error at the end of the http block, without the directive line
@pytest.mark.parametrize('directive', ['valid_referers none;', 'valid_referers blocked ~x;'])
def test_none_or_blocked_alone(prefix, run_cli, directive):
    fails_at(prefix, run_cli, http_srv('location / {\n            %s\n        }' % directive), directive,
             'the "none" or "blocked" referers are specified in the "valid_referers" directive without any valid '
             'referer')


def test_server_names_alone_with_none_is_fine(prefix, run_cli):
    passes(prefix, run_cli, http_srv('server_name a.test;\n        valid_referers none server_names;'))
