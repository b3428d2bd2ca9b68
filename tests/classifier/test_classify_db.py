"""The classifier against a real database: import, train, score, pass relevance on,
rescore; and crawls that follow what it writes (soft) or obey it (hard)."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from focuscrawl.classifier import Classifier, latest_model
from focuscrawl.classifier.rescore import rescore
from focuscrawl.classifier.tokens import document_text
from focuscrawl.crawler.config import Mode
from focuscrawl.crawler.store import Claim, Outcome, Store
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import SEED_PRIORITY, DocState
from focuscrawl.db.seeds import add_seeds
from focuscrawl.errors import ConfigError, TaxonomyError
from focuscrawl.topics.taxonomy import load_tree, set_good
from focuscrawl.topics.taxonomy_import import Example, TaxonomyImport, from_directory, store_import
from focuscrawl.web.urls import oid_of
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import page_url, write_tree_dir
from tests.crawler.conftest import crawl

SEEDS = [page_url("topics.sports.cycling", i) for i in (1, 2)]


def _rows(engine: sa.Engine, statement: str) -> list[sa.Row[tuple[object, ...]]]:
    with engine.connect() as connection:
        return list(connection.exec_driver_sql(statement).all())


def _estimates_where(engine: sa.Engine, having: str) -> list[sa.Row[tuple[object, ...]]]:
    """Unvisited non-seed URLs whose estimate and scored parents satisfy ``having``."""
    return _rows(
        engine,
        f"""
        SELECT d.oid FROM doc d
        JOIN link l ON l.oid_dst = d.oid JOIN doc p ON p.oid = l.oid_src AND p.state = 2
        WHERE d.state = 0 AND d.priority > {SEED_PRIORITY}
        GROUP BY d.oid, d.relevance HAVING {having}
        """,
    )


def test_import_is_all_or_nothing(engine: sa.Engine, tmp_path: Path) -> None:
    data = from_directory(write_tree_dir(tmp_path / "tree"))
    store_import(engine, data)
    with pytest.raises(TaxonomyError, match=r"already loaded .*--replace"):
        store_import(engine, data)
    broken = TaxonomyImport(data.tree, [*data.examples, Example(999, None, "", "orphan")])
    with pytest.raises(sa.exc.IntegrityError):
        store_import(engine, broken, replace=True)
    counts = _rows(engine, "SELECT (SELECT count(*) FROM taxonomy), (SELECT count(*) FROM example)")
    assert tuple(counts[0]) == (len(data.tree.nodes), len(data.examples))


def test_scores_are_written_and_passed_to_out_links(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT_1999, max_pages=12, threads=2)
    stats = Classifier(engine, batch=5).run(once=True)
    fetched = _rows(
        engine,
        "SELECT d.oid, d.relevance, f.cid, f.model_id, f.title, t.text, c.logp "
        "FROM doc d JOIN doc_fetch f USING (oid) JOIN doc_text t USING (oid) "
        "JOIN doc_class c USING (oid) WHERE d.state = 2",
    )
    assert stats.scored == len(fetched) >= 12
    stored = latest_model(engine)
    with engine.connect() as connection:
        tree = load_tree(connection)
    scores = stored.model.score([document_text(r.title, r.text) for r in fetched])
    expected = scores.log_relevance(tree.good_frontier())
    assert np.allclose([r.relevance for r in fetched], expected)
    assert [r.cid for r in fetched] == [int(k) for k in scores.best_leaf()]
    assert {r.model_id for r in fetched} == {stored.model_id}
    assert np.allclose([r.logp for r in fetched], scores.logp, atol=1e-4)
    # every unvisited URL's estimate is the best relevance among its scored parents
    assert _estimates_where(engine, "d.relevance <> max(p.relevance)") == []
    # ... and every one has an estimate: none is left at the crawler's -Infinity
    unestimated = "SELECT count(*) FROM doc WHERE state = 0 AND relevance = '-Infinity'"
    assert _rows(engine, unestimated)[0][0] == 0
    # a second pass finds nothing to do
    assert Classifier(engine).run(once=True).scored == 0


def test_rescore_follows_new_marks_without_retraining(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT_1999, max_pages=15, threads=2)
    Classifier(engine).run(once=True)
    before = dict(_rows(engine, "SELECT oid, relevance FROM doc WHERE state = 2"))
    set_good(engine, ["topics.sports"], False)
    set_good(engine, ["topics.science"], True)
    result = rescore(engine)
    assert result.pages == len(before) and result.skipped_models == []
    fetched = _rows(
        engine,
        "SELECT d.relevance, f.title, t.text FROM doc d JOIN doc_fetch f USING (oid) "
        "JOIN doc_text t USING (oid) WHERE d.state = 2",
    )
    stored = latest_model(engine)
    with engine.connect() as connection:
        tree = load_tree(connection)
    expected = stored.model.score([document_text(r.title, r.text) for r in fetched]).log_relevance(
        tree.good_frontier()
    )
    assert np.allclose([r.relevance for r in fetched], expected, atol=1e-4)
    # sports and science are complements at the top of the tree: R flips to 1 - R
    after = dict(_rows(engine, "SELECT oid, relevance FROM doc WHERE state = 2"))
    for oid, old in before.items():
        assert math.isclose(math.exp(old) + math.exp(after[oid]), 1.0, abs_tol=1e-4)
    assert _estimates_where(engine, "abs(d.relevance - max(p.relevance)) > 1e-9") == []


def test_a_running_classifier_scores_with_marks_changed_under_it(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    """The classifier reads the tree's version every batch and the tree only when it
    changed: a mark changed between two batches is in the second."""
    engine = trained
    classifier = Classifier(engine)
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT_1999, max_pages=8, threads=2)
    classifier.run(once=True)
    first = {r.oid for r in _rows(engine, "SELECT oid FROM doc WHERE state = 2")}
    with engine.connect() as connection:
        assert load_tree(connection, classifier._tree) is classifier._tree  # unchanged
    set_good(engine, ["topics.sports"], False)
    set_good(engine, ["topics.science"], True)
    with engine.connect() as connection:  # the marks are in the table's version
        changed = load_tree(connection, classifier._tree)
    assert changed is not classifier._tree
    assert changed.is_good(changed.find("topics.science"))
    crawl(engine, topics_web.proxy, [], mode=Mode.SOFT_1999, max_pages=8, threads=2)
    classifier.run(once=True)
    fetched = [
        r
        for r in _rows(
            engine,
            "SELECT d.oid, d.relevance, f.title, t.text FROM doc d JOIN doc_fetch f USING (oid) "
            "JOIN doc_text t USING (oid) WHERE d.state = 2",
        )
        if r.oid not in first
    ]
    assert fetched, "the second crawl fetched nothing: the test proves nothing"
    with engine.connect() as connection:
        tree = load_tree(connection)
    expected = (
        latest_model(engine)
        .model.score([document_text(r.title, r.text) for r in fetched])
        .log_relevance(tree.good_frontier())
    )
    assert np.allclose([r.relevance for r in fetched], expected, atol=1e-4)


def test_soft_crawl_takes_the_frontier_in_written_relevance_order(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=4, threads=1)
    for _ in range(5):
        Classifier(engine).run(once=True)
        ranked = _rows(
            engine,
            "SELECT oid, relevance FROM doc WHERE state = 0 "
            "ORDER BY num_tries, relevance DESC, priority, bytehash",
        )
        crawl(engine, topics_web.proxy, [], mode=Mode.SOFT, max_pages=3, threads=1,
              batch_per_thread=3)  # fmt: skip
        taken = {r.oid for r in _rows(engine, "SELECT oid FROM doc WHERE state = 2")}
        now_taken = [i for i, (oid, _) in enumerate(ranked) if oid in taken]
        assert now_taken == [0, 1, 2]  # exactly the three best estimates
        assert ranked[0].relevance >= ranked[-1].relevance


def test_hard_crawl_never_fetches_a_child_of_an_off_topic_page(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    with engine.connect() as connection:
        tree = load_tree(connection)
    good_leaves = [k for k in tree.leaves() if tree.is_good(k)]
    seeds = [*SEEDS, page_url("topics.science.biology", 1)]
    crawl(engine, topics_web.proxy, seeds, mode=Mode.HARD, max_pages=3, threads=1)
    for _ in range(8):
        Classifier(engine).run(once=True)
        crawl(engine, topics_web.proxy, [], mode=Mode.HARD, max_pages=5, threads=2)
    Classifier(engine).run(once=True)
    fetched = _rows(
        engine, f"SELECT count(*) FROM doc WHERE state = 2 AND priority > {SEED_PRIORITY}"
    )
    assert fetched[0][0] >= 20
    orphans = _rows(
        engine,
        f"""
        SELECT d.url FROM doc d
        WHERE d.state = 2 AND d.priority > {SEED_PRIORITY}
          AND NOT EXISTS (
              SELECT 1 FROM link l JOIN doc p ON p.oid = l.oid_src
              JOIN doc_fetch pf ON pf.oid = p.oid
              WHERE l.oid_dst = d.oid AND p.state = 2
                AND pf.cid = ANY(ARRAY{good_leaves}::smallint[]))
        """,
    )
    assert orphans == []
    # the science seed was fetched, and its out-links stay held
    held = _rows(engine, "SELECT count(*) FROM doc WHERE state = 4")
    assert held[0][0] > 0


def test_max_backlog_holds_the_crawler_until_the_classifier_catches_up(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    from focuscrawl.crawler.config import CrawlConfig
    from focuscrawl.crawler.fetch import FetchConfig
    from focuscrawl.crawler.process import Crawler

    with trained.begin() as connection:
        add_seeds(connection, SEEDS)
    config = CrawlConfig(
        mode=Mode.SOFT, threads=4, host_delay=0.0, idle_exit_seconds=None, quiet=True,
        max_backlog=3, max_pages=30, fetch=FetchConfig(proxy=topics_web.proxy),
    )  # fmt: skip
    crawler = Crawler(trained, config)
    running = threading.Thread(target=crawler.run)
    running.start()
    try:
        time.sleep(1.5)  # no classifier yet: three fetched pages, then nothing
        assert crawler.stats.fetched == 3
        rounds = 0
        while crawler.stats.fetched < 30 and rounds < 200:
            scored = Classifier(trained).step()
            assert scored <= 3  # never more than the backlog waits
            rounds += 1
            time.sleep(0.05)
        assert crawler.stats.fetched == 30
    finally:
        crawler.stop_event.set()
        running.join()


def test_an_unknown_crawl_estimate_is_one_clear_error_and_scores_nothing(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    stats = crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=3, threads=1)
    with engine.begin() as connection:  # a broken setting, as a hand-edited table gives
        connection.exec_driver_sql(
            "UPDATE crawl_setting SET value = 'bogus' WHERE name = 'estimate'"
        )
    with pytest.raises(ConfigError, match="'bogus'; it must be one of") as raised:
        Classifier(engine).run(once=True)
    assert "\n" not in str(raised.value)
    with engine.connect() as connection:
        unscored = connection.exec_driver_sql(
            "SELECT count(*) FROM doc_fetch WHERE fetch_seq IS NOT NULL AND model_id IS NULL"
        ).scalar()
    assert unscored == stats.fetched == 3  # the batch rolled back: nothing half-written


def test_a_page_scored_while_a_claim_waits_is_not_claimed_again(engine: sa.Engine) -> None:
    """Two classifiers: one scores a page and commits while the other's claim is past its
    snapshot. The claim must see the new doc_fetch row (model_id set), not score the page
    twice. (The claim skips locked rows; here it waits for them instead, so that the
    commit lands mid-statement every time.)"""
    url = "http://a.example/page"
    with engine.begin() as connection:
        add_seeds(connection, [url])
        sid = connection.exec_driver_sql("SELECT sid FROM doc").scalar_one()
    store = Store(engine)
    try:
        claim = Claim(oid_of(url), url, sid, 0, 0)
        store.write([Outcome(claim, DocState.FETCHED, 200, content_type="text/html", text="x")])
    finally:
        store.close()
    waiting = queries["claim_unclassified"].replace("SKIP LOCKED", "")
    assert waiting != queries["claim_unclassified"]
    scorer = engine.connect()
    scorer.begin()
    scorer.exec_driver_sql("UPDATE doc SET relevance = 0 WHERE oid = %(o)s", {"o": oid_of(url)})
    scorer.exec_driver_sql(
        "UPDATE doc_fetch SET model_id = 1 WHERE oid = %(o)s", {"o": oid_of(url)}
    )
    claimed: list[object] = []

    def claim_batch() -> None:
        with engine.begin() as connection:
            params = {"batch": 8, "buckets": list(range(256))}
            claimed.extend(connection.exec_driver_sql(waiting, params).all())

    other = threading.Thread(target=claim_batch)
    other.start()
    time.sleep(0.5)  # the claim is waiting for the scorer's row lock
    assert other.is_alive()
    scorer.commit()
    scorer.close()
    other.join(10)
    assert not other.is_alive()
    assert claimed == []
