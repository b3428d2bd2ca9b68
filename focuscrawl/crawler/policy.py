"""What becomes of a claimed URL: pure functions of the claim, what the fetch found and
the crawl's configuration, with no connection, thread or clock (the crawler process
applies them; tests call them directly)."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import REDIRECTS, FetchResult
from focuscrawl.crawler.parse import absolute_url, parse_html
from focuscrawl.crawler.robots import header_directives
from focuscrawl.crawler.sniff import sniff
from focuscrawl.crawler.store import Claim, Outcome
from focuscrawl.db.schema import DocState
from focuscrawl.topics.linkmodel import LINK_ESTIMATES

__all__ = [
    "HTML_TYPES",
    "REDIRECTS",
    "UNREAD_TYPES",
    "guard",
    "link_state",
    "outcome_of",
    "readable",
    "retry_or_fail",
]

HTML_TYPES = ("text/html", "application/xhtml+xml")
#: the file types (a URL path's extension) of what the classifier cannot read: links to
#: them are not followed, as a request for one brings no text to judge (Scrapy's link
#: extractor skips much the same list: IGNORED_EXTENSIONS). Images, audio, video,
#: archives, programs, fonts, style sheets and scripts, office documents, PDF and
#: PostScript. A page whose URL hides its type (``/download?id=3``) is still fetched,
#: and its content type read (sniff).
_UNREAD = """
    jpg jpeg png gif bmp tif tiff ico svg svgz webp psd eps xbm
    mp3 wav ogg oga flac aac m4a wma mid midi ra ram aif aiff au
    mp4 m4v avi mov mpg mpeg wmv flv mkv webm qt rm swf 3gp asf
    zip gz tgz bz2 tar rar 7z z xz sit hqx jar lzh
    exe dmg iso bin msi deb rpm apk dll so class
    woff woff2 ttf otf eot css js
    pdf ps dvi doc docx xls xlsx ppt pptx pps odt ods odp odg rtf
"""
UNREAD_TYPES = frozenset(_UNREAD.split())


def readable(url: str) -> bool:
    """Whether a link to ``url`` (normalised: it has a path) may bring a page to read:
    its path does not end in a type of UNREAD_TYPES (case aside: ``paper.PS.Z`` is not
    read). Read off the string, with no parse: the crawler asks it of every link."""
    query = url.find("?")
    end = len(url) if query < 0 else query
    dot = url.rfind(".", url.rfind("/", 0, end) + 1, end)
    return dot < 0 or end - dot > 6 or url[dot + 1 : end].lower() not in UNREAD_TYPES


def guard(claim: Claim, config: CrawlConfig) -> str | None:
    """Why a URL must not be fetched at all (spider traps), or None."""
    if claim.depth > config.max_depth:
        return "max_depth"
    segments = [s for s in urlsplit(claim.url).path.split("/") if s]
    repeats = max((segments.count(s) for s in set(segments)), default=0)
    if repeats >= config.max_segment_repeats:
        return "repeated_segments"
    return None


def retry_or_fail(claim: Claim, error: str, status: int | None, config: CrawlConfig) -> Outcome:
    """A failed try: back to the frontier while tries remain, else failed for good."""
    final = claim.num_tries + 1 >= config.max_tries
    state = DocState.FAILED if final else DocState.FRONTIER
    return Outcome(claim, state, http_status=status, error=error)


def link_state(config: CrawlConfig) -> DocState:
    """The state out-links are checked in with: held in hard focus."""
    return DocState.HELD if config.mode is Mode.HARD else DocState.FRONTIER


def outcome_of(claim: Claim, result: FetchResult, config: CrawlConfig, agent: str) -> Outcome:
    """What a fetch of ``claim`` means for its row: fetched (with title, text and
    out-links, parsed here), failed, excluded, or back to the frontier to try again.
    ``agent`` is the robots.txt name an X-Robots-Tag may address."""
    status = result.status
    if result.error is not None:
        if result.error == "private_address":
            return Outcome(claim, DocState.EXCLUDED, status, result.error)
        if result.error == "too_large":
            media = result.media_type or None
            return Outcome(claim, DocState.FAILED, status, "too_large", media)
        return retry_or_fail(claim, result.error, status, config)
    assert status is not None
    if status in REDIRECTS and result.location:
        target = absolute_url(claim.url, result.location)
        if target is None:
            return Outcome(claim, DocState.FAILED, status, "bad_redirect")
        redirect: list[tuple[str, str | None, str | None]] = [(target, None, None)]
        return Outcome(
            claim, DocState.FETCHED, status, links=redirect, link_state=link_state(config)
        )
    if status == 304:  # a revisit found the page unchanged
        return Outcome(claim, DocState.FETCHED, status)
    if status == 429 or status >= 500:
        return retry_or_fail(claim, f"http_{status}", status, config)
    if status != 200:
        return Outcome(claim, DocState.FAILED, status, f"http_{status}")
    media = sniff(result.body, result.media_type)
    if media not in HTML_TYPES:
        return Outcome(claim, DocState.FETCHED, status, content_type=media[:128] or None)
    # the words around each link only where the link learner will read them
    contexts = config.frontier_estimate in LINK_ESTIMATES
    page = parse_html(result.body, claim.url, result.charset, contexts)
    tags = header_directives(result.x_robots_tag, agent)
    noindex = page.noindex or bool(tags & {"noindex", "none"})
    nofollow = page.nofollow or bool(tags & {"nofollow", "none"})
    digest = hashlib.md5(page.text.encode("utf-8"), usedforsecurity=False).digest()
    return Outcome(
        claim,
        DocState.FETCHED,
        status,
        content_type=media,
        content_hash=int.from_bytes(digest[:8], "big", signed=True),
        title=page.title or None,
        text=None if noindex else page.text,
        links=[] if nofollow else list(page.links),
        link_state=link_state(config),
        link_share=page.link_share,
        etag=result.etag[:128] if result.etag else None,
        # a longer value is no HTTP date (29 characters), and is not kept
        last_modified=result.last_modified
        if result.last_modified and len(result.last_modified) <= 64
        else None,
    )
