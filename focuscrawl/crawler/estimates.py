"""Estimates of new URLs at check-in, from the newest link model.

The classifier trains the link learner and stores each version in ``model`` (kind
``link``); the crawl's frontier estimate is a crawl-wide setting (``crawl_setting``).
When that estimate uses the link model (``soft``, ``apprentice``), the store scores
every out-link it checks in with the newest version: the link's own words and URL,
plus the lowest value its parent's terms can take (``LinkModel.floor``), so the URL has
an estimate before its parent is scored, never above the one it will have after
(focuscrawl.topics.linkmodel); in ``soft`` and ``paths`` also the lowest the anchor's
factor can be (``ANCHOR_FLOOR``: the crawler does not load the page classifier that reads
the anchor). Otherwise out-links are checked in unestimated (log R = -inf)
and wait for the classifier, as in 1999.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from focuscrawl.db.queries import queries
from focuscrawl.topics.linkmodel import (
    ANCHOR_ESTIMATES,
    ANCHOR_FLOOR,
    LINK_ESTIMATES,
    LinkModel,
    LinkParts,
)

__all__ = ["CheckInEstimates"]


class CheckInEstimates:
    """The store's view of the link model; used by one thread (the store's)."""

    def __init__(self) -> None:
        self.model: LinkModel | None = None
        self.estimate = "soft"

    @property
    def active(self) -> bool:
        return self.model is not None and self.estimate in LINK_ESTIMATES

    @property
    def learning(self) -> bool:
        """The crawl's estimate is the link learner's, so the classifier trains it: the
        store queues the lessons of failed requests for it (as of the last refresh)."""
        return self.estimate in LINK_ESTIMATES

    @property
    def model_id(self) -> int:
        return self.model.model_id if self.active and self.model is not None else 0

    def refresh(self, cursor: Any) -> None:
        """Load a newer link model, and the estimate setting: once a batch (one small
        statement; the weights only when a new version came), so that a batch is always
        estimated with the newest version, and a lockstep crawl repeats exactly."""
        cursor.execute(queries["link_model_state"])
        estimate, newest = cursor.fetchone()
        self.estimate = estimate or "soft"
        if newest is None:
            self.model = None
        elif self.model is None or self.model.model_id != newest:
            cursor.execute(queries["link_model"], {"model_id": newest})
            model_id, params, weights = cursor.fetchone()
            params = params if isinstance(params, dict) else json.loads(params)
            self.model = LinkModel.from_bytes(bytes(weights), model_id, params)

    def of(self, links: Sequence[LinkParts]) -> tuple[list[float], list[float]] | None:
        """log estimates of links whose sources are not scored yet, and the sums of their
        own features' weights (``link.own``); None: unestimated."""
        if not self.active or not links or self.model is None:
            return None
        own = self.model.own_sums(links)
        values = self.model.estimates(links, own)
        if self.estimate in ANCHOR_ESTIMATES:
            values += ANCHOR_FLOOR
        return values.tolist(), own.tolist()
