"""The web-in-a-box's ground truth: which pages belong to a topic."""

from __future__ import annotations

import difflib
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.errors import CorpusError
from focuscrawl.web.corpus import topic_levels
from focuscrawl.webbox import load_corpus

__all__ = ["GroundTruth", "link_graph", "load_truth", "sweep_topics", "under"]


def under(category: str, topic: str) -> bool:
    """``category`` is ``topic`` or lies below it in the tree."""
    return category == topic or category.startswith(topic + ".")


@dataclass(frozen=True)
class GroundTruth:
    labels: dict[str, tuple[str, ...]]  # URL -> its category paths

    def relevant(self, topic: str) -> frozenset[str]:
        found = frozenset(u for u, cs in self.labels.items() if any(under(c, topic) for c in cs))
        if not found:
            categories = sorted(
                {
                    ".".join(c.split(".")[:n])
                    for cs in self.labels.values()
                    for c in cs
                    for n in range(1, c.count(".") + 2)
                }
            )
            close = difflib.get_close_matches(topic, categories, n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise CorpusError(f"no page of the corpus is labelled {topic!r} or below it{hint}")
        return found

    def distant_seeds(
        self, topic: str, count: int, seed: int, distance: int, graph: dict[str, list[str]]
    ) -> list[str]:
        """A seeded random sample of ``count`` pages from which the nearest page of
        ``topic`` is exactly ``distance`` links away (Srinivasan, Menczer & Pant's
        "seeds d links back from the targets"): none of them relevant."""
        relevant = self.relevant(topic)
        back: dict[str, list[str]] = defaultdict(list)
        for source, targets in graph.items():
            for target in targets:
                back[target].append(source)
        steps = dict.fromkeys(relevant, 0)
        frontier = sorted(relevant)
        for step in range(1, distance + 1):
            reached = sorted({s for t in frontier for s in back.get(t, ()) if s not in steps})
            steps.update(dict.fromkeys(reached, step))
            frontier = reached
        if len(frontier) < count:
            raise CorpusError(
                f"{topic}: {len(frontier)} pages lie {distance} links from its nearest "
                f"page, fewer than the {count} seeds asked for"
            )
        return random.Random(seed).sample(frontier, count)

    def seeds(self, topic: str, count: int, seed: int) -> list[str]:
        """A seeded random sample of ``count`` relevant pages."""
        relevant = sorted(self.relevant(topic))
        if count > len(relevant):
            raise CorpusError(f"asked for {count} seeds, but {topic} has {len(relevant)} pages")
        return random.Random(seed).sample(relevant, count)


def sweep_topics(truth: GroundTruth, min_pages: int = 30) -> list[str]:
    """The second-level topics with at least ``min_pages`` relevant pages, in name order:
    categories two levels below the top (Wikispeedia's ``subject.Science.Biology``: a
    first component every category shares, as ``subject``, is not a level), or the
    corpus's own levels when its labels are shallower (``topic_levels``)."""
    categories = {c for cs in truth.labels.values() for c in cs}
    skip, taken = topic_levels(categories)
    depth = skip + taken
    pages: dict[str, int] = defaultdict(int)
    for labels in truth.labels.values():
        topics = {".".join(c.split(".")[:depth]) for c in labels if c.count(".") >= depth - 1}
        for topic in topics:
            pages[topic] += 1
    return sorted(t for t, n in pages.items() if n >= min_pages)


def load_truth(directory: Path) -> GroundTruth:
    labels: dict[str, list[str]] = defaultdict(list)
    for url, category in load_corpus(str(directory), directory).labels():
        labels[url].append(category)
    if not labels:
        raise CorpusError(f"{directory}: the corpus has no ground truth")
    return GroundTruth({u: tuple(cs) for u, cs in labels.items()})


def link_graph(directory: Path) -> dict[str, list[str]]:
    """Every served page's out-links to pages the corpus serves, read off the pages as
    a crawler reads them."""
    from focuscrawl.crawler.parse import parse_html

    corpus = load_corpus(str(directory), directory)
    urls = list(corpus.urls())
    served = set(urls)
    graph: dict[str, list[str]] = {}
    for url in urls:
        page = corpus.page(url)
        if page is None or page.status != 200:
            continue
        links = parse_html(page.body, url).links
        graph[url] = sorted({link[0] for link in links if link[0] in served})
    return graph
