"""Core directives' -t messages not checked elsewhere (nginx's words at the directive's file:line): location
modifiers and duplicates, server_name forms, listen parameters hayate ignores, duplicate extensions in types{}
(the last type wins, with a warning naming the previous one)."""
import re

import pytest

from helpers.conf_t import fails_at, passes, http_srv

ERRORS = [
    ('location ~~ /x { }', 'invalid location modifier "~~"'),
    ('location = /a { }\n        location = /a { }  # two', 'duplicate location "/a"'),
    ('location ^~ /b/ { }\n        location /b/ { }', 'duplicate location "/b/"'),
    ('server_name ~;', 'empty regex in server name "~"'),
]


@pytest.mark.parametrize('directive,message', ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv(directive), directive.split('\n')[-1].strip(), message)


@pytest.mark.hayate_only  # nginx finds it when it builds the names' hashes, and names no line
def test_bad_wildcard_server_name(prefix, run_cli):
    fails_at(prefix, run_cli, http_srv('server_name a*b.test;'), 'a*b.test',
             r'invalid server name or wildcard "a\*b.test" on 127.0.0.1:\d+', regex=True)


def test_duplicate_extension_warns_with_the_previous_type(prefix, run_cli):
    res = passes(prefix, run_cli, 'http {\n    types {\n        text/x-a aa;\n        text/x-b AA bb;\n    }\n'
                                  '    server {\n        listen 127.0.0.1:{port};\n    }\n}\n')
    assert re.search(r'\[warn\] .*duplicate extension "aa", content type: "text/x-b", previous content type: '
                     r'"text/x-a" in \S+:\d+', res.err), res.err


def test_last_type_of_an_extension_wins(server):
    s = server('http {\n    types {\n        text/x-a aa;\n        text/x-b aa;\n    }\n    server {\n'
               '        listen 127.0.0.1:{port};\n        root {html};\n    }\n}\n', files={'html/f.aa': 'x'})
    assert s.get('/f.aa').header('Content-Type') == 'text/x-b'


@pytest.mark.hayate_only  # nginx applies these (FreeBSD's accept filters and setfib, TCP Fast Open)
@pytest.mark.parametrize('param', ['fastopen=10', 'setfib=1', 'accept_filter=dataready'])
def test_ignored_listen_parameters_warn(prefix, run_cli, param):
    res = passes(prefix, run_cli, 'http {\n    server {\n        listen 127.0.0.1:{port} %s;\n    }\n}\n' % param)
    name = param.split('=')[0]
    assert '[warn]' in res.err and ('the "%s" parameter of the "listen" directive is ignored by hayate' % name) in res.err
