"""Prometheus metrics: a crawler's and a classifier's own, served on ports of their own,
and the crawl's as the database holds it. Each parses with prometheus-client's parser
and every documented metric moves during a crawl."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from focuscrawl.classifier import Classifier, train_model
from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler
from focuscrawl.crawler.timing import CLASSIFIER_WAIT_S
from focuscrawl.db.seeds import add_seeds
from focuscrawl.errors import ConfigError
from focuscrawl.monitor.metrics import DOCUMENTED, CrawlMetrics, serve
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import from_corpus, store_import
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import page_url

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
BACKLOG = ("focuscrawl_crawler_classifier_backlog", ())


def _parse(text: str) -> Samples:
    """Every sample, by name and labels (histograms: their _count and _sum)."""
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("_bucket") or sample.name.endswith("_created"):
                continue
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def _scrape(port: int) -> Samples:
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    assert response.status_code == 200
    return _parse(response.text)


def _moved(name: str, first: Samples, seen: list[Samples]) -> bool:
    """Whether any sample of the metric ``name`` (a histogram: its count) took a value
    other than the first scrape's at some later scrape."""
    names = {name, f"{name}_count"}

    def values(samples: Samples) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        return {k: v for k, v in samples.items() if k[0] in names}

    start = values(first)
    return any(values(later) != start for later in seen)


def _sample_while(running: Callable[[], bool], scrape: Callable[[], Samples]) -> list[Samples]:
    seen = []
    while running():
        seen.append(scrape())
        time.sleep(0.05)
    seen.append(scrape())
    return seen


def test_every_documented_metric_moves_during_a_crawl(
    engine: sa.Engine, topics_web: WebBoxThread, topics_dir: Path
) -> None:
    crawl_metrics = CrawlMetrics(engine)
    before = _parse(generate_latest(crawl_metrics.registry).decode())
    assert before[("focuscrawl_model_version", ())] == 0  # no model yet

    store_import(engine, from_corpus(topics_dir, 0.5, seed=1))
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    seeds = [page_url("topics.sports.cycling", i) for i in (1, 2)]
    missing = "http://sports.topics.example/no-such-page.html"  # an error to count
    with engine.begin() as connection:
        add_seeds(connection, [*seeds, missing])
    config = CrawlConfig(
        fetch=FetchConfig(proxy=topics_web.proxy),
        mode=Mode.SOFT,
        threads=4,
        host_delay=0.05,  # URLs wait in the queue for their host: the gauge shows them
        idle_exit_seconds=2.0,
        max_pages=80,
        max_backlog=4,
        backlog_share=0.0,
        quiet=True,
    )
    crawler = Crawler(engine, config)
    classifier = Classifier(engine, poll_seconds=0.2)
    servers = [serve(crawler.metrics.registry, 0), serve(classifier.metrics.registry, 0)]
    crawler_port, classifier_port = (s.port for s in servers)
    crawler_first, classifier_first = _scrape(crawler_port), _scrape(classifier_port)

    crawling = threading.Thread(target=crawler.run, daemon=True)
    scoring = threading.Thread(target=classifier.run, daemon=True)
    database_seen: list[Samples] = []

    def both() -> Samples:
        database_seen.append(_parse(generate_latest(crawl_metrics.registry).decode()))
        return _scrape(crawler_port)

    # the crawler runs ahead of a classifier that is not there yet, until it stops at
    # --max-backlog and the gauge shows the pages waiting (the classifier, started at a
    # fixed time instead, could keep up so well that no scrape saw the gauge move)
    crawling.start()
    crawler_seen = [both()]
    deadline = time.monotonic() + CLASSIFIER_WAIT_S
    while time.monotonic() < deadline and not crawler_seen[-1].get(BACKLOG):
        time.sleep(0.02)
        crawler_seen.append(both())
    scoring.start()
    try:
        crawler_seen += _sample_while(crawling.is_alive, both)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and classifier.stats.scored < crawler.stats.fetched:
            time.sleep(0.05)
        classifier_seen = [_scrape(classifier_port)]
    finally:
        classifier.stop()
        scoring.join(30)
        for server in servers:
            server.close()
    assert crawler.stats.fetched == 80 - crawler.stats.failed
    after = _parse(generate_latest(crawl_metrics.registry).decode())

    for name in DOCUMENTED["crawler"]:
        assert _moved(name, crawler_first, crawler_seen), name
    for name in DOCUMENTED["classifier"]:
        assert _moved(name, classifier_first, classifier_seen), name
    # the database's health holds still on one server that stays up (a Citus worker
    # stopped moves it: tests/integration/test_citus_outage.py)
    health = ("focuscrawl_database_up", "focuscrawl_worker_up")
    for name in DOCUMENTED["crawl"]:
        assert name in health or _moved(name, before, [*database_seen, after]), name
    assert after[("focuscrawl_database_up", ())] == 1
    assert not any(key[0] == "focuscrawl_worker_up" for key in after)  # no cluster, no workers

    last = crawler_seen[-1]
    assert last[("focuscrawl_crawler_pages_total", (("outcome", "fetched"),))] == (
        crawler.stats.fetched
    )
    assert last[("focuscrawl_crawler_errors_total", (("error", "http_404"),))] == 1
    assert last[("focuscrawl_crawler_queued", ())] == 0  # all visited
    spent = crawler.stats.cpu.seconds()  # every stage took some CPU, counted once
    assert all(seconds > 0 for seconds in spent.values()), spent
    for stage, seconds in spent.items():
        key = ("focuscrawl_crawler_cpu_seconds_total", (("stage", stage),))
        assert math.isclose(last[key], seconds, rel_tol=1e-6), stage
    scored = classifier_seen[-1]
    assert scored[("focuscrawl_classifier_pages_total", ())] == classifier.stats.scored
    # it claimed, scored and estimated by the scrape; it ran on (idle) until stopped
    spent = classifier.stats.cpu.seconds()
    for stage, seconds in spent.items():
        served = scored.get(("focuscrawl_classifier_cpu_seconds_total", (("stage", stage),)), 0)
        assert served <= seconds * (1 + 1e-6), stage
        assert served > 0 or stage not in ("claim", "score", "estimates"), stage
    assert 0 < scored[("focuscrawl_classifier_harvest", (("window", "100"),))] <= 1
    assert after[("focuscrawl_pages", (("state", "fetched"),))] == crawler.stats.fetched
    assert after[("focuscrawl_classifier_backlog", ())] == 0
    assert (
        after[("focuscrawl_model_version", ())]
        == scored[("focuscrawl_classifier_model_version", ())]
    )


def test_a_port_in_use_is_a_one_line_error(engine: sa.Engine) -> None:
    server = serve(CrawlMetrics(engine).registry, 0)
    try:
        with pytest.raises(ConfigError, match=r"cannot serve metrics on 127\.0\.0\.1:"):
            serve(CrawlMetrics(engine).registry, server.port)
    finally:
        server.close()
    with pytest.raises(ConfigError, match="not a TCP port"):
        serve(CrawlMetrics(engine).registry, 70000)
