"""A background taxonomy a user's own topic is placed in (``focuscrawl topic new``).

A topic is learned against what it is not. The background is a general tree of
categories, each with a few short excerpts of real pages, built from the Wikispeedia
corpus (``scripts/build_background.py``; the second level of its subjects, such as
``Science.Chemistry`` or ``Geography.Storms``, and a subject with no second level whose
pages are its own, ``Mathematics``) and shipped in the package as
``background.json.gz``. Licence: the excerpts are Wikipedia article text (the 2007
Wikipedia for Schools selection that Wikispeedia serves) under the GNU Free
Documentation License; cite West & Leskovec, WWW 2012, and West, Pineau & Precup,
IJCAI 2009.

``topic_import`` makes a taxonomy of it: the background's categories under the root
``web``; ``web.General_text``, one leaf pooling the first excerpt of each category, text
of no subject in particular (a page of a web unlike the encyclopaedia, mostly words of
no topic, falls there, not in the user's topic, whose ten examples would otherwise be
the only text of that web the classifier knows); the user's topic as ``web.<NAME>`` with
the good examples, and, when bad examples are given, ``web.<NAME>_not`` with them.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.classifier.tokens import count_terms, document_text
from focuscrawl.crawler.parse import OutLink, parse_html
from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.taxonomy import Tree, tree_from_paths
from focuscrawl.topics.taxonomy_import import (
    Example,
    TaxonomyImport,
    corpus_labels,
    corpus_taxonomy,
)
from focuscrawl.web.corpus import topic_levels

__all__ = [
    "ROOT",
    "BackgroundReader",
    "UserExample",
    "build_background",
    "load_background",
    "own_categories",
    "topic_import",
]

ROOT = "web"
PER_CATEGORY = 20  # excerpts a category
EXCERPT_CHARS = 3_000
MIN_PAGES = 10  # smaller categories are left out
_NAME = re.compile(r"[A-Za-z0-9_-]{1,60}\Z")
#: a background category is the topic's own when a classifier of the background alone
#: puts at least this share of the good examples in it
OWN_SHARE = 0.5
#: a term is distinctive of the examples when they use it this many times as often as the
#: background's text does (``_distinctive``)
DISTINCT_RATIO = 2.0

#: a subject with no level below is left out of the background when this share of its
#: pages are in other categories too (``build_background``)
SHARED_SHARE = 0.5

#: the background's leaf of general text: the first excerpt of each category, pooled
GENERAL = "General_text"

#: (title, text, out-links, URL or None) of a user's example
UserExample = tuple[str, str, tuple[OutLink, ...], str | None]
Background = dict[str, list[tuple[str, str]]]  # category path -> (title, excerpt)


def build_background(
    directory: Path,
    exclude: Iterable[str] = (),
    per_category: int = PER_CATEGORY,
    chars: int = EXCERPT_CHARS,
    seed: int = 1,
) -> Background:
    """Excerpts of the corpus's second-level categories (``A.B`` of ``root.A.B...``; the
    corpus's own levels when its labels are shallower, ``topic_levels``; a subject with
    no second level as itself, unless ``SHARED_SHARE`` of its pages lie in those), ``per_category``
    random pages each, none of the ``exclude``d URLs."""
    paths = corpus_taxonomy(directory)
    tree = tree_from_paths(paths)
    corpus, labels = corpus_labels(directory, tree)
    skipped, taken = topic_levels(paths)
    excluded = set(exclude)
    by_category: dict[str, set[str]] = defaultdict(set)
    for url, kcids in labels.items():
        if url in excluded:
            continue
        for kcid in kcids:
            parts = tree.path(kcid).split(".")[skipped : skipped + taken]
            if len(parts) == taken or (parts and tree.is_leaf(kcid)):
                by_category[".".join(parts)].add(url)
    # a subject with no level below is a category of its own (Wikispeedia's Mathematics)
    # when most of its pages are in no other: one whose pages all are (Wikispeedia's
    # Countries, each also in its region's geography) is a kind of page, not a subject,
    # and as a category would take those pages from their subjects
    shallow = {c for c in by_category if c.count(".") + 1 < taken}
    full = set().union(*(urls for c, urls in by_category.items() if c not in shallow))
    for category in shallow:
        if len(by_category[category] & full) >= SHARED_SHARE * len(by_category[category]):
            del by_category[category]
    rng = random.Random(seed)
    background: Background = {}
    # full-depth categories first: a shallow subject drawn last leaves their draws as
    # they were before such subjects joined the background
    for category in sorted(by_category, key=lambda c: (c in shallow, c)):
        urls = sorted(by_category[category])
        if len(urls) < MIN_PAGES:
            continue
        chosen = rng.sample(urls, min(per_category, len(urls)))
        excerpts = []
        for url in chosen:
            page = corpus.page(url)
            if page is None or page.status != 200:
                continue
            parsed = parse_html(page.body, url)
            text = parsed.text[:chars].rsplit(" ", 1)[0]
            excerpts.append((parsed.title, text))
        background[category] = excerpts
    return background


def load_background() -> Background:
    """The shipped background."""
    data = resources.files("focuscrawl.topics").joinpath("background.json.gz").read_bytes()
    raw: dict[str, Any] = json.loads(gzip.decompress(data))
    return {name: [(t, x) for t, x in items] for name, items in raw["categories"].items()}


def save_background(background: Background, path: Path, source: str) -> None:
    payload = {
        "source": source,
        "licence": "Wikipedia article text (Wikipedia for Schools 2007, via Wikispeedia), "
        "GNU Free Documentation License",
        "categories": {k: [list(e) for e in v] for k, v in background.items()},
    }
    path.write_bytes(gzip.compress(json.dumps(payload).encode("utf-8"), mtime=0))


class BackgroundReader:
    """A classifier of the background alone, which reads examples to find the background
    categories that are their topic's own (``own_categories``). Trained once (0.7 s of CPU
    for the shipped background) and used for any number of topics."""

    def __init__(self, background: Background) -> None:
        self.background = background
        categories = [c for c in background if background[c]]
        #: the background's tree and its classifier; None when it has fewer than two
        #: categories (nothing to tell apart)
        self.reading: tuple[Tree, HierarchicalModel] | None = None
        self.general: Counter[str] = Counter()  # the excerpts' terms, pooled
        if len(categories) < 2:
            return
        tree = tree_from_paths([f"{ROOT}.{c}" for c in categories])
        excerpts = _excerpts(background, categories, tree)
        documents = [document_text(e.title, e.text) for e in excerpts]
        counted = count_terms(documents)
        for terms in counted:
            self.general.update(terms)
        model = HierarchicalModel.train(
            tree, documents, [[e.kcid] for e in excerpts], counted=counted
        )
        self.reading = tree, model

    def own_categories(self, good: Sequence[UserExample]) -> list[str]:
        """See ``own_categories``."""
        if not good or self.reading is None:
            return []
        tree, model = self.reading
        examples = count_terms(document_text(title, text) for title, text, _, _ in good)
        # an example with no distinctive term has no say (scored, it would fall in the
        # category of the largest prior)
        read = [terms for terms in _distinctive(examples, self.general) if terms]
        if not read:
            return []
        counts = Counter(int(k) for k in model.score_terms(read).best_leaf())
        prefix = len(ROOT) + 1
        return sorted(
            tree.path(kcid)[prefix:]
            for kcid, count in counts.items()
            if count >= OWN_SHARE * len(good)
        )


def own_categories(background: Background, good: Sequence[UserExample]) -> list[str]:
    """The background categories that are the topic itself: those a classifier trained
    on the background alone puts at least ``OWN_SHARE`` of the good examples in, each
    example read by its distinctive words (``_distinctive``). Kept, such a category
    splits the topic's pages with it: ten Wikispeedia physics pages as a topic, with
    Science.Physics in the background, had 49 of the 191 physics pages a crawl fetched
    classed in it, below R 0.5. Read whole, pages of a web unlike the background's fall
    where general text falls (a generated web's physics pages, mostly words of no topic,
    in History.North_American_History), and the topic's own category stays. (For many
    topics against one background, train a ``BackgroundReader`` once.)"""
    return BackgroundReader(background).own_categories(good) if good else []


def _distinctive(examples: Sequence[Counter[str]], background: Counter[str]) -> list[Counter[str]]:
    """Each example's terms that the examples together use twice or more, and at least
    ``DISTINCT_RATIO`` times as often as general text does (``background``: its terms,
    pooled; both shares smoothed by half a count a term): what sets the examples apart
    from general text, which is what their topic is about."""
    pooled: Counter[str] = Counter()
    for terms in examples:
        pooled.update(terms)
    vocabulary = len(pooled.keys() | background.keys())
    mass = sum(pooled.values()) + vocabulary / 2, sum(background.values()) + vocabulary / 2
    kept = {
        term
        for term, n in pooled.items()
        if n >= 2 and (n + 0.5) / mass[0] >= DISTINCT_RATIO * (background[term] + 0.5) / mass[1]
    }
    return [Counter({t: n for t, n in terms.items() if t in kept}) for terms in examples]


def _excerpts(background: Background, categories: Iterable[str], tree: Tree) -> list[Example]:
    """The background's excerpts of ``categories``, as examples of their nodes in ``tree``."""
    examples: list[Example] = []
    for category in categories:
        kcid = tree.find(f"{ROOT}.{category}")
        examples += [Example(kcid, None, title, text) for title, text in background[category]]
    return examples


def topic_import(
    background: Background,
    name: str,
    good: Sequence[UserExample],
    bad: Sequence[UserExample] = (),
    leave_out: Iterable[str] = (),
) -> TaxonomyImport:
    """The background with the user's topic ``name`` in it (``leave_out``: background
    categories not to use, e.g. the topic's own in an evaluation)."""
    if not _NAME.match(name):
        raise TaxonomyError(
            f"topic name {name!r}: use letters, digits, '_' and '-' (up to 60 characters)"
        )
    if not good:
        raise TaxonomyError("a topic needs at least one good example (--good)")
    skipped = set(leave_out)
    categories = [c for c in background if c not in skipped and background[c]]
    clash = [c for c in (*categories, GENERAL) if c.split(".")[0] in (name, f"{name}_not")]
    if clash:
        raise TaxonomyError(f"topic name {name!r} is a background category; choose another")
    paths = [f"{ROOT}.{c}" for c in categories] + [f"{ROOT}.{GENERAL}", f"{ROOT}.{name}"]
    if bad:
        paths.append(f"{ROOT}.{name}_not")
    tree = tree_from_paths(paths)
    examples = _excerpts(background, categories, tree)
    general = tree.find(f"{ROOT}.{GENERAL}")
    examples += [Example(general, None, t, x) for c in categories for t, x in background[c][:1]]
    for path, given in ((f"{ROOT}.{name}", good), (f"{ROOT}.{name}_not", bad)):
        if given:
            kcid = tree.find(path)
            examples += [
                Example(kcid, url, title, text, links) for title, text, links, url in given
            ]
    result = TaxonomyImport(tree, examples)
    result.check()
    return result
