"""Edges of shared memory zone arguments (conf/zone.c) as limit_req_zone / limit_conn_zone read them: a size in
gigabytes is refused like nginx's ngx_parse_size does, an empty zone name is "must have zone parameter", each with
the directive's file:line."""
import re

import pytest

from conftest import simple


@pytest.mark.parametrize('directive,msg', [
    ('limit_req_zone $binary_remote_addr zone=one:1g rate=1r/s;', 'invalid zone size "zone=one:1g"'),
    ('limit_req_zone $binary_remote_addr zone=one:1G rate=1r/s;', 'invalid zone size "zone=one:1G"'),
    ('limit_conn_zone $binary_remote_addr zone=two:1g;', 'invalid zone size "zone=two:1g"'),
    ('limit_conn_zone $binary_remote_addr zone=:1m;', '"limit_conn_zone" must have "zone" parameter'),
    ('limit_req_zone $binary_remote_addr zone=:1m rate=1r/s;', '"limit_req_zone" must have "zone" parameter'),
    ('limit_conn_zone $binary_remote_addr zone=two;', 'invalid zone size "zone=two"'),
])
def test_zone_argument_errors(prefix, run_cli, directive, msg):
    path = prefix.conf(simple('return 204;', http_extra=directive))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    line = [i for i, l in enumerate(open(path).read().split('\n'), 1) if directive in l][0]
    assert re.search(re.escape(msg) + r' in %s:%d' % (re.escape(path), line), r.err), r.err
