"""An evaluated crawl repeats exactly for its seeds: lockstep rounds, pages stored in
claim order, a deterministic classifier and link learner."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from focuscrawl.db.database import make_engine
from focuscrawl.evaluation.runs import CrawlPlan, prepare_database, prepare_strategy, run_crawl
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.topics.taxonomy_import import from_corpus
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import TRUTH, page_url
from tests.conftest import _fresh_database

SEEDS = [page_url("topics.sports.cycling", i) for i in (1, 2, 3)]


def _crawl(admin_url: str, topics_dir: Path, proxy: str, strategy: Strategy) -> list[str]:
    for url in _fresh_database(admin_url, "focuscrawl_test_template"):
        engine: sa.Engine = make_engine(url)
        try:
            prepare_database(engine, from_corpus(topics_dir, 0.5, seed=1), "topics.sports")
            prepare_strategy(engine, strategy)
            plan = CrawlPlan(strategy, "topics.sports", SEEDS, 70, proxy, 4, 4, 20)
            return run_crawl(engine, plan, TRUTH).urls
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
    first = _crawl(admin_url, topics_dir, topics_web.proxy, strategy)
    second = _crawl(admin_url, topics_dir, topics_web.proxy, strategy)
    assert len(first) == 70
    assert first == second
