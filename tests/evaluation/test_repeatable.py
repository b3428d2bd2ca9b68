"""An evaluated crawl repeats exactly for its seeds: lockstep rounds, pages stored in
claim order, a deterministic classifier and link learner."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from focuscrawl.classifier.apprentice import LinkLearner
from focuscrawl.crawler.store import Outcome, Store
from focuscrawl.db.database import make_engine
from focuscrawl.evaluation.runs import CrawlPlan, prepare_database, prepare_strategy, run_crawl
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.topics.linkmodel import LinkModel
from focuscrawl.topics.taxonomy_import import from_corpus
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import TRUTH, page_url
from tests.conftest import _fresh_database

SEEDS = [page_url("topics.sports.cycling", i) for i in (1, 2, 3)]


def _crawl(
    admin_url: str, topics_dir: Path, proxy: str, strategy: Strategy, pages: int = 70
) -> tuple[list[str], list[int | None]]:
    """The URLs a crawl fetched, in order, and the version of the link learner that
    estimated each one's out-links as it was stored."""
    for url in _fresh_database(admin_url, "focuscrawl_test_template"):
        engine: sa.Engine = make_engine(url)
        try:
            prepare_database(engine, from_corpus(topics_dir, 0.5, seed=1), "topics.sports")
            prepare_strategy(engine, strategy)
            plan = CrawlPlan(strategy, "topics.sports", SEEDS, pages, proxy, 4, 4, 20)
            urls = run_crawl(engine, plan, TRUTH).urls
            with engine.connect() as connection:
                versions = connection.exec_driver_sql(
                    "SELECT links_model FROM doc_fetch WHERE fetch_seq IS NOT NULL "
                    "ORDER BY fetch_seq"
                ).scalars()
                return urls, list(versions)
        finally:
            engine.dispose()
    raise AssertionError("no database")


@pytest.mark.parametrize("strategy", [Strategy.BFS, Strategy.SOFT])
def test_a_crawl_repeats_exactly_for_its_seeds(
    admin_url: str,
    template_url: str,
    topics_dir: Path,
    topics_web: WebBoxThread,
    strategy: Strategy,
) -> None:
    first, _ = _crawl(admin_url, topics_dir, topics_web.proxy, strategy)
    second, _ = _crawl(admin_url, topics_dir, topics_web.proxy, strategy)
    assert len(first) == 70
    assert first == second


def test_a_round_waits_for_what_the_classifier_learned_from_the_last(
    admin_url: str,
    template_url: str,
    topics_dir: Path,
    topics_web: WebBoxThread,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next round is claimed once the link learner's version learned from the last
    round's pages is stored, however long learning takes: a classifier that learns
    slowly crawls the same URLs in the same order, their out-links estimated by the same
    versions (the next round had been fetched and stored before the version or after
    it, as the two threads raced)."""
    write = Store.write

    def slow_store(self: Store, batch: list[Outcome]) -> None:
        time.sleep(0.2)  # a round takes longer to fetch and store than a version to learn
        write(self, batch)

    monkeypatch.setattr(Store, "write", slow_store)
    quick, versions = _crawl(admin_url, topics_dir, topics_web.proxy, Strategy.SOFT, 110)
    assert len(set(versions)) >= 3  # the first, and versions learned during the crawl

    learn = LinkLearner.learn

    def slow_learner(self: LinkLearner, *args: Any, **kwargs: Any) -> LinkModel | None:
        model = learn(self, *args, **kwargs)
        if model is not None:
            time.sleep(0.6)  # ... and now longer to learn (committed when learn returns)
        return model

    monkeypatch.setattr(LinkLearner, "learn", slow_learner)
    slowly, slow_versions = _crawl(admin_url, topics_dir, topics_web.proxy, Strategy.SOFT, 110)
    assert slowly == quick
    assert slow_versions == versions
