"""The host leases a crawler process keeps between its requests to a host.

A site's lease in the database (``acquire_site``, sql/politeness.sql) says that one
process asks the host now; taking it costs a statement. A process keeps the lease
between requests instead of giving it back after each: it spaces the host's requests
itself, by the host's delay (``HostScheduler``), and puts the lease on the shelf while
the delay runs. The next URL of the host takes the lease off the shelf, with no
statement; the hosts of a claim's URLs that a process holds nothing of are taken
together as the claim comes (``acquire_sites``, one statement a claim) and wait on the
shelf for their URLs. A lease goes back to the database (``release_sites``, many in one
statement) once it is kept no more: when the host has nothing queued here and its
delay has passed (until then nobody may ask the host, so keeping it costs no other
process a turn), or when it has been held for its hold, so that other processes with
URLs of the host get their turn.
"""

from __future__ import annotations

import threading
from collections.abc import Container
from dataclasses import dataclass

from focuscrawl.crawler.store import Claim
from focuscrawl.web.urls import oid_bucket

__all__ = ["HOLD_S", "HOLD_TURNS", "MAX_HOLD_S", "SITE_LEASE_S", "Lease", "LeaseShelf"]

#: the database's lease of a site ends this long after its acquire (a guard against a
#: crawler that dies holding it: then other processes may ask the host)
SITE_LEASE_S = 120.0
#: a lease is kept for at most this long from its acquire, or for HOLD_TURNS of the
#: host's delay when that is longer, but never past MAX_HOLD_S: a request begun then
#: ends (total fetch timeout 30 s) well before the database's lease does
HOLD_S = 1.0
HOLD_TURNS = 4
MAX_HOLD_S = SITE_LEASE_S / 4


@dataclass
class Lease:
    """A host this process holds the database's lease of."""

    #: the URL the lease was taken or last used for (its sid and oid name the site)
    claim: Claim
    #: seconds between two requests to the host (the crawl's, or robots.txt's longer one)
    delay: float
    #: time.monotonic() of the acquire
    acquired_at: float
    robots_txt: str | None = None
    #: robots.txt must be fetched before the next page (its copy had expired)
    robots_stale: bool = False
    #: the site's request count when the lease was taken, and requests made since
    pages_taken: int = 0
    taken: int = 0
    #: the claim waits for the host's next turn (robots.txt was fetched for it first)
    again: bool = False
    #: time.monotonic() before which the host may not be asked again
    free_at: float = 0.0

    @property
    def sid(self) -> int:
        return self.claim.sid

    @property
    def bucket(self) -> int:
        return oid_bucket(self.claim.oid)

    @property
    def hold(self) -> float:
        return min(max(HOLD_S, HOLD_TURNS * self.delay), MAX_HOLD_S)

    def expired(self, now: float) -> bool:
        """Held for its hold: it goes back to the database before the next request."""
        return now - self.acquired_at >= self.hold

    def requested(self, now: float) -> None:
        """A request to the host has just ended: the next waits out the delay."""
        self.free_at = now + self.delay

    def wait(self, now: float) -> float:
        """Seconds until the host may be asked again."""
        return max(self.free_at - now, 0.0)


class LeaseShelf:
    """Leases no worker is using now, by site id."""

    def __init__(self) -> None:
        self._leases: dict[int, Lease] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._leases)

    def put(self, lease: Lease) -> None:
        with self._lock:
            self._leases[lease.sid] = lease

    def holds(self, sid: int) -> bool:
        with self._lock:
            return sid in self._leases

    def take(self, sid: int) -> Lease | None:
        """The lease of host ``sid``, off the shelf; None when none is kept."""
        with self._lock:
            return self._leases.pop(sid, None)

    def free_at(self, sid: int) -> float:
        """When host ``sid`` may be asked again (time.monotonic()), by the lease kept of
        it; 0.0 when none is kept."""
        with self._lock:
            lease = self._leases.get(sid)
            return 0.0 if lease is None else lease.free_at

    def due(self, now: float, in_use: Container[int]) -> list[Lease]:
        """Off the shelf, the leases to give back now: those held for their hold, and
        those whose delay has passed of hosts not ``in_use`` (URLs queued, or a worker
        on them)."""
        with self._lock:
            due = [
                lease
                for sid, lease in self._leases.items()
                if lease.expired(now) or (lease.free_at <= now and sid not in in_use)
            ]
            for lease in due:
                del self._leases[lease.sid]
            return due

    def drain(self) -> list[Lease]:
        """Every lease on the shelf, off it (the crawler is stopping)."""
        with self._lock:
            leases = list(self._leases.values())
            self._leases.clear()
            return leases
