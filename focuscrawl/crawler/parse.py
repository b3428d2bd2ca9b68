"""Turning HTML bytes into a title, visible text and out-links, with lexbor (selectolax).

The text is the page's own: its chrome (navigation, header, footer, side bars: the
site's template, the same on each of its pages) is left out, its links kept.

The charset comes from the Content-Type header, else a byte-order mark, else a
``<meta>`` declaration, else UTF-8 if the bytes are valid UTF-8, else cp1252 (the
usual truth behind "latin-1"). Malformed markup and garbage bytes parse as a browser's
HTML5 parser would; nothing here raises on bad input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from focuscrawl.errors import InvalidURL
from focuscrawl.topics.linkmodel import CONTEXT_WORDS, context_text
from focuscrawl.web.urls import is_canonical, normalize_url

__all__ = ["OutLink", "ParsedPage", "absolute_url", "detect_charset", "parse_html"]

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE
)
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_INVISIBLE = ["script", "style", "noscript", "template"]  # and the head: only the body is read
MAX_ANCHOR = 200
#: a link's place in the text is marked while the text is gathered: link i opens with
#: code point _OPEN + i and closes with _CLOSE + i (private use planes 15 and 16; any
#: code point of those planes in the text is taken for a mark, and dropped)
_OPEN, _CLOSE, _PLANE = 0xF0000, 0x100000, 0xFFFE
_WORD = re.compile(r"[^\W\d_]{2,}")
#: a page's chrome: its navigation, header, footer and side bars, by their HTML5 elements,
#: ARIA roles, or the class and id names sites give them (those of Mozilla Readability's
#: "unlikely candidates" that name chrome). Their text is left out of the page's text and
#: their links have no context, unless they lie inside ``_CONTENT`` or hold it (an
#: article's own header and footer are its byline and notes)
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary")
_CHROME = ", ".join(
    [
        "nav",
        "header",
        "footer",
        "aside",
        *(f"[role={role}]" for role in _CHROME_ROLES),
        *(
            f"[{attribute}*={name}]"
            for attribute in ("class", "id")
            for name in ("menu", "sidebar", "footer", "header", "navbar", "breadcrumb", "banner")
        ),
    ]
)
#: the elements a class or id names as chrome (not a link, a list item or a span so named)
_CHROME_BLOCKS = frozenset(
    ("nav", "header", "footer", "aside", "div", "ul", "ol", "section", "table", "form")
)
_CONTENT = ("main", "article")
_HOLDS_CONTENT = ", ".join(_CONTENT)
#: chrome is left out only while it holds at most this share of the page's text (more: the
#: page is wrapped in markup that looks like chrome)
_CHROME_MOST = 0.8
_SPACES = re.compile("  +")
_LONG_TEXT = 200  # characters

#: (normalised URL, anchor text, the words around it as ``linkmodel.context_text`` or None)
OutLink = tuple[str, str, str | None]


@dataclass
class ParsedPage:
    title: str = ""
    text: str = ""
    #: out-links in document order, the first occurrence of each URL
    links: list[OutLink] = field(default_factory=list)
    canonical: str | None = None
    noindex: bool = False
    nofollow: bool = False
    charset: str = "utf-8"
    #: the characters of the out-links' anchors over those of the text (0 with no text):
    #: near 1 for a page that is a list of links (a home page, an index), low for an
    #: article (focuscrawl.monitor.export.MOSTLY_LINKS)
    link_share: float = 0.0


def detect_charset(body: bytes, declared: str | None) -> str:
    """The page's charset: a BOM, else a declaration the bytes agree with, else a guess.

    A header or ``<meta>`` that names UTF-8 over bytes that are not UTF-8 is a lie
    the web often tells; it is ignored rather than turned into replacement characters.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    match = _META_CHARSET.search(body[:4096])
    meta = match.group(1).decode("ascii", "ignore") if match else None
    for candidate in (declared, meta):
        if candidate and _known(candidate) and _decodes(body, _alias(candidate)):
            return _alias(candidate)
    return "utf-8" if _decodes(body, "utf-8") else "cp1252"


def _decodes(body: bytes, charset: str) -> bool:
    if charset != "utf-8":
        return True  # single-byte charsets decode anything
    try:
        body.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _alias(name: str) -> str:
    name = name.lower()
    # Browsers read latin-1 as windows-1252; so do we.
    return "cp1252" if name in ("iso-8859-1", "latin-1", "latin1", "us-ascii", "ascii") else name


def _known(name: str) -> bool:
    import codecs

    try:
        codecs.lookup(name)
        return True
    except LookupError:
        return False


def _clean(text: str) -> str:
    """Whitespace runs become one space. A page's text, whose only white space is
    most often the space (``isprintable``: any other white space character is a
    separator or a control), has its runs of spaces replaced: lexbor joins the stripped
    text nodes with spaces, the empty ones too, so the text holds dozens of such runs
    and few other white space, and str.split made a string of every word (0.17 against
    0.10 ms a Wikispeedia page). Below ``_LONG_TEXT`` (an anchor) split is the faster."""
    if len(text) > _LONG_TEXT and text.isprintable():
        return _SPACES.sub(" ", text).strip(" ")
    return " ".join(text.split())


def parse_html(
    body: bytes, url: str, declared_charset: str | None = None, contexts: bool = True
) -> ParsedPage:
    """Parse a page fetched from ``url`` (already normalised). ``contexts``: whether to
    find the words around each link (only the link learner reads them; without them
    every link's context is None)."""
    charset = detect_charset(body, declared_charset)
    text = body.decode(charset, errors="replace").lstrip("\ufeff").replace("\x00", "")
    page = ParsedPage(charset=charset)
    tree = LexborHTMLParser(text)
    base = url
    for element in tree.css("base[href]"):
        href = (element.attributes.get("href") or "").strip()
        if href:
            base = urljoin(url, href)
            break
    refresh = None
    for meta in tree.css("meta"):
        attributes = meta.attributes
        if (attributes.get("name") or "").lower() == "robots":
            content = (attributes.get("content") or "").lower()
            page.noindex = page.noindex or "noindex" in content or "none" in content
            page.nofollow = page.nofollow or "nofollow" in content or "none" in content
        elif (attributes.get("http-equiv") or "").lower() == "refresh" and refresh is None:
            refresh = _refresh_target(attributes.get("content") or "")
    for link in tree.css("link[rel][href]"):
        attributes = link.attributes
        if "canonical" in (attributes.get("rel") or "").lower().split():
            page.canonical = absolute_url(base, attributes.get("href") or "")
            break
    title = tree.css_first("title")
    page.title = _clean(_text(title))[:1000] if title is not None else ""
    chrome, in_chrome = _chrome(tree)
    content_anchors = 0  # characters of the anchors of links outside the chrome
    marked: list[int] = []  # the index in page.links of each marked link
    if not page.nofollow:
        seen: set[str] = set()
        # a refresh (a redirect in markup) is an out-link, first, with no anchor text
        target = absolute_url(base, refresh) if refresh else None
        if target is not None:
            seen.add(target)
            page.links.append((target, "", None))
        for element in tree.css("a, area, frame, iframe"):  # in document order
            tag = element.tag
            attributes = element.attributes
            attribute = "src" if tag in ("frame", "iframe") else "href"
            target = absolute_url(base, attributes.get(attribute) or "")
            rel = (attributes.get("rel") or "").lower()
            if target is None or target in seen or "nofollow" in rel:
                continue
            seen.add(target)
            anchor = _text(element) if tag == "a" else (attributes.get("alt") or "")
            anchor = _clean(anchor)[:MAX_ANCHOR]
            page.links.append((target, anchor, None))
            if in_chrome and element.mem_id in in_chrome:
                continue  # no context: the chrome's words are left out of the text
            content_anchors += len(anchor)
            if not contexts or tag not in ("a", "area") or len(marked) >= _PLANE:
                continue  # a frame has no place in the text
            # marks: where the anchor opens and closes in the text gathered below
            opening, closing = chr(_OPEN + len(marked)), chr(_CLOSE + len(marked))
            if tag == "a":
                element.insert_before(opening)
                element.insert_after(closing)
            else:
                element.insert_after(opening + closing)
            marked.append(len(page.links) - 1)
    for element in chrome:
        element.decompose()
    tree.strip_tags(_INVISIBLE)
    text = _text(tree.body) if tree.body is not None else ""  # a frameset has no body
    if marked:
        text, around = _contexts(text, len(marked))
        for index, context in zip(marked, around, strict=True):
            url, anchor, _ = page.links[index]
            page.links[index] = (url, anchor, context)
    page.text = _clean(text)
    if page.text:
        page.link_share = min(content_anchors / len(page.text), 1.0)
    return page


def _chrome(tree: LexborHTMLParser) -> tuple[list[LexborNode], set[int]]:
    """The page's chrome elements (``_CHROME``) to leave out of its text, the outermost
    of each nest and none inside ``_CONTENT`` or holding it, and the ``mem_id`` of every
    link in them; none when they would take more than ``_CHROME_MOST`` of the page's
    text (a page whose whole body a "header" class wraps is no chrome)."""
    body = tree.body
    if body is None:
        return [], set()
    found = [
        element
        for element in tree.css(_CHROME)
        if (element.tag in _CHROME_BLOCKS or element.attributes.get("role") in _CHROME_ROLES)
        and element.css_first(_HOLDS_CONTENT) is None
    ]
    ids = {element.mem_id for element in found}
    outer: list[LexborNode] = []
    for element in found:
        parent = element.parent
        while parent is not None and parent.mem_id not in ids and parent.tag not in _CONTENT:
            parent = parent.parent
        if parent is None:
            outer.append(element)
    if not outer:
        return [], set()
    total = len(_text(body))
    if sum(len(_text(element)) for element in outer) > _CHROME_MOST * total:
        return [], set()
    links = {a.mem_id for element in outer for a in element.css("a, area")}
    return outer, links


def _contexts(text: str, marked: int) -> tuple[str, list[str | None]]:
    """The text without its marks, and the words around each marked link, as
    ``context_text``: up to ``CONTEXT_WORDS`` words before where it opens and after
    where it closes (None: its marks were lost with an invisible element). Only the
    text near each mark is tokenised. The marks are found by numpy among the text's
    code points (a regex took three times as long, once to find them and once to
    drop them)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    where = np.flatnonzero(codes >= _OPEN)
    opens: dict[int, int] = {}
    closes: dict[int, int] = {}
    pieces: list[str] = []
    last = 0
    for n, (at, code) in enumerate(zip(where.tolist(), codes[where].tolist(), strict=True)):
        pieces.append(text[last:at])
        last = at + 1
        if code >= _CLOSE:  # its place in the clean text: n marks came before it
            closes.setdefault(code - _CLOSE, at - n)
        else:
            opens.setdefault(code - _OPEN, at - n)
    pieces.append(text[last:])
    clean = "".join(pieces)
    result: list[str | None] = []
    for i in range(marked):
        start, end = opens.get(i), closes.get(i)
        if start is None or end is None or end < start:
            result.append(None)
            continue
        result.append(context_text(_words_before(clean, start), _words_after(clean, end)))
    return clean, result


def _words_before(text: str, at: int, window: int = 64) -> list[str]:
    """The last ``CONTEXT_WORDS`` words of ``text[:at]``."""
    while True:
        start = max(at - window, 0)
        found = _WORD.findall(text[start:at].lower())
        if start == 0 or len(found) > CONTEXT_WORDS:  # the first may be cut: not taken
            return found[-CONTEXT_WORDS:]
        window *= 4


def _words_after(text: str, at: int, window: int = 64) -> list[str]:
    """The first ``CONTEXT_WORDS`` words of ``text[at:]``."""
    while True:
        end = at + window
        found = _WORD.findall(text[at:end].lower())
        if end >= len(text) or len(found) > CONTEXT_WORDS:  # the last may be cut
            return found[:CONTEXT_WORDS]
        window *= 4


_REFRESH = re.compile(r"""\s*[0-9.]*\s*[;,]?\s*(?:url\s*=\s*)?(["']?)(.*?)\1\s*""", re.I)


def _refresh_target(content: str) -> str | None:
    """The URL of a ``<meta http-equiv="refresh" content="5; url=...">``, if it has one."""
    match = _REFRESH.fullmatch(content)
    return match.group(2).strip() or None if match else None


def _text(element: LexborNode) -> str:
    """Text of an element; text nodes are joined with spaces so "<p>a</p><p>b</p>" is "a b"."""
    return element.text(deep=True, separator=" ", strip=True)


def _origin(url: str) -> str:
    """``scheme://authority`` of an absolute URL (all of it when it has no path)."""
    path = url.find("/", url.find("//") + 2)
    return url if path < 0 else url[:path]


def absolute_url(base: str, href: str) -> str | None:
    """``href`` resolved against ``base`` and normalised; None when it is not a crawlable URL."""
    href = href.strip()
    if not href or href.startswith(("#", "javascript:", "mailto:", "data:", "tel:")):
        return None
    # Most links are absolute or site-absolute and already canonical: for them urljoin
    # and the normaliser would return the very same string, at many times the cost.
    joined = _origin(base) + href if href.startswith("/") and href[1:2] != "/" else href
    if is_canonical(joined):
        return joined
    try:
        return normalize_url(urljoin(base, href))
    except (InvalidURL, ValueError):
        return None
