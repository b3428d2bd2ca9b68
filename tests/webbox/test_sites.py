"""The generated web of sites: deterministic, with the shape of a partial crawl of real
sites that docs/how-to/evaluate.md gives (targets below navigation pages and apart from
each other, most links dead or off the web)."""

from __future__ import annotations

import random
import statistics
from collections import Counter, deque

import httpx
import pytest
from lxml import html as lxml_html

from focuscrawl.errors import ConfigError
from focuscrawl.webbox import WebBox, WebBoxThread
from focuscrawl.webbox.sites import CONTENT, HOME, LISTING, SitesCorpus, SitesParams


@pytest.fixture(scope="module")
def web() -> SitesCorpus:
    return SitesCorpus(SitesParams(pages=5_000, hosts=300, seed=1))


def test_same_seed_same_web_other_seed_other_web(web: SitesCorpus) -> None:
    twin = SitesCorpus(SitesParams(pages=5_000, hosts=300, seed=1))
    other = SitesCorpus(SitesParams(pages=5_000, hosts=300, seed=2))
    assert twin.render(1234) == web.render(1234) and twin.url(1234) == web.url(1234)
    assert other.render(1234) != web.render(1234)


def test_every_url_maps_back_to_its_page_and_others_are_404(web: SitesCorpus) -> None:
    for page in range(0, 5_000, 7):
        assert web.page_id(web.url(page)) == page
    kinds = Counter(web.kind_of(p)[0] for p in range(5_000))
    assert kinds[HOME] == 300 and kinds[LISTING] > 300 and kinds[CONTENT] > 3_500
    content = next(p for p in range(5_000) if web.kind_of(p)[0] == CONTENT)
    url = web.url(content)
    assert web.page(url.replace(".html", ".htm")) is None
    assert web.page(url.rsplit("/", 1)[0] + "/99999999.html") is None
    assert web.page(url.replace(web.host_name(web.host_of(content)), "h9999.sites.example")) is None


def test_links_are_mostly_dead_or_off_the_web_at_the_profiles_shares(web: SitesCorpus) -> None:
    real = dead = offsite = 0
    for page in range(0, 5_000, 3):
        real += len(web.out_links(page))
        for url, _ in web.dead_links(page):
            assert web.page(url) is None
            if ".elsewhere.example/" in url:
                offsite += 1
            else:
                dead += 1
    total = real + dead + offsite
    assert 0.10 < real / total < 0.18, real / total
    assert 0.50 < dead / total < 0.65, dead / total
    assert 0.24 < offsite / total < 0.34, offsite / total
    # a few hosts outside the web are linked often (Zipf), as popular sites are
    hosts = Counter(
        url.split("/")[2] for p in range(0, 5_000, 3) for url, _ in web.dead_links(p)
        if ".elsewhere.example/" in url
    )  # fmt: skip
    assert hosts.most_common(1)[0][1] > 20 * statistics.median(hosts.values())
    # a missing page is linked from about as many pages as a page the web holds (each
    # linked once, dead links would be told apart by that alone)
    live_in = Counter(
        t for p in range(5_000) for t in web.out_links(p) if web.kind_of(t)[0] == CONTENT
    )
    dead_in = Counter(
        url for p in range(5_000) for url, _ in web.dead_links(p) if ".sites.example/" in url
    )
    assert statistics.median(live_in.values()) == statistics.median(dead_in.values()) == 2
    assert 0.8 < statistics.mean(dead_in.values()) / statistics.mean(live_in.values()) < 1.4
    # how many of a host's links are dead varies by host
    factors = sorted(host.dead_factor for host in web._hosts)
    assert factors[-30] > 4 * factors[30]


def test_targets_rarely_link_to_each_other_and_lie_several_links_from_the_seeds(
    web: SitesCorpus,
) -> None:
    graph = {p: web.out_links(p) for p in range(5_000)}
    labels = dict(web.labels())
    biology = sorted(p for p in range(5_000) if labels.get(web.url(p)) == "subject.Science.Biology")
    assert len(biology) > 300
    targets = set(biology)
    links = [q for p in biology for q in graph[p]]
    assert sum(q in targets for q in links) / len(links) < 0.15
    seeds = random.Random(1).sample(biology, 10)
    distance = dict.fromkeys(seeds, 0)
    queue = deque(seeds)
    while queue:
        page = queue.popleft()
        for target in graph[page]:
            if target not in distance:
                distance[target] = distance[page] + 1
                queue.append(target)
    found = [distance[p] for p in biology if p in distance]
    assert len(found) == len(biology)  # every target can be reached ...
    assert statistics.median(found) >= 3 and max(found) >= 6  # ... but not directly
    assert sum(d <= 1 for d in found) < 0.05 * len(found)


def test_navigation_pages_carry_no_label_and_list_their_links(web: SitesCorpus) -> None:
    labels = dict(web.labels())
    assert all(web.kind_of(web.page_id(url) or 0)[0] == CONTENT for url in labels)
    home = web._hosts[5].start
    assert web.url(home) not in labels
    sections = [web.url(s) for s in web._hosts[5].list_starts[:-1]]
    assert set(sections) <= {web.url(t) for t in web.out_links(home)}


def test_served_pages_link_as_promised_and_dead_links_fail(web: SitesCorpus) -> None:
    page = next(p for p in range(100, 5_000) if web.kind_of(p)[0] == CONTENT and web.dead_links(p))
    with (
        WebBoxThread(WebBox(web, faults=False)) as running,
        httpx.Client(proxy=running.proxy) as http,
    ):
        served = http.get(web.url(page))
        assert served.status_code == 200
        hrefs = [a.get("href") for a in lxml_html.fromstring(served.content).iter("a")]
        assert len(hrefs) == len(web.out_links(page)) + len(web.dead_links(page))
        for target in web.out_links(page)[:3]:
            assert http.get(web.url(target)).status_code == 200
        for url, _ in web.dead_links(page)[:4]:
            answer = http.get(url)
            if ".elsewhere.example/" in url:
                assert answer.status_code == 502 and "dns_error" in answer.headers["proxy-status"]
            else:
                assert answer.status_code == 404


@pytest.mark.parametrize(
    "params",
    [
        SitesParams(pages=0, hosts=1),
        SitesParams(pages=10, hosts=20),
        SitesParams(pages=10, hosts=1, purity=1.5),
        SitesParams(pages=10, hosts=1, dead_share=0.6, offsite_share=0.4),
        SitesParams(pages=10, hosts=1, anchor_share=-0.1),
    ],
)
def test_bad_parameters_are_refused(params: SitesParams) -> None:
    with pytest.raises(ConfigError):
        SitesCorpus(params)
