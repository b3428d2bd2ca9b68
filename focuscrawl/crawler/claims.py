"""Claims of frontier URLs: how many of a site, in the frontier's order, shard by shard
on a cluster, and the URLs a process cannot serve in time given back."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from focuscrawl.crawler.store import Claim
from focuscrawl.crawler.timing import CLAIM_SCAN, FOCUSED_SITE_S
from focuscrawl.crawler.visit import Visits
from focuscrawl.web.urls import oid_bucket

__all__ = ["Claims", "claim_params"]


def claim_params(
    batch: int,
    lease_seconds: float,
    per_site: int | None = None,
    full_sites: Sequence[int] = (),
    room: Mapping[int, int] | None = None,
) -> dict[str, Any]:
    """``claim_batch``'s parameters but its buckets: ``batch`` URLs, leased for
    ``lease_seconds``, at most ``per_site`` of one site (None: no bound), none of
    ``full_sites``, and of a site in ``room`` no more than its room. Under a bound below
    the batch the claim reads CLAIM_SCAN times the batch off the frontier's index."""
    bound = batch if per_site is None else per_site
    room = room or {}
    return {
        "batch": batch,
        "lease_seconds": lease_seconds,
        "full_sites": list(full_sites),
        "per_site": bound,
        "room_sites": list(room),
        "room": list(room.values()),
        "scan": batch if bound >= batch else batch * CLAIM_SCAN,
    }


class Claims(Visits):
    def _claim(self, batch: int) -> int:
        start = time.thread_time()
        try:
            return self._claim_batch(batch)
        finally:
            self.stats.cpu.add("claim", start)

    def _claim_batch(self, batch: int) -> int:
        if self.config.max_pages is not None:
            # taken URLs are read before the stats: a URL counted in both (finished, its
            # visit not yet over) makes this claim smaller, never one too many
            queued, taken = self.scheduler.outstanding()
            with self._lock:
                done = self.stats.fetched + self.stats.failed
            left = self.config.max_pages - done - queued - taken
            batch = min(batch, max(left, 0))
            if batch == 0:
                return 0
        rows = self._claim_rows(batch)
        cap = self._site_cap()
        # a claim bound per site may come short with URLs left: only none found backs off
        self._frontier_short = len(rows) < batch and (cap >= batch or not rows)
        give_back, kept = [], []
        added: Counter[int] = Counter()
        for row in rows:
            self._claims += 1
            claim = replace(Claim(*row), seq=self._claims)
            if self.scheduler.queued_for(claim.sid) + added[claim.sid] >= cap:
                give_back.append(claim.oid)  # this host could not be served before the lease ends
            else:
                kept.append(claim)
                added[claim.sid] += 1
        self._acquire_ahead(kept)
        for claim in kept:  # a host this process asked last waits out its delay here
            self.scheduler.add(claim, not_before=self.leases.free_at(claim.sid))
        if give_back:
            self._release_claims(give_back)
        return len(rows) - len(give_back)

    def _site_cap(self) -> int:
        """The most URLs of one site this process holds: what the site can be asked for,
        at its politeness delay, within a quarter of the lease. Site fairness is this
        bound, not a key of the frontier order: a claim skips the sites at it."""
        delay = max(self.config.host_delay, 0.01)
        cap = max(1, int(self.config.lease_seconds / delay / 4))
        return min(cap, max(1, int(FOCUSED_SITE_S / delay))) if self.config.mode.focused else cap

    def _claim_rows(self, batch: int) -> list[tuple[Any, ...]]:
        """Frontier URLs, and pages due for a revisit when maintenance is on."""
        lease = self.config.lease_seconds
        age = self.config.revisit_after_seconds
        revisits = 0 if age is None else int(batch * self.config.revisit_share)
        cap = self._site_cap()
        full, room = self.scheduler.rooms(cap)
        self._skipped_sites = len(full)
        full = full + self.unreachable.held(time.monotonic())
        # a site with URLs queued is asked for no more than it has room for
        params = claim_params(batch - revisits, lease, cap, full, room)
        with self.metrics.claim_seconds.time():
            rows = self._claim_frontier(params)
        self.metrics.claimed.inc(len(rows))
        if age is not None and (revisits or not rows):
            wanted = revisits if rows else batch
            params = {"batch": wanted, "lease_seconds": lease, "min_age_seconds": age}
            rows += [(*row, True) for row in self._in_turn("claim_revisits", params)]
        return rows

    def _claim_frontier(self, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Claim the frontier's next URLs. On one server one statement claims them. On a
        Citus cluster, where a claim locks rows of one shard, the frontier's top is read
        with no lock, and each shard among it is asked for as many URLs as it holds
        there, in the same order (docs/scale-out.md: the "merge" claim); a crawl that
        has no untried URL left takes the shards in turn."""
        statement = self.config.mode.claim_statement
        groups = self.shards.groups
        if not self.shards.distributed:
            return self._sql(statement, {**params, "buckets": list(groups[0])}, fetch=True)
        if statement != "claim_batch":
            return self._in_turn(statement, params)
        top = [oid for (oid,) in self._sql("frontier_top", params, fetch=True)]
        if not top:
            return self._in_turn(statement, params)
        rows: list[tuple[Any, ...]] = []
        wanted = Counter(self.shards.group_of[oid_bucket(oid)] for oid in top)
        for group, count in sorted(wanted.items()):
            asked = {**params, "batch": count, "buckets": list(groups[group])}
            rows += self._claim_together(statement, asked)
        rank = {oid: n for n, oid in enumerate(top)}
        rows.sort(key=lambda row: rank.get(row[0], len(rank)))
        return rows

    def _in_turn(self, statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A claim from the shards in turn, the next one when a shard has nothing."""

        def claim(buckets: list[int]) -> list[tuple[Any, ...]]:
            return self._sql(statement, {**params, "buckets": buckets}, fetch=True)

        rows, self._turn = self.shards.in_turn(self._turn, claim)
        return rows
