"""The link learner (the 2002 paper's *apprentice*), trained online from the critic.

Features, model format and the estimate formula live in ``focuscrawl.topics.linkmodel``,
which the crawler reads too. Here the learner is trained: a logistic regression over
the hashed features, fitted by stochastic gradient descent (scikit-learn's
``SGDClassifier``, log loss).

* **Before the crawl** (``bootstrap``): the links between example pages, each labelled
  by whether its target example lies in a good category, the source's class being the
  source example's category; and a *host lesson* for every example with a URL: a link
  with no words to the example's host, labelled likewise (a site with a good page is
  likely to have more: the learner starts with the examples' sites, and the crawl's
  own links outweigh those few lessons as it goes). Five passes.
* **During the crawl** (``LinkLearner.learn``): when the classifier scores pages, every
  link that pointed to them from a scored page is queued as an example, labelled with
  the page's relevance R (a soft label: weight R as relevant, 1 - R as not;
  ``link_example``). Once the queue holds ``RETRAIN_SHARE`` of what the model has
  learned (and at least ``RETRAIN_MIN``), one classifier (an advisory lock picks it)
  takes the queue and stores the next version: one pass over the queue from the newest
  version; or, while the crawl has taught fewer than ``REFIT_MOST`` examples, fitted
  afresh (five passes) on the bootstrap and every link between scored pages, labelled
  with their pages' relevance now (so a version learns from all the crawl has seen, and
  from relevance rescored since), when the page classifier has changed since the last
  version fitted afresh or the lessons have grown ``AFRESH_GROWTH`` times. Crawlers
  and classifiers switch to the newest version; a version fitted afresh also estimates
  every unvisited URL again (``Classifier``, ``estimates.estimate_frontier``).

A graph simulation over Wikispeedia's 46 topics chose the learner: naive Bayes (the
paper's) reached a mean harvest 0.567, logistic regression refitted on every example
0.621, and this online one 0.617 at a fraction of the cost.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse
from sqlalchemy.engine import Connection

from focuscrawl.db.database import execute, tuples
from focuscrawl.db.queries import queries
from focuscrawl.topics.linkmodel import (
    FEATURE_BITS,
    Ids,
    LinkModel,
    LinkParts,
    failure_parts,
    features_of,
    own_features,
    relevance_bucket,
    source_features,
)
from focuscrawl.topics.taxonomy import Tree
from focuscrawl.web.urls import host_of, split_url

__all__ = [
    "RETRAIN_MIN",
    "RETRAIN_SHARE",
    "Example",
    "LinkLearner",
    "bootstrap_examples",
    "train_link_model",
]

log = logging.getLogger("focuscrawl.classifier")

ALPHA = 1e-4  # L2 strength of the SGD
BOOTSTRAP_EPOCHS = 5
RETRAIN_MIN = 100
RETRAIN_SHARE = 0.1
#: below this many examples a version is fitted afresh on all of them (on Wikispeedia
#: from ten examples, mean relevant per attempt 0.453 with one pass on the queue, 0.471
#: afresh); past it, one pass on the queue (the crawl's links are too many to read again)
REFIT_MOST = 100_000
#: and only when its labels may have changed (the page classifier is not the one the last
#: version fitted afresh saw) or the lessons have grown this many times since: between,
#: one pass on the queue (a 1.25x growth refitted afresh each time had doubled the
#: classifier's CPU on a 4,000-page Wikispeedia crawl)
AFRESH_GROWTH = 2.0
KEEP_WEIGHTS = 5  # versions whose weights are kept
#: how many steps beyond a link the paths estimate's versions fitted afresh look for
#: relevant pages, as the queue's own lessons do (sql/links.sql: queue_path_examples).
#: Three measured no better on the web of sites (sites5k, two seed samples, 2026-12-01:
#: 0.203 relevant pages per attempt against 0.204, recall at 3N 0.372 against 0.383)
PATH_STEPS = 2


class Example(NamedTuple):
    """A lesson: a link (or what a failed request teaches) and its label. (A named
    tuple: a 4,000-page crawl makes a hundred thousand.)"""

    parts: LinkParts
    label: float  # R of the target, in [0, 1]


#: the columns of ``take_link_examples`` (sql/links.sql), in order
QUEUE_COLUMNS = ("anchor", "context", "url", "src_cid", "src_relevance", "label")


def _queued(row: tuple[Any, ...]) -> Example:
    """A queued lesson (a row in ``QUEUE_COLUMNS``' order): its link, or for a URL whose
    request failed (no source) what that teaches, and its label."""
    anchor, context, url, src_cid, src_relevance, label = row
    _, host, path = split_url(url)
    if src_relevance is None:
        return Example(failure_parts(host, path), float(label))
    return Example(LinkParts(anchor, context, host, path, src_cid, src_relevance), float(label))


def _example_key(example: Example) -> tuple[Any, ...]:
    """What an example's features and label are made of: examples equal in it teach
    the same, in either order."""
    parts = example.parts
    return (
        parts.host,
        parts.path,
        parts.anchor or "",
        parts.context or "",
        -1 if parts.src_cid is None else parts.src_cid,
        -1.0 if parts.src_relevance is None else parts.src_relevance,
        example.label,
    )


@dataclass
class _Lessons:
    """Examples as the learner reads them: each one's hashed features and its label."""

    features: list[Ids] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, examples: Sequence[Example], parent: bool) -> _Lessons:
        return cls([features_of(e.parts, parent) for e in examples], [e.label for e in examples])

    def __add__(self, other: _Lessons) -> _Lessons:
        return _Lessons(self.features + other.features, self.labels + other.labels)

    def __len__(self) -> int:
        return len(self.labels)


#: the columns of ``crawl_link_examples`` (sql/links.sql), in order
LESSON_COLUMNS = (
    "oid_src", "oid_dst", "anchor", "context", "host", "path", "src_cid", "src_relevance", "label"
)  # fmt: skip


class _CrawlLinks:
    """The features of the links between scored pages, kept by one learner between the
    versions it fits afresh: a link's words and target never change and its source's
    class and relevance bucket seldom do, so each version hashes only the links new
    since the last (hashing every link again, each version, had doubled the
    classifier's CPU on a 4,000-page crawl)."""

    MOST = 2 * REFIT_MOST  # links kept (no version is fitted afresh past REFIT_MOST)

    def __init__(self) -> None:
        self._known: dict[tuple[Any, ...], Ids] = {}
        self._examples: dict[tuple[Any, ...], Ids] = {}

    def examples(self, examples: Sequence[Example], parent: bool) -> _Lessons:
        """``_Lessons.of(examples, parent)``, each example's features hashed once per
        learner: a version fitted afresh learns the example links again, unchanged."""
        if len(self._examples) > self.MOST:
            self._examples.clear()
        known = self._examples
        features: list[Ids] = []
        for example in examples:
            parts = example.parts
            key = (parent, *parts)
            ids = known.get(key)
            if ids is None:
                ids = known[key] = features_of(parts, parent)
            features.append(ids)
        return _Lessons(features, [e.label for e in examples])

    def lessons(self, rows: Iterable[Any], parent: bool, two_step: float = 0.0) -> _Lessons:
        """``crawl_link_examples``' rows as lessons, in the order of their links (source,
        then target: a link between two pages is one row), whatever order they came in.
        ``two_step`` > 0 (the paths estimate): a link into a page v is worth at least
        ``two_step`` times the best relevance among the scored pages v links to, as
        ``queue_path_examples`` (sql/links.sql) teaches the queue. The rows are read by
        position, in ``LESSON_COLUMNS``' order (a version fitted afresh reads every link
        the crawl has scored)."""
        if len(self._known) > self.MOST:
            self._known.clear()
        get = self._known.get
        features: list[Ids] = []
        labels: list[float] = []
        sources: list[int] = []
        targets: list[int] = []
        for src, dst, anchor, context, host, path, src_cid, relevance, label in rows:
            bucket = -1 if relevance is None or not parent else relevance_bucket(relevance)
            key = (src, dst, anchor, context, src_cid, bucket)
            ids = get(key)
            if ids is None:
                own = own_features(LinkParts(anchor, context, host, path))
                ids = np.concatenate((own, source_features(src_cid, relevance, parent)))
                self._known[key] = ids
            features.append(ids)
            labels.append(float(label))
            sources.append(src)
            targets.append(dst)
        if two_step > 0:
            labels = _path_worth(sources, targets, labels, two_step)
        order = np.lexsort((np.asarray(targets, dtype=np.int64), np.asarray(sources)))
        return _Lessons([features[i] for i in order], [labels[i] for i in order])


def _path_worth(
    sources: Sequence[int], targets: Sequence[int], labels: Sequence[float], gamma: float
) -> list[float]:
    """What each link between scored pages is worth over up to PATH_STEPS steps: its
    target's relevance R, or ``gamma`` times the best worth among the links out of its
    target, whichever is more (value iteration over the crawl's graph, after Rennie &
    McCallum's discounted reward; a page linking to relevant pages is worth ``gamma``
    times their best R, one linking to such pages ``gamma`` squared, ...)."""
    relevance = dict(zip(targets, labels, strict=True))  # a page's R, from its in-links
    worth = dict(relevance)
    for _ in range(PATH_STEPS - 1):
        best: dict[int, float] = {}  # the best worth a page links to
        for source, target in zip(sources, targets, strict=True):
            best[source] = max(best.get(source, 0.0), worth[target])
        worth = {page: max(r, gamma * best.get(page, 0.0)) for page, r in relevance.items()}
    return [worth[target] for target in targets]


def _matrix(lessons: _Lessons) -> tuple[sparse.csr_matrix, Any, Any]:
    """The lessons as binary rows, each twice: as relevant (weight R) and as not
    (weight 1 - R)."""
    features = lessons.features
    sizes = np.fromiter((len(f) for f in features), dtype=np.int64, count=len(features))
    indptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    indices = np.concatenate(features) if features else np.zeros(0, dtype=np.int64)
    rows = sparse.csr_matrix(
        (np.ones(len(indices)), indices, indptr), shape=(len(features), 1 << FEATURE_BITS)
    )
    labels = np.clip(np.asarray(lessons.labels, dtype=np.float64), 0.0, 1.0)
    matrix = sparse.vstack([rows, rows]).tocsr()
    targets = np.concatenate([np.ones(len(labels)), np.zeros(len(labels))])
    weights = np.concatenate([labels, 1.0 - labels]) + 1e-9
    return matrix, targets, weights


class _Sgd:
    """scikit-learn's SGD logistic regression, restartable from a stored version."""

    def __init__(self, model: LinkModel | None = None, steps: float = 0.0) -> None:
        # imported here: scikit-learn takes most of a second to import, and every CLI
        # command (a crawler's too) would pay it
        from sklearn.linear_model import SGDClassifier

        self.sgd = SGDClassifier(loss="log_loss", alpha=ALPHA, shuffle=False)
        if model is not None:
            self.sgd.coef_ = model.weights.astype(np.float64)[None, :]
            self.sgd.intercept_ = np.asarray([model.bias])
            self.sgd.t_ = steps
            self.sgd.classes_ = np.asarray([0.0, 1.0])
            self.sgd.n_features_in_ = 1 << FEATURE_BITS

    def partial_fit(self, lessons: _Lessons, seed: int, epochs: int = 1) -> None:
        """``epochs`` passes over the lessons, each in an order of its own (seeds
        ``seed``, ``seed + 1``, ...)."""
        matrix, targets, weights = _matrix(lessons)
        for epoch in range(epochs):
            order = np.random.default_rng(seed + epoch).permutation(len(targets))
            self.sgd.partial_fit(
                matrix[order], targets[order], classes=[0.0, 1.0], sample_weight=weights[order]
            )

    def model(self, parent: bool, classes: Iterable[int]) -> LinkModel:
        params = {"classes": sorted(set(classes)), "steps": float(self.sgd.t_)}
        return LinkModel(
            self.sgd.coef_[0].astype(np.float32),
            float(self.sgd.intercept_[0]),
            parent,
            params=params,
        )


def bootstrap_examples(connection: Connection, tree: Tree) -> list[Example]:
    """The links between example pages, labelled by the good marks; and a host lesson
    for each example with a URL: a link to its host (no words), labelled likewise."""
    kcids: dict[str, list[int]] = {}
    for row in execute(connection, queries["example_kcids"]):
        kcids.setdefault(row.url, []).append(row.kcid)
    # each URL's goodness once (a tree walk per category): asked of every link's two ends
    good_url = {
        url: float(any(tree.is_good(k) for k in categories)) for url, categories in kcids.items()
    }
    pairs: dict[tuple[str, str], Any] = {}
    for row in execute(connection, queries["example_link_pairs"]):
        pairs.setdefault((row.src_url, row.url), row)
    examples = []
    for (src_url, url), row in pairs.items():
        _, host, path = split_url(url)
        parts = LinkParts(row.anchor, row.context, host, path, kcids[src_url][0], good_url[src_url])
        examples.append(Example(parts, good_url.get(url, 0.0)))
    for url, good in good_url.items():  # the host lessons
        if not url.startswith(("http://", "https://")):
            continue  # an example read from a file
        examples.append(Example(LinkParts(None, None, host_of(url), ""), good))
    return examples


def _save(
    connection: Connection, model: LinkModel, tree: Tree, learned: int, extra: dict[str, Any]
) -> LinkModel:
    params = {**model.params, "parent": model.parent, "learned": learned, **extra}
    row = execute(
        connection,
        queries["save_link_model"],
        {
            "digest": tree.digest(),
            "examples": learned,
            "params": json.dumps(params),
            "weights": model.to_bytes(),
        },
    ).one()
    model.model_id = int(row.model_id)
    model.params = params
    execute(connection, queries["prune_link_models"], {"keep": KEEP_WEIGHTS})
    return model


def train_link_model(
    connection: Connection,
    tree: Tree,
    parent: bool = True,
    with_crawl: bool = False,
    two_step: float = 0.0,
) -> LinkModel | None:
    """A first version from the example links (and, with ``with_crawl``, every link
    between scored pages of the crawl so far, after the good marks changed, ``two_step``
    as ``_CrawlLinks.lessons``); None when there is nothing relevant to learn from."""
    if with_crawl:
        lessons = _all_lessons(connection, tree, parent, _CrawlLinks(), two_step)
    else:
        lessons = _Lessons.of(bootstrap_examples(connection, tree), parent)
    if not lessons or not any(label > 0.5 for label in lessons.labels):
        return None
    return _fit_afresh(connection, tree, lessons, parent, {"bootstrap": len(lessons)})


def _fit_afresh(
    connection: Connection,
    tree: Tree,
    lessons: _Lessons,
    parent: bool,
    extra: dict[str, Any],
) -> LinkModel:
    learner = _Sgd()
    learner.partial_fit(lessons, seed=0, epochs=BOOTSTRAP_EPOCHS)
    classes = [k for k in tree.nodes if k != 0]
    page_model = execute(connection, queries["newest_model_id"]).scalar()
    extra = {**extra, "afresh_at": len(lessons), "page_model": page_model}
    return _save(connection, learner.model(parent, classes), tree, len(lessons), extra)


def _afresh_due(connection: Connection, params: dict[str, Any], lessons: int) -> bool:
    """Whether the next version is fitted afresh (``AFRESH_GROWTH``), given the newest
    version's parameters and the lessons it would learn."""
    if "afresh_at" not in params:
        return True
    if lessons >= AFRESH_GROWTH * int(params["afresh_at"]):
        return True
    return execute(connection, queries["newest_model_id"]).scalar() != params.get("page_model")


def _all_lessons(
    connection: Connection, tree: Tree, parent: bool, links: _CrawlLinks, two_step: float = 0.0
) -> _Lessons:
    """What a version fitted afresh learns: the bootstrap, every URL whose request failed
    (``failure_parts``, labelled 0), and every link between two scored pages labelled
    with its target's relevance now (with ``two_step``, or what
    the target links to, see ``_CrawlLinks.lessons``; in an order of their own, see
    ``LinkLearner.learn``); the queue, which they include, is emptied."""
    rows = tuples(connection, queries["crawl_link_examples"], columns=LESSON_COLUMNS)
    crawl = links.lessons(rows, parent, two_step)
    failed = [
        Example(failure_parts(host, path), 0.0)
        for host, path in tuples(connection, queries["crawl_failed_urls"], columns=("host", "path"))
    ]
    execute(connection, queries["clear_link_examples"])
    return links.examples(bootstrap_examples(connection, tree) + failed, parent) + crawl


def newest_link_model(connection: Connection) -> LinkModel | None:
    row = execute(connection, queries["newest_link_model"]).first()
    if row is None or not row.weights:
        return None
    return LinkModel.from_bytes(bytes(row.weights), row.model_id, _params(row.params))


def _newest(connection: Connection, known: LinkModel | None) -> LinkModel | None:
    """The newest version: ``known`` (one already in memory) when it is that one, without
    reading its weights again."""
    if known is not None:
        head = execute(connection, queries["newest_link_model_head"]).first()
        if head is not None and head.model_id == known.model_id:
            return known
    return newest_link_model(connection)


def _params(stored: Any) -> dict[str, Any]:
    return stored if isinstance(stored, dict) else json.loads(stored)


class LinkLearner:
    """Online training of the link learner, for one classifier process."""

    def __init__(self) -> None:
        self.versions = 0  # stored by this process
        self._links = _CrawlLinks()

    @staticmethod
    def warm_up() -> None:
        """Import scikit-learn now (most of a second), not in the first batch that learns."""
        import sklearn.linear_model  # noqa: F401

    def learn(
        self,
        connection: Connection,
        tree: Tree,
        parent: bool = True,
        known: LinkModel | None = None,
        afresh: bool = True,
        two_step: float = 0.0,
    ) -> LinkModel | None:
        """Learn from the queued examples when enough are queued and no other classifier
        is learning; the new version, or None. Runs in the caller's transaction. With no
        version yet (no links between examples), the first is learned from the queue
        (``parent``: whether the parent's relevance is a feature). ``known``: the version
        the caller holds, learned on without reading it back when it is the newest.
        ``afresh``: below ``REFIT_MOST`` examples, fit a new version on every link
        between scored pages instead, when it is due; ``two_step``: what a relevant page
        one link beyond a link's target makes the link worth in such a version (the
        paths estimate; its queue holds such lessons too)."""
        head = execute(connection, queries["newest_link_model_head"]).first()
        params = {} if head is None else _params(head.params)
        learned = int(params.get("learned", 0))
        queue = execute(connection, queries["queued_link_examples"]).one()
        if queue.queued < max(RETRAIN_MIN, RETRAIN_SHARE * learned):
            return None
        if head is None and not queue.relevant:
            return None  # a first version needs something relevant to learn from
        if not execute(connection, queries["lock_link_learner"]).scalar_one():
            return None
        newest = _newest(connection, known)  # checked after the lock: the one to learn on
        if newest is not None:
            parent = newest.parent
        due = learned + queue.queued < REFIT_MOST and _afresh_due(
            connection, params, learned + queue.queued
        )
        if afresh and due:
            lessons = _all_lessons(connection, tree, parent, self._links, two_step)
            self.versions += 1
            previous = None if newest is None else newest.model_id
            bootstrap = 0 if newest is None else newest.params.get("bootstrap", 0)
            extra: dict[str, Any] = {"bootstrap": bootstrap, "previous": previous, "afresh": True}
            return _fit_afresh(connection, tree, lessons, parent, extra)
        examples = [
            _queued(row)
            for row in tuples(connection, queries["take_link_examples"], columns=QUEUE_COLUMNS)
        ]
        # in an order of their own, not the table's: the rows came back in the order the
        # heap holds them, which vacuum and the plans of the statements that queued them
        # change, and learning (seeded, the examples shuffled) depends on the order. A
        # lockstep crawl did not repeat: same version, other weights (the evaluation's
        # soft crawl of Wikispeedia's Chemistry: a harvest of 0.712-0.723 run to run)
        examples.sort(key=_example_key)
        if newest is None:
            learner = _Sgd()
            learner.partial_fit(_Lessons.of(examples, parent), seed=0, epochs=BOOTSTRAP_EPOCHS)
            classes = [k for k in tree.nodes if k != 0]
            extra = {"bootstrap": 0, "previous": None}
        else:
            learner = _Sgd(newest, float(newest.params.get("steps", 0.0)))
            learner.partial_fit(_Lessons.of(examples, parent), seed=newest.model_id)
            classes = newest.params.get("classes", [])
            due_by = ("afresh_at", "page_model")  # what the next afresh fit is due by
            extra = {k: newest.params[k] for k in due_by if k in newest.params}
            extra.update(bootstrap=newest.params.get("bootstrap", 0), previous=newest.model_id)
        model = learner.model(parent, classes)
        self.versions += 1
        return _save(connection, model, tree, learned + len(examples), extra)
