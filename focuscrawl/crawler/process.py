"""One crawler process: a watchdog that claims, workers that fetch, a store that writes.

    claim (watchdog) -> per-host queues -> worker: site lease, robots.txt, fetch,
    parse -> outcome -> store (bulk) ; the site's lease kept between its requests,
    which the process spaces by the delay, and given back in batches (crawler.leases)

Any number of processes may run against one database. Stopping (SIGTERM, SIGINT,
``--max-pages``, or an empty frontier) finishes the fetches in flight, stores them
and returns every URL claimed but not fetched to the frontier untouched.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import psycopg2
from sqlalchemy.engine import Engine

from focuscrawl.crawler.config import CrawlConfig
from focuscrawl.crawler.fetch import REDIRECTS, Fetcher, FetchResult
from focuscrawl.crawler.leases import SITE_LEASE_S, Lease, LeaseShelf
from focuscrawl.crawler.parse import absolute_url
from focuscrawl.crawler.policy import guard, outcome_of, retry_or_fail
from focuscrawl.crawler.politeness import HostScheduler
from focuscrawl.crawler.robots import RobotsCache
from focuscrawl.crawler.scope import Scope, load_scope
from focuscrawl.crawler.store import FLUSH_SECONDS, Claim, Outcome, Store
from focuscrawl.crawler.traps import TrapGuard
from focuscrawl.crawler.warc import Exchange, WarcFiles
from focuscrawl.database import (
    OUTAGE_RETRY_S,
    close_quietly,
    engine_dsn,
    ensure_branch,
    retry_until_done,
)
from focuscrawl.errors import ConfigError, DatabaseError, InvalidURL
from focuscrawl.metrics import CrawlerMetrics
from focuscrawl.notify import PAGES_SCORED, Listener
from focuscrawl.queries import Prepared, prepared, queries
from focuscrawl.schema import DocState
from focuscrawl.shards import Layout, ShardMap
from focuscrawl.urls import host_bucket, host_of, normalize_url, oid_bucket, oid_of

__all__ = ["CrawlStats", "Crawler"]

log = logging.getLogger("focuscrawl.crawler")
TAKE_TIMEOUT = 0.2
SCOPE_EVERY_S = 5.0  # how often a crawler reads the crawl's scope again
RECOVER_EVERY_S = 30.0
LOCKSTEP_POLL_S = 0.002
#: a free crawl looks whether to claim this often: the work it keeps in hand lasts DUE_S,
#: and each look reads the queues of every host it holds (a few hundred µs for 1,000)
FREE_POLL_S = 0.01
#: waiting for the classifier, woken by its notification: the poll if none comes
SCORED_FALLBACK_S = 0.05
#: a queued URL counts as work in hand (against the claim size and the backlog) when
#: its host's turn comes within this many seconds; later ones wait on politeness
DUE_S = 0.25
#: under politeness, the work in hand is also at least this many times what the crawl
#: fetched in the last DUE_S (over the last RATE_WINDOW_S): a host is asked once a
#: delay, so URLs due within DUE_S are hosts, and a fixed number of them would cap the
#: crawl at that number each DUE_S however many hosts have work
IN_HAND_RATE = 2.0
RATE_WINDOW_S = 2.0
#: a focused crawl holds at most this many seconds of a site's work (at its delay), so
#: that under politeness its claims reach the best URLs of many sites, not a queue of one,
#: and a site's next URL is chosen as late as its delay allows (at a 1 s delay, one URL:
#: holding two took the second on estimates up to a second older, and found fewer
#: relevant pages, docs/discussions/benchmarks.md "A polite crawl's start, again")
FOCUSED_SITE_S = 1.0
#: a claim whose scan of the frontier found fewer URLs than it asked for while it
#: skipped sites at their cap: the next waits this long (at least; a quarter of the
#: host delay), rather than scan the frontier again every few milliseconds
CLAIM_BACKOFF_S = 0.05
#: a claim that takes at most a few URLs of one site reads this many times as many
#: URLs off the frontier's index as it asks for (claim_batch)
CLAIM_SCAN = 8
#: how often the leases kept no more go back to the database (crawler.leases)
RELEASE_EVERY_S = 0.1
#: a free crawl (not lockstep) that has waited this long for a classifier with no page
#: scored crawls on without waiting (and says so), until a classifier scores again
CLASSIFIER_WAIT_S = 3.0
#: the application_name of a crawler's connections, then its PID and number in the
#: process: how a crawler that starts tells whether others run (PostgreSQL lists every
#: connection)
CRAWLER_APP = "focuscrawl-crawler"
_CRAWLERS = itertools.count(1)
#: statements run for every page, prepared on each worker connection (planned once)
PER_PAGE_STATEMENTS = ("acquire_site",)


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


#: a claim's leases, and the commit, in one round trip (Crawler._claim_together)
_LEASE_AND_COMMIT = queries["lease_claims"].rstrip().rstrip(";") + ";\nCOMMIT"


@cache
def _per_page() -> dict[str, Prepared]:
    return {name: prepared(name) for name in PER_PAGE_STATEMENTS}


@dataclass
class CrawlStats:
    fetched: int = 0
    failed: int = 0
    excluded: int = 0
    retried: int = 0
    started: float = 0.0

    @property
    def rate(self) -> float:
        return self.fetched / max(time.monotonic() - self.started, 1e-9)


_OUTCOME_NAMES = {
    DocState.FETCHED: "fetched",
    DocState.FAILED: "failed",
    DocState.EXCLUDED: "excluded",
}


class _Connections(threading.local):
    connection: Any = None


class Crawler:
    def __init__(self, engine: Engine, config: CrawlConfig) -> None:
        config.check()
        if config.mode.schema_branch is not None:
            ensure_branch(engine, config.mode.schema_branch)
        self.engine = engine
        self.config = config
        # without a proxy the crawler connects to hosts itself: to public addresses only,
        # unless allowed (the proxy to the web-in-a-box is allowed by being configured)
        public_only = config.fetch.proxy is None and not config.allow_private_hosts
        self.warc = WarcFiles(config.warc_dir, config.warc_max_bytes) if config.warc_dir else None
        self._warc_error: str | None = None
        recorder = self._record if self.warc is not None else None
        self.fetcher = Fetcher(config.fetch, public_only=public_only, recorder=recorder)
        self.robots = RobotsCache(config.fetch.user_agent, config.max_crawl_delay)
        #: this process's name to PostgreSQL (application_name of its connections)
        self._name = f"{CRAWLER_APP} {os.getpid()}-{next(_CRAWLERS)}"
        #: robots.txt redirects under way: by site, the next hop and the hops so far
        self._robots_hops: dict[int, tuple[str, int]] = {}
        self.scheduler = HostScheduler()
        self.leases = LeaseShelf()  # host leases kept between requests, no worker on them
        # a lockstep round is written whole, when it is over (_round_done)
        self.store = Store(engine, None if config.lockstep else FLUSH_SECONDS)
        self.stats = CrawlStats()
        self.metrics = CrawlerMetrics()  # served when asked (crawl run --metrics-port)
        self.metrics.queued.set_function(lambda: sum(self.scheduler.outstanding()))
        self.stop_event = threading.Event()
        self.scope = Scope()  # read from the database as the crawl starts, and again
        self.traps = TrapGuard()
        self._local = _Connections()
        self._lock = threading.Lock()
        self._dsn = engine_dsn(engine)
        #: which buckets share a shard (read as the crawl starts, and again when a shard
        #: is split; one group on one server), shared with the store
        self.layout = Layout(engine)
        self.store.layout = self.layout
        self._turn = 0  # the shard a claim not led by the frontier's top tries first
        self._claims = 0  # numbers claims in the order they were made (Claim.seq)
        #: focused crawls that wait for the classifier listen for its scores
        self._scored: Listener | None = None
        self._behind_classifier = False
        self._waiting_since: float | None = None  # behind the classifier since (monotonic)
        self._no_classifier = False  # none scored while we waited: crawl on without one
        self._skipped_sites = 0  # sites at their cap that the last claim skipped
        self._frontier_short = False  # the last claim found fewer URLs than it asked for
        #: (monotonic time, pages visited) marks, newest last: the crawl's recent rate
        self._visits: deque[tuple[float, int]] = deque()
        self._said_no_classifier = False
        #: lockstep: called with the pages fetched so far before each claim (the
        #: evaluation runs its distiller there, so that a crawl repeats exactly)
        self.between_rounds: Callable[[int], None] | None = None

    # -- database helpers -------------------------------------------------------

    def _sql(self, name: str, params: dict[str, Any], fetch: bool = False) -> list[tuple[Any, ...]]:
        """Run a named statement on this thread's connection, waiting out a database
        outage. Claims and acquires give up, returning nothing, when the crawler is
        stopping; everything else runs once the database is back.
        A claim (``claim_*``) commits with the leases of what it claimed."""
        if name.startswith("claim_"):
            return self._claim_together(name, params)

        def run() -> list[tuple[Any, ...]]:
            per_page = _per_page().get(name)
            statement = queries[name] if per_page is None else per_page.execute
            rows: list[tuple[Any, ...]] = []
            with self._connection().cursor() as cursor:
                for asked in self._regrouped(params):
                    cursor.execute(statement, asked)
                    rows += cursor.fetchall() if fetch else []
            return rows

        gives_up = name in ("frontier_top", "acquire_site")
        stop = self.stop_event if gives_up else None
        rows = retry_until_done(
            run, name, stop=stop, on_lost=self._lost, on_layout=self.layout.read
        )
        return [] if rows is None else rows

    def _regrouped(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``params`` once per shard their ``buckets`` lie in now: themselves, unless a
        shard was split since the buckets were grouped."""
        if "buckets" not in params:
            return [params]
        groups = self.shards.regroup(params["buckets"])
        return [params] if len(groups) == 1 else [{**params, "buckets": g} for g in groups]

    def _claim_together(self, name: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A claim (a ``claim_*`` statement; on a cluster naming one shard's buckets) and
        the leases of the URLs it claimed (``lease_claims``) in one transaction: a
        crawler that dies between them leaves nothing claimed without a lease. BEGIN and
        COMMIT travel with the statements: two round trips in all. (One transaction for
        the claims of several shards would cost a two-phase commit across workers: 52-58
        ms a claim of 64 URLs on the local cluster against 37-43.) Gives up, returning
        nothing, when the crawler is stopping."""

        def run() -> list[tuple[Any, ...]]:
            # a claim locks rows of one shard: after a split, of the first the buckets
            # lie in now (the next claim asks the others)
            asked = self._regrouped(params)[0]
            with self._connection().cursor() as cursor:
                try:
                    cursor.execute("BEGIN;\n" + queries[name], asked)
                    rows: list[tuple[Any, ...]] = cursor.fetchall()
                    if rows:
                        oids = [row[0] for row in rows]
                        lease = {"oids": oids, "lease_seconds": params["lease_seconds"]}
                        cursor.execute(_LEASE_AND_COMMIT, lease)
                    else:
                        cursor.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(psycopg2.Error):
                        cursor.execute("ROLLBACK")
                    raise
            return rows

        rows = retry_until_done(
            run, name, stop=self.stop_event, on_lost=self._lost, on_layout=self.layout.read
        )
        return [] if rows is None else rows

    @property
    def shards(self) -> ShardMap:
        return self.layout.map

    def _connection(self) -> Any:
        """This thread's connection, opened (with the per-page statements prepared) on
        first use and after a loss."""
        if self._local.connection is None:
            self._local.connection = psycopg2.connect(self._dsn, application_name=self._name)
            self._local.connection.autocommit = True
            with self._local.connection.cursor() as cursor:
                cursor.execute(queries["crawler_session"])
                for statement in _per_page().values():
                    cursor.execute(statement.prepare)
        return self._local.connection

    def _lost(self) -> None:
        close_quietly(self._local.connection)
        self._local.connection = None

    # -- the watchdog ---------------------------------------------------------------

    def run(self) -> CrawlStats:
        """Crawl until stopped, out of work, or at ``max_pages``; return what was done."""
        self.stats.started = time.monotonic()
        self._read_scope()
        self._read_shards()
        self._free_dead_leases()
        estimate = self.config.frontier_estimate
        if estimate is not None:  # every crawler and classifier of the crawl obeys it
            self._sql("set_crawl_setting", {"name": "estimate", "value": estimate})
        self.store.start()
        workers = [
            threading.Thread(target=self._worker, name=f"worker-{n}", daemon=True)
            for n in range(self.config.threads)
        ]
        for worker in workers:
            worker.start()
        try:
            self._watchdog()
        finally:
            self.stop_event.set()
            leftover = self.scheduler.drain()
            for worker in workers:
                worker.join()
            leftover += self.scheduler.drain()  # put back by workers while they stopped
            self._release(self.leases.drain())
            if leftover:
                self._release_claims([c.oid for c in leftover])
            self.store.close()
            unstored = self.store.unstored() if self.store.failure is not None else []
            if unstored:
                self._release_claims(unstored)  # back to the frontier now
            self.fetcher.close()
            if self.warc is not None:
                self.warc.close()
            self._report(final=True)
        if self.store.failure is not None:  # failed while the last pages were stored
            raise self._store_failed()
        if self._warc_error is not None:
            raise ConfigError(
                f"WARC writing failed ({self._warc_error}): the crawl stopped; every page "
                "fetched is stored, the last may be missing from the WARC files"
            )
        return self.stats

    def _store_failed(self) -> DatabaseError:
        return DatabaseError(
            f"the crawl stopped: storing pages failed ({self.store.failure}); "
            "every page stored before it is kept, the others return to the frontier"
        )

    def _record(self, exchange: Exchange) -> None:
        """Write an exchange to the WARC files; a failure (a full disk) stops the crawl
        rather than let it fetch pages that no WARC will hold."""
        assert self.warc is not None
        try:
            self.warc.record(exchange)
        except OSError as exc:
            with self._lock:
                if self._warc_error is None:
                    self._warc_error = exc.strerror or str(exc)
                    log.error("event=warc_failed error=%s", self._warc_error)
            self.stop_event.set()

    def _read_scope(self) -> None:
        """The crawl's scope as the database holds it now (``crawl scope set``)."""

        def read() -> Scope:
            with self.engine.connect() as connection:
                return load_scope(connection)

        scope = retry_until_done(read, "scope", stop=self.stop_event)
        if scope is not None:
            self.scope = scope

    def _read_shards(self) -> None:
        """Which buckets share a shard: on a Citus cluster a claim locks rows of one."""
        retry_until_done(self.layout.read, "shards", stop=self.stop_event)

    def _release_claims(self, oids: list[int]) -> None:
        """URLs claimed and not to be fetched: back to the frontier, shard by shard."""
        for buckets, group in self.shards.split(oids):
            self._sql("release_claims", {"oids": group, "buckets": buckets})

    def _bounded(self, outcome: Outcome) -> Outcome:
        """The outcome without the out-links the crawl must not follow: those outside
        its scope, and all of a page deep in a spider trap (``crawler.traps``)."""
        if not outcome.links:
            return outcome
        if not self.traps.follow(outcome.claim.url, outcome.text):
            return replace(outcome, links=[])
        scope = self.scope
        if scope.empty:
            return outcome
        return replace(outcome, links=[link for link in outcome.links if scope.allows(link[0])])

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
        crawls on without waiting for one (saying so once), until one scores again."""
        if self._waiting_since is None:
            self._waiting_since = now
        elif not self.config.lockstep and now - self._waiting_since >= CLASSIFIER_WAIT_S:
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

    def _claim(self, batch: int) -> int:
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
        give_back = []
        for row in rows:
            self._claims += 1
            claim = replace(Claim(*row), seq=self._claims)
            if self.scheduler.queued_for(claim.sid) >= cap:
                give_back.append(claim.oid)  # this host could not be served before the lease ends
            else:  # a host this process asked last waits out its delay here
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

    def _report(self, final: bool = False) -> None:
        if self.config.quiet:
            return
        s = self.stats
        line = (
            f"pages={s.fetched} failed={s.failed} excluded={s.excluded} retried={s.retried} "
            f"rate={s.rate:.1f}/s queued={len(self.scheduler)} stored={self.store.stored}"
        )
        print(("done " if final else "") + line, file=sys.stderr, flush=True)

    # -- workers --------------------------------------------------------------------

    def _worker(self) -> None:
        lease: Lease | None = None  # the host this worker holds between two of its URLs
        while not self.stop_event.is_set():
            # with a host held: its next URL when it may be asked at once; else the lease
            # goes on the shelf and the worker takes any URL whose host's turn has come
            claim = self._next_of(lease) if lease is not None else None
            if claim is None:
                if lease is not None:
                    self._shelve(lease)
                    lease = None
                claim = self.scheduler.take(TAKE_TIMEOUT)
                if claim is None:
                    continue
            try:
                lease = self._visit(claim, lease)
            except Exception:  # a bug must not kill the worker: record and go on
                log.exception("event=visit_failed url=%s", claim.url)
                lease = None  # given back by _visit
                self.store.put(Outcome(claim, DocState.FAILED, error="internal"))
                self.scheduler.done(claim.sid, self.config.host_delay)
                self.scheduler.finished(claim)
        if lease is not None:
            self._shelve(lease)
        if self._local.connection is not None:
            self._local.connection.close()

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
        group_of = self.shards.group_of
        by_group: dict[int, list[Lease]] = {}
        for lease in sorted(leases, key=lambda lease: (lease.bucket, lease.sid)):
            by_group.setdefault(group_of[lease.bucket], []).append(lease)
        for group in by_group.values():
            params = {
                "sids": [lease.sid for lease in group],
                "site_buckets": [lease.bucket for lease in group],
                "waits": [round(lease.wait(now), 3) for lease in group],
                "taken": [lease.taken for lease in group],
                "buckets": sorted({lease.bucket for lease in group}),
            }
            self._sql("release_sites", params)

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
        _, robots_txt, _, crawl_delay, pages_taken, robots_stale, _ = rows[0]
        return Lease(
            claim,
            delay=max(self.config.host_delay, self._capped(crawl_delay)),
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
            if freed and freed[0][0]:
                log.warning("event=dead_leases_freed sites=%d", freed[0][0])

    def _finish(self, outcome: Outcome) -> None:
        with self._lock:
            if outcome.state == DocState.FETCHED:
                self.stats.fetched += 1
            elif outcome.state == DocState.FAILED:
                self.stats.failed += 1
            elif outcome.state == DocState.EXCLUDED:
                self.stats.excluded += 1
            else:
                self.stats.retried += 1
        self.metrics.visited(_OUTCOME_NAMES.get(outcome.state, "retried"), outcome.error)
        self.store.put(outcome)

    def _excluded(self, claim: Claim) -> str | None:
        """Why the crawl must not fetch ``claim`` at all (a guard, the crawl's scope), or
        None."""
        if claim.revisit:
            return None
        reason = guard(claim, self.config)
        scope = self.scope
        if reason is None and not scope.empty:
            reason = scope.why_not(claim.url)
            if reason is None and scope.max_depth is not None and claim.depth > scope.max_depth:
                reason = "max_depth"
        return reason

    def _visit(self, claim: Claim, lease: Lease | None) -> Lease | None:
        """Fetch one URL a worker took: under ``lease`` when the worker holds its host,
        else under the host's lease off the shelf or acquired. Returns the lease the
        worker holds after it; None when it holds none (the host was not asked, or may
        not be asked yet: then the URL went back to wait for its turn)."""
        try:
            reason = self._excluded(claim)
            if reason is not None:
                self._finish(Outcome(claim, DocState.EXCLUDED, error=reason))
                self.scheduler.finished(claim)
                if lease is None:
                    self.scheduler.done(claim.sid, 0.0)
                return lease  # no request: a host held stays held
            if lease is None:
                lease = self._lease_of(claim)
                if lease is None:
                    return None
            lease.claim = claim
            self._ask(claim, lease)
        except BaseException:
            if lease is not None:
                self._release([lease])
            raise
        if not lease.again:
            self.scheduler.finished(claim)  # else it stays taken until put back
        return lease

    def _ask(self, claim: Claim, lease: Lease) -> None:
        """Ask the host for ``claim`` under ``lease``: robots.txt first when its copy has
        expired (the URL then waits for the host's next turn), else the page, unless the
        site's limit or robots.txt forbids it."""
        per_site = self.scope.max_pages_per_site or self.config.max_pages_per_site
        if lease.pages_taken + lease.taken >= min(per_site, self.config.max_pages_per_site):
            self._finish(Outcome(claim, DocState.EXCLUDED, error="site_limit"))
        elif lease.robots_stale:
            # robots.txt is a request too: the page waits for the host's next turn
            robots_txt, crawl_delay, error = self._fetch_robots(claim)
            lease.delay = max(self.config.host_delay, crawl_delay or 0.0)
            lease.requested(time.monotonic())
            if error is None:
                lease.robots_txt, lease.robots_stale, lease.again = robots_txt, False, True
            elif error == "redirected":  # the next hop in the host's next turn
                lease.again = True
            elif error == "private_address":
                self._finish(Outcome(claim, DocState.EXCLUDED, error=error))
            else:
                self._finish(retry_or_fail(claim, "robots_unavailable", None, self.config))
        elif not self.robots.allowed(claim.sid, lease.robots_txt, claim.url):
            self._finish(Outcome(claim, DocState.EXCLUDED, error="robots"))
        else:
            result = self.fetcher.fetch(claim.url, claim.etag, claim.last_modified)
            lease.taken += 1
            if result.retry_after is not None:
                lease.delay = max(lease.delay, result.retry_after)
            lease.requested(time.monotonic())
            self._finish(self._bounded(outcome_of(claim, result, self.config, self.robots.agent)))

    def _fetch_robots(self, claim: Claim) -> tuple[str | None, float | None, str | None]:
        """One request for the robots.txt of ``claim``'s host, and its rules stored when
        it came: (text, Crawl-delay, None); (None, None, "redirected") when it redirects
        (the next hop is asked in the host's next turn, so each hop is spaced by the
        host's delay, and one to another host waits for that host's own turn); or (None,
        None, the fetch's error class) when it could not be had. Past
        ``max_robots_redirects`` hops, or a redirect to nowhere, the file counts as
        unavailable, like a 4xx: everything is allowed (RFC 9309)."""
        parts = urlsplit(claim.url)
        home = f"{parts.scheme}://{parts.netloc}/robots.txt"
        url, hops = self._robots_hops.get(claim.sid, (home, 0))
        elsewhere = host_of(url) != host_of(home)
        result = self._fetch_elsewhere(url) if elsewhere else self.fetcher.fetch(url)
        if result is None:  # that host's turn has not come: try in our next turn
            return None, None, "redirected"
        status = result.status
        target = result.location if status in REDIRECTS else None
        if target and hops < self.config.max_robots_redirects:
            following = absolute_url(url, target)
            if following:
                self._robots_hops[claim.sid] = (following, hops + 1)
                return None, None, "redirected"
        self._robots_hops.pop(claim.sid, None)
        if status == 200:
            body = result.body[: self.config.max_robots_bytes]
            text = body.decode("utf-8", errors="replace")
        elif status is not None and status != 429 and (400 <= status < 500 or status in REDIRECTS):
            # none, or redirected past the limit or to nowhere: everything is allowed (a
            # 429, too many requests, is the server's trouble, as a 5xx is: retried)
            text = ""
        else:
            return None, None, result.error or f"http_{result.status}"
        crawl_delay = self.robots.crawl_delay(claim.sid, text)
        params = {
            "sid": claim.sid,
            "bucket": oid_bucket(claim.oid),
            "status": result.status,
            "robots_txt": text,
            "crawl_delay": crawl_delay,
            "ttl_seconds": self.config.robots_ttl_seconds,
        }
        self._sql("store_robots", params)
        return text, crawl_delay, None

    def _fetch_elsewhere(self, url: str) -> FetchResult | None:
        """Fetch ``url`` of another host than the one whose lease the worker holds (a
        robots.txt redirected there), under that host's own lease and delay, as any
        request to it: None when the host may not be asked now."""
        try:
            target = normalize_url(url)
        except InvalidURL:
            return FetchResult(url, error="bad_url")
        host = host_of(target)
        rows = self._sql("upsert_sites", {"hosts": [host]}, fetch=True)
        sid = next((row[0] for row in rows if row[1] == host), None)
        if sid is None:  # the database was unreachable while the crawler stopped
            return None
        claim = Claim(oid_of(target), target, sid, 0, 0)
        lease = self.leases.take(sid)
        if lease is None:
            params = {"sid": sid, "bucket": host_bucket(host), "lease_seconds": SITE_LEASE_S}
            got = self._sql("acquire_site", params, fetch=True)
            if not got or not got[0][0]:
                return None
            delay = max(self.config.host_delay, self._capped(got[0][3]))
            lease = Lease(claim, delay=delay, acquired_at=time.monotonic())
        elif lease.free_at > time.monotonic():
            self.leases.put(lease)
            return None
        try:
            return self.fetcher.fetch(url)
        finally:
            lease.requested(time.monotonic())
            self.leases.put(lease)  # given back when due, as every lease kept

    def _capped(self, crawl_delay: float | None) -> float:
        """A site's Crawl-delay as the crawl honours it: at most max_crawl_delay (a value
        stored by an older version may exceed it)."""
        return min(crawl_delay or 0.0, self.config.max_crawl_delay)
