"""Recompute relevance after good marks change, without retraining or rereading text.

Best leaves do not depend on the marks, only R(d) does: each page's log R(d) is
recomputed in SQL from its stored node scores (``doc_class``), then every unvisited
URL's estimate is again the best of its scored parents, and in hard focus held URLs
below a now-good leaf are released.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from focuscrawl.classifier.process import good_sets
from focuscrawl.classifier.store import scored_models
from focuscrawl.database import execute
from focuscrawl.queries import queries
from focuscrawl.taxonomy import load_tree

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
            columns = [stored.model.column[k] + 1 for k in frontier]  # SQL arrays are 1-based
            result = execute(
                connection,
                queries["rescore_docs"],
                {"model_id": stored.model_id, "columns": columns},
            )
            pages += result.rowcount
        moved = execute(connection, queries["rescore_frontier"], {"good_leaves": good_leaves})
    return RescoreResult(pages, moved.rowcount, sorted(skipped))
