"""The distiller on a real crawl of the Wikispeedia web: hubs and authorities, and the
boost that makes the next crawl take the best hubs' neighbours first."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from focuscrawl.classifier import Classifier, train_model
from focuscrawl.crawler.config import Mode
from focuscrawl.distiller import boost, run_hits, top
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import from_corpus, store_import
from focuscrawl.web.corpus import read_labels
from focuscrawl.web.urls import oid_of
from focuscrawl.webbox import WebBox, WebBoxThread, load_corpus
from tests.crawler.conftest import crawl

TOPIC = "subject.Science.Biology"


@pytest.fixture(scope="module")
def wikispeedia_web(wikispeedia_home: Path) -> Iterator[WebBoxThread]:
    with WebBoxThread(WebBox(load_corpus("wikispeedia", wikispeedia_home), faults=False)) as web:
        yield web


def test_hubs_authorities_and_boost_on_wikispeedia(
    engine: sa.Engine, wikispeedia_home: Path, wikispeedia_web: WebBoxThread
) -> None:
    directory = wikispeedia_home / "corpora" / "wikispeedia"
    store_import(engine, from_corpus(directory, 0.3, seed=1))
    set_good(engine, [TOPIC], True)
    train_model(engine)
    relevant = sorted({u for u, c in read_labels(directory) if c.startswith(TOPIC)})
    seeds = random.Random(1).sample(relevant, 10)
    crawl(engine, wikispeedia_web.proxy, seeds, mode=Mode.SOFT_1999, max_pages=60, threads=4)
    for _ in range(4):
        Classifier(engine).run(once=True)
        crawl(engine, wikispeedia_web.proxy, [], mode=Mode.SOFT_1999, max_pages=60, threads=4)
    Classifier(engine).run(once=True)

    result = run_hits(engine)
    assert result.edges > 100 and result.iterations >= 1
    authorities = top(engine, hubs=False, limit=25)
    hubs = top(engine, hubs=True, limit=25)
    assert len(authorities) == 25 and len(hubs) == 25
    with engine.connect() as c:
        mean = c.exec_driver_sql(
            "SELECT avg(exp(greatest(relevance, -700))) FROM doc WHERE state = 2"
        ).scalar_one()
    # authorities are the relevant pages the hubs agree on; hubs point at them
    assert min(a.relevance for a in authorities) > 0.5 > mean
    assert sum(h.relevance for h in hubs) / len(hubs) > mean
    # hubs on several sites; authorities too, though the crawl's relevant pages are
    # mostly one site's (103 of 135 on site-15): the top 25 may all be that site's
    assert len({h.host for h in hubs}) > 1
    assert len({a.host for a in top(engine, hubs=False, limit=200)}) > 1
    scores = [a.score for a in authorities]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]

    raised = boost(engine, hubs=10)
    assert raised
    with engine.connect() as c:
        before = c.exec_driver_sql("SELECT max(fetch_seq) FROM doc_fetch").scalar_one()
        # a URL that already failed once waits for its retry behind every untried URL
        # (num_tries leads the frontier order), boosted or not
        untried = c.exec_driver_sql(
            "SELECT count(*) FROM doc WHERE oid = ANY(%(o)s) AND num_tries = 0",
            {"o": [oid_of(url) for url in raised]},
        ).scalar_one()
    assert untried
    crawl(engine, wikispeedia_web.proxy, [], mode=Mode.SOFT, max_pages=untried, threads=1,
          batch_per_thread=4)  # fmt: skip
    with engine.connect() as c:
        taken = c.exec_driver_sql(
            "SELECT d.url FROM doc AS d JOIN doc_fetch AS f USING (oid) "
            "WHERE f.fetch_seq > %(s)s ORDER BY f.fetch_seq",
            {"s": before},
        ).scalars()
        next_pages = list(taken)
    assert next_pages and set(next_pages) & set(raised)
    # Boosted URLs go first, except that site fairness skips a site whose URLs the
    # crawler holds as many of as it may: then the next URL in order comes in, which
    # can only be one the classifier had already put at the top (log R = 0, not yet
    # scored again), never one below the boost.
    with engine.connect() as c:
        others = c.exec_driver_sql(
            "SELECT d.relevance FROM doc AS d WHERE d.url = ANY(%(u)s)",
            {"u": [u for u in next_pages if u not in set(raised)]},
        ).scalars()
        assert all(relevance == 0 for relevance in others)
