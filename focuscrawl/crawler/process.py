"""One crawler process: a watchdog that claims, workers that fetch, a store that writes.

    claim (watchdog) -> per-host queues -> worker: site lease, robots.txt, fetch,
    parse -> outcome -> store (bulk) ; the site's lease kept between its requests,
    which the process spaces by the delay, and given back in batches (crawler.leases)

Any number of processes may run against one database. Stopping (SIGTERM, SIGINT,
``--max-pages``, or an empty frontier) finishes the fetches in flight, stores them
and returns every URL claimed but not fetched to the frontier untouched.

The rooms: ``state`` (what a process holds), ``statements`` (the database), ``hosts``
(site leases), ``visit`` (one URL), ``claims`` (the frontier), ``pacing`` (when to
claim), ``timing`` (every constant of time and amount).
"""

from __future__ import annotations

import logging
import threading
import time

from focuscrawl.crawler.leases import Lease
from focuscrawl.crawler.pacing import Pacing
from focuscrawl.crawler.state import CrawlStats
from focuscrawl.crawler.store import Outcome
from focuscrawl.crawler.timing import TAKE_TIMEOUT
from focuscrawl.db.schema import DocState
from focuscrawl.errors import ConfigError

__all__ = ["CrawlStats", "Crawler"]

log = logging.getLogger("focuscrawl.crawler")


class Crawler(Pacing):
    """A crawler process: ``run`` it; ``stop_event`` stops it."""

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
