"""Relevance calibrated on left-out examples (focuscrawl.classifier.calibration), on the
hand-made tree."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from scipy import sparse

from focuscrawl.classifier import process, store
from focuscrawl.classifier.calibration import (
    Calibration,
    calibrate,
    log_odds_per_term,
)
from focuscrawl.classifier.model import HierarchicalModel, Scores
from focuscrawl.classifier.store import train_model, training_documents
from focuscrawl.evaluation.runs import CrawlPlan, prepare_strategy, run_crawl
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.topics.taxonomy import Tree, load_tree, set_good
from focuscrawl.topics.taxonomy_import import from_corpus, from_directory, store_import
from focuscrawl.webbox import WebBoxThread
from tests.classifier.topics import LEAVES, TRUTH, page_text, page_url, write_tree_dir

GOOD = "topics.sports.cycling"


def _marked(tree: Tree, path: str) -> Tree:
    return tree.with_good([tree.find(path)])


@pytest.fixture(scope="module")
def examples(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Tree, list[str], list[list[int]]]:
    data = from_directory(write_tree_dir(tmp_path_factory.mktemp("tree"), examples_per_leaf=30))
    texts = [f"{e.title}\n{e.text}" for e in data.examples]
    return _marked(data.tree, GOOD), texts, [[e.kcid] for e in data.examples]


def _trainer(tree: Tree):  # type: ignore[no-untyped-def]
    def train(texts: Sequence[str], labels: Sequence[Sequence[int]]) -> HierarchicalModel:
        return HierarchicalModel.train(tree, texts, labels)

    return train


def test_the_threshold_is_the_lower_quartile_and_the_median_gets_nine_tenths() -> None:
    held = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.0]
    c = Calibration.of_held([7, 3], held)
    assert c.good == (3, 7) and c.applies_to([7, 3]) and not c.applies_to([3])
    assert c.threshold == pytest.approx(0.2)  # the third lowest of ten
    r = np.exp(c.log_relevance(np.asarray([c.threshold, float(np.median(held))])))
    assert r == pytest.approx([0.5, 0.9])
    assert Calibration.from_params(c.to_params()) == c
    alike = Calibration.of_held([1], [0.5, 0.5, 0.5])  # no spread: still a finite map
    assert np.isfinite(alike.scale) and alike.threshold == 0.5


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=40))
def test_calibrated_relevance_is_a_probability_rising_with_log_odds(z: list[float]) -> None:
    c = Calibration.of_held([1], [0.05, 0.1, 0.2, 0.3])
    values = np.sort(np.asarray(z))
    log_r = c.log_relevance(values)
    assert np.all(log_r <= 0) and not np.any(np.isnan(log_r))
    assert np.all(np.diff(log_r) >= 0)


def test_a_calibrated_model_judges_new_pages_and_keeps_its_calibration(
    examples: tuple[Tree, list[str], list[list[int]]],
) -> None:
    tree, texts, labels = examples
    train = _trainer(tree)
    model = train(texts, labels)
    calibration = calibrate(tree, texts, labels, train)
    assert calibration is not None
    good = tree.good_frontier()
    assert calibration.good == tuple(good) and len(calibration.held) == 30  # ten folds
    model.calibrated(calibration)

    rng = random.Random(5)
    leaves = [leaf for leaf in LEAVES for _ in range(100)]
    scores = model.score([page_text(rng, leaf) for leaf in leaves])
    relevant = scores.log_relevance(good) >= np.log(0.5)
    on_topic = np.asarray([leaf == GOOD for leaf in leaves])
    # a quarter of the left-out examples fall below the threshold: about as many new
    # pages of the topic do (the uncalibrated R takes every one), and no page of
    # another leaf reaches it
    assert 0.4 <= relevant[on_topic].mean() <= 0.95
    assert (model.score([page_text(rng, GOOD) for _ in range(100)]).logp[
        :, model.column[good[0]]] >= np.log(0.5)).all()  # fmt: skip
    assert not relevant[~on_topic].any()
    # the best leaf takes the verdict's side
    below = set(int(k) for k in model.kcids[model.leaves_below(good)])
    assert [int(k) in below for k in scores.best_leaf()] == relevant.tolist()
    # R' is a function of the log-odds per term, stored with the model
    z = log_odds_per_term(scores, good)
    assert scores.log_relevance(good) == pytest.approx(calibration.log_relevance(z))
    stored = HierarchicalModel.from_bytes(model.to_bytes(), model.params)
    assert stored.calibration == calibration
    again = stored.score([page_text(rng, GOOD)])
    assert again.log_relevance(good) == pytest.approx(
        calibration.log_relevance(log_odds_per_term(again, good))
    )
    # another good set is not what it was made for: the model's own R
    other = [tree.find("topics.science")]
    assert again.log_relevance(other) == pytest.approx(again.logp[:, model.column[other[0]]])


def test_texts_read_again_are_remembered_until_the_calibration_changes(
    examples: tuple[Tree, list[str], list[list[int]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``text_relevance`` gives what scoring the texts gives, for each good set; a text
    read before is not scored again; a calibration set afterwards forgets what was read."""
    tree, texts, labels = examples
    train = _trainer(tree)
    model = train(texts, labels)
    good, other = tree.good_frontier(), [tree.find("topics.science")]
    rng = random.Random(8)
    anchors = [page_text(rng, leaf)[:60] for leaf in LEAVES for _ in range(3)]
    anchors += [*anchors[:4], ""]
    uncalibrated = model.text_relevance(anchors, good)
    assert uncalibrated == pytest.approx(np.exp(model.score(anchors).log_relevance(good)))
    assert model.text_relevance(anchors, other) == pytest.approx(
        np.exp(model.score(anchors).log_relevance(other))
    )
    scored: list[int] = []  # the rows of each scoring
    score_counts = model.score_counts

    def counted(counts: sparse.csr_matrix) -> Scores:
        scored.append(counts.shape[0])
        return score_counts(counts)

    monkeypatch.setattr(model, "score_counts", counted)
    assert model.text_relevance(anchors[::-1], good) == pytest.approx(uncalibrated[::-1])
    assert scored == []  # all remembered
    calibration = calibrate(tree, texts, labels, train)
    assert calibration is not None
    model.calibrated(calibration)
    calibrated = model.text_relevance(anchors, good)
    assert scored == [len(set(anchors))]
    assert calibrated == pytest.approx(np.exp(model.score(anchors).log_relevance(good)))
    assert not np.allclose(calibrated, uncalibrated)


def test_too_few_examples_give_no_calibration(tmp_path: Path) -> None:
    data = from_directory(write_tree_dir(tmp_path, examples_per_leaf=2))
    tree = _marked(data.tree, GOOD)
    texts = [f"{e.title}\n{e.text}" for e in data.examples]
    labels = [[e.kcid] for e in data.examples]
    assert calibrate(tree, texts, labels, _trainer(tree)) is None
    unmarked = data.tree
    assert calibrate(unmarked, texts, labels, _trainer(unmarked)) is None


def test_a_calibrated_topic_self_trains_on_the_crawls_surest_pages(
    engine: sa.Engine, topics_dir: Path, topics_web: WebBoxThread
) -> None:
    store_import(engine, from_corpus(topics_dir, 0.3, seed=1))
    set_good(engine, [GOOD], True)
    train_model(engine, calibrate=True)
    prepare_strategy(engine, Strategy.SOFT)
    seeds = [page_url(GOOD, i) for i in (1, 2)]
    plan = CrawlPlan(Strategy.SOFT, GOOD, seeds, 110, topics_web.proxy, 2, 4, 0)
    assert len(run_crawl(engine, plan, TRUTH).urls) == 110

    def rows(sql: str) -> list[Any]:
        with engine.connect() as connection:
            return list(connection.exec_driver_sql(sql).all())

    models = rows("SELECT model_id, params FROM model WHERE kind = 'page' ORDER BY model_id")
    assert len(models) >= 2  # trained, then self-trained once 100 pages were scored
    first, newest = models[0].params, models[-1].params
    assert first["self_training"]["pages"] == 0  # nothing crawled yet
    assert newest["self_training"]["scored"] >= process.SELF_TRAIN_START
    assert "calibration" in newest
    # the examples alone calibrate, each held out once (in five folds: the crawl's pages
    # are in every training)
    assert len(newest["calibration"]["held"]) == len(first["calibration"]["held"])
    # every page was judged again by the newest model
    judged = rows("SELECT DISTINCT model_id FROM doc_fetch WHERE model_id IS NOT NULL")
    assert [r.model_id for r in judged] == [models[-1].model_id]
    # what it learns from: sure pages of the good leaf and pages surely off the topic in
    # their own leaves, none of them an example
    with engine.connect() as connection:
        tree = load_tree(connection)
        texts, labels = training_documents(connection)
        good_examples = sum(1 for k in labels if tree.find(GOOD) in k)
        chosen = store.self_training_pages(connection, tree, labels)
    on = [text for text, k in chosen if k == [tree.find(GOOD)]]
    off = [k for _, k in chosen if k != [tree.find(GOOD)]]
    assert 0 < len(on) <= store.SELF_TRAIN_SHARE * good_examples
    assert 0 < len(off) <= store.SELF_TRAIN_OFF_SHARE * good_examples
    assert all(len(k) == 1 and not tree.is_good(k[0]) and tree.is_leaf(k[0]) for k in off)
    assert not {text for text, _ in chosen} & set(texts)
    unsure = (
        "SELECT count(*) FROM doc AS d JOIN doc_fetch AS f USING (oid) JOIN site AS s "
        f"USING (sid) JOIN doc_text AS t USING (oid) WHERE f.cid <> {tree.find(GOOD)} "
        f"AND d.relevance < ln({store.SELF_TRAIN_OFF_R}) AND d.state = 2 AND t.text <> '' "
        "AND doc_url(d.https, s.host, d.path) NOT IN (SELECT url FROM example)"
    )
    assert len(off) == min(store.SELF_TRAIN_OFF_SHARE * good_examples, rows(unsure)[0][0])
    sure = (
        "SELECT count(*) FROM doc AS d JOIN doc_fetch AS f USING (oid) JOIN site AS s "
        f"USING (sid) WHERE f.cid = {tree.find(GOOD)} AND d.relevance >= ln({store.SELF_TRAIN_R})"
    )
    example = "doc_url(d.https, s.host, d.path) IN (SELECT url FROM example)"
    sure_examples = rows(f"{sure} AND {example}")[0][0]
    assert sure_examples > 0  # the seeds are examples: crawled, scored sure, left out
    not_examples = rows(f"{sure} AND NOT {example}")[0][0]
    assert len(on) == min(store.SELF_TRAIN_SHARE * good_examples, not_examples)
