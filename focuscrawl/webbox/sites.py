"""A generated web of sites, shaped like a small crawl of the real web: the targets lie
below navigation pages, several links from each other, and most links lead nowhere.

Where ``focuscrawl.webbox.synthetic`` links pages of a topic to each other, this web
keeps them apart, as a partial crawl of real sites does (a few thousand pages on a few
hundred hosts, of which a crawler reaches a page in seven links). Page ``i`` is still
a pure function of ``(seed, i)``; only the sites' layout (a few numbers a host) is made
at start. Its shape:

* **Sites.** Hosts hold heavy-tailed numbers of pages (a few hosts hundreds, most a
  handful). Each host has a home page (``/``), a few **section** pages
  (``/<word>-<k>/``, a word of the section's topic, as ``/courses/`` names a kind of
  page on many sites), and **content** pages below them
  (``/<word>-<k>/<id>.html``). A host has a topic; each section is of the host's topic
  with probability ``purity``, else of another; each content page is of its section's
  topic with probability ``section_purity``.
* **Ground truth.** Content pages are labelled with their topic; home and section
  pages carry no label (they are navigation, never a target).
* **Links.** A home page links to its sections and to a few other hosts' home pages;
  a section to its home, its content pages and a few sibling sections; a content page
  up to its section and home, to a few pages of its own host and a few of other hosts
  (a host of its topic with probability ``locality``). So content pages of a topic
  rarely link to each other: they are reached through sections, and other sites
  through home pages.
* **Text.** Content pages mix words of their topic (a share ``topic_share``) into
  background words; their titles, and so the anchors of links to them, have each word
  from the topic with probability ``anchor_share``. Navigation pages carry a few
  sentences of background and their links.
* **Furniture.** Every page carries its site's menu and footer, words of the web
  (``SITE_WORDS``: home, contact, department, research, ...) rather than of a topic, as
  real pages do: a topic learned from ten of them against a background of encyclopaedia
  text may take those words for the topic's.
* **Dead links.** Beside the real links, a page links to pages its host does not have
  (404: pages the crawl that made this web did not keep, and documents such as
  ``.pdf`` files) and to hosts outside the web (the proxy answers ``dns_error``), at
  about ``dead_share`` and ``offsite_share`` of its links. How many of a host's links
  are dead varies by host (a log-normal factor): some sites were kept well, most
  poorly. Hosts outside the web are drawn from a pool with Zipf weights, so a few are
  linked often, as popular sites are.

The defaults are the held-out web of docs/how-to/evaluate.md: of the links, about 14%
reach a page, 57% are dead on their own hosts and 29% lead off the web.

URLs look like ``http://h0042.sites.example/birds-3/12345.html``.
"""

from __future__ import annotations

import bisect
import json
import math
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from focuscrawl.errors import ConfigError
from focuscrawl.web.corpus import FORMAT, Page
from focuscrawl.webbox.synthetic import (
    _HTML,
    SENTENCE_WORDS,
    _mix,
    _Vocabulary,
    _words,
    sentence_pool,
)

__all__ = ["SitesCorpus", "SitesParams", "define_sites"]

DOMAIN = "sites.example"
OFFSITE_DOMAIN = "elsewhere.example"
#: the words a section may be named by: the most frequent plain words of its topic
SECTION_WORDS = 8
POOL_SENTENCES = 2048  # per topic, made on first use
_PLAIN = re.compile(r"[a-z]{3,}")
#: a section's path, and after it a content page's or a later listing page's, if any
_PATH = re.compile(r"/([a-z]+)-(\d+)/(?:(\d+)\.html|list-(\d+)\.html)?")

#: content pages a listing page of a section links to (a section of more has several)
LISTED = 15
#: a host's missing pages against the pages a section of it holds (times its dead factor)
DEAD_POOL = 12
#: the largest share of the web's pages one host holds
HOST_MOST = 0.05
#: the page kinds of a host's block: its home, its sections' listing pages, its content
HOME, LISTING, CONTENT = 0, 1, 2


@dataclass(frozen=True)
class SitesParams:
    pages: int
    hosts: int
    seed: int = 1
    purity: float = 0.6
    section_purity: float = 0.9
    locality: float = 0.3
    topic_share: float = 0.15
    anchor_share: float = 0.5
    dead_share: float = 0.57
    offsite_share: float = 0.29
    #: of the dead links on a page's own host, the share to documents (.pdf)
    document_share: float = 0.2
    #: every page carries its site's menu and footer (words of the web, not of a topic)
    boilerplate: bool = True

    def check(self) -> None:
        if self.pages < 1 or self.hosts < 1:
            raise ConfigError("a web of sites needs at least 1 page and 1 host")
        if self.hosts > self.pages:
            raise ConfigError("a web of sites needs at least a page a host (its home page)")
        if self.pages > 10_000_000:
            raise ConfigError("a web of sites holds at most 10,000,000 pages")
        for name in _SHARES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1")
        if self.dead_share + self.offsite_share >= 1.0:
            raise ConfigError("dead_share + offsite_share must be below 1")


_SHARES = tuple(f.name for f in fields(SitesParams) if f.type in ("float", float))
#: what a site's menu and footer are made of: the words of the web's own furniture
_FURNITURE = (
    "home about contact news events search login sitemap help privacy terms copyright "
    "webmaster department office staff people research links resources services updated "
    "page last modified email phone address welcome site menu information faculty "
    "students courses projects publications calendar directory jobs support feedback"
)
SITE_WORDS = _FURNITURE.split()


@dataclass
class _Host:
    start: int  # its home page's id; the sections' listing pages follow, then content
    topic: int
    sections: list[int]  # each section's topic
    section_words: list[str]  # each section's name
    list_starts: list[int]  # the first listing page of each section, and the end
    content_starts: list[int]  # the first content id of each section, and the end
    dead_factor: float  # how many dead links its pages have, against the mean (mean 1)

    def listings(self, section: int) -> int:
        return self.list_starts[section + 1] - self.list_starts[section]


@dataclass
class SitesCorpus:
    params: SitesParams
    name: str = "sites"
    faults: bool = True
    topics: list[str] = field(init=False)
    _hosts: list[_Host] = field(init=False, repr=False)
    _host_starts: list[int] = field(init=False, repr=False)
    _host_index: dict[str, int] = field(init=False, repr=False)
    _topic_hosts: list[list[int]] = field(init=False, repr=False)
    _host_weights: np.ndarray = field(init=False, repr=False)
    _offsite: np.ndarray = field(init=False, repr=False)
    _vocab: list[_Vocabulary] = field(init=False, repr=False)
    _background: _Vocabulary = field(init=False, repr=False)
    _section_names: list[list[str]] = field(init=False, repr=False)
    _pools: dict[int, list[str]] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.params.check()
        data = _words()
        self.topics = sorted(data["topics"])
        self._vocab = [_Vocabulary(data["topics"][t]["words"]) for t in self.topics]
        self._background = _Vocabulary(data["background"])
        self._section_names = [
            [w for w, _ in data["topics"][t]["words"] if _PLAIN.fullmatch(w)][:SECTION_WORDS]
            or ["pages"]
            for t in self.topics
        ]
        weights = np.array([data["topics"][t]["articles"] for t in self.topics], dtype=float)
        self._layout(weights / weights.sum())

    def _layout(self, topic_weights: np.ndarray) -> None:
        p = self.params
        rng = np.random.default_rng([p.seed, 21])
        # log-normal host sizes (none above HOST_MOST of the web), each at least its home
        raw = rng.lognormal(0.0, 1.3, p.hosts)
        raw = np.minimum(raw / raw.sum(), HOST_MOST)
        sizes = 1 + np.floor(raw / raw.sum() * (p.pages - p.hosts)).astype(np.int64)
        sizes[np.argsort(-raw)[: p.pages - int(sizes.sum())]] += 1
        topics = rng.choice(len(self.topics), size=p.hosts, p=topic_weights)
        dead = rng.lognormal(0.0, 1.0, p.hosts)
        dead /= dead.mean()
        self._hosts = []
        start = 0
        for h in range(p.hosts):
            size = int(sizes[h])
            # sections and their listing pages, LISTED content pages a listing page
            count = 0 if size < 2 else max(1, round(math.sqrt(size) / 2.5))
            while count > 1 and size - 1 - sum(_listings(size, count)) < count:
                count -= 1
            lists = _listings(size, count)
            content = size - 1 - sum(lists)
            sections = [
                int(topics[h])
                if rng.random() < p.purity
                else int(rng.choice(len(self.topics), p=topic_weights))
                for _ in range(count)
            ]
            names = [self._section_names[t][int(rng.integers(len(self._section_names[t])))]
                     for t in sections]  # fmt: skip
            list_starts = [start + 1 + sum(lists[:k]) for k in range(count + 1)]
            first = list_starts[-1]
            bounds = [first + (content * k) // max(count, 1) for k in range(count + 1)]
            self._hosts.append(
                _Host(start, int(topics[h]), sections, names, list_starts, bounds, float(dead[h]))
            )
            start += size
        self._host_starts = [host.start for host in self._hosts]
        self._host_index = {self.host_name(h): h for h in range(p.hosts)}
        self._topic_hosts = [[] for _ in self.topics]
        for h, host in enumerate(self._hosts):
            self._topic_hosts[host.topic].append(h)
        self._host_weights = np.cumsum(sizes / sizes.sum())
        pool = 3 * p.hosts
        zipf = 1.0 / np.arange(1, pool + 1) ** 1.1
        self._offsite = np.cumsum(zipf / zipf.sum())

    # -- structure -----------------------------------------------------------------

    @staticmethod
    def host_name(h: int) -> str:
        return f"h{h:04d}.{DOMAIN}"

    def host_of(self, page: int) -> int:
        return bisect.bisect_right(self._host_starts, page) - 1

    def kind_of(self, page: int) -> tuple[int, int, int]:
        """(HOME, LISTING or CONTENT; the section's index; for a listing page its number
        in the section from 0, for content its place among the section's pages)."""
        host = self._hosts[self.host_of(page)]
        if page == host.start:
            return HOME, -1, 0
        if page < host.list_starts[-1]:
            section = bisect.bisect_right(host.list_starts, page) - 1
            return LISTING, section, page - host.list_starts[section]
        section = bisect.bisect_right(host.content_starts, page) - 1
        return CONTENT, section, page - host.content_starts[section]

    def topic_of(self, page: int) -> int:
        host = self._hosts[self.host_of(page)]
        kind, section, _ = self.kind_of(page)
        if kind == HOME:
            return host.topic
        topic = host.sections[section]
        if kind == CONTENT:
            mixed = _mix(self.params.seed, page, 3)
            if (mixed & 0xFFFFFF) >= self.params.section_purity * 0x1000000:
                return (mixed >> 24) % len(self.topics)
        return topic

    def section_path(self, host: _Host, section: int) -> str:
        return f"/{host.section_words[section]}-{section + 1}/"

    def url(self, page: int) -> str:
        h = self.host_of(page)
        host = self._hosts[h]
        kind, section, nth = self.kind_of(page)
        base = f"http://{self.host_name(h)}"
        if kind == HOME:
            return base + "/"
        if kind == LISTING:
            return base + self.section_path(host, section) + (f"list-{nth + 1}.html" if nth else "")
        return f"{base}{self.section_path(host, section)}{page}.html"

    def title(self, page: int) -> str:
        """Content pages: three words, each of the topic's with probability
        ``anchor_share``, else of the background; a listing page: its section's name; a
        home page: two words of its host's topic, as a site's name."""
        kind, section, nth = self.kind_of(page)
        if kind == LISTING:
            name = self._hosts[self.host_of(page)].section_words[section].capitalize()
            return f"{name} (page {nth + 1})" if nth else name
        topical = self._vocab[self.topic_of(page)].words
        mixed = _mix(self.params.seed, page, 10)
        picks = []
        for n in range(2 if kind == HOME else 3):
            vocab = topical
            if kind == CONTENT:
                roll = _mix(self.params.seed, page, 12 + n) & 0xFFFFFF
                if roll >= self.params.anchor_share * 0x1000000:
                    vocab = self._background.words
            picks.append(vocab[(mixed >> (16 * n)) % min(len(vocab), 200)])
        return " ".join(str(w).capitalize() for w in picks)

    def _content_of(self, host: _Host, rng: random.Random) -> int | None:
        if host.content_starts[-1] == host.content_starts[0]:
            return None
        return rng.randrange(host.content_starts[0], host.content_starts[-1])

    def _elsewhere(self, rng: random.Random, topic: int, here: int) -> int | None:
        """A page of another host: of the topic's hosts with probability ``locality``,
        else of any host by its size; its home page mostly, else a section's first
        listing page or a content page."""
        hosts = self._topic_hosts[topic]
        if hosts and rng.random() < self.params.locality:
            h = hosts[rng.randrange(len(hosts))]
        else:
            h = min(bisect.bisect_right(self._host_weights, rng.random()), len(self._hosts) - 1)
        if h == here:
            return None
        host = self._hosts[h]
        roll = rng.random()
        if roll < 0.6 or not host.sections:
            return host.start
        if roll < 0.8:
            return host.list_starts[rng.randrange(len(host.sections))]
        return self._content_of(host, rng)

    def out_links(self, page: int) -> list[int]:
        """The real links of ``page``: to pages the web holds."""
        h = self.host_of(page)
        host = self._hosts[h]
        kind, section, nth = self.kind_of(page)
        rng = random.Random(_mix(self.params.seed, page, 7))
        topic = self.topic_of(page)
        links: list[int | None] = []
        if kind == HOME:
            links.extend(host.list_starts[s] for s in range(min(len(host.sections), 60)))
            links.extend(self._elsewhere(rng, topic, h) for _ in range(rng.randrange(1, 6)))
        elif kind == LISTING:
            first = host.content_starts[section] + nth * LISTED
            end = min(first + LISTED, host.content_starts[section + 1])
            links.append(host.start)
            links.extend(range(first, end))
            if nth + 1 < host.listings(section):
                links.append(page + 1)  # the next listing page
            if nth:
                links.extend((page - 1, host.list_starts[section]))
            else:
                for _ in range(min(3, len(host.sections) - 1)):
                    links.append(host.list_starts[rng.randrange(len(host.sections))])
            links.extend(self._elsewhere(rng, topic, h) for _ in range(rng.randrange(0, 2)))
        else:
            links.extend((host.start, host.list_starts[section]))
            links.extend(self._content_of(host, rng) for _ in range(rng.randrange(0, 2)))
            links.extend(self._elsewhere(rng, topic, h) for _ in range(rng.randrange(0, 3)))
        return sorted({t for t in links if t is not None and t != page})

    def dead_links(self, page: int) -> list[tuple[str, str]]:
        """(URL, anchor) of each link of ``page`` that leads nowhere: pages and
        documents its host does not have, and hosts outside the web. A host's missing
        pages are a pool of its own, DEAD_POOL times as many as a section has pages,
        times its dead factor, each named and titled the same wherever it is linked:
        linked from about as many pages as a page the web holds, not once each."""
        p = self.params
        h = self.host_of(page)
        host = self._hosts[h]
        rng = random.Random(_mix(p.seed, page, 13))
        real = len(self.out_links(page))
        alive = 1.0 - p.dead_share - p.offsite_share
        dead = int(real * p.dead_share / alive * host.dead_factor + rng.random())
        offsite = int(real * p.offsite_share / alive + rng.random())
        links = []
        sections = len(host.sections)
        for _ in range(dead):
            section = rng.randrange(sections) if sections else -1
            size = (
                1
                if section < 0
                else host.content_starts[section + 1] - host.content_starts[section]
            )
            pool = max(1, round(DEAD_POOL * (size + 1) * host.dead_factor))
            links.append(self._missing(h, section, rng.randrange(pool)))
        for _ in range(offsite):
            n = bisect.bisect_right(self._offsite, rng.random())
            url = f"http://w{n:05d}.{OFFSITE_DOMAIN}/"
            if rng.random() < 0.5:
                url += f"{rng.randrange(1000)}.html"
            links.append((url, self._anchor(rng, rng.randrange(len(self.topics)))))
        return links

    def _missing(self, h: int, section: int, n: int) -> tuple[str, str]:
        """The ``n``-th page (or document) of a section that the web does not hold: its
        URL and the anchor links to it carry."""
        p = self.params
        host = self._hosts[h]
        mixed = _mix(p.seed, h, section, n, 19)
        path = self.section_path(host, section) if section >= 0 else "/"
        topic = host.sections[section] if section >= 0 else host.topic
        suffix = "pdf" if (mixed & 0xFFFFFF) < p.document_share * 0x1000000 else "html"
        number = p.pages + (mixed >> 24) % (1 << 30)
        url = f"http://{self.host_name(h)}{path}{number}.{suffix}"
        return url, self._anchor(random.Random(mixed), topic)

    def _anchor(self, rng: random.Random, topic: int) -> str:
        """An anchor as a dead link's page would have been titled: words of ``topic`` at
        ``anchor_share``, as a content page's title."""
        words = []
        for _ in range(rng.randrange(1, 4)):
            topical = rng.random() < self.params.anchor_share
            pool = self._vocab[topic].words if topical else self._background.words
            words.append(str(pool[rng.randrange(min(len(pool), 200))]).capitalize())
        return " ".join(words)

    # -- the Corpus protocol -----------------------------------------------------------

    def page_id(self, url: str) -> int | None:
        host_name, _, path = url.partition("://")[2].partition("/")
        h = self._host_index.get(host_name)
        if h is None:
            return None
        host = self._hosts[h]
        if not path:
            return host.start
        match = _PATH.fullmatch("/" + path)
        if match is None:
            return None
        section = int(match.group(2)) - 1
        if not 0 <= section < len(host.sections):
            return None
        if match.group(3) is not None:  # a content page
            page = int(match.group(3))
            if not host.content_starts[section] <= page < host.content_starts[section + 1]:
                return None
        elif match.group(4) is not None:  # a section's second or later listing page
            nth = int(match.group(4)) - 1
            if not 1 <= nth < host.listings(section):
                return None
            page = host.list_starts[section] + nth
        else:  # the section itself: its first listing page
            page = host.list_starts[section]
        return page if self.url(page) == url else None

    def page(self, url: str) -> Page | None:
        page = self.page_id(url)
        return None if page is None else Page(200, _HTML, self.render(page))

    def _pool(self, topic: int) -> list[str]:
        pool = self._pools.get(topic)
        if pool is None:
            pool = self._pools[topic] = sentence_pool(
                self.params.seed, self.params.topic_share, self._background,
                self._vocab[topic], topic, POOL_SENTENCES,
            )  # fmt: skip
        return pool

    def render(self, page: int) -> bytes:
        rng = random.Random(_mix(self.params.seed, page, 5))
        kind = self.kind_of(page)[0]
        topic = self.topic_of(page)
        pool = self._pool(topic)
        if kind == CONTENT:
            words = min(3000, max(80, int(rng.lognormvariate(math.log(400), 0.5))))
        else:
            words = rng.randrange(24, 72)
        sentences = [pool[rng.randrange(len(pool))] for _ in range(words // SENTENCE_WORDS)]
        anchors = [(self.url(t), self.title(t)) for t in self.out_links(page)]
        anchors.extend(self.dead_links(page))
        placing = random.Random(_mix(self.params.seed, page, 14))
        placing.shuffle(anchors)
        if kind == CONTENT:  # links in the text
            for url, anchor in anchors:
                at = rng.randrange(len(sentences))
                sentences[at] = f'<a href="{url}">{anchor}</a> {sentences[at]}'
            listed = ""
        else:  # a navigation page: its links as a list
            listed = (
                "<ul>\n"
                + "".join(f'<li><a href="{url}">{anchor}</a></li>\n' for url, anchor in anchors)
                + "</ul>\n"
            )
        title = self.title(page)
        body = "".join(
            "<p>" + " ".join(sentences[i : i + 5]) + "</p>\n" for i in range(0, len(sentences), 5)
        )
        menu, footer = self._furniture(self.host_of(page)) if self.params.boilerplate else ("", "")
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f"<body>{menu}<h1>{title}</h1>\n{body}{listed}{footer}</body></html>\n"
        ).encode()

    def _furniture(self, h: int) -> tuple[str, str]:
        """A host's menu and footer, the same on each of its pages: words of the web
        (``SITE_WORDS``), not of a topic, as every real site has them."""
        rng = random.Random(_mix(self.params.seed, h, 17))
        menu = " | ".join(w.capitalize() for w in rng.sample(SITE_WORDS, rng.randrange(5, 9)))
        footer = " ".join(rng.choice(SITE_WORDS) for _ in range(rng.randrange(8, 16)))
        return f'<div class="menu">{menu}</div>\n', f'<div class="footer">{footer}</div>\n'

    def has_host(self, host: str) -> bool:
        return host in self._host_index

    def robots(self, host: str) -> str | None:
        return None

    def urls(self) -> Iterator[str]:
        return (self.url(page) for page in range(self.params.pages))

    def labels(self) -> Iterator[tuple[str, str]]:
        return (
            (self.url(p), self.topics[self.topic_of(p)])
            for p in range(self.params.pages)
            if self.kind_of(p)[0] == CONTENT
        )

    def taxonomy(self) -> list[str]:
        return list(self.topics)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> SitesCorpus:
        names = [f.name for f in fields(SitesParams)]
        params = SitesParams(**{k: meta[k] for k in names if k in meta})
        return cls(params, str(meta.get("name", "sites")), bool(meta.get("faults", True)))


def define_sites(directory: Path, params: SitesParams, name: str) -> None:
    """Write the corpus.json of a generated web of sites (pages are made on request)."""
    SitesCorpus(params)  # validates the parameters
    directory.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "name": name, "kind": "sites", "faults": True, **asdict(params)}
    (directory / "corpus.json").write_text(json.dumps(meta, indent=2) + "\n")


def _listings(size: int, sections: int) -> list[int]:
    """How many listing pages each of a host's ``sections`` has, for a host of ``size``
    pages: enough for its share of the content at LISTED a page."""
    if not sections:
        return []
    per = (size - 1) / sections
    return [max(1, math.ceil(per / (LISTED + 1)))] * sections
