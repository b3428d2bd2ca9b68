"""Hosts that cannot be reached: a name that does not resolve, a machine that refuses
every connection. Each of their URLs would cost a request that brings nothing.

On the web a link to a host that is gone is common (a held-out crawl of a few hundred
sites: 29% of its links led to hosts outside it), and links to the same gone host
recur. A crawler process remembers a host that failed so for a while (``BACKOFF_S``,
doubling with each failure after, up to ``BACKOFF_MOST_S``): it claims none of its URLs
and gives back those it holds, with no request; after the back-off one URL tries the
host again. The host's untried URLs also wait, in the database, behind every untried
URL, as a URL that failed once does (``defer_site``, sql/frontier.sql), so that other
crawlers do not spend a request each on them either.
"""

from __future__ import annotations

import threading

__all__ = ["BACKOFF_MOST_S", "BACKOFF_S", "UNREACHABLE_ERRORS", "UnreachableHosts"]

#: the fetch errors that say a host, not a page, cannot be had
UNREACHABLE_ERRORS = frozenset(("dns_error", "connection_refused"))
BACKOFF_S = 600.0
BACKOFF_MOST_S = 86_400.0
#: hosts remembered at most (past it, the ones whose back-off ends first are forgotten)
MOST = 20_000


class UnreachableHosts:
    """Sites (by sid) not to be asked until their back-off ends; for one crawler
    process's threads."""

    def __init__(self, backoff: float = BACKOFF_S) -> None:
        self.backoff = backoff
        self._until: dict[int, float] = {}
        self._wait: dict[int, float] = {}  # the back-off each site would get next
        self._lock = threading.Lock()

    def failed(self, sid: int, now: float) -> bool:
        """The site could not be reached at ``now``; True when it was not held already
        (the caller then defers its URLs)."""
        with self._lock:
            held = self._until.get(sid, 0.0) > now
            wait = self._wait.get(sid, self.backoff)
            self._until[sid] = now + wait
            self._wait[sid] = min(2 * wait, BACKOFF_MOST_S)
            if len(self._until) > MOST:
                for old in sorted(self._until, key=self._until.__getitem__)[: MOST // 2]:
                    del self._until[old]
                    self._wait.pop(old, None)
            return not held

    def reached(self, sid: int) -> None:
        """A request to the site brought an answer: it is reachable again."""
        if sid in self._wait:
            with self._lock:
                self._until.pop(sid, None)
                self._wait.pop(sid, None)

    def holds(self, sid: int, now: float) -> bool:
        return self._until.get(sid, 0.0) > now

    def held(self, now: float) -> list[int]:
        """The sites whose back-off has not ended, for a claim to skip."""
        with self._lock:
            return [sid for sid, until in self._until.items() if until > now]
