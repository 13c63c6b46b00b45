"""proxy_pass configuration errors (`-t`, exit 1, [emerg] at the directive's file:line): a URI part where nginx
forbids one (regex and named locations, "if", limit_except), URLs that do not parse (other schemes, a bad
port, an unclosed IPv6 bracket, no host). Where hayate's words differ (DIFFERENCES.md: "invalid URL prefix"
for every malformed URL) only the place is checked; they run against Debian's nginx too."""
import pytest

URI_MSG = ('"proxy_pass" cannot have URI part in location given by regular expression, or inside named location, '
           'or inside "if" statement, or inside "limit_except" block')

CASES = [
    ('location ~ ^/x { proxy_pass http://127.0.0.1:1/uri; }', 'proxy_pass', URI_MSG),
    ('location ~* ^/x { proxy_pass http://127.0.0.1:1/uri; }', 'proxy_pass', URI_MSG),
    ('location @n { proxy_pass http://127.0.0.1:1/uri; }', 'proxy_pass', URI_MSG),
    ('location / { if ($arg_a) { proxy_pass http://127.0.0.1:1/uri; } }', 'proxy_pass', URI_MSG),
    ('location / { limit_except GET { proxy_pass http://127.0.0.1:1/uri; } }', 'proxy_pass', URI_MSG),
    ('location / { proxy_pass ftp://127.0.0.1:1; }', 'proxy_pass', None),
    ('location / { proxy_pass http://127.0.0.1:99999; }', 'proxy_pass', None),
    ('location / { proxy_pass http://[::1; }', 'proxy_pass', None),
    ('location / { proxy_pass http://[::1]x/; }', 'proxy_pass', None),
    ('location / { proxy_pass http://; }', 'proxy_pass', None),
    ('location / { proxy_pass http://:80/; }', 'proxy_pass', None),
]


@pytest.mark.parametrize('loc,needle,msg', CASES, ids=[str(i) for i in range(len(CASES))])
def test_proxy_pass_errors(run_cli, prefix, loc, needle, msg):
    conf = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port};\n        %s\n    }\n}\n' % loc)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = [n for n, l in enumerate(open(conf), 1) if needle in l][-1]
    want = '%s in %s:%d' % (msg, conf, line) if msg else '%s:%d' % (conf, line)
    assert '[emerg]' in res.err and want in res.err, (want, res.err)


@pytest.mark.parametrize('loc', [
    'location ~ ^/x { proxy_pass http://127.0.0.1:1; }',
    'location @n { proxy_pass http://127.0.0.1:1; }',
    'location / { if ($arg_a) { proxy_pass http://127.0.0.1:1; } }',
    'location ~ ^/x { proxy_pass http://127.0.0.1:1$request_uri; }',
])
def test_without_uri_part_accepted(run_cli, prefix, loc):
    conf = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port};\n        %s\n    }\n}\n' % loc)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 0, res


def test_other_scheme_is_an_invalid_prefix(run_cli, prefix):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { proxy_pass ftp://127.0.0.1:1; } } }')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1 and 'invalid URL prefix' in res.err, res
