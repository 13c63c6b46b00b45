"""SSI edges (ngx_http_ssi_module): variables written ${name} and \\$, if/elif with "!=", regular expressions
(named captures become variables, a malformed or uncompilable one is an error), include's checks (one of
virtual/file, wait=yes|no, stub blocks, no include inside a block, relative and %-encoded paths, unsafe
"..", query strings), echo/set/config/block parameter errors, and the command parser's corners (single quotes,
backslashes, "-- >", a parameter without a value, unknown commands). Each page's output is what Debian's
nginx 1.22 produces; they run against it too."""
import pytest

from conftest import simple

ERR = '[an error occurred while processing the directive]'

PAGES = [
    # variables
    ('<!--#set var="a" value="x${arg_p}y" --><!--#echo var="a" -->', '?p=Q', 'xQy'),
    ('<!--#set var="a" value="x${arg_p" --><!--#echo var="a" -->', '?p=Q', ERR + '(none)'),
    ('<!--#set var="a" value="\\$arg_p" --><!--#echo var="a" -->', '?p=Q', '$arg_p'),
    ('<!--#set var="a" value="[$arg_p]$" --><!--#echo var="a" -->', '?p=Q', ERR + '(none)'),
    ('<!--#set var="a" value="$1" -->[<!--#echo var="a" -->]', '', '[]'),
    ('<!--#set var="a" value="1" --><!--#set var="a" value="2" --><!--#echo var="a" -->', '', '2'),
    # if / elif / else
    ('<!--#if expr="$arg_a != x" -->Y<!--#else -->N<!--#endif -->', '?a=x', 'N'),
    ('<!--#if expr="$arg_a != x" -->Y<!--#else -->N<!--#endif -->', '?a=z', 'Y'),
    ('<!--#if expr="$arg_a=x" -->Y<!--#else -->N<!--#endif -->', '?a=x', 'Y'),
    ('<!--#if expr="$arg_a = $arg_b" -->Y<!--#else -->N<!--#endif -->', '?a=1&b=1', 'Y'),
    ('<!--#if expr="$arg_a = $arg_b" -->Y<!--#else -->N<!--#endif -->', '?a=1&b=12', 'N'),
    ('<!--#if expr="$arg_a" -->Y<!--#else -->N<!--#endif -->', '', 'N'),
    ('<!--#if expr="$arg_a = /^a(?<n>[0-9]+)/" -->Y<!--#echo var="n" --><!--#else -->N<!--#endif -->',
     '?a=a42', 'Y42'),
    ('<!--#if expr="$arg_a != /^a[0-9]/" -->Y<!--#else -->N<!--#endif -->', '?a=b1', 'Y'),
    ('<!--#if expr="$arg_a = /^a" -->Y<!--#else -->N<!--#endif -->', '?a=a', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if expr="$arg_a = /(/" -->Y<!--#else -->N<!--#endif -->', '?a=a', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if expr="$arg_a < b" -->Y<!--#else -->N<!--#endif -->', '?a=a', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if -->Y<!--#endif -->', '', ERR + 'Y' + ERR),
    ('<!--#if expr="x" -->A<!--#elif expr="y" -->B<!--#else -->C<!--#endif -->', '', 'A'),
    ('<!--#if expr="" -->A<!--#elif expr="y" -->B<!--#else -->C<!--#endif -->', '', 'B'),
    ('<!--#if expr="" -->A<!--#elif expr="" -->B<!--#else -->C<!--#endif -->', '', 'C'),
    # include
    ('<!--#include virtual="/inc.html" wait="maybe" -->', '', ERR),
    ('<!--#include virtual="/inc.html" file="/inc.html" -->', '', ERR),
    ('<!--#include -->', '', ERR),
    ('<!--#include virtual="/inc.html" stub="nope" -->', '', ERR),
    ('<!--#include virtual="/inc.html" bogus="1" -->', '', ERR),
    ('<!--#block name="b" --><!--#include virtual="/inc.html" --><!--#endblock -->[]', '', '[]'),
    ('[<!--#include virtual="sub/inc.html" -->]', '', '[SUB]'),
    ('[<!--#include virtual="/in%63.html" -->]', '', '[INC]'),
    ('[<!--#include virtual="/in%00c.html" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/sub/../inc.html" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/q.html?x=7" -->]', '', '[x=7]'),
    ('[<!--#include file="/inc.html" wait="yes" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/missing.html" -->]', '', '404'),
    ('<!--#block name="st" -->STUB<!--#endblock -->[<!--#include virtual="/missing.html" stub="st" -->]',
     '', '[STUB]'),
    ('[<!--#include virtual="/inc.html" set="v" --><!--#echo var="v" -->]', '', '[INC]'),
    # echo / set / config / block errors
    ('<!--#echo var="arg_a" encoding="rot13" -->', '?a=1', '1'),
    ('<!--#echo var="arg_a" bogus="1" -->', '?a=1', ERR),
    ('<!--#echo encoding="url" -->', '?a=1', ERR),
    ('<!--#set var="a" -->', '', ERR),
    ('<!--#set var="a" value="b" bogus="c" -->', '', ERR),
    ('<!--#config bogus="c" -->', '', ERR),
    ('<!--#config errmsg="OOPS" --><!--#echo -->', '', 'OOPS'),
    ('<!--#config timefmt="%Y" -->[<!--#echo var="date_gmt" -->]', '', None),
    ('<!--#block -->x<!--#endblock -->', '', ERR + 'x'),
    ('<!--#endblock -->x', '', 'x'),
    ('<!--#set var="d" value="0-9" --><!--#if expr="$arg_a = /^a[$d]+\\$/" -->Y<!--#else -->N<!--#endif -->',
     '?a=a42', 'Y'),
    ('<!--#if expr="$arg_a = /^a[0-9]+$/" -->Y<!--#else -->N<!--#endif -->', '?a=a42', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#nosuchcommand -->', '', ERR),
    ('<!--#set var="a" value="[${1}|$9]" --><!--#echo var="a" -->', '', '[|]'),
    ('<!--#set var="a" value="\\x" --><!--#echo var="a" -->', '', '\\x'),
    ('<!--#set value="x" -->', '', ERR),
    ('<!--#set var="a" value="a b#c%d\'e\x01" --><!--#echo var="a" encoding="url" -->', '', 'a%20b%23c%25d%27e%01'),
    ('<!--#set var="a" value="q\'&quot;" --><!--#echo var="a" encoding="entity" -->', '', 'q\'&amp;quot;'),
    ('<!--#if expr="   $arg_a" -->Y<!--#else -->N<!--#endif -->', '?a=1', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if expr="$arg_a !x" -->Y<!--#else -->N<!--#endif -->', '?a=1', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if expr="$arg_a =    1" -->Y<!--#else -->N<!--#endif -->', '?a=1', 'Y'),
    ('<!--#if expr="$arg_none = /^x*/" -->Y<!--#else -->N<!--#endif -->', '', 'Y'),
    ('<!--#if expr="$arg_a = ${b" -->Y<!--#else -->N<!--#endif -->', '?a=1', ERR + 'Y' + ERR + 'N' + ERR),
    ('<!--#if expr="x" bogus="y" -->Y<!--#endif -->', '', ERR + 'Y' + ERR),
    ('<!--#if expr="" -->A<!--#elif -->B<!--#else -->C<!--#endif -->', '', ERR + 'C'),
    ('<!--#if expr="" --><!--#nosuch -->A<!--#endif -->B', '', 'B'),
    ('<!--#block name="e" --><!--#endblock -->[<!--#include virtual="/missing.html" stub="e" -->]', '', '[]'),
    ('<!--#block name="a" --><!--#block name="b" --><!--#endblock -->', '', ''),
    ('<!--#block name="a" x="1" --><!--#endblock -->', '', ERR),
    ('[<!--#include virtual="/sub/%2e%2e/inc.html" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/sub/.." -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/a..b/../inc.html" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="${x" -->]', '', '[' + ERR + ']'),
    ('[<!--#include virtual="/inc.html" wait="no" -->]', '', '[INC]'),
    # the parser
    ("<!--#set var='a' value='s q' --><!--#echo var='a' -->", '', 's q'),
    ('<!--#set var="a" value="a\\"b\\\\c\\d" --><!--#echo var="a" encoding="none" -->', '', 'a"b\\c\\d'),
    ('<!--#echo var="arg_a" -- >|', '?a=1', ''),
    ('<!--#echo var -->|', '?a=1', ERR + '|'),
    ('<!--#echo var=arg_a -->|', '?a=1', ERR + '|'),
    ('<!--#echo var = "arg_a" -->|', '?a=1', '1|'),
    ('<!--# echo var="arg_a" -->|', '?a=1', '1|'),
    ('<!--#echo var="arg_a"-->|', '?a=1', '1|'),
    ('<!--#' + 'e' * 40 + ' -->|', '', ERR + '|'),
    ('<!--#echo ' + ' '.join('p%d="1"' % i for i in range(40)) + ' -->|', '', ERR + '|'),
    ('<!--#echo v%ar="1" -->|', '', ERR + '|'),
    ('<!-- plain comment -->|<!--x-->', '', '<!-- plain comment -->|<!--x-->'),
]


@pytest.fixture(scope='module')
def pages():
    return {'html/p%d.html' % i: p[0] for i, p in enumerate(PAGES)}


@pytest.fixture
def srv(server, pages):
    files = dict(pages)
    files.update({'html/inc.html': 'INC', 'html/sub/inc.html': 'SUB',
                  'html/q.html': 'x=<!--#echo var="arg_x" -->'})
    return server(simple('root {html};\n location / { ssi on; }'), files=files)


def test_pages(srv):
    bad = []
    for i, (page, args, want) in enumerate(PAGES):
        r = srv.get('/p%d.html%s' % (i, args))
        got = r.body.decode('utf-8', 'replace')
        if want is None:
            import time
            want = time.strftime('[%Y]', time.gmtime())
        if want == '404':
            ok = got.startswith('[<html>') and '404 Not Found' in got
        else:
            ok = got == want
        if r.status != 200 or not ok:
            bad.append((i, page, r.status, got, want))
    assert not bad, '\n'.join(repr(b) for b in bad)
