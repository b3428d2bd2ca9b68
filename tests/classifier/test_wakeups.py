"""LISTEN/NOTIFY between the crawler's store, the classifier and a crawler waiting for
it: a notification wakes the reader at once; a lost one, or a listening connection cut
mid-crawl, costs latency only, never a page or an estimate (the readers poll as well)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import sqlalchemy as sa

from focuscrawl.classifier import Classifier
from focuscrawl.crawler import pacing
from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler, CrawlStats
from focuscrawl.db.database import engine_dsn, execute
from focuscrawl.db.notify import PAGES_STORED, Listener
from focuscrawl.db.queries import queries
from focuscrawl.db.seeds import add_seeds
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import page_url
from tests.crawler.conftest import crawl

SEEDS = [page_url("topics.sports.cycling", i) for i in (1, 2)]


def _cut_listeners(engine: sa.Engine) -> int:
    """Terminate every connection that is listening (as a network failure would)."""
    with engine.connect() as connection:
        return len(
            connection.exec_driver_sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN %%' AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).all()
        )


def _notify(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(f"SELECT pg_notify('{PAGES_STORED}', '')")


def test_a_listener_wakes_on_notify_and_survives_a_cut_connection(engine: sa.Engine) -> None:
    listener = Listener(engine_dsn(engine), PAGES_STORED)
    try:
        assert listener.wait(0.0) is False  # listening now
        _notify(engine)
        assert listener.wait(30.0) is True
        assert listener.wait(0.05) is False  # taken: nothing left
        assert _cut_listeners(engine) == 1
        assert listener.wait(0.05) is False  # the cut is noticed, not raised
        _notify(engine)  # sent while nobody listens: lost, and only that
        deadline = time.monotonic() + 30
        while listener.backend_pid is None and time.monotonic() < deadline:
            listener.wait(0.2)  # reconnects after a pause
        assert listener.backend_pid is not None
        _notify(engine)
        assert listener.wait(30.0) is True
    finally:
        listener.close()


def test_a_cut_listener_mid_crawl_loses_no_page_and_no_estimate(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    # the fallback poll is slow: a crawl this size finishes quickly only when woken
    classifier = Classifier(engine, poll_seconds=1.0)
    runner = threading.Thread(target=classifier.run, daemon=True)
    runner.start()
    cut: list[int] = []

    def cut_when_scoring() -> None:
        deadline = time.monotonic() + 60
        while classifier.stats.scored < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        cut.append(_cut_listeners(engine))

    cutter = threading.Thread(target=cut_when_scoring, daemon=True)
    cutter.start()
    try:
        stats = crawl(
            engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=80, max_backlog=8, threads=4
        )
        cutter.join(60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and classifier.stats.scored < stats.fetched:
            time.sleep(0.05)
    finally:
        classifier.stop()
        runner.join(30)
    assert stats.fetched == 80
    assert cut and cut[0] >= 1  # the classifier's listener (and the crawler's) was cut
    assert classifier.stats.woken > 0
    with engine.connect() as connection:
        unscored = connection.exec_driver_sql(
            "SELECT count(*) FROM doc_fetch WHERE fetch_seq IS NOT NULL AND model_id IS NULL"
        ).scalar()
        unestimated = connection.exec_driver_sql(
            "SELECT count(*) FROM doc AS d WHERE d.state = 0 AND d.relevance = '-Infinity' "
            "AND EXISTS (SELECT FROM link AS l JOIN doc_fetch AS f ON f.oid = l.oid_src "
            "WHERE l.oid_dst = d.oid AND f.model_id IS NOT NULL)"
        ).scalar()
    assert unscored == 0  # every fetched page was scored, before and after the cut
    assert unestimated == 0  # and every out-link of a scored page has its estimate


def test_two_crawlers_and_two_classifiers_at_once_stay_correct(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    """Two crawler processes claim (a backlog that grows with the crawl) and two
    classifiers score and learn, all woken by each other: every page is fetched once and
    scored once, and every out-link of a scored page has its estimate."""
    engine = trained_with_links
    classifiers = [Classifier(engine, poll_seconds=1.0) for _ in range(2)]
    runners = [threading.Thread(target=c.run, daemon=True) for c in classifiers]
    results: list[CrawlStats] = []

    def crawl_some(seeds: list[str]) -> None:
        options = {"max_pages": 50, "max_backlog": 4, "backlog_share": 0.25, "threads": 4}
        results.append(crawl(engine, topics_web.proxy, seeds, mode=Mode.SOFT, **options))

    crawlers = [threading.Thread(target=crawl_some, args=([seed],), daemon=True) for seed in SEEDS]
    for thread in runners + crawlers:
        thread.start()
    try:
        for thread in crawlers:
            thread.join(120)
        fetched = sum(stats.fetched for stats in results)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(c.stats.scored for c in classifiers) < fetched:
            time.sleep(0.05)
    finally:
        for classifier in classifiers:
            classifier.stop()
        for runner in runners:
            runner.join(30)
    assert len(results) == 2 and fetched == 100
    assert all(c.stats.scored > 0 for c in classifiers)  # both took part
    with engine.connect() as connection:
        stored, scored = connection.exec_driver_sql(
            "SELECT count(*), count(f.model_id) FROM doc AS d JOIN doc_fetch AS f "
            "ON f.oid = d.oid WHERE d.state = 2"
        ).one()
        unestimated = connection.exec_driver_sql(
            "SELECT count(*) FROM doc AS d WHERE d.state = 0 AND d.relevance = '-Infinity' "
            "AND EXISTS (SELECT FROM link AS l JOIN doc_fetch AS f ON f.oid = l.oid_src "
            "WHERE l.oid_dst = d.oid AND f.model_id IS NOT NULL)"
        ).scalar()
    assert stored == fetched  # no page fetched twice (a page is one row)
    assert scored == stored == sum(c.stats.scored for c in classifiers)  # each scored once
    assert unestimated == 0


def test_a_crawl_with_no_classifier_waits_then_crawls_on(
    trained: sa.Engine,
    topics_web: WebBoxThread,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """--max-backlog with no classifier running: the crawl waits at its backlog, then,
    as nothing gets scored, says so and crawls on without waiting (never hangs)."""
    monkeypatch.setattr(pacing, "CLASSIFIER_WAIT_S", 0.5)
    with trained.begin() as connection:
        add_seeds(connection, SEEDS)
    config = CrawlConfig(
        mode=Mode.SOFT, threads=2, host_delay=0.0, quiet=True, max_backlog=3, max_pages=20,
        idle_exit_seconds=5.0, fetch=FetchConfig(proxy=topics_web.proxy),
    )  # fmt: skip
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="focuscrawl.crawler"):
        stats = Crawler(trained, config).run()
    assert stats.fetched == 20
    assert time.monotonic() - started >= 0.5  # it did wait first
    assert caplog.text.count("event=no_classifier") == 1  # said once
    with trained.connect() as connection:
        stored = connection.exec_driver_sql("SELECT count(*) FROM doc WHERE state = 2").scalar()
    assert stored == 20


def test_a_crawl_waits_for_a_running_classifier_however_slow_its_batches(
    trained: sa.Engine,
    topics_web: WebBoxThread,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A classifier whose batches take longer than CLASSIFIER_WAIT_S (a calibrated topic
    self-training on a busy machine) is running, not absent: the crawl keeps within its
    backlog instead of crawling on unfocused (the README's crawl with no host delay had
    run ahead of its classifier to the end of its 2,000 pages)."""
    monkeypatch.setattr(pacing, "CLASSIFIER_WAIT_S", 0.3)
    with trained.begin() as connection:
        add_seeds(connection, SEEDS)
    classifier = Classifier(trained, poll_seconds=0.1)
    step = classifier.step

    def slow_step() -> int:
        time.sleep(1.0)  # each batch a second: three times the crawler's patience
        return step()

    classifier.step = slow_step  # type: ignore[method-assign]
    runner = threading.Thread(target=classifier.run, daemon=True)
    runner.start()
    # running: its named listening connection is open (a crawl that starts first may find
    # none within its patience, and rightly say so)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with trained.connect() as connection:
            if execute(connection, queries["classifiers_running"]).scalar_one():
                break
        time.sleep(0.05)
    config = CrawlConfig(
        mode=Mode.SOFT, threads=2, host_delay=0.0, quiet=True, max_backlog=3, max_pages=15,
        idle_exit_seconds=10.0, fetch=FetchConfig(proxy=topics_web.proxy),
    )  # fmt: skip
    try:
        with caplog.at_level(logging.WARNING, logger="focuscrawl.crawler"):
            stats = Crawler(trained, config).run()
    finally:
        classifier.stop()
        runner.join(30)
    assert stats.fetched == 15
    assert "event=no_classifier" not in caplog.text  # it waited for the slow classifier
    # never more than the backlog ahead: every claim after the first few waited for
    # scores, so the classifier scored nearly all of the crawl while it ran
    assert classifier.stats.scored >= 15 - 3 - 2, classifier.stats
