"""What an evaluation can crawl with: the crawler's modes, the frontier estimates the
classifier can make, and two soft-focused yardsticks that read the ground truth."""

from __future__ import annotations

from enum import StrEnum

from focuscrawl.crawler.config import Mode

__all__ = ["Strategy"]


class Strategy(StrEnum):
    BFS = "bfs"
    UNFOCUSED = "unfocused"
    #: soft focus (the default): the link learner with the parent's relevance
    SOFT = "soft"
    HARD = "hard"
    #: soft focus with the 1999 estimate: the best relevance among scored parents
    SOFT_1999 = "soft-1999"
    #: soft focus with the link learner alone (no parent relevance): the 2002 apprentice
    APPRENTICE = "apprentice"
    #: soft focus with the link learner taught a link's value over two steps as well
    PATHS = "paths"
    #: best-first on the page classifier applied to the anchor text
    ANCHOR = "anchor"
    #: best-first on the mean of the parent's relevance and the anchor's (Batsakis et al.)
    PAGE_ANCHOR = "page+anchor"
    #: soft focus with a perfect page classifier: fetched pages scored by their true label
    PERFECT = "soft-perfect"
    #: soft focus knowing every link target's true label before fetching it
    ORACLE = "oracle"
    #: soft focus with an operator: after the first pages (CrawlPlan.label_after) a
    #: simulated labeller answers good or bad from the ground truth for the pages
    #: ``focuscrawl label suggest`` lists; the model is retrained and rescores
    LABELS = "labels"

    @property
    def mode(self) -> Mode:
        if self in (
            Strategy.BFS,
            Strategy.UNFOCUSED,
            Strategy.HARD,
            Strategy.SOFT_1999,
            Strategy.PATHS,
        ):
            return Mode(self.value)
        return Mode.SOFT

    @property
    def estimate(self) -> str:
        """The frontier estimate (crawl_setting) the strategy crawls with. The baselines'
        order ignores estimates: the classifier, which scores their pages for the
        measures, passes the cheapest on (1999's, in SQL) and trains no link learner."""
        if self in (Strategy.BFS, Strategy.UNFOCUSED, Strategy.SOFT_1999):
            return "soft-1999"
        if self in (Strategy.APPRENTICE, Strategy.PATHS, Strategy.ANCHOR, Strategy.PAGE_ANCHOR):
            return self.value
        return "soft"

    @property
    def reads_truth(self) -> bool:
        return self in (Strategy.PERFECT, Strategy.ORACLE)
