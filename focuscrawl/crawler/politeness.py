"""Politeness inside one process: one request per host at a time, in delay order.

Claimed URLs wait in per-host queues; a worker takes the host whose turn comes
first. Across processes the ``site`` row's lease (sql/politeness.sql) has the last
word: a host this process thinks is ready may still be taken elsewhere, and then
waits as long as the database says.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque

from focuscrawl.crawler.store import Claim

__all__ = ["HostScheduler"]


class HostScheduler:
    def __init__(self) -> None:
        self._queues: dict[int, deque[Claim]] = {}
        self._ready: list[tuple[float, int]] = []  # (time, sid) of hosts with work and no request
        self._busy: set[int] = set()
        self._cond = threading.Condition()
        self._taken: set[int] = set()  # seq of the URLs handed to workers, not yet finished
        self._queued = 0  # URLs in the queues (the claim loop asks many times a second)
        self.closed = False

    def __len__(self) -> int:
        with self._cond:
            return self._queued

    def outstanding(self) -> tuple[int, int]:
        """(queued, taken): URLs waiting, and URLs taken by workers whose visit is not
        ``finished``, read together so that no URL is ever between the two."""
        with self._cond:
            return self._queued, len(self._taken)

    def _turn(self, at: float, sid: int) -> None:
        """The host's turn comes at ``at``. A waiting worker is woken only when that is
        sooner than every other turn: each one waits until the first turn at the
        latest, and a wake-up for a later turn (most turns under politeness, a delay
        away) would cost a thread switch for nothing."""
        first = not self._ready or at < self._ready[0][0]
        heapq.heappush(self._ready, (at, sid))
        if first or at <= time.monotonic():
            self._cond.notify()

    def due_within(self, horizon: float, delay: float) -> int:
        """Queued URLs whose turn comes within ``horizon`` seconds, a host's URLs going
        one per ``delay`` seconds (a busy host's next turn is ``delay`` away). With no
        delay, every queued URL. URLs further off are bounded by the site cap."""
        with self._cond:
            if delay <= 0:
                return self._queued
            now = time.monotonic()
            turn: dict[int, float] = {}
            for at, sid in self._ready:
                turn[sid] = min(at, turn.get(sid, at))
            due = 0
            for sid, queue in self._queues.items():
                wait = max(turn.get(sid, now + delay) - now, 0.0)
                if queue and wait <= horizon:
                    due += min(len(queue), 1 + int((horizon - wait) / delay))
            return due

    def finished(self, claim: Claim) -> None:
        """What became of a URL a worker took is known (an outcome, or back in the queue).
        Only the first call counts."""
        with self._cond:
            self._taken.discard(claim.seq)

    def rooms(self, cap: int) -> tuple[list[int], dict[int, int]]:
        """The sites with ``cap`` or more URLs queued, and the room (``cap`` less what
        is queued) of each site with fewer but some."""
        with self._cond:
            full, room = [], {}
            for sid, queue in self._queues.items():
                if len(queue) >= cap:
                    full.append(sid)
                elif queue:
                    room[sid] = cap - len(queue)
            return full, room

    def in_use(self) -> set[int]:
        """The hosts with URLs queued or a worker on them."""
        with self._cond:
            return {sid for sid, queue in self._queues.items() if queue} | self._busy

    def queued_for(self, sid: int) -> int:
        with self._cond:
            return len(self._queues.get(sid, ()))

    def add(self, claim: Claim, not_before: float = 0.0) -> None:
        """Queue a claimed URL. A host with nothing queued nor taken gets its turn now,
        or at ``not_before`` (time.monotonic()) when that is later: when this process
        asked it last, the end of that request plus its delay."""
        with self._cond:
            queue = self._queues.setdefault(claim.sid, deque())
            queue.append(claim)
            self._queued += 1
            if len(queue) == 1 and claim.sid not in self._busy:
                self._turn(max(time.monotonic(), not_before), claim.sid)

    def take(self, timeout: float) -> Claim | None:
        """The next URL whose host may be asked now; None after ``timeout`` or when closed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.closed:
                now = time.monotonic()
                if self._ready and self._ready[0][0] <= now:
                    _, sid = heapq.heappop(self._ready)
                    queue = self._queues.get(sid)
                    if not queue:
                        continue
                    self._busy.add(sid)
                    claim = queue.popleft()
                    self._queued -= 1
                    self._taken.add(claim.seq)
                    return claim
                wait = deadline - now
                if self._ready:
                    wait = min(wait, self._ready[0][0] - now)
                if wait <= 0:
                    return None
                self._cond.wait(wait)
            return None

    def take_next(self, sid: int) -> Claim | None:
        """The next queued URL of a host a worker has taken and not yet given back
        (``done``): the caller holds the host, so no turn is waited for. None when the
        host has none queued."""
        with self._cond:
            queue = self._queues.get(sid)
            if self.closed or not queue or sid not in self._busy:
                return None
            claim = queue.popleft()
            self._queued -= 1
            self._taken.add(claim.seq)
            return claim

    def done(self, sid: int, delay: float) -> None:
        """The host's request is over; its next URL may go after ``delay`` seconds.
        Only the first call counts (a worker recovering from a bug may call it again)."""
        with self._cond:
            if sid not in self._busy:
                return
            self._busy.discard(sid)
            if self._queues.get(sid):
                self._turn(time.monotonic() + delay, sid)
            else:
                self._queues.pop(sid, None)

    def retry(self, claim: Claim, delay: float) -> None:
        """The host was not free (another process has it): put the URL back in front.

        After ``drain`` the URL is still kept, for the next ``drain`` to hand back.
        """
        with self._cond:
            self._busy.discard(claim.sid)
            self._taken.discard(claim.seq)
            self._queues.setdefault(claim.sid, deque()).appendleft(claim)
            self._queued += 1
            self._turn(time.monotonic() + delay, claim.sid)

    def drain(self) -> list[Claim]:
        """Remove and return every queued URL (on shutdown)."""
        with self._cond:
            claims = [c for q in self._queues.values() for c in q]
            self._queues.clear()
            self._queued = 0
            self._ready.clear()
            self.closed = True
            self._cond.notify_all()
            return claims
