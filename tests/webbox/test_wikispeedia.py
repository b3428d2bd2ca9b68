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
