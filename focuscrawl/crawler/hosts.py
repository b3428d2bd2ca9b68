"""The hosts a crawler process asks: site leases taken from the database or off the
shelf, kept between requests and given back in batches, a dead crawler's leases freed
as the crawl starts, and the next URL of a host a worker holds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from focuscrawl.crawler.leases import SITE_LEASE_S, Lease
from focuscrawl.crawler.statements import Statements
from focuscrawl.crawler.store import Claim
from focuscrawl.db.outages import OUTAGE_RETRY_S
from focuscrawl.web.urls import oid_bucket

__all__ = ["Hosts"]


class _Site(Protocol):
    """What names a host: a lease, or a claimed URL."""

    @property
    def sid(self) -> int: ...


_Host = TypeVar("_Host", bound=_Site)

log = logging.getLogger("focuscrawl.crawler")


class Hosts(Statements):
    def _next_of(self, lease: Lease) -> Claim | None:
        """The next queued URL of the host a worker holds, taken with no turn waited for,
        when the host may be asked again at once (no delay) and the lease's hold is not
        over; else None."""
        if lease.delay > 0 or lease.again or lease.expired(time.monotonic()):
            return None
        return self.scheduler.take_next(lease.sid)

    def _shelve(self, lease: Lease) -> None:
        """The worker is done with its host for now: the lease goes on the shelf, and the
        host's next URL comes when its delay has passed."""
        self.leases.put(lease)
        if lease.again:  # the URL itself waits for the host's next turn
            lease.again = False
            self.scheduler.retry(lease.claim, lease.delay)
        else:
            self.scheduler.done(lease.sid, lease.wait(time.monotonic()))

    def _release(self, leases: list[Lease]) -> None:
        """Give leases back to the database, in one statement (one a shard on a Citus
        cluster): each host free, its requests counted, its next request after what
        remains of its delay."""
        now = time.monotonic()
        for group in self._by_shard(leases, lambda lease: lease.bucket):
            params = {
                "sids": [lease.sid for lease in group],
                "site_buckets": [lease.bucket for lease in group],
                "waits": [round(lease.wait(now), 3) for lease in group],
                "taken": [lease.taken for lease in group],
                "buckets": sorted({lease.bucket for lease in group}),
            }
            self._sql("release_sites", params)

    def _by_shard(self, hosts: list[_Host], bucket: Callable[[_Host], int]) -> list[list[_Host]]:
        """``hosts`` (leases or claims, one a host) in one group a shard they lie in (one
        group on one server), each in (bucket, sid) order: the statements over many hosts
        run once a group."""
        group_of = self.shards.group_of
        by_group: dict[int, list[_Host]] = {}
        for host in sorted(hosts, key=lambda host: (bucket(host), host.sid)):
            by_group.setdefault(group_of[bucket(host)], []).append(host)
        return list(by_group.values())

    def _release_due(self, now: float) -> None:
        """Give back the leases on the shelf that are kept no more (LeaseShelf.due)."""
        due = self.leases.due(now, self.scheduler.in_use())
        if due:
            self._release(due)

    def _lease_of(self, claim: Claim) -> Lease | None:
        """The lease of ``claim``'s host: off the shelf when this process keeps it, else
        acquired. None when the host may not be asked yet: the URL went back to wait."""
        now = time.monotonic()
        lease = self.leases.take(claim.sid)
        if lease is not None and lease.expired(now):
            self._release([lease])  # held for its hold: back through the database
            lease = None
        if lease is not None:
            if lease.free_at > now:  # a URL that came while the host's delay ran
                self.leases.put(lease)
                self.scheduler.retry(claim, lease.free_at - now)
                return None
            return lease
        params = {"sid": claim.sid, "bucket": oid_bucket(claim.oid), "lease_seconds": SITE_LEASE_S}
        rows = self._sql("acquire_site", params, fetch=True)
        if not rows or not rows[0][0]:
            self.scheduler.retry(claim, float(rows[0][6]) if rows else OUTAGE_RETRY_S)
            return None
        return self._acquired(claim, rows[0])

    def _acquire_ahead(self, claims: list[Claim]) -> None:
        """Take the leases of the hosts of ``claims`` that this process has nothing of
        (no lease kept, no URL queued, no worker on it) in one statement a shard
        (``acquire_sites``), and keep them on the shelf: their URLs' visits then take
        them off it, where each would have cost an ``acquire_site`` (a statement for
        nearly every page of a crawl over many hosts). A host not taken is acquired
        when its URL's turn comes, as before."""
        in_use = self.scheduler.in_use()
        first: dict[int, Claim] = {}
        for claim in claims:
            sid = claim.sid
            new = sid not in in_use and sid not in first and not self.leases.holds(sid)
            if new and not claim.revisit:
                first[sid] = claim
        for group in self._by_shard(list(first.values()), lambda claim: oid_bucket(claim.oid)):
            params = {
                "sids": [claim.sid for claim in group],
                "site_buckets": [oid_bucket(claim.oid) for claim in group],
                "buckets": sorted({oid_bucket(claim.oid) for claim in group}),
                "lease_seconds": SITE_LEASE_S,
            }
            for sid, *row in self._sql("acquire_sites", params, fetch=True):
                self.leases.put(self._acquired(first[sid], tuple(row)))

    def _acquired(self, claim: Claim, row: tuple[Any, ...]) -> Lease:
        """The lease ``acquire_site`` just gave (``row``) of ``claim``'s site, with the
        site's robots.txt state and request count: the one place a lease is made."""
        _, robots_txt, _, crawl_delay, pages_taken, robots_stale, _ = row
        return Lease(
            claim,
            delay=self._site_delay(crawl_delay),
            acquired_at=time.monotonic(),
            robots_txt=robots_txt,
            robots_stale=bool(robots_stale),
            pages_taken=pages_taken,
        )

    def _free_dead_leases(self) -> None:
        """As the crawl starts: when no other crawler is connected, every site lease
        still held is a dead crawler's (killed, or its machine lost), kept by the
        database for up to SITE_LEASE_S as a crash guard. They are freed, each host's
        next request put a delay from now (the dead crawler may have just asked it), so
        that a crawler restarted after a crash crawls at once: its queue had filled with
        the dead crawler's hosts and it claimed nothing else for two minutes. With other
        crawlers connected a lease may be theirs, and each waits its turn as always."""
        others = self._sql("other_crawlers", {"me": self._name}, fetch=True)
        if others and others[0][0] == 0:
            params = {"delay": self.config.host_delay, "cap": self.config.max_crawl_delay}
            freed = self._sql("free_dead_leases", params, fetch=True)
            if freed:
                log.warning("event=dead_leases_freed sites=%d", len(freed))

    def _site_delay(self, crawl_delay: float | None) -> float:
        """Seconds between two requests to a site: the crawl's host delay, or the site's
        Crawl-delay when longer, honoured up to max_crawl_delay (a value stored by an
        older version may exceed it)."""
        return max(self.config.host_delay, min(crawl_delay or 0.0, self.config.max_crawl_delay))
