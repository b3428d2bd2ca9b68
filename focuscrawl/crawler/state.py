"""What a crawler process holds: its configuration, clients, queues, leases, store,
statistics and the state of its pacing, made in one place (``CrawlerState.__init__``).
The rooms of the crawler (``statements``, ``hosts``, ``visit``, ``claims``, ``pacing``)
each add one job's methods on top of it; ``process.Crawler`` puts them together."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from focuscrawl.crawler.config import CrawlConfig
from focuscrawl.crawler.fetch import Fetcher
from focuscrawl.crawler.leases import LeaseShelf
from focuscrawl.crawler.politeness import HostScheduler
from focuscrawl.crawler.robots import RobotsCache
from focuscrawl.crawler.scope import Scope
from focuscrawl.crawler.store import FLUSH_SECONDS, Store
from focuscrawl.crawler.traps import TrapGuard
from focuscrawl.crawler.unreachable import UnreachableHosts
from focuscrawl.crawler.warc import Exchange, WarcFiles
from focuscrawl.db.database import engine_dsn
from focuscrawl.db.migrate import ensure_branch
from focuscrawl.db.notify import Listener
from focuscrawl.db.shards import Layout
from focuscrawl.monitor.cpu import CRAWLER_STAGES, StageCpu
from focuscrawl.monitor.metrics import CrawlerMetrics

__all__ = ["CRAWLER_APP", "CrawlStats", "CrawlerState"]

log = logging.getLogger("focuscrawl.crawler")


#: the application_name of a crawler's connections, then its PID and number in the
#: process: how a crawler that starts tells whether others run (PostgreSQL lists every
#: connection)
CRAWLER_APP = "focuscrawl-crawler"
_CRAWLERS = itertools.count(1)


@dataclass
class CrawlStats:
    fetched: int = 0
    failed: int = 0
    excluded: int = 0
    retried: int = 0
    started: float = 0.0
    #: what the attempts that fetched no page failed or were excluded with, by error class
    errors: Counter[str] = field(default_factory=Counter)
    #: the thread CPU each stage took (focuscrawl.monitor.cpu)
    cpu: StageCpu = field(default_factory=lambda: StageCpu(CRAWLER_STAGES))

    @property
    def rate(self) -> float:
        return self.fetched / max(time.monotonic() - self.started, 1e-9)


class _Connections(threading.local):
    connection: Any = None


class CrawlerState:
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
        self.metrics = CrawlerMetrics()  # served when asked (crawl run --metrics-port)
        self.stats = CrawlStats(cpu=StageCpu(CRAWLER_STAGES, self.metrics.cpu))
        # a lockstep round is written whole, when it is over (_round_done)
        self.store = Store(engine, None if config.lockstep else FLUSH_SECONDS, self.stats.cpu)
        self.metrics.queued.set_function(lambda: sum(self.scheduler.outstanding()))
        self.stop_event = threading.Event()
        self.scope = Scope()  # read from the database as the crawl starts, and again
        self.traps = TrapGuard()
        self.unreachable = UnreachableHosts()  # hosts not asked until their back-off ends
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
        #: when a list: (claim number, URL, fetched) of every request for a page (an
        #: evaluation counts what each attempt found, in the order the crawl claimed them)
        self.attempt_log: list[tuple[int, str, bool]] | None = None

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
