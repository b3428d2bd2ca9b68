"""The Wikispeedia web as served: every article, every link, no label leaks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from lxml import html as lxml_html

from focuscrawl.web.corpus import Corpus
from focuscrawl.web.urls import host_of, normalize_url
from focuscrawl.webbox import WebBox, WebBoxThread

ARTICLES = 4_604
LINKS = 119_882
LEAKS = (
    "Related subjects",
    "#copyright",
    "Retrieved from",
    "mainly selected from the English Wikipedia",
)


@pytest.fixture(scope="module")
def served(wikispeedia: Corpus) -> Iterator[tuple[WebBoxThread, httpx.Client]]:
    with WebBoxThread(WebBox(wikispeedia)) as running, httpx.Client(proxy=running.proxy) as http:
        yield running, http


def test_walking_the_served_graph_finds_every_article_and_link(
    wikispeedia: Corpus, served: tuple[WebBoxThread, httpx.Client]
) -> None:
    _, http = served
    urls = list(wikispeedia.urls())
    assert len(urls) == ARTICLES
    articles = set(urls)
    edges: set[tuple[str, str]] = set()
    leaks = []
    for url in urls:
        page = http.get(url)
        assert page.status_code == 200, url
        text = page.text
        leaks.extend((url, leak) for leak in LEAKS if leak in text)
        tree = lxml_html.fromstring(page.content)
        assert tree.findtext(".//title"), url
        for anchor in tree.iter("a"):
            target = normalize_url(urljoin(url, anchor.get("href")))
            assert target in articles, (url, target)
            edges.add((url, target))
    assert not leaks, leaks[:5]
    assert len(edges) == LINKS
    hosts = {host_of(u) for u in urls}
    cross = sum(1 for s, d in edges if host_of(s) != host_of(d))
    assert len(hosts) == 18 and 0.3 < cross / LINKS < 0.9


def test_ground_truth_covers_the_articles_and_is_not_served(
    wikispeedia: Corpus, served: tuple[WebBoxThread, httpx.Client]
) -> None:
    labels = list(wikispeedia.labels())
    assert len(labels) == 5_204
    assert len({url for url, _ in labels}) == 4_598
    assert "subject.Science.Biology.Mammals" in wikispeedia.taxonomy()
    _, http = served
    some_url = labels[0][0]
    host = host_of(some_url)
    for path in ("/truth/labels.tsv", "/truth/taxonomy.txt", "/corpus.json", "/pages.jsonl"):
        assert http.get(f"http://{host}{path}").status_code == 404


def test_import_is_reproducible(wikispeedia_home: Path, corpora_dir: Path, tmp_path: Path) -> None:
    from focuscrawl.webbox.wikispeedia import import_wikispeedia

    again = tmp_path / "again"
    import_wikispeedia(corpora_dir / "wikispeedia.tar.gz", again)
    first = wikispeedia_home / "corpora" / "wikispeedia"
    assert (again / "pages.jsonl").read_bytes() == (first / "pages.jsonl").read_bytes()
    assert (again / "truth" / "labels.tsv").read_bytes() == (
        first / "truth" / "labels.tsv"
    ).read_bytes()


def test_a_thinned_import_keeps_the_text_and_sends_links_astray(
    wikispeedia_home: Path, corpora_dir: Path, tmp_path: Path
) -> None:
    """Each link is live, dead (a page its host does not have), offsite (a host outside
    the web) or plain text, at the shares asked, by a hash: the words a reader sees are
    the unthinned corpus's (its paragraphs; a link left as text that was listed, not
    inline, is gone), and a dead link keeps the anchor of the page it named."""
    from focuscrawl.errors import ConfigError
    from focuscrawl.webbox import load_corpus
    from focuscrawl.webbox.wikispeedia import Thinning, import_wikispeedia

    with pytest.raises(ConfigError, match="sum to at most 1"):
        Thinning(dead_share=0.6, offsite_share=0.5)
    # shares that sum to 1 are taken, though their floats sum to a little more
    assert sum((0.33, 0.56, 0.11)) > 1 and Thinning(0.33, 0.56, 0.11).thins
    assert not Thinning().thins
    thinning = Thinning(dead_share=0.3, offsite_share=0.2, unlinked_share=0.2, seed=3)
    counts = import_wikispeedia(
        corpora_dir / "wikispeedia.tar.gz", tmp_path / "thin", None, thinning
    )
    assert counts["links"] + counts["dead"] + counts["offsite"] + counts["unlinked"] == LINKS
    for kind, share in (("links", 0.3), ("dead", 0.3), ("offsite", 0.2), ("unlinked", 0.2)):
        assert abs(counts[kind] / LINKS - share) < 0.01, kind
    thin = load_corpus(str(tmp_path / "thin"), tmp_path)
    whole = load_corpus("wikispeedia", wikispeedia_home)
    articles = set(whole.urls())
    hosts = {host_of(u) for u in articles}
    assert set(thin.urls()) == articles and list(thin.labels()) == list(whole.labels())
    kinds = {"live": 0, "dead": 0, "offsite": 0}
    for url in sorted(articles)[::50]:
        before = lxml_html.fromstring(whole.page(url).body)
        after = lxml_html.fromstring(thin.page(url).body)
        prose = [p.text_content() for p in before.iter("p")]
        assert [p.text_content() for p in after.iter("p")] == prose, url
        for anchor in after.iter("a"):
            target = normalize_url(urljoin(url, anchor.get("href")))
            if target in articles:
                kinds["live"] += 1
            elif host_of(target) in hosts:
                kinds["dead"] += 1  # served host, no such page: a 404
                named = target.rpartition("/wiki/")[2].removesuffix("_(archived)")
                assert normalize_url(f"http://{host_of(target)}/wiki/{named}") in articles
            else:
                kinds["offsite"] += 1
                assert host_of(target).endswith(".example.org")
    assert all(kinds.values()), kinds


def test_an_import_with_chrome_wraps_every_page_in_its_sites_template(
    wikispeedia_home: Path, corpora_dir: Path, tmp_path: Path
) -> None:
    """With chrome every article stands in its site's template (navigation, side bar,
    footer) and each site has seven pages of its own, unlabelled; the crawler's parse
    leaves the template out and reads each article's text as it reads the plain one."""
    from focuscrawl.crawler.parse import parse_html
    from focuscrawl.webbox import load_corpus
    from focuscrawl.webbox.wikispeedia import SITE_PAGES, import_wikispeedia

    counts = import_wikispeedia(corpora_dir / "wikispeedia.tar.gz", tmp_path / "c", chrome=True)
    assert counts["links"] == LINKS and counts["pages"] == ARTICLES + 18 * len(SITE_PAGES)
    chrome = load_corpus(str(tmp_path / "c"), tmp_path)
    whole = load_corpus("wikispeedia", wikispeedia_home)
    articles = set(whole.urls())
    site_pages = set(chrome.urls()) - articles
    assert len(site_pages) == 18 * len(SITE_PAGES) and list(chrome.labels()) == list(whole.labels())
    for url in sorted(articles)[::97]:
        wrapped = chrome.page(url).body
        assert b"Featured articles" in wrapped and b"Privacy policy" in wrapped, url
        plain, read = parse_html(whole.page(url).body, url), parse_html(wrapped, url)
        assert read.text == plain.text, url
        assert {u for u, *_ in plain.links} <= {u for u, *_ in read.links}, url
        assert "Featured articles" not in read.text
    main = next(u for u in site_pages if u.endswith(".example/"))
    listed = parse_html(chrome.page(main).body, main).links
    assert sum(u in articles for u, *_ in listed) >= 40
