"""Estimates of unvisited URLs, handed on when their parents are scored.

The crawl's frontier estimate is a crawl-wide setting (``crawl_setting`` 'estimate',
written by ``crawl run`` from its mode, or by ``eval`` for its strategies):

``soft`` (the default)
    the link learner with the parent's relevance, and the anchor read by the page
    classifier: for each unvisited out-link ``l`` of a scored page ``p``, log sigmoid(s(l))
    with ``p``'s best leaf and relevance bucket among the features, plus
    log((1 + R'(words)) / 2), R' the page classifier's reading of the anchor and the
    words of the target's slug (``link_text``); a URL keeps the best of its in-links.
``apprentice``
    the learner without the parent's relevance or the anchor's reading (the 2002 paper's
    apprentice alone).
``paths``
    as ``soft``, the learner also taught a link's value over two steps: a link into a
    page that links to relevant pages is worth ``PATH_DISCOUNT`` times their best R
    (``sql/links.sql``: queue_path_examples; a version fitted afresh labels every link
    so), after Rennie & McCallum.
``soft-1999``
    the paper's estimate: the highest relevance log R(p) among scored parents.
``anchor``
    the page classifier applied to the anchor text: log R(anchor).
``page+anchor``
    Batsakis et al.'s best-first on both: log of the mean of R(p) and R(anchor).

In hard focus a held URL is released when a parent's best leaf lies below a good node
(a page without text, a redirect hop, passes its own release on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy.engine import Connection

from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.db.database import execute, tuples
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import ShardMap
from focuscrawl.errors import ConfigError
from focuscrawl.topics.linkmodel import (
    ANCHOR_ESTIMATES,
    ANCHOR_FLOOR,
    LINK_ESTIMATES,
    LinkModel,
    LinkParts,
    link_text,
    max_by_target,
)

__all__ = ["ESTIMATES", "Parent", "anchor_terms", "estimate_frontier", "pass_estimates"]

ESTIMATES = ("soft", "soft-1999", "apprentice", "paths", "anchor", "page+anchor")


@dataclass(frozen=True)
class Parent:
    """A page just scored, as write_scores returns it."""

    oid: int
    relevance: float  # log R(d), or the estimate it kept when it has no text
    cid: int | None  # its best leaf; None without text


def _relevance(log_r: float) -> float:
    return math.exp(max(log_r, -700.0))


def _anchor_relevance(
    page_model: HierarchicalModel, anchors: Sequence[str | None], good_frontier: Sequence[int]
) -> NDArray[np.float64]:
    """R'(anchor) of each anchor: the page classifier's relevance of the text, read as if
    it were a page. Each distinct anchor is read once by a model (``text_relevance``): a
    crawl's pages share many ("Home", the title of a page linked from many)."""
    return page_model.text_relevance([a or "" for a in anchors], good_frontier)


def anchor_terms(
    page_model: HierarchicalModel | None,
    anchors: Sequence[str | None],
    good_frontier: Sequence[int],
) -> NDArray[np.float64]:
    """log((1 + R'(anchor)) / 2) of each anchor: the page classifier's reading of a link's
    words, in [log 1/2, 0] (``ANCHOR_FLOOR`` without a classifier, as at check-in)."""
    if page_model is None or not anchors:
        return np.full(len(anchors), ANCHOR_FLOOR)
    return np.log1p(_anchor_relevance(page_model, anchors, good_frontier)) + ANCHOR_FLOOR


def _own_sums(
    connection: Connection, model: LinkModel, rows: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], NDArray[np.float32]]:
    """The links of ``rows`` (oid_src, oid_dst, own, anchor, path) and the sums of their own
    features' weights: those the crawler stored with ``model``, the others summed here
    from the links' words, read for their pages only. A link whose target was claimed
    between the two reads is left out."""
    unsummed = list(dict.fromkeys(row[0] for row in rows if row[2] is None))
    if not unsummed:
        return rows, np.asarray([row[2] for row in rows], dtype=np.float32)
    found = tuples(connection, queries["scored_out_link_words"], {"oids": unsummed})
    words = {(row[0], row[1]): LinkParts(*row[2:]) for row in found}
    kept: list[tuple[Any, ...]] = []
    summed: list[float] = []
    missing: list[int] = []
    parts: list[LinkParts] = []
    for row in rows:
        src, dst, own = row[:3]
        if own is None:
            said = words.get((src, dst))
            if said is None:
                continue
            missing.append(len(kept))
            parts.append(said)
        kept.append(row)
        summed.append(0.0 if own is None else own)
    sums = np.asarray(summed, dtype=np.float32)
    if missing:
        sums[missing] = model.own_sums(parts)
    return kept, sums


def pass_estimates(
    connection: Connection,
    estimate: str,
    parents: Sequence[Parent],
    good_leaves: Sequence[int],
    good_frontier: Sequence[int],
    page_model: HierarchicalModel | None,
    link_model: LinkModel | None,
    shards: ShardMap,
) -> int:
    """Hand the scored pages' knowledge on to their unvisited out-links; returns how
    many links were estimated (0 for soft-1999, which takes the parents' relevance).
    The estimates are written shard by shard (``shards``: one group on one server)."""
    if estimate not in ESTIMATES:
        raise ConfigError(
            f"crawl_setting 'estimate' is {estimate!r}; it must be one of {', '.join(ESTIMATES)}"
        )
    if not parents:
        return 0
    by_oid = {p.oid: p for p in parents}
    oids = list(by_oid)
    learned = estimate in LINK_ESTIMATES and link_model is not None
    from_parents = estimate == "soft-1999" or (estimate in LINK_ESTIMATES and link_model is None)
    rows: list[tuple[Any, ...]]
    if from_parents or learned:  # (oid_src, oid_dst, own, anchor, path)
        params = {"oids": oids, "link_model": link_model.model_id if link_model else 0}
        rows = tuples(connection, queries["scored_out_links"], params)
    else:  # (oid_src, oid_dst, anchor, context, host, path)
        rows = tuples(connection, queries["scored_out_link_words"], {"oids": oids})
    if not rows:
        return 0
    good = set(good_leaves)
    values: np.ndarray
    model_id = 0
    if from_parents:
        # the paper's estimate: the best relevance log R(p) among scored parents
        values = np.asarray([by_oid[row[0]].relevance for row in rows])
    elif learned:
        assert link_model is not None
        terms = {p.oid: link_model.source_terms(p.cid, _relevance(p.relevance)) for p in parents}
        rows, own = _own_sums(connection, link_model, rows)
        source = np.asarray([terms[row[0]] for row in rows], dtype=np.float64)
        values = link_model.estimates_of(source, own)
        if estimate in ANCHOR_ESTIMATES:
            texts = [link_text(row[3], row[4]) for row in rows]
            values += anchor_terms(page_model, texts, good_frontier)
        model_id = link_model.model_id
    else:
        if page_model is None:
            raise ConfigError(f"the {estimate!r} estimate needs a page classifier")
        anchor = _anchor_relevance(page_model, [row[2] for row in rows], good_frontier)
        if estimate == "page+anchor":
            parent = np.asarray([_relevance(by_oid[row[0]].relevance) for row in rows])
            anchor = (anchor + parent) / 2
        with np.errstate(divide="ignore"):
            values = np.log(anchor)
    best: dict[int, float] = {}
    release: dict[int, bool] = {}
    releases = {p.oid: p.cid is None or p.cid in good for p in parents}
    for (src, dst, *_), value in zip(rows, values.tolist(), strict=True):
        if value > best.get(dst, -math.inf) or dst not in best:
            best[dst] = value
        release[dst] = release.get(dst, False) or releases[src]
    for buckets, group in shards.split(best):
        params = {
            "oids": group,
            "buckets": buckets,
            "relevances": [best[o] for o in group],
            "releases": [release[o] for o in group],
            "model_id": model_id,
        }
        execute(connection, queries["raise_estimates"], params)
    return 0 if from_parents else len(rows)


#: the columns of ``frontier_in_links`` (sql/links.sql): the target, then LinkParts' first six
IN_LINK_COLUMNS = ("oid_dst", "anchor", "context", "host", "path", "src_cid", "src_relevance")


def estimate_frontier(
    connection: Connection,
    model: LinkModel,
    estimate: str,
    page_model: HierarchicalModel | None,
    good_frontier: Sequence[int],
    shards: ShardMap,
) -> int:
    """Every unvisited URL's estimate again from its in-links, with ``model`` (and, for
    soft, their anchors read by ``page_model``), outright: it may fall. For a version of
    the link learner fitted afresh and for ``classify rescore``: an estimate that may only
    rise keeps what the first versions guessed, and on Wikispeedia from ten examples the
    crawl went on taking links to centuries and languages the first version rated high.
    Returns how many URLs it estimated."""
    rows = tuples(connection, queries["frontier_in_links"], columns=IN_LINK_COLUMNS)
    if not rows:
        return 0
    # a link's parts are its row after the target, in LinkParts' order
    parts = [LinkParts(*r[1:]) for r in rows]
    values = model.estimates(parts)
    if estimate in ANCHOR_ESTIMATES:
        texts = [link_text(p.anchor, p.path) for p in parts]
        values += anchor_terms(page_model, texts, good_frontier)
    oids, best = max_by_target((r[0] for r in rows), values.tolist())
    value = dict(zip(oids, best, strict=True))
    estimated = 0
    for buckets, group in shards.split(oids):
        params = {
            "oids": group,
            "buckets": buckets,
            "relevances": [value[o] for o in group],
            "model_id": model.model_id,
        }
        estimated += execute(connection, queries["set_estimates"], params).rowcount
    return estimated
