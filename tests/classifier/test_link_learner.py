"""The link learner against a real database and the web-in-a-box: its first version
from the links between examples, online versions from the crawl, estimates at check-in
and when parents are scored, each recording its version."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from focuscrawl.classifier import apprentice, process, train_model
from focuscrawl.classifier.apprentice import LinkLearner, newest_link_model
from focuscrawl.classifier.estimates import IN_LINK_COLUMNS, Parent, anchor_terms, pass_estimates
from focuscrawl.classifier.process import good_sets
from focuscrawl.classifier.store import latest_model
from focuscrawl.crawler.config import Mode
from focuscrawl.db.database import execute, tuples
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import ShardMap
from focuscrawl.evaluation.runs import CrawlPlan, prepare_strategy, run_crawl
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.topics.linkmodel import ANCHOR_FLOOR, LinkModel, LinkParts, link_text
from focuscrawl.topics.taxonomy import load_tree, set_good
from focuscrawl.topics.taxonomy_import import from_corpus, store_import
from focuscrawl.web.urls import split_url
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import LEAVES, TRUTH, page_url
from tests.crawler.conftest import crawl

SEEDS = [page_url("topics.sports.cycling", i) for i in (1, 2)]


def _rows(engine: sa.Engine, statement: str) -> list[sa.Row[tuple[object, ...]]]:
    with engine.connect() as connection:
        return list(connection.exec_driver_sql(statement).all())


def _link_model(engine: sa.Engine) -> LinkModel:
    with engine.connect() as connection:
        model = newest_link_model(connection)
    assert model is not None
    return model


def _ranking(model: LinkModel) -> float:
    """How often the model puts a link into sports above one into science (an AUC),
    for links whose source is not scored yet: what the words and URL say alone."""

    def estimate(leaf: str, i: int) -> float:
        _, host, path = split_url(page_url(leaf, i))
        return float(model.estimates([LinkParts("more", None, host, path)])[0])

    good = [estimate(leaf, i) for leaf in LEAVES if ".sports." in leaf for i in range(10)]
    bad = [estimate(leaf, i) for leaf in LEAVES if ".science." in leaf for i in range(10)]
    return float(np.mean([g > b for g in good for b in bad]))


def test_the_first_version_comes_from_the_links_between_examples(
    engine: sa.Engine, topics_dir: Path
) -> None:
    data = from_corpus(topics_dir, 0.5, seed=1)
    assert any(example.links for example in data.examples)
    store_import(engine, data)
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    versions = _rows(engine, "SELECT examples, params->>'bootstrap' FROM model WHERE kind = 'link'")
    assert len(versions) == 1 and versions[0][0] == int(str(versions[0][1])) > 50
    assert _ranking(_link_model(engine)) > 0.9


def test_the_link_learner_learns_online_and_estimates_record_their_version(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained  # examples as text files: no links between them, no version yet
    assert _rows(engine, "SELECT count(*) FROM model WHERE kind = 'link'")[0][0] == 0
    prepare_strategy(engine, Strategy.SOFT)
    plan = CrawlPlan(Strategy.SOFT, "topics.sports", SEEDS, 110, topics_web.proxy, 2, 4, 0)
    trace = run_crawl(engine, plan, TRUTH)
    assert len(trace.urls) == 110
    versions = _rows(
        engine, "SELECT model_id, examples FROM model WHERE kind = 'link' ORDER BY model_id"
    )
    assert len(versions) >= 2  # the first from the crawl's links, then online updates
    assert [v.examples for v in versions] == sorted({v.examples for v in versions})
    assert _ranking(_link_model(engine)) > 0.9
    ids = {v.model_id for v in versions}
    recorded = {
        r[0] for r in _rows(engine, "SELECT DISTINCT estimated_by FROM doc WHERE state = 0")
    }
    assert recorded - {0} and recorded - {0} <= ids
    # the learned examples left the queue
    assert (
        _rows(engine, "SELECT count(*) FROM link_example")[0][0]
        < 100 + 0.01 * versions[-1].examples
    )
    # and the crawl kept to the topic: 60 of the 120 pages are on it
    relevant = TRUTH.relevant("topics.sports")
    assert sum(url in relevant for url in trace.urls[:60]) / 60 > 0.7


def test_the_learner_fits_holding_no_row_of_the_frontier(
    trained: sa.Engine, topics_web: WebBoxThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit takes most of a second: the classifier learns in a transaction of its own,
    before the one that writes scores and estimates, so a crawler storing links never
    waits on frontier rows for a fit (it stalled a polite crawl at each new version)."""
    engine = trained
    learning: list[int] = []  # the backend pid of the learner's transaction
    held: list[int] = []  # at each fit: the rows of doc that transaction has written

    def learn(self: LinkLearner, connection: sa.Connection, *args: Any, **kwargs: Any) -> Any:
        learning.append(connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
        return original_learn(self, connection, *args, **kwargs)

    def partial_fit(self: Any, *args: Any, **kwargs: Any) -> None:
        held.append(
            _rows(
                engine,
                "SELECT count(*) FROM pg_locks WHERE relation = 'doc'::regclass "
                f"AND mode = 'RowExclusiveLock' AND pid = {learning[-1]}",
            )[0][0]
        )
        original_fit(self, *args, **kwargs)

    original_learn, original_fit = LinkLearner.learn, apprentice._Sgd.partial_fit
    monkeypatch.setattr(LinkLearner, "learn", learn)
    monkeypatch.setattr(apprentice._Sgd, "partial_fit", partial_fit)
    prepare_strategy(engine, Strategy.SOFT)
    plan = CrawlPlan(Strategy.SOFT, "topics.sports", SEEDS, 110, topics_web.proxy, 2, 4, 0)
    run_crawl(engine, plan, TRUTH)
    assert held and held == [0] * len(held), held


def test_out_links_are_estimated_at_check_in_and_only_rise(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained_with_links
    model = _link_model(engine)
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=2, threads=1)
    rows = _rows(
        engine,
        """
        SELECT d.oid, d.relevance, d.estimated_by, s.host, d.path, l.anchor, l.context
        FROM doc d JOIN site s USING (sid) JOIN link l ON l.oid_dst = d.oid
        WHERE d.state = 0 AND d.priority > -32768
        """,
    )
    assert rows
    best: dict[int, float] = {}
    for r in rows:
        value = float(model.estimates([LinkParts(r.anchor, r.context, r.host, r.path)])[0])
        # the crawler has no page classifier to read the anchor: the factor's floor
        best[r.oid] = max(best.get(r.oid, -math.inf), value + ANCHOR_FLOOR)
    for r in rows:
        assert math.isclose(r.relevance, best[r.oid], rel_tol=1e-6)
        assert r.estimated_by == model.model_id


def test_links_keep_their_own_sums_for_the_classifier(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    """The crawler stores each estimated link's own sum (link.own) and the model it used
    (doc_fetch.links_model); when a page is scored, the classifier adds the page's terms
    to those sums if that model is its own, and sums a link's words again if not."""
    engine = trained_with_links
    model = _link_model(engine)
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=2, threads=1)
    links = _rows(
        engine,
        """
        SELECT l.oid_src, l.oid_dst, l.anchor, l.context, l.own, s.host, d.path,
               f.links_model
        FROM link l JOIN doc d ON d.oid = l.oid_dst JOIN site s ON s.sid = d.sid
        JOIN doc_fetch f ON f.oid = l.oid_src
        WHERE d.state = 0 AND d.priority > -32768
        """,
    )
    sources = sorted({r.oid_src for r in links})
    assert len(sources) == 2
    assert {r.links_model for r in links} == {model.model_id}
    parts = [LinkParts(r.anchor, r.context, r.host, r.path) for r in links]
    stored = np.asarray([r.own for r in links], dtype=np.float32)  # a real, read back
    assert np.array_equal(stored, model.own_sums(parts))
    # the first page's sums stored as if by this model, the second's by another: both
    # sums made up, so that the estimates tell which were read
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE link SET own = -50")
        connection.exec_driver_sql(
            "UPDATE doc_fetch SET links_model = links_model + 1000 WHERE oid = %(oid)s",
            {"oid": sources[1]},
        )
        connection.exec_driver_sql(
            "UPDATE doc SET relevance = '-Infinity' WHERE state = 0 AND priority > -32768"
        )
        parents = [Parent(oid, math.log(0.5), None) for oid in sources]
        pass_estimates(connection, "soft", parents, [], [], None, model, ShardMap.single())
    found = dict(_rows(engine, "SELECT oid, relevance FROM doc WHERE state = 0"))
    from_words: dict[int, float] = {}
    for r, link in zip(links, parts, strict=True):
        if r.oid_src == sources[1]:
            scored = link._replace(src_relevance=0.5)
            value = float(model.estimates([scored])[0]) + ANCHOR_FLOOR  # no page model
            from_words[r.oid_dst] = max(from_words.get(r.oid_dst, -math.inf), value)
    first = {r.oid_dst for r in links if r.oid_src == sources[0]}
    assert first and all(found[oid] < -40 for oid in first)  # from the stored -50
    assert from_words.keys() - first
    for oid in from_words.keys() - first:
        assert math.isclose(found[oid], from_words[oid], rel_tol=1e-6)
        assert found[oid] > -40


def test_soft_reads_each_anchor_with_the_page_classifier(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    """When a page is scored, soft's estimate of each out-link is the learner's times
    (1 + R'(words)) / 2, R' the page classifier's relevance of the anchor and the
    target's slug: words of the topic raise a URL above the same link with other words,
    never above log 1, never below the check-in estimate."""
    engine = trained_with_links
    model = _link_model(engine)
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=2, threads=1)
    with engine.connect() as connection:
        frontier, _ = good_sets(load_tree(connection))
        page_model = latest_model(connection).model
    checked_in = dict(_rows(engine, "SELECT oid, relevance FROM doc WHERE state = 0"))
    sources = [r[0] for r in _rows(engine, "SELECT oid FROM doc WHERE state = 2")]
    with engine.begin() as connection:
        parents = [Parent(oid, math.log(0.5), None) for oid in sources]
        pass_estimates(
            connection, "soft", parents, [], frontier, page_model, model, ShardMap.single()
        )
    links = _rows(
        engine,
        """
        SELECT l.oid_dst, l.anchor, l.context, s.host, d.path, d.relevance
        FROM link l JOIN doc d ON d.oid = l.oid_dst JOIN site s ON s.sid = d.sid
        WHERE d.state = 0 AND d.priority > -32768
        """,
    )
    assert links
    texts = [link_text(r.anchor, r.path) for r in links]
    terms = anchor_terms(page_model, texts, frontier)
    assert np.all(terms >= ANCHOR_FLOOR) and np.all(terms <= 0.0)
    best: dict[int, float] = {}
    for r, term in zip(links, terms.tolist(), strict=True):
        parts = LinkParts(r.anchor, r.context, r.host, r.path, None, 0.5)
        value = float(model.estimates([parts])[0]) + term
        best[r.oid_dst] = max(best.get(r.oid_dst, -math.inf), value)
    for r in links:
        assert math.isclose(r.relevance, best[r.oid_dst], rel_tol=1e-6)
        assert checked_in[r.oid_dst] <= r.relevance <= 0.0
    on, off = anchor_terms(page_model, ["cycling race bike tour", "quantum physics atom"], frontier)
    assert on > off + 0.1


def test_rescore_trains_the_learner_afresh_for_the_new_marks(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    from focuscrawl.classifier import Classifier
    from focuscrawl.classifier.rescore import rescore

    engine = trained_with_links
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=30, threads=2)
    Classifier(engine).run(once=True)
    assert _ranking(_link_model(engine)) > 0.9
    set_good(engine, ["topics.sports"], False)
    set_good(engine, ["topics.science"], True)
    before = _rows(engine, "SELECT max(model_id) FROM model WHERE kind = 'link'")[0][0]
    rescore(engine)
    model = _link_model(engine)
    assert model.model_id > before
    assert _ranking(model) < 0.1  # science links now rank above sports links
    # every unvisited URL with a scored parent was estimated again by the new version
    stale = _rows(
        engine,
        f"""
        SELECT count(*) FROM doc d WHERE d.state = 0 AND d.priority > -32768
          AND d.estimated_by <> {model.model_id}  -- the new version
          AND EXISTS (SELECT FROM link l JOIN doc_fetch f ON f.oid = l.oid_src
                      WHERE l.oid_dst = d.oid AND f.model_id IS NOT NULL)
        """,
    )
    assert stale[0][0] == 0
    assert _rows(engine, "SELECT count(*) FROM link_example")[0][0] == 0


def test_a_version_fitted_afresh_estimates_the_whole_frontier_again(
    trained_with_links: sa.Engine, topics_web: WebBoxThread
) -> None:
    """Estimates otherwise only rise: a version fitted afresh writes its own outright,
    so what an early version over-rated falls (seeds keep their rank)."""
    from focuscrawl.classifier import Classifier

    engine = trained_with_links
    crawl(engine, topics_web.proxy, SEEDS, mode=Mode.SOFT, max_pages=30, threads=2)
    before = _rows(engine, "SELECT max(model_id) FROM model WHERE kind = 'link'")[0][0]
    with engine.begin() as connection:  # every unvisited URL at the highest estimate
        connection.exec_driver_sql(
            "UPDATE doc SET relevance = 0, estimated_by = 0 WHERE state = 0 AND priority > -32768"
        )
        _queue(connection, 2 * int(_link_model(engine).params["afresh_at"]))  # one is due
    classifier = Classifier(engine)
    classifier.run(once=True)  # scores the 30 pages, then fits a version afresh
    model = _link_model(engine)
    assert model.model_id > before and model.params["afresh"]
    estimated = _rows(
        engine,
        """
        SELECT d.relevance, d.estimated_by FROM doc d
        WHERE d.state = 0 AND d.priority > -32768
          AND EXISTS (SELECT FROM link l JOIN doc_fetch f ON f.oid = l.oid_src
                      WHERE l.oid_dst = d.oid AND f.model_id IS NOT NULL)
        """,
    )
    assert len(estimated) > 20
    assert classifier.stats.frontier_estimates == len(estimated)
    assert all(r.estimated_by == model.model_id for r in estimated)
    assert all(r.relevance < 0 for r in estimated)  # they fell from 0
    seeds = _rows(engine, "SELECT relevance FROM doc WHERE priority = -32768 AND state = 0")
    assert all(r.relevance == 0 for r in seeds)


def test_a_version_does_not_depend_on_the_order_the_queue_holds_its_examples(
    trained_with_links: sa.Engine,
) -> None:
    """The queue comes back in the order its heap holds it, which vacuum and the plans
    of the statements that filled it change; a version learned from the same examples
    must have the same weights (a lockstep crawl repeats exactly)."""
    engine = trained_with_links
    learned = _rows(engine, "SELECT examples FROM model WHERE kind = 'link'")[0][0]
    leaves = list(LEAVES)
    examples = [
        (f"{leaf.split('.')[-1]} {i}", f"more on | {leaf.split('.')[1]}", page_url(leaf, i),
         None, 0.5, 1.0 if ".sports." in leaf else 0.0)
        for i in range(max(apprentice.RETRAIN_MIN, learned // 5) // len(leaves) + 1)
        for leaf in leaves
    ]  # fmt: skip
    weights = []
    for order in (examples, examples[::-1]):
        with engine.connect() as connection, connection.begin() as transaction:
            connection.exec_driver_sql(
                "INSERT INTO link_example (anchor, context, url, src_cid, src_relevance, label) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                order,
            )
            model = LinkLearner().learn(connection, load_tree(connection), afresh=False)
            transaction.rollback()
        assert model is not None
        weights.append(model.weights)
    assert np.array_equal(weights[0], weights[1])


def test_paths_teach_a_link_the_worth_of_the_relevant_page_beyond_it(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    engine = trained
    prepare_strategy(engine, Strategy.PATHS)
    plan = CrawlPlan(Strategy.PATHS, "topics.sports", SEEDS, 80, topics_web.proxy, 2, 4, 0)
    assert len(run_crawl(engine, plan, TRUTH).urls) == 80
    assert Mode("paths").focused and Mode("paths").estimate == "paths"  # crawl run --mode
    said = _rows(engine, "SELECT value FROM crawl_setting WHERE name = 'estimate'")
    assert said[0][0] == "paths"
    scored = (
        "SELECT d.oid, exp(d.relevance) AS r, doc_url(d.https, s.host, d.path) AS url "
        "FROM doc AS d JOIN doc_fetch AS f USING (oid) JOIN site AS s ON s.sid = d.sid "
        "WHERE f.cid IS NOT NULL"
    )
    pages = {row.oid: row for row in _rows(engine, scored)}
    links = {(s, d) for s, d in _rows(engine, "SELECT oid_src, oid_dst FROM link") if s != d}
    gamma = process.PATH_DISCOUNT
    # w relevant, v a scored page linking to it and worth less on its own

    def below_of(w: int) -> set[int]:
        return {v for v, d in links if d == w and v in pages and pages[v].r < gamma * pages[w].r}

    w = max(pages, key=lambda oid: (len(below_of(oid)), pages[oid].r))
    below = below_of(w)
    into = [(u, v) for u, v in links if v in below and u in pages]
    expected = sorted((pages[v].url, round(pages[u].r, 9)) for u, v in into)
    assert expected  # the crawl made such a path
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM link_example")
        execute(connection, queries["queue_path_examples"], {"oids": [w], "gamma": gamma})
    got = _rows(engine, "SELECT url, src_relevance, label FROM link_example")
    assert sorted((url, round(r, 9)) for url, r, _ in got) == expected, (len(got), len(expected))
    assert all(label == pytest.approx(gamma * pages[w].r) for *_, label in got)

    # the versions fitted afresh teach the same worth: a link into a scored page v is
    # worth at least gamma times the best scored page v links to
    fitted = _rows(engine, "SELECT params->>'afresh' FROM model WHERE kind = 'link'")
    assert ("true",) in fitted  # paths fits versions afresh (and estimates the frontier)
    best: dict[int, float] = {}
    for v, d in links:
        if v in pages and d in pages:
            best[v] = max(best.get(v, 0.0), pages[d].r)
    with engine.connect() as connection:
        rows = list(execute(connection, queries["crawl_link_examples"]))
    worth = [max(r.label, gamma * best.get(r.oid_dst, 0.0)) for r in rows]
    assert sum(w > r.label + 1e-6 for w, r in zip(worth, rows, strict=True)) >= len(expected)
    lessons = apprentice._CrawlLinks().lessons(rows, parent=True, two_step=gamma)
    assert sorted(lessons.labels) == pytest.approx(sorted(worth))


def test_a_version_is_fitted_afresh_on_every_link_the_crawl_has_scored(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    """Below REFIT_MOST examples a version learns from the bootstrap and every link
    between scored pages, labelled with their relevance now (a rescore is heeded)."""
    engine = trained
    prepare_strategy(engine, Strategy.SOFT)
    plan = CrawlPlan(Strategy.SOFT, "topics.sports", SEEDS, 60, topics_web.proxy, 2, 4, 0)
    run_crawl(engine, plan, TRUTH)
    newest = _link_model(engine)
    assert newest.params["afresh"]  # the crawl's versions too

    def fit(science_relevant: bool) -> LinkModel:
        with engine.begin() as connection:
            if science_relevant:  # every scored science page relevant, the rest not
                connection.exec_driver_sql(
                    "UPDATE doc SET relevance = CASE WHEN path ~ '^/(biology|chemistry)' "
                    "THEN 0 ELSE -30 END WHERE oid IN (SELECT oid FROM doc_fetch "
                    "WHERE model_id IS NOT NULL)"
                )
            tree = load_tree(connection)
            taught = len(apprentice.bootstrap_examples(connection, tree))
            taught += len(execute(connection, queries["crawl_link_examples"]).all())
            _queue(connection, 2 * taught)  # enough for a version fitted afresh to be due
            model = LinkLearner().learn(connection, tree)
            assert model is not None and model.params["afresh"]
            assert model.params["learned"] == taught
            assert connection.exec_driver_sql("SELECT count(*) FROM link_example").scalar() == 0
            return model

    assert _ranking(fit(science_relevant=False)) > 0.9
    assert _ranking(fit(science_relevant=True)) < 0.1


def _queue(connection: sa.Connection, examples: int) -> None:
    """Queue that many examples (of no link the crawl has: a version fitted afresh,
    which reads the crawl's links, does not learn them)."""
    connection.exec_driver_sql(
        "INSERT INTO link_example (url, src_relevance, label) "
        f"SELECT 'http://x.example/' || n, 0.5, 0.5 FROM generate_series(1, {examples}) n"
    )


def test_a_version_is_fitted_afresh_when_its_labels_may_have_changed(
    trained: sa.Engine, topics_web: WebBoxThread
) -> None:
    """Between two page classifiers a version is fitted afresh only once the lessons have
    doubled since the last one was (AFRESH_GROWTH); otherwise it learns the queue in one
    pass. A new page classifier (new labels) makes the next version afresh."""
    engine = trained
    prepare_strategy(engine, Strategy.SOFT)
    plan = CrawlPlan(Strategy.SOFT, "topics.sports", SEEDS, 60, topics_web.proxy, 2, 4, 0)
    run_crawl(engine, plan, TRUTH)

    def version(queued: int) -> LinkModel:
        with engine.begin() as connection:
            _queue(connection, queued)
            model = LinkLearner().learn(connection, load_tree(connection))
        assert model is not None
        return model

    doubled = version(2 * int(_link_model(engine).params["afresh_at"]))
    assert doubled.params["afresh"]
    lessons = doubled.params["afresh_at"]
    assert doubled.params["learned"] == lessons
    online = version(max(apprentice.RETRAIN_MIN, lessons // 5))
    assert "afresh" not in online.params
    assert online.params["learned"] == lessons + max(apprentice.RETRAIN_MIN, lessons // 5)
    assert online.params["afresh_at"] == lessons  # what the next afresh fit is due by
    train_model(engine)  # a new page classifier
    relabelled = version(apprentice.RETRAIN_MIN + online.params["learned"] // 5)
    assert relabelled.params["afresh"]
    assert relabelled.params["learned"] == lessons  # every link again, the queue not
    assert relabelled.params["page_model"] != online.params["page_model"]


def test_the_examples_sites_teach_the_first_version(engine: sa.Engine, topics_dir: Path) -> None:
    """With no links between the examples, the first version learns their hosts: a
    wordless link to each example's host, labelled by whether the example is good."""
    data = from_corpus(topics_dir, 0.5, seed=1)
    data.examples[:] = [dataclasses.replace(e, links=()) for e in data.examples]
    store_import(engine, data)
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    with engine.connect() as connection:
        tree = load_tree(connection)
        lessons = apprentice.bootstrap_examples(connection, tree)
    urls = {e.url: e.kcid for e in data.examples if e.url}
    assert len(lessons) == len(urls)  # no link between examples: host lessons alone
    assert all(e.parts.anchor is None and e.parts.path == "" for e in lessons)
    taught = sorted((e.parts.host, e.label) for e in lessons)
    assert taught == sorted(
        (split_url(url)[1], float(tree.is_good(kcid))) for url, kcid in urls.items()
    )

    model = _link_model(engine)

    def estimate(host: str) -> float:
        return float(model.estimates([LinkParts(None, None, host, "/x")])[0])

    assert estimate("sports.topics.example") > estimate("portal.topics.example")
    assert estimate("portal.topics.example") > estimate("science.topics.example")


def test_the_in_links_of_the_frontier_are_read_as_link_parts_by_position(
    engine: sa.Engine,
) -> None:
    """estimate_frontier makes each link's LinkParts from its row after the target: the
    statement's columns must stay in LinkParts' order, and a statement whose columns
    are not those read fails at once."""
    assert IN_LINK_COLUMNS[0] == "oid_dst"
    assert IN_LINK_COLUMNS[1:] == LinkParts._fields[: len(IN_LINK_COLUMNS) - 1]
    with engine.connect() as connection:
        assert tuples(connection, "SELECT 1 AS a, 2 AS b", columns=("a", "b")) == [(1, 2)]
        with pytest.raises(RuntimeError, match="columns"):
            tuples(connection, "SELECT 1 AS b, 2 AS a", columns=("a", "b"))
        # the rows of the connection's own transaction, parameters as execute takes them
        execute(connection, "CREATE TEMP TABLE t (n int)")
        execute(connection, "INSERT INTO t VALUES (1), (2), (3)")
        assert tuples(connection, "SELECT n FROM t WHERE n > %(m)s ORDER BY n", {"m": 1}) == [
            (2,),
            (3,),
        ]
