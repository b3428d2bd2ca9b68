"""The yardsticks' stand-in for the classifier: it scores fetched pages by the ground
truth (R = 1 or 0, best leaf = the true one) and, as the oracle, gives every unvisited
out-link its own true relevance. It is the classifier process with only the scoring
replaced: the same estimates are passed on, the same link learner learns (from true
labels), so the crawler cannot tell the difference."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection, Engine

from focuscrawl.classifier.estimates import Parent
from focuscrawl.classifier.process import BATCH, Classifier
from focuscrawl.classifier.store import StoredModel
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.topics.taxonomy import ROOT, Tree
from focuscrawl.web.urls import oid_of

__all__ = ["TruthScorer"]


class TruthScorer(Classifier):
    """The classifier process with the ground truth in place of the page model."""

    def __init__(
        self,
        engine: Engine,
        labels: dict[str, tuple[str, ...]],
        relevant: frozenset[str],
        oracle: bool,
        poll_seconds: float = 0.02,
    ) -> None:
        super().__init__(engine, BATCH, poll_seconds)
        # pages come off the classifier's queue by oid, the hash of their URL
        self.labels = {oid_of(url): categories for url, categories in labels.items()}
        self.relevant = frozenset(oid_of(url) for url in relevant)
        self.relevant_list = sorted(relevant)
        self.oracle = oracle
        self._paths: tuple[Tree, dict[str, int]] | None = None

    def score(
        self, stored: StoredModel, tree: Tree, connection: Connection, rows: list[Any]
    ) -> tuple[list[float | None], list[int | None]]:
        relevances: list[float | None] = [
            0.0 if r.oid in self.relevant else float("-inf") for r in rows
        ]
        return relevances, [self._leaf(tree, r.oid) for r in rows]

    def _leaf(self, tree: Tree, oid: int) -> int | None:
        """The page's true category when the tree has it; in a topic made from examples
        (no corpus categories), the good leaf for a relevant page and the root else."""
        categories = self.labels.get(oid)
        if categories is None:
            return None
        if self._paths is None or self._paths[0] is not tree:
            known = {tree.path(k): k for k in tree.nodes}
            self._paths = (tree, known)
        known = self._paths[1]
        kcid = known.get(categories[0])
        if kcid is not None:
            return kcid
        if oid in self.relevant:
            return self.good_sets(tree)[1][0]
        return ROOT

    def after_pass(self, connection: Connection, parents: list[Parent]) -> None:
        if self.oracle:
            params = {"oids": [p.oid for p in parents], "relevant": self.relevant_list}
            execute(connection, queries["oracle_links"], params)
