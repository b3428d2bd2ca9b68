"""LISTEN/NOTIFY between the crawler's store, the classifier and a crawler waiting for
it: a notification wakes the reader at once; a lost one, or a listening connection cut
mid-crawl, costs latency only, never a page or an estimate (the readers poll as well)."""

from __future__ import annotations

import threading
import time

import sqlalchemy as sa

from focuscrawl.classifier import Classifier
from focuscrawl.crawler.config import Mode
from focuscrawl.database import engine_dsn
from focuscrawl.notify import PAGES_STORED, Listener
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
