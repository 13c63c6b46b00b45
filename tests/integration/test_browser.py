"""nginx's browser module: $modern_browser, $ancient_browser, $msie (modern_browser, ancient_browser and their
_value directives), from nginx's documentation and source. The same table passes against Debian's nginx
(HY_BIN=/usr/sbin/nginx)."""
import pytest

from conftest import IS_NGINX

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            modern_browser gecko 1.9;
            modern_browser msie 8.0;
            modern_browser safari 525.0.1;
            modern_browser konqueror 3.5;
            ancient_browser Links Lynx netscape4;
            modern_browser_value "modern.";
            ancient_browser_value "old";
            return 200 "m=$modern_browser a=$ancient_browser msie=$msie";
        }
        location /unlisted {
            modern_browser opera 9.0;
            modern_browser unlisted;
            ancient_browser Links;
            return 200 "m=$modern_browser a=$ancient_browser";
        }
        location /default {
            return 200 "m=$modern_browser a=$ancient_browser msie=$msie";
        }
    }
}
'''

FF = 'Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0'
FF_OLD = 'Mozilla/5.0 (Windows; U; Windows NT 5.1; ru-RU; rv:1.8.0.5) Gecko/20060729 Firefox/1.5.0.5'
IE7 = 'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1)'
IE9 = 'Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)'
OPERA_AS_IE = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0; en) Opera 8.0'
SAFARI = 'Mozilla/5.0 (Macintosh; U; PPC Mac OS X; en) AppleWebKit/418 (KHTML, like Gecko) Safari/525.0.2'
SAFARI_OLD = 'Mozilla/5.0 (Macintosh; U; PPC Mac OS X; en) AppleWebKit/418 (KHTML, like Gecko) Safari/525.0.1'
SAFARI_OLDER = 'Mozilla/5.0 (Macintosh; U; PPC Mac OS X; en) AppleWebKit/418 (KHTML, like Gecko) Safari/417.9.3'
KONQ = 'Mozilla/5.0 (compatible; Konqueror/3.5; FreeBSD) KHTML/3.5.1 (like Gecko)'
CURL = 'curl/7.88.1'
NS4 = 'Mozilla/4.72 [en] (X11; U; Linux 2.2.14 i686)'
LYNX = 'Lynx/2.8.9rel.1 libwww-FM/2.14'


@pytest.mark.parametrize('path,ua,want', [
    ('/', FF, 'm=modern. a= msie='),
    ('/', FF_OLD, 'm= a=old msie='),            # rv:1.8.0.5 < 1.9
    ('/', IE7, 'm= a=old msie=1'),
    ('/', IE9, 'm=modern. a= msie=1'),          # "MSIE " is looked for after 25 bytes: any of them
    ('/', OPERA_AS_IE, 'm= a=old msie='),       # Opera not listed: checked first, never modern; not $msie
    ('/', SAFARI, 'm=modern. a= msie='),
    ('/', SAFARI_OLD, 'm=modern. a= msie='),    # equal is modern
    ('/', SAFARI_OLDER, 'm= a=old msie='),
    ('/', KONQ, 'm=modern. a= msie='),
    ('/', CURL, 'm= a=old msie='),              # a list without a match and no `unlisted`: ancient
    ('/', None, 'm= a=old msie='),              # no User-Agent
    ('/unlisted', CURL, 'm=1 a='),
    ('/unlisted', None, 'm=1 a='),
    ('/unlisted', 'Opera/9.01 (X11; FreeBSD 6 i386; U; en)', 'm=1 a='),
    ('/unlisted', 'Opera/8.0 (Windows NT 5.1; U; ru)', 'm= a=1'),
    ('/unlisted', LYNX, 'm=1 a='),              # no listed browser, not in the ancient list: unlisted
    ('/unlisted', 'Links (2.21; Linux)', 'm= a=1'),  # no listed browser: then the ancient list
    ('/default', CURL, 'm= a=1 msie='),         # no lists: ancient unless `unlisted`
    ('/default', IE7, 'm= a=1 msie=1'),
])
def test_classification(server, path, ua, want):
    srv = server(CONF)
    headers = {'User-Agent': ua} if ua is not None else {}
    r = srv.get(path, headers=headers)
    assert r.status == 200 and r.text == want, (ua, r.text)


def test_ancient_list_without_modern_list(server):
    """No modern_browser list: netscape4 and the ancient strings decide, the rest is modern only with `unlisted`."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            ancient_browser Lynx netscape4;
            modern_browser unlisted;
            return 200 "m=$modern_browser a=$ancient_browser";
        }
    }
}
''')
    for ua, want in ((NS4, 'm= a=1'), (LYNX, 'm= a=1'), (CURL, 'm=1 a='), (FF, 'm=1 a='),
                     ('Mozilla/5.0 (X11)', 'm=1 a=')):
        assert srv.get('/', headers={'User-Agent': ua}).text == want, ua


def test_lists_are_inherited_from_the_server_level(server):
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        modern_browser gecko 100.0;
        ancient_browser_value "anc";
        location / {
            return 200 "m=$modern_browser a=$ancient_browser";
        }
        location /own {
            modern_browser unlisted;
            return 200 "m=$modern_browser a=$ancient_browser";
        }
    }
}
''')
    assert srv.get('/', headers={'User-Agent': FF}).text == 'm=1 a='
    assert srv.get('/', headers={'User-Agent': FF_OLD}).text == 'm= a=anc'
    assert srv.get('/own', headers={'User-Agent': FF_OLD}).text == 'm=1 a='  # its own: no list, unlisted


def test_a_set_variable_wins(server):
    """nginx's three are changeable: `set` assigns them."""
    srv = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            set $msie "forced";
            return 200 "$msie";
        }
    }
}
''')
    assert srv.get('/', headers={'User-Agent': CURL}).text == 'forced'


@pytest.mark.parametrize('directive,words', [
    ('modern_browser chrome 1.0;', 'unknown browser name "chrome"'),
    ('modern_browser gecko 1.x;', 'invalid browser version "1.x"'),
])
def test_bad_directives_fail_the_config(run_cli, prefix, directive, words):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % directive)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1 and words in res.err, res


@pytest.mark.skipif(IS_NGINX, reason='nginx never finishes the http level\'s own modern_browser list')
def test_an_http_level_list_works_as_a_lower_one(server):
    srv = server('''
http {
    modern_browser gecko 1.9;
    server {
        listen 127.0.0.1:{port};
        location / {
            return 200 "m=$modern_browser a=$ancient_browser";
        }
    }
}
''')
    assert srv.get('/', headers={'User-Agent': FF}).text == 'm=1 a='
    assert srv.get('/', headers={'User-Agent': FF_OLD}).text == 'm= a=1'
    assert srv.get('/', headers={'User-Agent': OPERA_AS_IE}).text == 'm= a=1'
