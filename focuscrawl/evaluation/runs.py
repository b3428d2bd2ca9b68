"""One evaluated crawl: a database of its own, the crawler, classifier and distiller
running together in this process, and what the crawl did read back from its tables."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from focuscrawl.classifier import Classifier
from focuscrawl.classifier.apprentice import train_link_model
from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.classifier.store import requeue_scored, save_model, train_model
from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.seeds import add_seeds
from focuscrawl.distiller import boost, run_hits, top
from focuscrawl.errors import FocuscrawlError
from focuscrawl.evaluation.metrics import distances_from
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.evaluation.truth import GroundTruth
from focuscrawl.evaluation.truth_scorer import TruthScorer
from focuscrawl.topics.labels import label, suggest
from focuscrawl.topics.taxonomy import load_tree, set_good
from focuscrawl.topics.taxonomy_import import TaxonomyImport, store_import

__all__ = ["CrawlPlan", "CrawlTrace", "prepare_database", "prepare_strategy", "run_crawl"]

#: the classifier is woken by the store's notification; this is the fallback poll
CLASSIFIER_POLL_S = 0.25
#: how often a round that waits for the classifier to settle looks for a failure
SETTLE_POLL_S = 0.05
#: the largest focused round (a crawl whose rounds grow, CrawlPlan.backlog_share)
ROUND_MOST = 64


@dataclass(frozen=True)
class CrawlPlan:
    strategy: Strategy
    topic: str
    seeds: list[str]
    pages: int
    proxy: str
    threads: int = 4
    #: URLs claimed a round: each round is fetched, stored and scored before the next
    #: claim (CrawlConfig.lockstep), so a crawl repeats exactly for its seeds
    backlog: int = 4
    #: focused: distil (weighted HITS) every this many pages (0: never)
    distill_every: int = 500
    #: ... and give the best hubs' unvisited neighbours seed rank after each run
    boost: bool = False
    #: focused rounds grow to this share of the pages fetched so far (at most ROUND_MOST)
    backlog_share: float = 0.0
    #: the labels strategy: labels asked after this many pages, and how many
    label_after: int = 500
    labels: int = 50

    @property
    def mode(self) -> Mode:
        return self.strategy.mode


@dataclass
class CrawlTrace:
    """What one crawl fetched, in order, and what its distiller found at the end."""

    strategy: str  # the Strategy value: a crawl mode or a yardstick
    urls: list[str]
    hosts: list[str]
    estimates: list[float | None]
    seconds: float
    #: each fetched page's share of text in links (``ParsedPage.link_share``), if known
    link_shares: list[float | None] = field(default_factory=list)
    authorities: list[str] = field(default_factory=list)  # best first
    authority_hosts: list[str] = field(default_factory=list)
    authority_distances: list[int | None] = field(default_factory=list)
    hubs: list[str] = field(default_factory=list)
    distills: int = 0
    #: every request for a page, in order: (URL, fetched); failures count as attempts
    attempts: list[tuple[str, bool]] = field(default_factory=list)
    #: CPU seconds of URL selection in this process: the classifier thread's scoring of
    #: pages and estimating of their links (or a yardstick's truth lookups); not the
    #: crawler's fetch, parse and store (nor the check-in estimates its store makes of
    #: new links), nor PostgreSQL's
    selection_cpu: float = 0.0


def prepare_database(
    engine: Engine,
    data: TaxonomyImport,
    topic: str,
    model: HierarchicalModel | None = None,
    calibrate: bool = False,
) -> HierarchicalModel:
    """Taxonomy, examples, ``topic`` marked good, a page model (trained unless given;
    ``calibrate``: as ``topic new`` trains it) and the link learner's first version (from
    the links between examples)."""
    store_import(engine, data, replace=True)
    set_good(engine, [topic], True)
    if model is None:
        return train_model(engine, calibrate=calibrate)[1]
    with engine.begin() as connection:
        save_model(connection, model, data.tree, len(data.examples))
        train_link_model(connection, load_tree(connection))
    return model


def prepare_strategy(engine: Engine, strategy: Strategy) -> None:
    """The frontier estimate of ``strategy`` in a prepared database (and, for the link
    learner without the parent's relevance, its own first version)."""
    with engine.begin() as connection:
        params = {"name": "estimate", "value": strategy.estimate}
        execute(connection, queries["set_crawl_setting"], params)
        if strategy is Strategy.APPRENTICE:
            train_link_model(connection, load_tree(connection), parent=False)


def run_crawl(
    engine: Engine,
    plan: CrawlPlan,
    truth: GroundTruth,
    progress: Callable[[int], None] | None = None,
) -> CrawlTrace:
    """Crawl ``plan.pages`` pages from the seeds with the classifier (the ground truth,
    for the yardstick strategies) and, when focused, the distiller, in lockstep rounds:
    the distiller runs between two rounds when its turn has come. Return the trace. The
    database must be prepared (``prepare_database``, ``prepare_strategy``)."""
    focused = plan.mode.focused
    with engine.begin() as connection:
        add_seeds(connection, plan.seeds)
    config = CrawlConfig(
        mode=plan.mode,
        threads=plan.threads,
        # a focused round is plan.backlog URLs; the baselines' order ignores estimates,
        # and bigger rounds fetch them in the very same order
        batch_per_thread=max(2, ROUND_MOST // plan.threads) if focused else 8,
        max_pages=plan.pages,
        host_delay=0.0,
        idle_exit_seconds=3.0,
        quiet=True,
        max_backlog=plan.backlog,
        backlog_share=plan.backlog_share,
        lockstep=True,
        estimate=plan.strategy.estimate,
        fetch=FetchConfig(proxy=plan.proxy),
    )
    crawler = Crawler(engine, config)
    crawler.attempt_log = []
    classifier = Classifier(engine, poll_seconds=CLASSIFIER_POLL_S)
    if plan.strategy.reads_truth:
        relevant = truth.relevant(plan.topic)
        oracle = plan.strategy is Strategy.ORACLE
        classifier = TruthScorer(engine, truth.labels, relevant, oracle, CLASSIFIER_POLL_S)
    started = time.perf_counter()
    distills = [0, plan.distill_every]  # runs so far, pages at the next
    failure: list[BaseException] = []

    labelled: list[int] = []

    def between_rounds(fetched: int) -> None:
        # the round's pages are scored; what the classifier learned from them (a new
        # version of the link learner, the frontier estimated again, self-training) is
        # waited for too, or the next claim would read estimates half changed, and a
        # crawl would not repeat for its seeds
        while not classifier.settled.wait(SETTLE_POLL_S):
            if failure or crawler.stop_event.is_set():
                return
        if progress is not None:
            progress(fetched)
        if plan.strategy is Strategy.LABELS and not labelled and fetched >= plan.label_after:
            labelled.append(_simulated_labeller(engine, plan, truth))
        if focused and plan.distill_every and fetched >= distills[1]:
            run_hits(engine)
            if plan.boost:
                boost(engine)
            distills[0] += 1
            distills[1] += plan.distill_every

    selection_cpu = [0.0]  # the classifier thread's CPU seconds: scores and estimates

    def classify() -> None:
        started_cpu = time.thread_time()
        try:
            classifier.run()
        except BaseException as exc:  # reported below; the crawl must not wait for it
            failure.append(exc)
            crawler.stop_event.set()
        finally:
            selection_cpu[0] += time.thread_time() - started_cpu

    crawler.between_rounds = between_rounds
    threads = [
        threading.Thread(target=crawler.run, name="eval-crawler", daemon=True),
        threading.Thread(target=classify, name="eval-classifier", daemon=True),
    ]
    try:
        for thread in threads:
            thread.start()
        threads[0].join()
    finally:
        crawler.stop_event.set()
        threads[0].join()
        classifier.stop()
        threads[1].join()
    if failure:
        raise FocuscrawlError(f"the classifier failed during the crawl: {failure[0]}")
    classifier.stop_event.clear()
    last_cpu = time.thread_time()
    classifier.run(once=True)  # score what the crawl fetched last
    selection_cpu[0] += time.thread_time() - last_cpu
    seconds = time.perf_counter() - started
    trace = _trace(engine, plan, seconds, distills[0])
    # in claim order: the order the crawl chose them, the same in every run (the order
    # their outcomes came in depends on the threads)
    trace.attempts = [(url, fetched) for _, url, fetched in sorted(crawler.attempt_log)]
    trace.selection_cpu = round(selection_cpu[0], 3)
    return trace


def _simulated_labeller(engine: Engine, plan: CrawlPlan, truth: GroundTruth) -> int:
    """An operator who labels the pages ``label suggest`` lists, good or bad as the
    ground truth says, then trains and has every page scored again (the crawl's next
    round waits for that: the pages are back in the classifier's queue)."""
    relevant = truth.relevant(plan.topic)
    asked = suggest(engine, plan.labels)
    for good in (True, False):
        urls = [s.url for s in asked if (s.url in relevant) == good]
        if urls:
            label(engine, urls, good)
    train_model(engine, with_crawl=True)
    requeue_scored(engine)
    return len(asked)


def _trace(engine: Engine, plan: CrawlPlan, seconds: float, distills: int) -> CrawlTrace:
    with engine.connect() as connection:
        rows = execute(connection, queries["fetched_in_order"]).all()
        edges = [(r.oid_src, r.oid_dst) for r in execute(connection, queries["crawl_graph"])]
        seeds = execute(connection, queries["oids_of"], {"urls": plan.seeds}).all()
    trace = CrawlTrace(
        strategy=plan.strategy.value,
        urls=[r.url for r in rows],
        hosts=[r.host for r in rows],
        estimates=[None if r.estimate is None else round(float(r.estimate), 4) for r in rows],
        seconds=round(seconds, 1),
        link_shares=[r.link_share for r in rows],
        distills=distills,
    )
    if not rows:
        return trace
    run_hits(engine)
    authorities = top(engine, hubs=False, limit=100)
    trace.authorities = [a.url for a in authorities]
    trace.authority_hosts = [a.host for a in authorities]
    trace.hubs = [h.url for h in top(engine, hubs=True, limit=25)]
    oid_of = {r.url: r.oid for r in rows}
    targets = [oid_of[url] for url in trace.authorities if url in oid_of]
    distance = distances_from([s.oid for s in seeds], edges, targets)
    trace.authority_distances = [distance[t] for t in targets]
    return trace
