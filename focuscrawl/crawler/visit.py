"""The visit of one URL a worker took: the crawl's guards and scope, the host's lease,
robots.txt (and its redirects, one a turn), the fetch, and the outcome stored."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from urllib.parse import urlsplit

from focuscrawl.crawler.fetch import REDIRECTS, FetchResult
from focuscrawl.crawler.hosts import Hosts
from focuscrawl.crawler.leases import SITE_LEASE_S, Lease
from focuscrawl.crawler.parse import absolute_url
from focuscrawl.crawler.policy import guard, outcome_of, readable, retry_or_fail
from focuscrawl.crawler.store import Claim, Outcome
from focuscrawl.crawler.unreachable import UNREACHABLE_ERRORS
from focuscrawl.db.schema import DocState
from focuscrawl.errors import InvalidURL
from focuscrawl.web.urls import host_bucket, host_of, normalize_url, oid_bucket, oid_of

__all__ = ["Visits"]

log = logging.getLogger("focuscrawl.crawler")


_OUTCOME_NAMES = {
    DocState.FETCHED: "fetched",
    DocState.FAILED: "failed",
    DocState.EXCLUDED: "excluded",
}


class Visits(Hosts):
    def _finish(self, outcome: Outcome) -> None:
        self._note_host(outcome)
        with self._lock:
            if outcome.state == DocState.FETCHED:
                self.stats.fetched += 1
            elif outcome.state == DocState.FAILED:
                self.stats.failed += 1
            elif outcome.state == DocState.EXCLUDED:
                self.stats.excluded += 1
            else:
                self.stats.retried += 1
            if outcome.error is not None and outcome.state != DocState.FETCHED:
                self.stats.errors[outcome.error] += 1
            if self.attempt_log is not None and outcome.state != DocState.EXCLUDED:
                fetched = outcome.state == DocState.FETCHED
                self.attempt_log.append((outcome.claim.seq, outcome.claim.url, fetched))
        self.metrics.visited(_OUTCOME_NAMES.get(outcome.state, "retried"), outcome.error)
        self.store.put(outcome)

    def _note_host(self, outcome: Outcome) -> None:
        """A host that cannot be reached is not asked again for a while, and its untried
        URLs wait behind every untried URL (focuscrawl.crawler.unreachable); one that
        answered is reachable."""
        sid = outcome.claim.sid
        if outcome.error in UNREACHABLE_ERRORS:
            if self.unreachable.failed(sid, time.monotonic()):
                params = {"sid": sid, "bucket": oid_bucket(outcome.claim.oid)}
                deferred = self._sql("defer_site", params, fetch=True)
                log.info("event=host_unreachable sid=%d error=%s deferred=%d",
                         sid, outcome.error, len(deferred))  # fmt: skip
        elif outcome.http_status is not None:
            self.unreachable.reached(sid)

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

    def _bounded(self, outcome: Outcome) -> Outcome:
        """The outcome without the out-links the crawl must not follow: to files the
        classifier cannot read (``policy.readable``), outside its scope, and all of a
        page deep in a spider trap (``crawler.traps``). A redirect is followed wherever
        it leads within the scope (its target's type is read when it answers)."""
        if not outcome.links:
            return outcome
        if not self.traps.follow(outcome.claim.url, outcome.text):
            return replace(outcome, links=[])
        links = outcome.links
        if outcome.http_status not in REDIRECTS:  # a page's own links
            links = [link for link in links if readable(link[0])]
        scope = self.scope
        if not scope.empty:
            links = [link for link in links if scope.allows(link[0])]
        return outcome if len(links) == len(outcome.links) else replace(outcome, links=links)

    def _visit(self, claim: Claim, lease: Lease | None) -> Lease | None:
        """Fetch one URL a worker took: under ``lease`` when the worker holds its host,
        else under the host's lease off the shelf or acquired. Returns the lease the
        worker holds after it; None when it holds none (the host was not asked, or may
        not be asked yet: then the URL went back to wait for its turn)."""
        if not claim.revisit and self.unreachable.holds(claim.sid, time.monotonic()):
            # its host could not be reached: back to the frontier with no request, to
            # wait with the host's other untried URLs
            self._release_claims([claim.oid])
            self._sql("defer_site", {"sid": claim.sid, "bucket": oid_bucket(claim.oid)})
            self.scheduler.finished(claim)
            if lease is None:
                self.scheduler.done(claim.sid, 0.0)
            return lease
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
            start = time.thread_time()
            robots_txt, crawl_delay, error = self._fetch_robots(claim)
            self.stats.cpu.add("fetch", start)
            lease.delay = self._site_delay(crawl_delay)
            lease.requested(time.monotonic())
            if error is None:
                lease.robots_txt, lease.robots_stale, lease.again = robots_txt, False, True
            elif error == "redirected":  # the next hop in the host's next turn
                lease.again = True
            elif error == "private_address":
                self._finish(Outcome(claim, DocState.EXCLUDED, error=error))
            else:  # a network failure says why; a server's error is robots.txt's own
                cause = "robots_unavailable" if error.startswith("http_") else error
                self._finish(retry_or_fail(claim, cause, None, self.config))
        elif not self.robots.allowed(claim.sid, lease.robots_txt, claim.url):
            self._finish(Outcome(claim, DocState.EXCLUDED, error="robots"))
        else:
            start = time.thread_time()
            result = self.fetcher.fetch(claim.url, claim.etag, claim.last_modified)
            self.stats.cpu.add("fetch", start)
            lease.taken += 1
            if result.retry_after is not None:
                lease.delay = max(lease.delay, result.retry_after)
            lease.requested(time.monotonic())
            start = time.thread_time()
            outcome = self._bounded(outcome_of(claim, result, self.config, self.robots.agent))
            self.stats.cpu.add("parse", start)
            self._finish(outcome)

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
            # with the site's robots.txt state: a worker may take this lease off the
            # shelf for one of the site's own URLs
            lease = self._acquired(claim, got[0])
        elif lease.free_at > time.monotonic():
            self.leases.put(lease)
            return None
        try:
            return self.fetcher.fetch(url)
        finally:
            lease.requested(time.monotonic())
            self.leases.put(lease)  # given back when due, as every lease kept
