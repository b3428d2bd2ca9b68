"""A generated web of any size, made page by page on request.

Nothing is stored per page: page ``i`` is a pure function of ``(seed, i)``, so a
2,000,000-page web costs the same memory as a 2,000-page one. Its shape:

* **Topics** are the 65 Wikispeedia categories with at least 20 articles (for
  example ``subject.Science.Biology``); each owns a contiguous block of page ids,
  sized by how many articles the category has.
* **Text** mixes words drawn from the topic's distribution (a share ``topic_share``,
  half by default) and from a background distribution (counts learned from the
  Wikispeedia text, shipped in ``topic_words.json.gz``), so pages read like real
  vocabulary. For speed, each topic draws a pool of 4,096 twelve-word sentences once,
  and a page is a random run of them (about 550 words, log-normal).
* **Hosts** are topical: each topic owns a share of the hosts, and a page lives on
  one of its topic's hosts with probability ``site_purity`` (else on any host).
* **Links**: out-degree is Pareto-distributed (mean about 14, at most 200). A link
  stays in its topic with probability ``locality``, goes to a sibling topic (same
  top-level category) with probability ``sibling``, and else anywhere. Targets
  within a topic are skewed towards low ids, so in-degrees follow a power law.

URLs look like ``http://site0042.synth.example/p/123456``.
"""

from __future__ import annotations

import bisect
import gzip
import html
import json
import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from focuscrawl.errors import ConfigError
from focuscrawl.web.corpus import FORMAT, Page

__all__ = ["SyntheticCorpus", "SyntheticParams", "define_synthetic"]

DOMAIN = "synth.example"
MAX_DEGREE = 200
SENTENCE_WORDS = 12
POOL_SENTENCES = 4096  # per topic, made on first use
_MASK = (1 << 64) - 1
_HTML = (("Content-Type", "text/html; charset=utf-8"),)


def _mix(*values: int) -> int:
    """splitmix64 over several integers: a cheap, well-spread deterministic hash."""
    x = 0x9E3779B97F4A7C15
    for value in values:
        x = (x ^ (value & _MASK)) * 0xBF58476D1CE4E5B9 & _MASK
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & _MASK
        x ^= x >> 29
    return x


@cache
def _words() -> dict[str, Any]:
    data = resources.files("focuscrawl.webbox").joinpath("topic_words.json.gz").read_bytes()
    return json.loads(gzip.decompress(data))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class SyntheticParams:
    pages: int
    hosts: int
    seed: int = 1
    locality: float = 0.7
    sibling: float = 0.15
    site_purity: float = 0.9
    topic_share: float = 0.5  # of a page's words drawn from its topic, not the background
    anchor_share: float = 1.0  # of its title's (and so its anchors') words, likewise
    #: links beside the real ones, as a share of a page's links: to pages its hosts do
    #: not have (404) and to hosts that do not exist (the proxy answers dns_error)
    dead_share: float = 0.0
    offsite_share: float = 0.0

    def check(self) -> None:
        if self.pages < 1 or self.hosts < 1:
            raise ConfigError("a synthetic web needs at least 1 page and 1 host")
        if self.pages > 100_000_000:
            raise ConfigError("at most 100,000,000 pages")
        for name in _SHARES:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1")
        if self.locality + self.sibling > 1.0:
            raise ConfigError("locality + sibling must not exceed 1")
        if self.dead_share + self.offsite_share >= 1.0:
            raise ConfigError("dead_share + offsite_share must be below 1")


#: the parameters that are probabilities or shares (every float field)
_SHARES = tuple(f.name for f in fields(SyntheticParams) if f.type in ("float", float))


class _Vocabulary:
    """Cumulative distributions for fast sampling of words."""

    def __init__(self, pairs: list[list[Any]]) -> None:
        # Escaped once here, so rendering a page never escapes word by word.
        self.words = np.array([html.escape(w) for w, _ in pairs], dtype=object)
        counts = np.array([c for _, c in pairs], dtype=np.float64)
        self.cumulative = np.cumsum(counts / counts.sum())

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        index = np.searchsorted(self.cumulative, rng.random(n), side="right")
        return self.words[np.minimum(index, len(self.words) - 1)]


@dataclass
class SyntheticCorpus:
    params: SyntheticParams
    name: str = "synthetic"
    faults: bool = True
    topics: list[str] = field(init=False)
    _starts: list[int] = field(init=False, repr=False)
    _topic_hosts: list[tuple[int, int]] = field(init=False, repr=False)
    _host_names: list[str] = field(init=False, repr=False)
    _host_index: dict[str, int] = field(init=False, repr=False)
    _siblings: list[list[int]] = field(init=False, repr=False)
    _vocab: list[_Vocabulary] = field(init=False, repr=False)
    _background: _Vocabulary = field(init=False, repr=False)
    _pools: dict[int, list[str]] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.params.check()
        data = _words()
        self.topics = sorted(data["topics"])
        weights = np.array([data["topics"][t]["articles"] for t in self.topics], dtype=np.float64)
        self._starts = _split(self.params.pages, weights)
        self._topic_hosts = _host_ranges(self.params.hosts, weights)
        self._host_names = [f"site{h:04d}.{DOMAIN}" for h in range(self.params.hosts)]
        self._host_index = {name: h for h, name in enumerate(self._host_names)}
        parents = [".".join(t.split(".")[:2]) for t in self.topics]
        self._siblings = [[j for j, p in enumerate(parents) if p == parent] for parent in parents]
        self._vocab = [_Vocabulary(data["topics"][t]["words"]) for t in self.topics]
        self._background = _Vocabulary(data["background"])

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> SyntheticCorpus:
        names = [f.name for f in fields(SyntheticParams)]
        params = SyntheticParams(**{k: meta[k] for k in names if k in meta})
        return cls(params, str(meta.get("name", "synthetic")), bool(meta.get("faults", True)))

    # -- structure -------------------------------------------------------------

    def topic_of(self, page: int) -> int:
        return bisect.bisect_right(self._starts, page) - 1

    def host_of(self, page: int) -> int:
        mixed = _mix(self.params.seed, page, 1)
        if (mixed & 0xFFFFFF) < self.params.site_purity * 0x1000000:
            first, count = self._topic_hosts[self.topic_of(page)]
            return first + (mixed >> 24) % count
        return (mixed >> 24) % self.params.hosts

    def url(self, page: int) -> str:
        return f"http://{self._host_names[self.host_of(page)]}/p/{page}"

    def title(self, page: int) -> str:
        """Three words (already HTML-escaped, like the vocabulary): each of the topic's
        with probability ``anchor_share``, else of the background."""
        topical = self._vocab[self.topic_of(page)].words
        mixed = _mix(self.params.seed, page, 10)
        picks = []
        for n in range(3):
            vocab = topical
            if self.params.anchor_share < 1.0:
                roll = _mix(self.params.seed, page, 12 + n) & 0xFFFFFF
                if roll >= self.params.anchor_share * 0x1000000:
                    vocab = self._background.words
            picks.append(vocab[(mixed >> (16 * n)) % min(len(vocab), 200)])
        return " ".join(str(w).capitalize() for w in picks)

    def _target(self, rng: random.Random, topic: int) -> int:
        roll = rng.random()
        if roll < self.params.locality:
            chosen = topic
        elif roll < self.params.locality + self.params.sibling:
            chosen = rng.choice(self._siblings[topic])
        else:
            chosen = self.topic_of(rng.randrange(self.params.pages))
        start, end = self._starts[chosen], self._starts[chosen + 1]
        return start + int((end - start) * rng.random() ** 2.5)

    def out_links(self, page: int) -> list[int]:
        # random.Random, not numpy: this is scalar work, where it is ten times faster.
        rng = random.Random(_mix(self.params.seed, page, 7))
        degree = min(MAX_DEGREE, int((rng.paretovariate(1.5) - 1) * 6) + 2)
        topic = self.topic_of(page)
        targets = {self._target(rng, topic) for _ in range(degree)}
        targets.discard(page)
        return sorted(targets)

    def dead_links(self, page: int) -> list[str]:
        """Links of ``page`` that lead nowhere: to ids its hosts do not have, and to
        hosts outside the web, so that the share of them among all its links is about
        ``dead_share`` + ``offsite_share`` (a stream of its own: the real links and the
        text are the same as without them)."""
        broken = self.params.dead_share + self.params.offsite_share
        if broken <= 0.0:
            return []
        rng = random.Random(_mix(self.params.seed, page, 13))
        real = len(self.out_links(page))
        count = int(real * broken / (1.0 - broken) + rng.random())
        links = []
        for n in range(count):
            if rng.random() * broken < self.params.dead_share:
                host = self._host_names[rng.randrange(self.params.hosts)]
                links.append(f"http://{host}/p/{self.params.pages + rng.randrange(1 << 30)}")
            else:
                links.append(f"http://gone{rng.randrange(10_000)}.offsite.example/p/{n}")
        return links

    # -- the Corpus protocol --------------------------------------------------------

    def page_id(self, url: str) -> int | None:
        host, _, path = url.partition("://")[2].partition("/")
        if not path.startswith("p/") or not path[2:].isdigit():
            return None
        page = int(path[2:])
        if page >= self.params.pages or self._host_index.get(host) != self.host_of(page):
            return None
        return page

    def page(self, url: str) -> Page | None:
        page = self.page_id(url)
        return None if page is None else Page(200, _HTML, self.render(page))

    def _pool(self, topic: int) -> list[str]:
        """The topic's sentences: pages are made of these, so rendering never samples words."""
        pool = self._pools.get(topic)
        if pool is None:
            pool = self._pools[topic] = sentence_pool(
                self.params.seed, self.params.topic_share, self._background,
                self._vocab[topic], topic, POOL_SENTENCES,
            )  # fmt: skip
        return pool

    def render(self, page: int) -> bytes:
        rng = random.Random(_mix(self.params.seed, page, 5))
        pool = self._pool(self.topic_of(page))
        words = min(3000, max(80, int(rng.lognormvariate(math.log(550), 0.5))))
        sentences = [pool[rng.randrange(len(pool))] for _ in range(words // SENTENCE_WORDS)]
        for target in self.out_links(page):
            at = rng.randrange(len(sentences))
            sentences[at] = f'<a href="{self.url(target)}">{self.title(target)}</a> {sentences[at]}'
        dead = self.dead_links(page)
        if dead:
            placing = random.Random(_mix(self.params.seed, page, 14))
            for url in dead:  # anchored with some page's title, as a link that died
                at = placing.randrange(len(sentences))
                anchor = self.title(placing.randrange(self.params.pages))
                sentences[at] = f'<a href="{url}">{anchor}</a> {sentences[at]}'
        title = self.title(page)
        body = "".join(
            "<p>" + " ".join(sentences[i : i + 5]) + "</p>\n" for i in range(0, len(sentences), 5)
        )
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f"<body><h1>{title}</h1>\n{body}</body></html>\n"
        ).encode()

    def has_host(self, host: str) -> bool:
        return host in self._host_index

    def robots(self, host: str) -> str | None:
        return None

    def urls(self) -> Iterator[str]:
        return (self.url(page) for page in range(self.params.pages))

    def labels(self) -> Iterator[tuple[str, str]]:
        return ((self.url(p), self.topics[self.topic_of(p)]) for p in range(self.params.pages))

    def taxonomy(self) -> list[str]:
        return list(self.topics)


def sentence_pool(
    seed: int,
    topic_share: float,
    background: _Vocabulary,
    vocabulary: _Vocabulary,
    topic: int,
    sentences: int,
) -> list[str]:
    """``sentences`` sentences of SENTENCE_WORDS words of ``topic``'s pages: each word of
    its ``vocabulary`` with probability ``topic_share``, else of the ``background``."""
    rng = np.random.default_rng([seed, topic, 11])
    count = sentences * SENTENCE_WORDS
    words = background.sample(rng, count)
    from_topic = rng.random(count) < topic_share
    words[from_topic] = vocabulary.sample(rng, int(from_topic.sum()))
    flat = words.tolist()
    return [" ".join(flat[i : i + SENTENCE_WORDS]) + "." for i in range(0, count, SENTENCE_WORDS)]


def _split(total: int, weights: np.ndarray) -> list[int]:
    """Block starts giving each topic a share of ``total`` by weight (every block >= 0)."""
    shares = np.floor(total * weights / weights.sum()).astype(np.int64)
    remainder = total - int(shares.sum())
    order = np.argsort(-(total * weights / weights.sum() - shares), kind="stable")
    shares[order[:remainder]] += 1
    return [0, *np.cumsum(shares).tolist()]


def _host_ranges(hosts: int, weights: np.ndarray) -> list[tuple[int, int]]:
    """(first host, count) for each topic: a weighted share of hosts, shared when scarce."""
    if hosts < len(weights):
        return [(t % hosts, 1) for t in range(len(weights))]
    starts = _split(hosts - len(weights), weights)
    return [(starts[t] + t, starts[t + 1] - starts[t] + 1) for t in range(len(weights))]


def define_synthetic(directory: Path, params: SyntheticParams, name: str) -> None:
    """Write the corpus.json of a generated web (its pages are made on request)."""
    SyntheticCorpus(params)  # validates the parameters
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "name": name,
        "kind": "synthetic",
        "faults": True,
        **asdict(params),
    }
    (directory / "corpus.json").write_text(json.dumps(meta, indent=2) + "\n")
