"""What an evaluation can crawl with: the crawler's four modes, and two soft-focused
yardsticks that read the ground truth instead of the classifier."""

from __future__ import annotations

from enum import StrEnum

from focuscrawl.crawler.config import Mode

__all__ = ["Strategy"]


class Strategy(StrEnum):
    BFS = "bfs"
    UNFOCUSED = "unfocused"
    SOFT = "soft"
    HARD = "hard"
    #: soft focus with a perfect page classifier: fetched pages scored by their true label
    PERFECT = "soft-perfect"
    #: soft focus knowing every link target's true label before fetching it
    ORACLE = "oracle"

    @property
    def mode(self) -> Mode:
        return Mode.SOFT if self in (Strategy.PERFECT, Strategy.ORACLE) else Mode(self.value)

    @property
    def reads_truth(self) -> bool:
        return self in (Strategy.PERFECT, Strategy.ORACLE)
