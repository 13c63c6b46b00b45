"""geo's delete of a network or range that is not there (a warning, nginx's words), proxy_recursive over
X-Forwarded-For, and access_log to syslog refusing a buffer."""
import re

import pytest

from conftest import simple
from helpers.conf_t import fails_at, passes, line_of


@pytest.mark.parametrize('block,warning', [
    ('geo $g { default a; 10.0.0.0/8 b; delete 10.9.0.0/16; }', 'no network "10.9.0.0/16" to delete'),
    ('geo $g { ranges; default a; 10.0.0.1-10.0.0.9 b; delete 10.1.0.1-10.1.0.9; }',
     'no address range "10.1.0.1-10.1.0.9" to delete'),
])
def test_delete_what_is_not_there_warns(prefix, run_cli, block, warning):
    res = passes(prefix, run_cli, 'http {\n    %s\n}\n' % block)
    line = line_of(prefix.conf_path, 'geo ')
    assert re.search(r'\[warn\] .*%s in \S+:%d\n' % (re.escape(warning), line), res.err), res.err


def test_geo_proxy_recursive(server):
    s = server(simple('location / { return 200 "$g"; }', http_extra='''
    geo $g {
        proxy 127.0.0.1;
        proxy 10.0.0.0/8;
        proxy_recursive;
        default none;
        10.0.0.0/8 ten;
        192.168.0.0/16 lan;
    }'''))
    # recursive: trusted proxies are skipped from the right, the first untrusted address decides
    assert s.get('/', headers={'X-Forwarded-For': '192.168.1.1, 10.1.1.1'}).text == 'lan'
    assert s.get('/', headers={'X-Forwarded-For': '10.2.2.2, 10.1.1.1'}).text == 'ten'


def test_syslog_cannot_be_buffered(prefix, run_cli):
    d = 'access_log syslog:server=127.0.0.1:5514 combined buffer=4k;'
    fails_at(prefix, run_cli, 'http {\n    server {\n        listen 127.0.0.1:{port};\n        %s\n    }\n}\n' % d, d,
             'logs to syslog cannot be buffered')
