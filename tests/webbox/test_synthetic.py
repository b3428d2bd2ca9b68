"""The generated web: deterministic, lazily made, with the shape it promises."""

from __future__ import annotations

import statistics
from collections import Counter

import httpx
import pytest
from lxml import html as lxml_html

from focuscrawl.errors import ConfigError
from focuscrawl.webbox import WebBox, WebBoxThread
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams


@pytest.fixture(scope="module")
def web() -> SyntheticCorpus:
    return SyntheticCorpus(SyntheticParams(pages=200_000, hosts=300, seed=7, locality=0.7))


def test_same_seed_same_web_other_seed_other_web(web: SyntheticCorpus) -> None:
    twin = SyntheticCorpus(SyntheticParams(pages=200_000, hosts=300, seed=7, locality=0.7))
    other = SyntheticCorpus(SyntheticParams(pages=200_000, hosts=300, seed=8, locality=0.7))
    assert twin.render(1234) == web.render(1234)
    assert twin.url(1234) == web.url(1234)
    assert other.render(1234) != web.render(1234)


def test_urls_map_back_to_pages_and_wrong_hosts_are_404(web: SyntheticCorpus) -> None:
    url = web.url(4321)
    assert web.page_id(url) == 4321
    wrong_host = url.replace(url.split("/")[2], "site9999.synth.example")
    assert web.page(wrong_host) is None
    assert web.page(url.rsplit("/", 1)[0] + "/200000") is None
    assert web.page(url.rsplit("/", 1)[0] + "/abc") is None


def test_links_stay_in_topic_at_about_the_locality(web: SyntheticCorpus) -> None:
    same, total = 0, 0
    for page in range(0, 200_000, 401):
        topic = web.topic_of(page)
        for target in web.out_links(page):
            total += 1
            same += web.topic_of(target) == topic
    # within-topic picks plus chance hits from the sibling and global picks
    assert 0.66 < same / total < 0.82, same / total


def test_degrees_are_heavy_tailed_and_in_degree_skewed(web: SyntheticCorpus) -> None:
    degrees = [len(web.out_links(p)) for p in range(0, 200_000, 97)]
    assert 8 < statistics.mean(degrees) < 20
    assert max(degrees) > 8 * statistics.median(degrees)
    indegree = Counter(t for p in range(0, 200_000, 53) for t in web.out_links(p))
    top = sum(c for _, c in indegree.most_common(len(indegree) // 100))
    assert top / sum(indegree.values()) > 0.05  # the top 1% of targets get over 5% of links


def test_hosts_are_topical(web: SyntheticCorpus) -> None:
    by_host: dict[int, Counter[int]] = {}
    for page in range(0, 200_000, 37):
        by_host.setdefault(web.host_of(page), Counter())[web.topic_of(page)] += 1
    purity = [
        c.most_common(1)[0][1] / sum(c.values()) for c in by_host.values() if sum(c.values()) > 20
    ]
    assert statistics.median(purity) > 0.8


def test_served_pages_link_to_served_pages(web: SyntheticCorpus) -> None:
    with WebBoxThread(WebBox(web)) as running, httpx.Client(proxy=running.proxy) as http:
        page = http.get(web.url(99))
        assert page.status_code == 200
        hrefs = [a.get("href") for a in lxml_html.fromstring(page.content).iter("a")]
        assert len(hrefs) == len(web.out_links(99))
        for href in hrefs[:5]:
            assert http.get(href).status_code == 200
    labels = dict(web.labels())
    assert labels[web.url(99)] in web.taxonomy()


def test_two_million_pages_cost_no_per_page_memory() -> None:
    big = SyntheticCorpus(SyntheticParams(pages=2_000_000, hosts=2_000, seed=1))
    assert big.page(big.url(1_999_999)) is not None
    assert len(big._starts) == len(big.topics) + 1  # the only structure is per topic


@pytest.mark.parametrize(
    "params",
    [
        SyntheticParams(pages=0, hosts=1),
        SyntheticParams(pages=10, hosts=0),
        SyntheticParams(pages=10, hosts=1, locality=1.5),
        SyntheticParams(pages=10, hosts=1, locality=0.9, sibling=0.2),
        SyntheticParams(pages=10, hosts=1, dead_share=0.5, offsite_share=0.5),
        SyntheticParams(pages=10, hosts=1, anchor_share=-0.1),
    ],
)
def test_bad_parameters_are_refused(params: SyntheticParams) -> None:
    with pytest.raises(ConfigError):
        SyntheticCorpus(params)


def test_a_sparse_web_has_dead_links_and_anchors_that_hide_the_topic() -> None:
    """dead_share and offsite_share add links to pages that do not exist (404) and to
    hosts outside the web (the proxy answers dns_error) at about their shares, beside
    the same real links and text; anchor_share draws title words from the background."""
    plain = SyntheticCorpus(SyntheticParams(pages=5_000, hosts=50))
    sparse = SyntheticCorpus(
        SyntheticParams(pages=5_000, hosts=50, dead_share=0.3, offsite_share=0.3, anchor_share=0.2)
    )
    assert [sparse.out_links(p) for p in range(50)] == [plain.out_links(p) for p in range(50)]
    real = sum(len(sparse.out_links(p)) for p in range(500))
    dead = [url for p in range(500) for url in sparse.dead_links(p)]
    assert 0.5 < len(dead) / (len(dead) + real) < 0.7
    offsite = [url for url in dead if ".offsite.example/" in url]
    assert 0.35 < len(offsite) / len(dead) < 0.65
    assert all(sparse.page(url) is None for url in dead)
    box = WebBox(sparse, faults=False)
    with WebBoxThread(box) as running, httpx.Client(proxy=running.proxy) as http:
        page = http.get(sparse.url(7))
        hrefs = [a.get("href") for a in lxml_html.fromstring(page.content).iter("a")]
        assert len(hrefs) == len(sparse.out_links(7)) + len(sparse.dead_links(7))
        missing = next(u for u in dead if ".synth.example/" in u)
        assert http.get(missing).status_code == 404
        gone = http.get(offsite[0])
        assert gone.status_code == 502 and "dns_error" in gone.headers["proxy-status"]
    topical = [plain.title(p) == sparse.title(p) for p in range(0, 5_000, 50)]
    assert sum(topical) < len(topical) / 2  # most titles now carry background words
