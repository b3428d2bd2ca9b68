"""The yardsticks' stand-in for the classifier: it scores fetched pages by the ground
truth (R = 1 or 0, best leaf = the true one) and, as the oracle, gives every unvisited
out-link its own true relevance. It reads and writes the same tables as the classifier
process, so the crawler cannot tell the difference."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from focuscrawl.classifier.process import BATCH, Classifier, good_sets
from focuscrawl.classifier.store import write_scores
from focuscrawl.database import execute
from focuscrawl.queries import queries
from focuscrawl.taxonomy import load_tree
from focuscrawl.urls import oid_of

__all__ = ["TruthScorer"]


class TruthScorer(Classifier):
    """The classifier process with the ground truth in place of the model: ``run`` (its
    polling, retries and stopping) is the classifier's; only ``step`` differs."""

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

    def step(self) -> int:
        with self.engine.begin() as connection:
            model_id = execute(connection, queries["newest_model_id"]).scalar_one()
            tree = load_tree(connection)
            rows = execute(connection, queries["claim_unclassified"], {"batch": self.batch}).all()
            if not rows:
                return 0
            _, good_leaves = good_sets(tree)
            oids = [r.oid for r in rows]
            relevances = [0.0 if r.oid in self.relevant else float("-inf") for r in rows]
            cids = [
                tree.find(self.labels[r.oid][0]) if r.oid in self.labels else None for r in rows
            ]
            write_scores(connection, model_id, oids, relevances, cids, good_leaves)
            if self.oracle:
                params = {"oids": oids, "relevant": self.relevant_list}
                execute(connection, queries["oracle_links"], params)
        return len(rows)
