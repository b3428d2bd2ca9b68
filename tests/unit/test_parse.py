from __future__ import annotations

from urllib.parse import urljoin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.crawler.parse import absolute_url, detect_charset, parse_html
from focuscrawl.errors import InvalidURL
from focuscrawl.web.urls import MAX_URL_LENGTH, normalize_url

BASE = "http://a.example/dir/page.html"


def test_links_from_a_area_and_frames_resolve_against_base_href() -> None:
    page = parse_html(
        b'<html><head><base href="http://b.example/x/"><title> The  Title </title></head><body>'
        b'<a href="one.html">One <b>bold</b></a><map><area href="/two" alt="Two"></map>'
        b'<iframe src="three"></iframe>'
        b'<a href="one.html#frag">again</a><a href="#top">top</a><a href="javascript:x()">js</a>'
        b'<a href="mailto:a@b.c">mail</a><a href="ftp://x/">ftp</a></body></html>',
        BASE,
    )
    assert page.title == "The Title"
    assert [link[:2] for link in page.links] == [
        ("http://b.example/x/one.html", "One bold"),
        ("http://b.example/two", "Two"),
        ("http://b.example/x/three", ""),
    ]
    # frames have no place in the text, so no context
    assert [link[2] is None for link in page.links] == [False, False, True]


def test_a_frameset_page_links_to_its_frames() -> None:
    # a browser's parser keeps a frameset only where no body content came before it
    page = parse_html(
        b'<html><head><title>F</title></head><frameset><frame src="a.html">'
        b'<frame src="http://c.example/four"></frameset></html>',
        BASE,
    )
    assert (page.title, page.text) == ("F", "")
    assert page.links == [
        ("http://a.example/dir/a.html", "", None),
        ("http://c.example/four", "", None),
    ]


def test_visible_text_leaves_out_scripts_styles_and_comments() -> None:
    page = parse_html(
        b"<html><head><style>p{color:red}</style><script>var secret=1</script></head>"
        b"<body><p>Visible</p><!-- hidden --><noscript>nojs</noscript><p>words</p></body></html>",
        BASE,
    )
    assert page.text == "Visible words"


def test_meta_robots_and_rel_nofollow_and_canonical() -> None:
    page = parse_html(
        b'<html><head><meta name="robots" content="noindex, nofollow">'
        b'<link rel="canonical" href="/canon"></head><body><a href="/x">x</a></body></html>',
        BASE,
    )
    assert page.noindex and page.nofollow and page.links == []
    assert page.canonical == "http://a.example/canon"
    polite = parse_html(b'<a rel="nofollow" href="/no">no</a><a href="/yes">yes</a>', BASE)
    assert [link[:2] for link in polite.links] == [("http://a.example/yes", "yes")]


def test_a_links_context_is_the_words_either_side_in_document_order() -> None:
    page = parse_html(
        b"<html><body><p>w1 w2 one two three four <a href='/a'>Alpha <b>beta</b></a>"
        b" five, six 7 seven eight</p><p>nine <a href='/b'>gamma</a></p></body></html>",
        BASE,
    )
    contexts = {url: context for url, _, context in page.links}
    # three words before and after, digits and one-letter runs are not words; the
    # words of a nested tag are the anchor's; paragraphs do not stop the context
    assert contexts["http://a.example/a"] == "two three four | five six seven"
    assert contexts["http://a.example/b"] == "seven eight nine | "
    assert page.text == "w1 w2 one two three four Alpha beta five, six 7 seven eight nine gamma"


def test_a_page_parsed_without_contexts_is_the_same_but_for_them() -> None:
    """A crawl whose frontier estimate is no link learner's (bfs, unfocused, soft-1999)
    parses without contexts: the same text, links and anchors, every context None."""
    body = (
        b"<html><body><p>one two <a href='/a'>Alpha <b>beta</b></a> three</p>"
        b"<map><area href='/area' alt='Area'></map><iframe src='/f'></iframe> end</body></html>"
    )
    full, bare = parse_html(body, BASE), parse_html(body, BASE, contexts=False)
    assert any(context for *_, context in full.links)
    assert [(url, anchor, None) for url, anchor, _ in full.links] == bare.links
    assert (bare.text, bare.title) == (full.text, full.title)


def test_a_page_of_links_has_a_high_link_share_and_an_article_a_low_one() -> None:
    """The share of a page's text in its links' anchors: what tells a list of links (a
    home page, a section's index) from a page of text (export --what relevant)."""
    listing = parse_html(
        b"<html><body><h1>Rivers</h1><ul>"
        + b"".join(b"<li><a href='/r%d'>River number %d</a></li>" % (i, i) for i in range(20))
        + b"</ul></body></html>",
        BASE,
    )
    article = parse_html(
        b"<html><body><p>"
        + b"The river rises in the hills and runs to the sea through farmland. " * 10
        + b"See <a href='/sea'>the sea</a>.</p></body></html>",
        BASE,
    )
    assert listing.link_share > 0.9 and article.link_share < 0.05
    assert parse_html(b"<html><body></body></html>", BASE).link_share == 0.0
    anchors = sum(len(anchor) for _, anchor, _ in article.links)
    assert article.link_share == pytest.approx(anchors / len(article.text))


CHROME_PAGE = (
    b"<html><body><header><nav><a href='/'>Main page</a> <a href='/help'>Help</a></nav>"
    b"</header><div class='content'><h1>Storms</h1><p>A tropical storm crossed the "
    b"<a href='/gulf'>Gulf</a> in June.</p></div><div id='sidebar'><h3>Featured</h3><ul>"
    b"<li><a href='/opera'>Opera house</a></li></ul></div><div class='site-footer'>"
    b"Text is available under a free licence. <a href='/privacy'>Privacy</a></div>"
    b"</body></html>"
)


def test_a_pages_chrome_is_left_out_of_its_text_but_its_links_are_kept() -> None:
    """Navigation, header, side bar and footer (HTML5 elements, ARIA roles, or the
    class and id names sites give them) are the same on every page of a site: their
    words are not the page's, so they are left out of its text, and their links, kept,
    have no context and no share of the page's anchors."""
    page = parse_html(CHROME_PAGE, BASE)
    assert page.text == "Storms A tropical storm crossed the Gulf in June."
    links = {url.rsplit("/", 1)[1]: (anchor, context) for url, anchor, context in page.links}
    assert links["gulf"] == ("Gulf", "storm crossed the | in june")
    for chrome in ("", "help", "opera", "privacy"):
        assert links[chrome][1] is None, chrome
    assert links["opera"][0] == "Opera house"
    assert page.link_share == pytest.approx(len("Gulf") / len(page.text))


def test_an_articles_own_header_and_a_body_wrapped_as_chrome_are_kept() -> None:
    """A header or footer inside <main> or <article> is the article's (its byline, its
    notes); and markup that would leave out most of a page, or that holds its <main>, is
    not taken for chrome (the <nav> beside that <main> is)."""
    article = parse_html(
        b"<html><body><nav><a href='/'>Home</a></nav><article><header>By A. Writer"
        b"</header><p>The text of the article.</p><footer>Notes on sources.</footer>"
        b"</article></body></html>",
        BASE,
    )
    assert article.text == "By A. Writer The text of the article. Notes on sources."
    wrapped = parse_html(
        b"<html><body><div class='page-header-wrapper'><p>All of the text is here, "
        b"and <a href='/x'>a link</a>.</p></div><nav>Home</nav></body></html>",
        BASE,
    )
    assert wrapped.text == "All of the text is here, and a link . Home"
    assert wrapped.links[0][2] is not None
    holding = parse_html(
        b"<html><body><div class='site-header-layout'><nav>Home</nav><main><p>What the "
        b"page says, at some length, in words of its own.</p></main></div></body></html>",
        BASE,
    )
    assert holding.text == "What the page says, at some length, in words of its own."


def test_link_contexts_survive_malformed_and_invisible_markup() -> None:
    page = parse_html(
        b"<p>start <a href='/x'>x <i>open <a href='/y'>y</a> tail</p><noscript>"
        b"<a href='/hidden'>hidden</a></noscript><a href=/area-less>z</a> end "
        b"<map><area href='/area' alt='Area'></map> after",
        BASE,
    )
    contexts = {url: context for url, _, context in page.links}
    assert contexts["http://a.example/hidden"] is None  # its words are not on the page
    assert contexts["http://a.example/area"] == "open tail end | after"
    assert contexts["http://a.example/x"].startswith("start | ")
    marks = [chr(0xF0000), chr(0x100000), chr(0xF0001), chr(0x100001)]
    assert not any(m in (c or "") + page.text for m in marks for c in contexts.values())
    assert "hidden" not in page.text


@pytest.mark.parametrize(
    ("content", "links"),
    [
        ("0; URL='/moved'", ["http://a.example/moved", "http://a.example/x"]),
        ("5;url=http://b.example/y", ["http://b.example/y", "http://a.example/x"]),
        ("3; next.html", ["http://a.example/dir/next.html", "http://a.example/x"]),
        ("0; url=/x", ["http://a.example/x"]),  # once, first, with no anchor text
        ("30", ["http://a.example/x"]),  # reload only
        ("0; url=javascript:go()", ["http://a.example/x"]),
    ],
)
def test_a_meta_refresh_is_an_out_link(content: str, links: list[str]) -> None:
    body = f'<html><head><meta http-equiv="Refresh" content="{content}"></head>'
    page = parse_html((body + '<body><a href="/x">x</a></body>').encode(), BASE)
    assert [url for url, _, _ in page.links] == links
    # a URL both refreshed to and linked is kept once, as the refresh (no anchor text)
    anchors = {url: anchor for url, anchor, _ in page.links}
    assert anchors["http://a.example/x"] == ("" if content == "0; url=/x" else "x")
    nofollow = parse_html(
        (body + '<meta name="robots" content="nofollow"><a href="/x">x</a>').encode(), BASE
    )
    assert nofollow.links == []


@pytest.mark.parametrize(
    ("body", "declared", "expected"),
    [
        ("Café".encode(), "utf-8", "utf-8"),
        ("Café".encode("latin-1"), "utf-8", "cp1252"),  # the header lies
        ("Café".encode("latin-1"), "iso-8859-1", "cp1252"),  # latin-1 means windows-1252
        (b'<meta charset="windows-1252"><p>\x93q\x94</p>', None, "windows-1252"),
        (b"\xef\xbb\xbf<p>bom</p>", "iso-8859-1", "utf-8"),  # a BOM beats the header
        ("plain ascii and é".encode(), None, "utf-8"),
        (b"\xe9t\xe9", None, "cp1252"),
        (b"<p>x</p>", "no-such-charset", "utf-8"),
    ],
)
def test_charset_detection(body: bytes, declared: str | None, expected: str) -> None:
    assert detect_charset(body, declared) == expected


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\x00\x00\x00",
        b"<html",
        b"<<<>>>",
        b"\xff\xfe\xfd" * 100,
        b"<a href='http://[bad'>x</a>",
    ],
)
def test_garbage_never_raises(body: bytes) -> None:
    page = parse_html(body, BASE)
    assert isinstance(page.text, str)


_HREF = st.text(alphabet="abXY09./?#%:;=&-_~@!$'()*+, \t", max_size=24)


@settings(max_examples=400)
@given(
    base=st.sampled_from(
        [
            "http://a.example/dir/page",
            "https://b.example:8443/",
            "http://a.example/dir/",
            "HTTP://Upper.Example/x/y",
            "http://a.example",
            "http://a.example?q=1",
        ]
    ),
    prefix=st.sampled_from(["", "/", "//", "http://", "https://c.example", "http://c.example/"]),
    rest=_HREF,
)
def test_the_fast_paths_resolve_links_as_urljoin_and_the_normaliser_do(
    base: str, prefix: str, rest: str
) -> None:
    href = prefix + rest
    try:
        expected: str | None = normalize_url(urljoin(base, href.strip()))
    except (InvalidURL, ValueError):
        expected = None
    if not href.strip() or href.strip().startswith("#"):
        expected = None
    assert absolute_url(base, href) == expected


def test_a_canonical_link_longer_than_the_limit_is_refused_on_the_fast_path_too() -> None:
    long_path = "/" + "a" * MAX_URL_LENGTH
    assert absolute_url(BASE, long_path) is None
    assert absolute_url(BASE, "http://b.example" + long_path) is None
    assert absolute_url(BASE, long_path[: MAX_URL_LENGTH - len("http://a.example")])


_MARKABLE = st.text(alphabet="ab Zéßä1_-.\n\tİ\u3000x", max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MARKABLE, min_size=1, max_size=6), st.data())
def test_the_words_around_a_link_are_those_of_the_text_either_side(
    pieces: list[str], data: st.DataObject
) -> None:
    """Each marked link's context is the last three words of the clean text before its
    place and the first three after, as the page classifier's terms (runs of two letters
    or more, lower-cased), a word its place cuts counted up to the cut; marks of a link
    whose other mark was lost give None."""
    from focuscrawl.crawler.parse import _CLOSE, _OPEN, _contexts
    from focuscrawl.topics.linkmodel import context_text, words

    links = len(pieces) - 1
    lost = data.draw(st.sets(st.integers(0, max(links - 1, 0)), max_size=1)) if links else set()
    marked, clean = pieces[0], pieces[0]
    places: list[tuple[int, int]] = []
    for i, piece in enumerate(pieces[1:]):
        anchor, _, rest = piece.partition(" ")
        opening = "" if i in lost else chr(_OPEN + i)
        marked += opening + anchor + chr(_CLOSE + i) + " " + rest
        places.append((len(clean), len(clean) + len(anchor)))
        clean += anchor + " " + rest
    expected = [
        None if i in lost else context_text(words(clean[:start])[-3:], words(clean[end:])[:3])
        for i, (start, end) in enumerate(places)
    ]
    assert _contexts(marked, links) == (clean, expected)


_SPACED = " ab\n\t\u00a0\u3000.\x01"


_SPACES_ONLY = st.text(alphabet=" ab.", min_size=201, max_size=400)


@given(st.text(alphabet=_SPACED, max_size=400) | _SPACES_ONLY)
def test_white_space_runs_become_one_space(text: str) -> None:
    """Short texts (anchors) and long ones alike, and a long one whose only white space
    is the space (a page's text most often, which has a path of its own)."""
    from focuscrawl.crawler.parse import _clean

    assert _clean(text) == " ".join(text.split())
