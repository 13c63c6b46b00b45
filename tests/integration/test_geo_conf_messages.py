"""geo blocks: errors and warnings at -t in nginx 1.22's words (checked with its -t) at file:line."""
import re

import pytest

CASES = [
    ('geo $g { 10.0.0.0/33 a; }', 'emerg', 'invalid network "10.0.0.0/33"'),
    ('geo $g { 10.0.0.300 a; }', 'emerg', 'invalid network "10.0.0.300"'),
    ('geo $g { ::1/129 a; }', 'emerg', 'invalid network "::1/129"'),
    ('geo $g { 10.0.0.1/24 a; }', 'warn', 'low address bits of 10.0.0.1/24 are meaningless'),
    ('geo $g { 10.0.0.0/24 a; 10.0.0.0/24 b; }', 'warn',
     'duplicate network "10.0.0.0/24", value: "b", old value: "a"'),
    ('geo $g { ranges; 10.0.0.9-10.0.0.1 a; }', 'emerg', 'invalid range "10.0.0.9-10.0.0.1"'),
    ('geo $g { ranges; 10.0.0.1-x a; }', 'emerg', 'invalid range "10.0.0.1-x"'),
    ('geo $g { default a; ranges; }', 'emerg', 'the "ranges" directive must be the first directive inside "geo" block'),
    ('geo $g { a b c; }', 'emerg', 'invalid number of the geo parameters'),
    ('geo $g { ranges; delete 10.0.0.1-10.0.0.2; }', 'warn', 'no address range "10.0.0.1-10.0.0.2" to delete'),
    ('geo $g { delete 10.0.0.0/8; }', 'warn', 'no network "10.0.0.0/8" to delete'),
    ('geo $g { delete 10.0.0.300; }', 'emerg', 'invalid network "10.0.0.300"'),
    ('geo g { }', 'emerg', 'invalid variable name "g"'),
    ('geo $a g { }', 'emerg', 'invalid variable name "g"'),
    ('geo $a $g x { }', 'emerg', 'invalid number of arguments in "geo" directive'),
    ('geo $g { proxy 1.2.3.400; }', 'emerg', 'invalid network "1.2.3.400"'),
    ('geo $g { include /nonexistent/x.geo; }', 'emerg',
     'open() "/nonexistent/x.geo" failed (2: No such file or directory)'),
]


@pytest.mark.parametrize('block,level,message', CASES, ids=[c[0] for c in CASES])
def test_geo_messages(prefix, run_cli, block, level, message):
    path = prefix.conf('http {\n    %s\n}\n' % block)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    line = [i for i, l in enumerate(open(path), 1) if block in l][0]
    assert res.rc == (1 if level == 'emerg' else 0), res
    assert re.search(r'\[%s\] (\d+#\d+: )?%s in %s:%d\n' % (level, re.escape(message), re.escape(path), line),
                     res.err), res.err
