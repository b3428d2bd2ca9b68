"""Recompute relevance after good marks change, without rereading text.

Best leaves do not depend on the marks, only R(d) does: each page's log R(d) is
recomputed in SQL from its stored node scores (``doc_class``), then every unvisited
URL's estimate is again the best of its scored parents, and in hard focus held URLs
below a now-good leaf are released. A model calibrated on its examples
(``focuscrawl.classifier.calibration``) is not rescored here: ``classify train
--rescore`` calibrates for the new marks and scores every page again. With the link
learner's estimates (``soft``, ``apprentice``, ``paths``) the learner is trained afresh,
from the example links and every link between scored pages labelled anew (``paths``:
with its worth over two steps), and every unvisited
URL is estimated again from its in-links (estimates may then fall), soft's anchors read
again by the newest page classifier for the new marks.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from focuscrawl.classifier.apprentice import train_link_model
from focuscrawl.classifier.estimates import estimate_frontier
from focuscrawl.classifier.process import good_sets, two_step
from focuscrawl.classifier.store import crawl_estimate, latest_model, scored_models
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import shard_map
from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.linkmodel import ANCHOR_ESTIMATES, LINK_ESTIMATES
from focuscrawl.topics.taxonomy import load_tree

__all__ = ["RescoreResult", "rescore"]


@dataclass
class RescoreResult:
    pages: int
    frontier: int
    skipped_models: list[int]


def rescore(engine: Engine) -> RescoreResult:
    """One transaction: pages, then the frontier. Pages scored by a model trained on
    another taxonomy are left as they are (listed in ``skipped_models``)."""
    with engine.begin() as connection:
        tree = load_tree(connection)
        frontier, good_leaves = good_sets(tree)
        digest = tree.digest()
        pages, skipped = 0, []
        for stored in scored_models(connection):
            if stored.taxonomy_digest != digest:
                skipped.append(stored.model_id)
                continue
            if stored.model.calibration is not None:
                # R' needs each page's length, which doc_class does not keep
                raise TaxonomyError(
                    f"model {stored.model_id} calibrates relevance on its examples, for the "
                    "good marks it was trained with; run: focuscrawl classify train --rescore"
                )
            columns = [stored.model.column[k] + 1 for k in frontier]  # SQL arrays are 1-based
            result = execute(
                connection,
                queries["rescore_docs"],
                {"model_id": stored.model_id, "columns": columns},
            )
            pages += result.rowcount
        moved = execute(connection, queries["rescore_frontier"], {"good_leaves": good_leaves})
        estimate = crawl_estimate(connection)
        if estimate in LINK_ESTIMATES:
            parent = estimate != "apprentice"
            steps = two_step(estimate)
            model = train_link_model(connection, tree, parent, with_crawl=True, two_step=steps)
            if model is not None:
                page_model = None
                if estimate in ANCHOR_ESTIMATES:
                    newest = latest_model(connection)
                    page_model = newest.model if newest.taxonomy_digest == digest else None
                shards = shard_map(connection)
                estimate_frontier(connection, model, estimate, page_model, frontier, shards)
    return RescoreResult(pages, moved.rowcount, sorted(skipped))
