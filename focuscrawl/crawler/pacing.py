"""The watchdog's pacing: when to claim and how much (work in hand under politeness,
the backlog behind the classifier, lockstep rounds), waiting for the classifier, the
leases due back, and the progress lines."""

from __future__ import annotations

import logging
import sys
import time

from focuscrawl.crawler.claims import Claims
from focuscrawl.crawler.timing import (
    CLAIM_BACKOFF_S,
    CLASSIFIER_WAIT_S,
    DUE_S,
    FREE_POLL_S,
    IN_HAND_RATE,
    LOCKSTEP_POLL_S,
    RATE_WINDOW_S,
    RECOVER_EVERY_S,
    RELEASE_EVERY_S,
    SCOPE_EVERY_S,
    SCORED_FALLBACK_S,
)
from focuscrawl.db.notify import PAGES_SCORED, Listener
from focuscrawl.errors import DatabaseError

__all__ = ["Pacing"]

log = logging.getLogger("focuscrawl.crawler")


class Pacing(Claims):
    def _watchdog(self) -> None:
        focused = self.config.mode.focused
        waits = self.config.lockstep or (focused and self.config.max_backlog)
        if waits:  # listening before the first look at the classifier: no wake-up is missed
            self._scored = Listener(self._dsn, PAGES_SCORED)
            self._scored.wait(0.0)
        try:
            self._claim_loop()
        finally:
            if self._scored is not None:
                self._scored.close()

    def _claim_loop(self) -> None:
        batch = self.config.threads * self.config.batch_per_thread
        next_recover = 0.0
        next_scope = time.monotonic() + SCOPE_EVERY_S
        next_report = time.monotonic() + 5
        idle_since: float | None = None
        next_claim = 0.0
        next_release = 0.0
        while not self.stop_event.is_set():
            if self.store.failure is not None:
                raise self._store_failed()
            now = time.monotonic()
            if now >= next_release:
                self._release_due(now)
                next_release = now + RELEASE_EVERY_S
            if now >= next_recover:
                self._sql("recover_expired_leases", {})
                next_recover = now + RECOVER_EVERY_S
            if now >= next_scope:
                self._read_scope()
                next_scope = now + SCOPE_EVERY_S
            if self._reached_max():
                return
            queued, busy = self.scheduler.outstanding()
            in_hand = batch
            if not self.config.lockstep and now >= next_claim:
                # under politeness: what comes within DUE_S (a read of every host's
                # queue, so only when a claim may follow)
                queued = self.scheduler.due_within(DUE_S, self.config.host_delay)
                in_hand = self._in_hand(now, batch)
            wants = queued < in_hand and now >= next_claim  # a claim, if there is room
            if self.config.lockstep:
                room = self._round_done(queued + busy)
                if room:
                    if self.between_rounds is not None:
                        self.between_rounds(self.stats.fetched)
                    backlog = self._backlog() if self.config.mode.focused else None
                    room = batch if backlog is None else min(batch, backlog)
            elif wants:  # else no claim: no need to ask the classifier's lag
                room = self._room_behind_classifier(queued + busy)
            else:
                room = 0
            if room:
                self._waiting_since = None
            if wants and room:
                asked = min(max(batch, in_hand - queued), room)  # under politeness, more
                claimed = self._claim(asked)
                if self._frontier_short and not self.config.lockstep and self._skipped_sites:
                    next_claim = now + max(CLAIM_BACKOFF_S, self.config.host_delay / 4)
                if claimed or sum(self.scheduler.outstanding()) or not self.store.idle:
                    idle_since = None
                else:
                    idle_since = idle_since or now
                    limit = self.config.idle_exit_seconds
                    if limit is not None and now - idle_since >= limit:
                        return
                if self.config.lockstep and claimed:
                    continue
            if now >= next_report:
                self._report()
                next_report = now + 5
            if self._scored is None:
                self.stop_event.wait(0.05)
                continue
            # behind: woken when a classifier commits scores (the timeout is the fallback
            # poll); else a look whether one did, then a short pause
            behind, self._behind_classifier = self._behind_classifier, False
            if self._scored.wait(SCORED_FALLBACK_S if behind else 0.0):
                self._waiting_since = None
                self._no_classifier = False
            elif behind:
                self._waited(now)
            if not behind:
                self.stop_event.wait(LOCKSTEP_POLL_S if self.config.lockstep else FREE_POLL_S)

    def _in_hand(self, now: float, batch: int) -> int:
        """The URLs due within DUE_S a free crawl keeps in hand: a claim's batch, and
        under politeness at least IN_HAND_RATE times the pages of the last DUE_S."""
        if self.config.host_delay <= 0:
            return batch
        s = self.stats
        visits = self._visits
        visits.append((now, s.fetched + s.failed + s.excluded + s.retried))
        while len(visits) > 2 and visits[1][0] <= now - RATE_WINDOW_S:
            visits.popleft()
        (first, before), (_, after) = visits[0], visits[-1]
        if now - first < RATE_WINDOW_S / 2:
            return batch  # too short a window to know the rate yet
        rate = (after - before) / (now - first)
        return max(batch, int(IN_HAND_RATE * rate * DUE_S))

    def _waited(self, now: float) -> None:
        """A free crawl that waited CLASSIFIER_WAIT_S for a classifier that scored nothing
        crawls on without waiting for one (saying so once), until one scores again; not
        while a classifier is running (its batch may take longer than that on a busy
        machine: the crawl would run ahead of it, unfocused)."""
        if self._waiting_since is None:
            self._waiting_since = now
        elif not self.config.lockstep and now - self._waiting_since >= CLASSIFIER_WAIT_S:
            running = self._sql("classifiers_running", {}, fetch=True)
            if running and int(running[0][0]):
                self._waiting_since = now  # it is there, only slow: wait on
                return
            self._no_classifier = True
            if self._said_no_classifier:
                return
            self._said_no_classifier = True
            log.warning("event=no_classifier waited_s=%.0f", CLASSIFIER_WAIT_S)
            if not self.config.quiet:
                message = (
                    f"no classifier scored a page in {CLASSIFIER_WAIT_S:.0f} s: crawling on "
                    "without waiting; start `focuscrawl classify run` to keep the crawl focused"
                )
                print(f"focuscrawl: {message}", file=sys.stderr, flush=True)

    def _round_done(self, outstanding: int) -> int:
        """Lockstep: whether the last claim is fetched, stored and scored. The store is
        told to write at once when only it is left. An unfocused crawl waits for the
        scores too, though its order ignores them: the classifier locks the frontier
        rows whose estimates it raises, and a claim meanwhile would skip them (SKIP
        LOCKED), taking other URLs than the same crawl does when the classifier is
        quicker (the evaluation's breadth-first baseline moved so on a topic or two in
        half the sweeps)."""
        if outstanding:
            return 0
        if self.store.unwritten:
            self.store.flush()
            return 0
        lag = self._sql("classifier_lag", {"cap": 1}, fetch=True)
        self._behind_classifier = bool(lag and int(lag[0][0]))
        if lag:
            self.metrics.backlog.set(int(lag[0][0]))
        return 0 if self._behind_classifier else 1

    def _room_behind_classifier(self, outstanding: int) -> int:
        """How many more URLs may be claimed before the classifier catches up (--max-backlog)."""
        limit = self._backlog()
        if limit is None or not self.config.mode.focused:
            return sys.maxsize
        ahead = outstanding + self.store.unwritten
        if ahead >= limit:
            if self.store.unwritten:
                self.store.flush()  # the classifier waits for these: write them now
            return 0
        if self._no_classifier:
            return limit - ahead  # the pages it has not stored yet are still bounded
        lag = self._sql("classifier_lag", {"cap": limit}, fetch=True)
        if lag:
            self.metrics.backlog.set(int(lag[0][0]))
        room = max(limit - ahead - int(lag[0][0] if lag else limit), 0)
        self._behind_classifier = room == 0
        return room

    def _backlog(self) -> int | None:
        """Pages the crawl may run ahead of the classifier now (None: no bound)."""
        limit = self.config.max_backlog
        if limit is None:
            return None
        return max(limit, int(self.config.backlog_share * self.stats.fetched))

    def _reached_max(self) -> bool:
        limit = self.config.max_pages
        return limit is not None and self.stats.fetched + self.stats.failed >= limit

    def _report(self, final: bool = False) -> None:
        if self.config.quiet:
            return
        s = self.stats
        line = (
            f"pages={s.fetched} failed={s.failed} excluded={s.excluded} retried={s.retried} "
            f"rate={s.rate:.1f}/s queued={len(self.scheduler)} stored={self.store.stored}"
        )
        print(("done " if final else "") + line, file=sys.stderr, flush=True)

    def _store_failed(self) -> DatabaseError:
        return DatabaseError(
            f"the crawl stopped: storing pages failed ({self.store.failure}); "
            "every page stored before it is kept, the others return to the frontier"
        )
