"""Duplicate proxy_ssl_* directives and proxy_temp_path/proxy_bind values refused by `-t` with nginx's message at
the second directive's file:line. They run against Debian's nginx too."""
import pytest

CASES = [
    ('proxy_ssl_name a.test;\n proxy_ssl_name b.test;', 'proxy_ssl_name b', '"proxy_ssl_name" directive is duplicate'),
    ('proxy_ssl_crl a.crl;\n proxy_ssl_crl b.crl;', 'proxy_ssl_crl b', '"proxy_ssl_crl" directive is duplicate'),
    ('proxy_ssl_certificate_key a.key;\n proxy_ssl_certificate_key b.key;', 'proxy_ssl_certificate_key b',
     '"proxy_ssl_certificate_key" directive is duplicate'),
    ('proxy_ssl_password_file a;\n proxy_ssl_password_file b;', 'proxy_ssl_password_file b',
     '"proxy_ssl_password_file" directive is duplicate'),
    ('proxy_ssl_ciphers HIGH;\n proxy_ssl_ciphers LOW;', 'proxy_ssl_ciphers LOW', '"proxy_ssl_ciphers" directive is duplicate'),
    ('proxy_bind 127.0.0.1;\n proxy_bind 127.0.0.2;', 'proxy_bind 127.0.0.2', '"proxy_bind" directive is duplicate'),
]


@pytest.mark.parametrize('loc,needle,msg', CASES, ids=[str(i) for i in range(len(CASES))])
def test_duplicates(run_cli, prefix, loc, needle, msg):
    conf = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port};\n        location / {\n'
                       '        proxy_pass https://127.0.0.1:1;\n        %s\n        }\n    }\n}\n' % loc)
    prefix.write('conf/a', 'x\n')
    prefix.write('conf/b', 'y\n')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = [n for n, l in enumerate(open(conf), 1) if needle in l][-1]
    want = '%s in %s:%d' % (msg, conf, line)
    assert '[emerg]' in res.err and want in res.err, (want, res.err)


@pytest.mark.parametrize('levels', ['0', '5 6', '1 x'])
def test_temp_path_levels(run_cli, prefix, levels):
    """Each level is a number of digits of the file name: at least 1, and 10 digits in all at most."""
    conf = prefix.conf('http {\n    proxy_temp_path {tmp}/t %s;\n    server { listen 127.0.0.1:{port}; }\n}\n' % levels)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = [n for n, l in enumerate(open(conf), 1) if 'proxy_temp_path' in l][-1]
    assert '[emerg]' in res.err and '%s:%d' % (conf, line) in res.err, res.err
