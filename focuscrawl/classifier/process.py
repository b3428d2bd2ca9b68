"""The classifier process: score fetched pages in batches and pass relevance on.

Each step is one transaction: claim up to ``batch`` fetched, unscored pages (SKIP
LOCKED, so any number of classifiers share the queue), score them with the newest
model, write relevance, best leaf and node scores, estimate their unvisited out-links
(the crawl's frontier estimate, ``classifier.estimates``) and queue the links into them
as the link learner's examples. A crash rolls the step back; nothing is lost. After
it, in a transaction of its own, the link learner learns from the queue when enough
has gathered (``classifier.apprentice``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.engine import Connection, Engine

from focuscrawl.classifier.apprentice import LinkLearner, newest_link_model
from focuscrawl.classifier.estimates import Parent, estimate_frontier, pass_estimates
from focuscrawl.classifier.store import (
    StoredModel,
    latest_model,
    save_model,
    train_page_model,
    write_scores,
)
from focuscrawl.classifier.tokens import document_text
from focuscrawl.db.database import engine_dsn, execute
from focuscrawl.db.notify import PAGES_STORED, Listener
from focuscrawl.db.outages import retry_until_done
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import ShardMap, shard_map
from focuscrawl.errors import TaxonomyError, check_range
from focuscrawl.monitor.cpu import CLASSIFIER_STAGES, StageCpu
from focuscrawl.monitor.metrics import ClassifierMetrics
from focuscrawl.topics.linkmodel import ANCHOR_ESTIMATES, LINK_ESTIMATES, LinkModel
from focuscrawl.topics.taxonomy import Tree, load_tree

__all__ = ["BATCH", "Classifier", "ClassifyStats", "good_sets", "node_scores_text", "two_step"]

BATCH = 256  # pages per transaction
POLL_S = 0.25  # wait when the queue is empty (cheap: an empty partial index)
WAIT_FOR_MODEL_S = 10.0  # a long-running classifier waits for `classify train`
#: what a relevant page one link further on makes a link worth (the paths estimate)
PATH_DISCOUNT = 0.5
#: the application_name of a running classifier's listening connection, then its PID
#: (sql/frontier.sql: classifiers_running)
CLASSIFIER_NAME = "focuscrawl-classifier"
#: scored pages before a calibrated topic first self-trains; then again at each doubling
SELF_TRAIN_START = 100

log = logging.getLogger("focuscrawl.classifier")


def two_step(estimate: str) -> float:
    """What a relevant page one link beyond a link's target makes the link worth in the
    learner's lessons: ``PATH_DISCOUNT`` for the paths estimate, else nothing."""
    return PATH_DISCOUNT if estimate == "paths" else 0.0


@dataclass
class ClassifyStats:
    scored: int = 0
    batches: int = 0
    links: int = 0  # out-links estimated
    link_models: int = 0  # link learner versions this process stored
    frontier_estimates: int = 0  # URLs estimated again by versions fitted afresh
    self_trained: int = 0  # page models this process self-trained and stored
    woken: int = 0  # waits ended by a store's notification, not by the fallback poll
    started: float = field(default_factory=time.monotonic)
    #: the CPU each stage took (focuscrawl.monitor.cpu)
    cpu: StageCpu = field(default_factory=lambda: StageCpu(CLASSIFIER_STAGES))

    def rate(self) -> float:
        return self.scored / max(time.monotonic() - self.started, 1e-9)


def good_sets(tree: Tree) -> tuple[list[int], list[int]]:
    """(good frontier, leaves whose path holds a good node)."""
    return tree.good_frontier(), [k for k in tree.leaves() if tree.is_good(k)]


def node_scores_text(logp: np.ndarray) -> list[str]:
    """Rows of log-probabilities as PostgreSQL array literals (real precision: values
    nearer 0 than float32 can hold become 0, below -1e30 become -1e30)."""
    template = "{" + ",".join(["%.7g"] * logp.shape[1]) + "}"
    clipped = np.where(logp > -1e-30, 0.0, np.maximum(logp, -1e30))
    return [template % tuple(row) for row in clipped.tolist()]


class Classifier:
    """Scores the queue of fetched pages until stopped (or, with ``once``, until empty).

    Without a trained model (or with one trained on another taxonomy) it waits for
    ``classify train``; with ``once`` it raises instead.
    """

    def __init__(
        self,
        engine: Engine,
        batch: int = BATCH,
        poll_seconds: float = POLL_S,
        on_batch: Callable[[ClassifyStats], None] | None = None,
    ) -> None:
        check_range("--batch", batch, 1)
        self.engine = engine
        self.batch = batch
        self.poll_seconds = poll_seconds
        self.on_batch = on_batch
        self.metrics = ClassifierMetrics()  # served when asked (classify run --metrics-port)
        self.stats = ClassifyStats(cpu=StageCpu(CLASSIFIER_STAGES, self.metrics.cpu))
        self.stop_event = threading.Event()
        self._model: StoredModel | None = None
        self._link_model: LinkModel | None = None
        self._tree: Tree | None = None  # read every batch, rebuilt when it changed
        self._good: tuple[Tree, tuple[list[int], list[int]]] | None = None
        self.learner = LinkLearner()
        self._queued_examples = False  # the last batch queued link examples to learn
        #: a version fitted afresh whose estimates of the whole frontier are not written yet
        self._estimate_due: LinkModel | None = None
        self.estimate = "soft"
        #: read at the first batch, and again when Citus splits a shard
        self._shards: ShardMap | None = None
        self._turn = 0  # the shard whose pages the next claim tries first
        self._self_train_at = 0  # stats.scored at which to look at the crawl's count again
        #: set while nothing is left to do: the queue read empty after every version,
        #: estimate and self-training that the last scores made due (an evaluation's
        #: lockstep round waits for it, so that a crawl repeats exactly)
        self.settled = threading.Event()

    def stop(self) -> None:
        self.stop_event.set()

    def run(self, once: bool = False) -> ClassifyStats:
        if not once:
            self.learner.warm_up()
        listener = None
        if not once:  # named: a crawler waiting on a slow batch sees a classifier runs
            name = f"{CLASSIFIER_NAME} {os.getpid()}"
            listener = Listener(engine_dsn(self.engine), PAGES_STORED, name)
        try:
            return self._run(once, listener)
        finally:
            if listener is not None:
                listener.close()

    def _run(self, once: bool, listener: Listener | None) -> ClassifyStats:
        if listener is not None:
            listener.wait(0.0)  # listening before the first look: no wake-up is missed
        while not self.stop_event.is_set():
            try:
                # a deadlock with a crawler's or distiller's writes rolls the batch back,
                # and it is still in the queue; an outage is waited out
                done = retry_until_done(
                    self.step, "classify", stop=self.stop_event, on_layout=self._forget_layout
                )
            except TaxonomyError as exc:  # no model yet, or the taxonomy changed under it
                if once:
                    raise
                log.warning("event=waiting reason=%s", exc)
                self.stop_event.wait(WAIT_FOR_MODEL_S)
                continue
            if done is None:
                break  # stopped while the database was away
            if done == 0:
                self.settled.set()
                if once or listener is None:
                    break
                # woken when a store commits pages; the timeout is the fallback poll
                if listener.wait(self.poll_seconds):
                    self.stats.woken += 1
        return self.stats

    def _current_model(self, connection: Connection) -> StoredModel:
        newest = execute(connection, queries["newest_model_id"]).scalar()
        if self._model is None or newest != self._model.model_id:
            self._model = latest_model(connection)
            log.info("event=model model_id=%s", self._model.model_id)
        return self._model

    def _link_state(self, connection: Connection) -> None:
        """The crawl's frontier estimate, and the newest link model when it changed."""
        row = execute(connection, queries["link_model_state"]).one()
        self.estimate = row.estimate or "soft"
        newest = row.link_model
        if newest is None:
            self._link_model = None
        elif self._link_model is None or self._link_model.model_id != newest:
            self._link_model = newest_link_model(connection)

    def score(
        self, stored: StoredModel, tree: Tree, connection: Connection, rows: list[Any]
    ) -> tuple[list[float | None], list[int | None]]:
        """Relevance (log R) and best leaf of each claimed page (None: no text); node
        scores written. The ground-truth scorer of the evaluation overrides this."""
        frontier, _ = self.good_sets(tree)
        with_text = [r for r in rows if r.text]
        relevances: list[float | None] = [None] * len(rows)
        cids: list[int | None] = [None] * len(rows)
        if not with_text:
            return relevances, cids
        scores = stored.model.score([document_text(r.title, r.text) for r in with_text])
        relevance = scores.log_relevance(frontier)
        best = scores.best_leaf()
        position = {r.oid: i for i, r in enumerate(rows)}
        for j, row in enumerate(with_text):
            i = position[row.oid]
            relevances[i] = float(relevance[j])
            cids[i] = int(best[j])
        execute(
            connection,
            queries["write_node_scores"],
            {
                "model_id": stored.model_id,
                "oids": [r.oid for r in with_text],
                "logps": node_scores_text(scores.logp),
            },
        )
        return relevances, cids

    def good_sets(self, tree: Tree) -> tuple[list[int], list[int]]:
        """``good_sets`` of the tree, worked out once for each tree read."""
        if self._good is None or self._good[0] is not tree:
            self._good = (tree, good_sets(tree))
        return self._good[1]

    def _forget_layout(self) -> None:
        self._shards = None

    def _shard_map(self, connection: Connection) -> ShardMap:
        if self._shards is None:
            self._shards = shard_map(connection)
        return self._shards

    def _claim(self, connection: Connection) -> list[Any]:
        """The next unscored pages: of every bucket on one server; on a Citus cluster of
        one shard, the shards taken in turn (the next one when a shard has none)."""

        def claim(buckets: list[int]) -> list[Any]:
            params = {"batch": self.batch, "buckets": buckets}
            return list(execute(connection, queries["claim_unclassified"], params).all())

        rows, self._turn = self._shard_map(connection).in_turn(self._turn, claim)
        return rows

    def after_pass(self, connection: Connection, parents: list[Parent]) -> None:
        """Hook run after the estimates are passed on (the oracle overrides them)."""

    def _self_train(self, stored: StoredModel) -> None:
        """Self-training of a calibrated topic (``store.train_page_model``): once the crawl
        has scored SELF_TRAIN_START pages, and again each time that count doubles, train
        on the examples and the crawl's surest pages, store the model and put every scored
        page back in the queue, to be judged by it. In a transaction of its own, by one
        classifier at a time; the count is read only when this process's own count says
        it may be due."""
        if self.stats.scored < self._self_train_at:
            return
        last = int(stored.model.params.get("self_training", {}).get("scored", 0))
        due = max(SELF_TRAIN_START, 2 * last)
        with self.engine.begin() as connection:
            scored = int(execute(connection, queries["scored_pages"]).scalar_one())
            if scored < due:
                self._self_train_at = self.stats.scored + (due - scored + 1) // 2
                return
            if not execute(connection, queries["lock_self_training"]).scalar_one():
                return
            if execute(connection, queries["newest_model_id"]).scalar() != stored.model_id:
                return  # another classifier stored a newer one: read it first
            tree, model, examples = train_page_model(
                connection, stored.model.params, calibrate=True
            )
            model_id = save_model(connection, model, tree, examples)
            requeued = execute(connection, queries["requeue_scored"]).rowcount
        self.stats.self_trained += 1
        log.info(
            "event=self_trained model_id=%s crawled_pages=%s scored=%s requeued=%s",
            model_id,
            model.params["self_training"]["pages"],
            scored,
            requeued,
        )

    def _estimate_frontier(self, learned: LinkModel, tree: Tree) -> None:
        """A version fitted afresh (on every link the crawl has scored, labelled anew)
        estimates every unvisited URL again, outright (estimates may fall): in a
        transaction of its own after the fit's, the rows locked in oid order as every
        writer of the frontier does. Done again at the next step if it was rolled back."""
        started = time.monotonic()
        with self.engine.begin() as connection:
            page_model = None
            if self.estimate in ANCHOR_ESTIMATES:
                page_model = self._current_model(connection).model
            frontier, _ = self.good_sets(tree)
            shards = self._shard_map(connection)
            estimated = estimate_frontier(
                connection, learned, self.estimate, page_model, frontier, shards
            )
        self._estimate_due = None
        self.stats.frontier_estimates += estimated
        log.info(
            "event=frontier_estimated link_model=%s urls=%s seconds=%.2f",
            learned.model_id,
            estimated,
            time.monotonic() - started,
        )

    def step(self) -> int:
        """Score one batch; returns how many pages it scored."""
        started = time.monotonic()
        cpu = self.stats.cpu
        clock = time.thread_time()  # each stage's CPU: from here to its end
        if self._queued_examples and self._tree is not None:
            # a new version of the link learner, when its turn has come, is learned and
            # committed first, in a transaction of its own: learning takes most of a
            # second, and a crawler storing links waits on the rows the scores'
            # transaction updates until it ends (it stalled the polite crawl each time).
            # Only after a batch that queued examples: an idle classifier asks nothing
            self._queued_examples = False
            with self.engine.begin() as connection:
                parent = self.estimate != "apprentice"
                learned = self.learner.learn(
                    connection,
                    self._tree,
                    parent,
                    self._link_model,
                    two_step=two_step(self.estimate),
                )
            if learned is not None:
                self.stats.link_models += 1
                self._link_model = learned  # the newest version, not read back
                if learned.params.get("afresh"):
                    self._estimate_due = learned
            clock = cpu.add("learn", clock)
        if self._estimate_due is not None and self._tree is not None:
            self._estimate_frontier(self._estimate_due, self._tree)
            clock = cpu.add("frontier", clock)
        if self._model is not None and self._model.model.calibration is not None:
            self._self_train(self._model)
            clock = cpu.add("self_train", clock)
        with self.engine.begin() as connection:
            stored = self._current_model(connection)
            tree = self._tree = load_tree(connection, self._tree)
            stored.check_tree(tree)
            rows = self._claim(connection)
            if not rows:
                cpu.add("claim", clock)
                return 0
            self.settled.clear()  # before the scores commit: a round ends after it
            self._link_state(connection)
            frontier, good_leaves = self.good_sets(tree)
            clock = cpu.add("claim", clock)
            relevances, cids = self.score(stored, tree, connection, rows)
            oids = [r.oid for r in rows]
            parents = write_scores(connection, stored.model_id, oids, relevances, cids)
            clock = cpu.add("score", clock)
            links = pass_estimates(
                connection,
                self.estimate,
                parents,
                good_leaves,
                frontier,
                stored.model,
                self._link_model,
                self._shard_map(connection),
            )
            self.after_pass(connection, parents)
            if self.estimate in LINK_ESTIMATES:  # the next version learns from these
                scored = [oid for oid, cid in zip(oids, cids, strict=True) if cid is not None]
                execute(connection, queries["queue_link_examples"], {"oids": scored})
                gamma = two_step(self.estimate)
                if gamma:  # and the links into pages that link to relevant ones
                    params = {"oids": scored, "gamma": gamma}
                    execute(connection, queries["queue_path_examples"], params)
                self._queued_examples = True
            execute(connection, queries["notify_pages_scored"])  # crawlers waiting on us
        cpu.add("estimates", clock)  # and the commit
        self.stats.links += links
        self.stats.scored += len(rows)
        self.metrics.scored(relevances)
        self.metrics.links.inc(links)
        self.metrics.batch_seconds.observe(time.monotonic() - started)
        self.metrics.model_version.set(stored.model_id)
        link_model = self._link_model
        self.metrics.link_model_version.set(0 if link_model is None else link_model.model_id)
        self.stats.batches += 1
        if self.on_batch is not None:
            self.on_batch(self.stats)
        return len(rows)
