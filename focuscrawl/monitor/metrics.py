"""Prometheus metrics, with prometheus-client.

Two views of a crawl:

* **A process's own** (``crawl run --metrics-port``, ``classify run --metrics-port``):
  what that process did since it started: pages by outcome, errors by class, claim
  latency, its queue, the classifier's backlog as it last read it, the harvest's moving
  averages of the pages it scored, the model versions it scores with.
* **The crawl's** (the console's ``/metrics``): read from the database at each scrape
  through the live view's named statement (``monitor/dashboard``), so it holds for every
  process that shares the database.

Each view has a registry of its own (not the library's global one), so that several
crawlers in one Python process, as in the tests, keep their counts apart.
:data:`DOCUMENTED` names every metric; the docs' reference lists it from there.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy.engine import Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import ConfigError, check_tcp_port
from focuscrawl.monitor.dashboard import health, unless_away

__all__ = [
    "DOCUMENTED",
    "ClassifierMetrics",
    "CrawlMetrics",
    "CrawlerMetrics",
    "MetricsServer",
    "serve",
]

#: every metric, by where it is served, with what it measures (the reference lists these)
DOCUMENTED: dict[str, dict[str, str]] = {
    "crawler": {
        "focuscrawl_crawler_pages_total": "Claimed URLs this crawler visited, by outcome "
        "(fetched, failed, excluded, retried).",
        "focuscrawl_crawler_errors_total": "Failed or retried visits by error class "
        "(timeout, http_404, robots_unavailable, ...).",
        "focuscrawl_crawler_claim_seconds": "Time of one frontier claim (a histogram).",
        "focuscrawl_crawler_claimed_total": "Frontier URLs claimed.",
        "focuscrawl_crawler_cpu_seconds_total": "Thread CPU this crawler spent, by stage: "
        "claim (reading the frontier), fetch (requests), parse (reading what came back, "
        "links and their words), store (writing batches, check-in estimates among them).",
        "focuscrawl_crawler_queued": "URLs this process claimed and has not finished visiting.",
        "focuscrawl_crawler_classifier_backlog": "Pages fetched and not yet scored, as this "
        "crawler last read it (focused crawls only).",
    },
    "classifier": {
        "focuscrawl_classifier_pages_total": "Pages this classifier scored.",
        "focuscrawl_classifier_links_total": "Unvisited out-links it gave an estimate.",
        "focuscrawl_classifier_batch_seconds": "Time of one scoring transaction (a histogram).",
        "focuscrawl_classifier_harvest": "Mean R of the last 100 and 1,000 pages it scored "
        "(label window).",
        "focuscrawl_classifier_model_version": "model_id of the page classifier it scores with.",
        "focuscrawl_classifier_link_model_version": "model_id of the link learner's newest "
        "model it used (0: none).",
        "focuscrawl_classifier_cpu_seconds_total": "CPU this classifier spent, by stage: "
        "claim, score, estimates, learn (the link learner), frontier (estimated again), "
        "self_train.",
    },
    "crawl": {
        "focuscrawl_pages": "Documents by state (fetched, failed, frontier), in the database.",
        "focuscrawl_errors": "Tried URLs that ended in an error.",
        "focuscrawl_classifier_backlog": "Fetched pages not yet scored.",
        "focuscrawl_relevance_sum": "Sum of R over scored pages: relevant pages acquired.",
        "focuscrawl_harvest": "Mean R of the last 100 and 1,000 scored fetches (label window).",
        "focuscrawl_model_version": "model_id of the newest page classifier (0: none).",
        "focuscrawl_database_up": "1 when the crawl's numbers could be read at the scrape, "
        "0 while the server or a Citus worker is away (the other crawl metrics are then "
        "left out).",
        "focuscrawl_worker_up": "Each Citus worker (label node, host:port): 1 when the "
        "coordinator reaches it (none on one server).",
    },
}


class CrawlerMetrics:
    """A crawler process's metrics; :class:`focuscrawl.crawler.process.Crawler` updates
    them as it visits and claims."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.pages = Counter(
            "focuscrawl_crawler_pages", "Visited URLs by outcome", ["outcome"], registry=r
        )
        self.errors = Counter(
            "focuscrawl_crawler_errors", "Failed or retried visits by class", ["error"], registry=r
        )
        self.claim_seconds = Histogram(
            "focuscrawl_crawler_claim_seconds",
            "Time of one frontier claim",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
            registry=r,
        )
        self.claimed = Counter("focuscrawl_crawler_claimed", "Frontier URLs claimed", registry=r)
        self.cpu = Counter(
            "focuscrawl_crawler_cpu_seconds",
            "Thread CPU spent, by stage (claim, fetch, parse, store)",
            ["stage"],
            registry=r,
        )
        self.queued = Gauge("focuscrawl_crawler_queued", "Claimed URLs not yet visited", registry=r)
        self.backlog = Gauge(
            "focuscrawl_crawler_classifier_backlog",
            "Pages fetched and not yet scored, as last read",
            registry=r,
        )

    def visited(self, outcome: str, error: str | None) -> None:
        self.pages.labels(outcome).inc()
        if error is not None:
            self.errors.labels(error).inc()


class ClassifierMetrics:
    """A classifier process's metrics; :class:`focuscrawl.classifier.process.Classifier`
    updates them after each batch."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.pages = Counter("focuscrawl_classifier_pages", "Pages scored", registry=r)
        self.links = Counter(
            "focuscrawl_classifier_links", "Out-links given an estimate", registry=r
        )
        self.batch_seconds = Histogram(
            "focuscrawl_classifier_batch_seconds", "Time of one scoring transaction", registry=r
        )
        self.harvest = Gauge(
            "focuscrawl_classifier_harvest",
            "Mean R of the last pages scored",
            ["window"],
            registry=r,
        )
        self.model_version = Gauge(
            "focuscrawl_classifier_model_version", "Page classifier model_id", registry=r
        )
        self.link_model_version = Gauge(
            "focuscrawl_classifier_link_model_version", "Link learner model_id", registry=r
        )
        self.cpu = Counter(
            "focuscrawl_classifier_cpu_seconds", "CPU spent, by stage", ["stage"], registry=r
        )
        self._recent: deque[float] = deque(maxlen=1000)
        self._lock = threading.Lock()

    def scored(self, log_relevances: list[float | None]) -> None:
        """Pages scored in one batch (None: a page without text, not counted in the
        harvest, as the live view does not count it)."""
        self.pages.inc(len(log_relevances))
        with self._lock:
            self._recent.extend(math.exp(max(x, -700.0)) for x in log_relevances if x is not None)
            recent = list(self._recent)
        if recent:
            last = recent[-100:]
            self.harvest.labels("100").set(sum(last) / len(last))
            self.harvest.labels("1000").set(sum(recent) / len(recent))


class _DatabaseCollector(Collector):
    """The crawl's numbers, read at each scrape."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        snap, state = health(self.engine)  # the live view's reading
        yield GaugeMetricFamily(
            "focuscrawl_database_up",
            "Whether the crawl's numbers could be read at this scrape",
            0.0 if snap is None else 1.0,
        )
        workers = GaugeMetricFamily(
            "focuscrawl_worker_up", "Citus worker reachable from the coordinator", labels=["node"]
        )
        for worker in state.workers:
            workers.add_metric([worker.node], 1.0 if worker.up else 0.0)
        yield workers
        if snap is None:
            return  # a node or the server away: its health is the whole answer

        def newest_model() -> Any:
            with self.engine.connect() as connection:
                return execute(connection, queries["newest_model_id"]).scalar()

        model, _ = unless_away(newest_model)  # away since the snapshot: the rest stands
        pages = GaugeMetricFamily("focuscrawl_pages", "Documents by state", labels=["state"])
        for state_name in ("fetched", "failed", "frontier"):
            pages.add_metric([state_name], float(getattr(snap, state_name)))
        yield pages
        yield GaugeMetricFamily("focuscrawl_errors", "Tried URLs with an error", snap.errors)
        yield GaugeMetricFamily(
            "focuscrawl_classifier_backlog", "Fetched pages not yet scored", snap.unscored
        )
        yield GaugeMetricFamily(
            "focuscrawl_relevance_sum", "Sum of R over scored pages", snap.relevance_sum
        )
        harvest = GaugeMetricFamily(
            "focuscrawl_harvest", "Mean R of the last scored fetches", labels=["window"]
        )
        for window, value in (("100", snap.avg_100), ("1000", snap.avg_1000)):
            if value is not None:
                harvest.add_metric([window], value)
        yield harvest
        yield GaugeMetricFamily("focuscrawl_model_version", "Newest page model_id", model or 0)


class CrawlMetrics:
    """The crawl's metrics as the database holds them (the console's ``/metrics``)."""

    def __init__(self, engine: Engine) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_DatabaseCollector(engine))


class MetricsServer:
    """prometheus-client's HTTP server in its daemon thread."""

    def __init__(self, server: Any, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.port: int = server.server_port

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def serve(registry: CollectorRegistry, port: int, host: str = "127.0.0.1") -> MetricsServer:
    """Serve ``registry`` at http://host:port/metrics (port 0: any free one) in a daemon
    thread. A port in use is a ConfigError."""
    check_tcp_port("--metrics-port", port)
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise ConfigError(f"cannot serve metrics on {host}:{port}: {exc.strerror}") from exc
    return MetricsServer(server, thread)
