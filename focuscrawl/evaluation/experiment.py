"""``focuscrawl eval``: crawl strategies side by side on one topic, against the
web-in-a-box's ground truth, and the paper's robustness test (section 5.3-5.4).

Every crawl runs in a database of its own next to the configured one
(``<name>_<label>``, dropped and made afresh), with the same taxonomy, the same
30% training sample and the same model, from the same seeds. The taxonomy, examples,
models and good mark of a topic are written once, to a template database, and each
crawl's database is a file copy of it. Crawls run in lockstep rounds, so a strategy
repeats exactly for a seed sample.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.crawler.config import BACKLOG_SHARE
from focuscrawl.crawler.parse import parse_html
from focuscrawl.db.database import execute
from focuscrawl.db.migrate import drop_database, sibling_database
from focuscrawl.db.queries import queries
from focuscrawl.errors import CorpusError, DatabaseError, check_range
from focuscrawl.evaluation.metrics import (
    cumulative_share,
    first_distinct,
    histogram,
    moving_average,
    overlap_curve,
    recall_curve,
    thin,
)
from focuscrawl.evaluation.runs import (
    CrawlPlan,
    CrawlTrace,
    prepare_database,
    prepare_strategy,
    run_crawl,
)
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.evaluation.summary import over_samples
from focuscrawl.evaluation.truth import GroundTruth, link_graph, load_truth
from focuscrawl.monitor.export import MOSTLY_LINKS, RELEVANT
from focuscrawl.topics.background import (
    MIN_PAGES,
    ROOT,
    BackgroundReader,
    UserExample,
    build_background,
    load_background,
    topic_import,
)
from focuscrawl.topics.taxonomy_import import from_corpus, web_links
from focuscrawl.webbox import load_corpus

__all__ = [
    "EvalOptions",
    "Progress",
    "distill_interval",
    "evaluate",
]

#: (what is happening, pages done, pages in all); pages 0 of 0 for steps without a count
Progress = Callable[[str, int, int], None]
#: given the result so far (the topics measured) after each topic of an evaluation
Checkpoint = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class EvalOptions:
    topics: Sequence[str]
    strategies: Sequence[Strategy]
    pages: int | None = None  # None: as many as the topic has relevant pages
    seeds: int = 10
    seed: int = 1  # of the seed sample and of the training sample
    train_fraction: float = 0.3
    robustness: bool = False
    threads: int = 4
    backlog: int = 4
    #: focused rounds grow to this share of the pages fetched so far (0: fixed)
    backlog_share: float = BACKLOG_SHARE
    #: focused crawls distil every this many pages; None: a quarter of the budget N
    distill_every: int | None = None
    #: after each distiller run, give the best hubs' unvisited neighbours seed rank
    boost: bool = False
    samples: int = 1  # seed samples per topic (seeded seed, seed + 1, ...); measures averaged
    database_prefix: str | None = None  # None: <configured name>_eval
    #: recall is reported after budget x N pages for each budget; crawls go to the largest
    budgets: Sequence[int] = (1,)
    #: keep each crawl's database for inspection (a sweep drops them as it goes)
    keep_databases: bool = True
    #: the labels strategy: its simulated operator labels this many pages after these
    label_after: int = 500
    labels: int = 50
    #: "full": the corpus's taxonomy with a labelled sample; "examples": the topic made
    #: from its seed pages alone (topic new), in the shipped background's kind of tree
    #: built from the corpus without the topic's pages
    taxonomy: str = "full"
    #: taxonomy "examples": "corpus", a background built from the corpus without the
    #: topic's pages; "shipped", the one topic new uses, without the category most of the
    #: examples fall in (``own_categories``), as topic new leaves it out
    background: str = "corpus"
    #: 0: the seeds are relevant pages (and, with taxonomy "examples", the examples);
    #: d > 0: the seeds are pages d links from the topic's nearest page, none relevant,
    #: and the examples a separate sample of relevant pages
    seed_distance: int = 0

    def __post_init__(self) -> None:
        """Options out of range refused before anything is built or crawled."""
        check_range("--threads", self.threads, 1, 512)
        check_range("--train-fraction", self.train_fraction, 0.0, 1.0)
        check_range("--backlog", self.backlog, 1)
        check_range("--backlog-share", self.backlog_share, 0.0, 1.0)
        check_range("--label-after", self.label_after, 1)
        check_range("--labels", self.labels, 1)
        check_range("--seed-distance", self.seed_distance, 0)
        if self.distill_every is not None:
            check_range("--distill-every", self.distill_every, 0)


def _quiet(what: str, done: int, total: int) -> None:
    return None


def _short(topic: str) -> str:
    """A topic's name as a category of its own (its last component)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", topic.rsplit(".", 1)[-1])[:60]


def _examples_of(corpus: Path, urls: list[str]) -> list[UserExample]:
    """The pages at ``urls`` as a user's examples (title, text, out-links, URL)."""
    pages = load_corpus(str(corpus), corpus)
    examples: list[UserExample] = []
    for url in urls:
        page = pages.page(url)
        if page is None:
            raise CorpusError(f"{corpus}: seed {url} is not served")
        parsed = parse_html(page.body, url)
        examples.append((parsed.title, parsed.text, web_links(parsed.links), url))
    return examples


def distill_interval(configured: int | None, pages: int) -> int:
    """Pages between distiller runs: as configured, or a quarter of the budget N (at
    least 25), so that the distiller runs in a crawl of a small topic too."""
    return configured if configured is not None else max(25, pages // 4)


def evaluate(
    engine: Engine,
    corpus: Path,
    proxy: str,
    options: EvalOptions,
    progress: Progress = _quiet,
    checkpoint: Checkpoint | None = None,
) -> dict[str, Any]:
    """Run the crawls, measure them against the truth; the JSON-ready result.

    Each crawl's database stays afterwards: ``"databases"`` in the result names them.
    One evaluation at a time makes a prefix's databases (``DatabaseError`` for another).
    ``checkpoint`` is given the result so far after each topic, so that an evaluation
    stopped or failing part-way loses only the topic it was crawling.
    """
    prefix = options.database_prefix or f"{engine.url.database}_eval"
    with _only_evaluation(engine, prefix):
        return _evaluate(engine, corpus, proxy, options, prefix, progress, checkpoint)


@contextmanager
def _only_evaluation(engine: Engine, prefix: str) -> Iterator[None]:
    """Holds the server's lock on the databases ``prefix``_* while the block runs; raises
    DatabaseError, touching nothing, when another evaluation or demo holds it."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        params = {"prefix": prefix}
        if not execute(connection, queries["lock_evaluation"], params).scalar_one():
            raise DatabaseError(
                f"another focuscrawl eval or demo is crawling in the databases {prefix}_* "
                "on this server; wait for it to end, or give this one another --database"
            )
        try:
            yield
        finally:
            with suppress(DBAPIError):  # a connection lost with the server let it go
                execute(connection, queries["unlock_evaluation"], params)


def _evaluate(
    engine: Engine,
    corpus: Path,
    proxy: str,
    options: EvalOptions,
    prefix: str,
    progress: Progress,
    checkpoint: Checkpoint | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    progress("reading the ground truth", 0, 0)
    truth = load_truth(corpus)
    progress(f"building the taxonomy from a {options.train_fraction:.0%} sample", 0, 0)
    data = from_corpus(corpus, options.train_fraction, seed=options.seed)
    graph = link_graph(corpus) if options.seed_distance else {}
    if options.seed_distance:  # a topic with too few pages that far fails now, not mid-sweep
        for topic in options.topics:
            truth.distant_seeds(topic, options.seeds, options.seed, options.seed_distance, graph)
    model: HierarchicalModel | None = None
    reader: BackgroundReader | None = None  # --background shipped: trained once a sweep
    results: list[dict[str, Any]] = []
    databases: dict[str, str] = {}
    for topic in options.topics:
        relevant = truth.relevant(topic)
        pages = options.pages or len(relevant)
        template = f"{prefix}_template"
        if options.taxonomy == "full":
            progress(f"{topic}: preparing the template database {template}", 0, 0)
            target = sibling_database(engine, template)
            try:
                model = prepare_database(target, data, topic, model)
            finally:
                target.dispose()
        else:  # the topic from its seeds, in a background built without its pages
            progress(f"{topic}: a background without the topic's pages", 0, 0)
            if options.background == "shipped":  # as topic new on a web of the user's
                if reader is None:
                    reader = BackgroundReader(load_background())
                background = reader.background
            else:
                background = build_background(corpus, exclude=relevant)
            if len(background) < 2:
                raise CorpusError(
                    f"--taxonomy examples: {corpus.name}'s categories give a background of "
                    f"{len(background)} categories (it takes the categories two levels below "
                    f"the root, or as deep as the labels go, with {MIN_PAGES} pages or more "
                    "outside the topic); use --taxonomy full or --background shipped"
                )
        measured = []
        for sample in range(options.samples):
            pages_of_topic = truth.seeds(topic, options.seeds, options.seed + sample)
            seeds = pages_of_topic
            if options.seed_distance:
                seeds = truth.distant_seeds(
                    topic, options.seeds, options.seed + sample, options.seed_distance, graph
                )
            if options.taxonomy == "examples":
                progress(f"{topic}: the topic from {len(pages_of_topic)} example pages", 0, 0)
                target = sibling_database(engine, template)
                try:
                    examples = _examples_of(corpus, pages_of_topic)
                    if reader is not None:  # --background shipped: found from the
                        left_out = reader.own_categories(examples)  # examples, as topic new
                        said = ", ".join(left_out) or "nothing"
                        progress(f"{topic}: left out of the background: {said}", 0, 0)
                    else:  # the topic's own category, if the corpus had one
                        left_out = [".".join(topic.split(".")[1:3])]
                    made = topic_import(background, _short(topic), examples, leave_out=left_out)
                    prepare_database(target, made, f"{ROOT}.{_short(topic)}", calibrate=True)
                finally:
                    target.dispose()
            suffix = f"_s{sample + 1}" if sample else ""
            traces: dict[str, CrawlTrace] = {}
            for strategy in options.strategies:
                label = _label(topic, strategy.value, len(options.topics)) + suffix
                database = f"{prefix}_{label}"
                plan = _plan(options, strategy, topic, seeds, pages, proxy)
                trace = _one_crawl(engine, database, template, truth, plan, progress)
                traces[strategy.value] = trace
                if options.keep_databases:
                    databases[f"{topic} {strategy.value}{suffix.replace('_', ' ')}"] = database
                else:
                    drop_database(engine, database)
            measured.append(_measure(topic, relevant, pages, seeds, traces, options.budgets))
        result = over_samples(measured)
        if options.robustness:
            result["robustness"] = _robustness(
                engine, prefix, template, truth, topic, pages, proxy, options, progress
            )
        drop_database(engine, template)
        results.append(result)
        if checkpoint is not None:
            checkpoint(_result(corpus, options, results, databases, started))
    return _result(corpus, options, results, databases, started)


def _result(
    corpus: Path,
    options: EvalOptions,
    topics: list[dict[str, Any]],
    databases: dict[str, str],
    started: float,
) -> dict[str, Any]:
    """The evaluation's JSON-ready result, of the topics measured so far."""
    return {
        "corpus": str(corpus),
        "seed": options.seed,
        "train_fraction": options.train_fraction,
        "seeds_per_topic": options.seeds,
        "taxonomy": options.taxonomy,
        "background": options.background if options.taxonomy == "examples" else None,
        "topics": list(topics),
        "databases": dict(databases),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _plan(
    options: EvalOptions,
    strategy: Strategy,
    topic: str,
    seeds: list[str],
    pages: int,
    proxy: str,
) -> CrawlPlan:
    budget = pages * max(options.budgets)
    return CrawlPlan(
        strategy, topic, seeds, budget, proxy, options.threads, options.backlog,
        distill_interval(options.distill_every, pages), options.boost,
        options.backlog_share, options.label_after, options.labels,
    )  # fmt: skip


def _share(flags: list[bool]) -> float:
    """The share of true flags, to three places (0 for none)."""
    return round(sum(flags) / max(len(flags), 1), 3)


def _label(topic: str, what: str, topics: int) -> str:
    name = what.replace("-", "_")
    if topics > 1:
        name = topic.rsplit(".", 1)[-1].lower()[:20] + "_" + name
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _one_crawl(
    engine: Engine,
    database: str,
    template: str,
    truth: GroundTruth,
    plan: CrawlPlan,
    progress: Progress,
) -> CrawlTrace:
    progress(f"{plan.strategy.value}: preparing database {database}", 0, 0)
    target = sibling_database(engine, database, template=template)
    try:
        prepare_strategy(target, plan.strategy)
        what = f"{plan.strategy.value} crawl of {plan.topic}"
        trace = run_crawl(target, plan, truth, lambda done: progress(what, done, plan.pages))
        progress(what, len(trace.urls), plan.pages)
    finally:
        target.dispose()
    return trace


def _curves(flags: list[bool], estimates: list[float | None], relevant: int) -> dict[str, Any]:
    values = [float(f) for f in flags]
    known = [e if e is not None else 0.0 for e in estimates]
    return {
        "harvest_curve": thin(cumulative_share(flags)),
        "harvest_ma100": thin(moving_average(values, 100)),
        "harvest_ma1000": thin(moving_average(values, 1000)),
        "recall_curve": thin(recall_curve(flags, relevant)),
        "estimate_ma100": thin(moving_average(known, 100)),
        "estimate_ma1000": thin(moving_average(known, 1000)),
    }


def _verdict(trace: CrawlTrace, relevant: frozenset[str]) -> dict[str, Any]:
    """The crawl's own verdict, the pages ``export --what relevant`` would give (among
    those fetched, R at least RELEVANT, less those mostly links: MOSTLY_LINKS), against
    the ground truth: its precision, and its recall among the relevant pages the crawl
    fetched."""
    shares = trace.link_shares or [None] * len(trace.urls)
    said = {
        url
        for url, estimate, share in zip(trace.urls, trace.estimates, shares, strict=True)
        if (estimate or 0.0) >= RELEVANT and (share is None or share < MOSTLY_LINKS)
    }
    true = said & relevant
    fetched_relevant = relevant.intersection(trace.urls)
    return {
        "verdict_pages": len(said),
        "verdict_precision": round(len(true) / len(said), 3) if said else 0.0,
        "verdict_recall": round(len(true) / len(fetched_relevant), 3) if fetched_relevant else 0.0,
    }


def _measure(
    topic: str,
    relevant: frozenset[str],
    pages: int,
    seeds: list[str],
    traces: dict[str, CrawlTrace],
    budgets: Sequence[int] = (1,),
) -> dict[str, Any]:
    strategies: dict[str, Any] = {}
    for name, trace in traces.items():
        flags = [url in relevant for url in trace.urls]
        first = flags[:pages]
        sized = flags[: len(relevant)]
        good_authorities = [url in relevant for url in trace.authorities[:25]]
        # what each request found, failures included: the budget a user pays
        found = [ok and url in relevant for url, ok in trace.attempts] or flags
        strategies[name] = {
            "fetched": len(trace.urls),
            "attempts": len(trace.attempts) or len(trace.urls),
            "failed_attempts": sum(not ok for _, ok in trace.attempts),
            "per_attempt": _share(found[:pages]),
            "harvest": _share(first),
            "harvest_fetched": _share(flags),
            "recall": round(sum(found[:pages]) / len(relevant), 3),
            **{
                f"recall_{b}n": round(sum(found[: b * pages]) / len(relevant), 3)
                for b in budgets
                if b != 1
            },
            **_verdict(trace, relevant),
            "harvest_at_topic_size": _share(sized),
            "mean_estimate": round(
                sum(e or 0.0 for e in trace.estimates[:pages]) / max(len(first), 1), 3
            ),
            "seconds": trace.seconds,
            "selection_ms_per_page": round(1000 * trace.selection_cpu / max(len(flags), 1), 3),
            "distiller_runs": trace.distills,
            "top25_authorities_relevant": _share(good_authorities),
            "authority_distance": histogram(trace.authority_distances),
            **_curves(flags, trace.estimates, len(relevant)),
        }
    return {
        "topic": topic,
        "relevant_pages": len(relevant),
        "pages": pages,
        "seeds": seeds,
        "strategies": strategies,
    }


def _robustness(
    engine: Engine,
    prefix: str,
    template: str,
    truth: GroundTruth,
    topic: str,
    pages: int,
    proxy: str,
    options: EvalOptions,
    progress: Progress,
) -> dict[str, Any]:
    """Two soft crawls from disjoint random 30% samples of the seeds; how far they agree."""
    pool = truth.seeds(topic, max(options.seeds, 10), options.seed)
    shuffled = random.Random(options.seed + 1).sample(pool, len(pool))
    size = max(1, round(0.3 * len(pool)))
    samples = [shuffled[:size], shuffled[size : 2 * size]]
    traces = []
    for n, sample in enumerate(samples, 1):
        database = f"{prefix}_{_label(topic, f'robust{n}', len(options.topics))}"
        plan = _plan(options, Strategy.SOFT, topic, sample, pages, proxy)
        traces.append(_one_crawl(engine, database, template, truth, plan, progress))
    relevant = truth.relevant(topic)
    a, b = traces
    good_a = [u for u in a.urls if u in relevant]
    good_b = [u for u in b.urls if u in relevant]
    servers_a = first_distinct(a.authority_hosts, 25)
    servers_b = first_distinct(b.authority_hosts, 25)
    result = {
        "seed_samples": samples,
        "url_overlap": thin(overlap_curve(a.urls, b.urls)),
        "relevant_url_overlap": thin(overlap_curve(good_a, good_b)),
        "server_overlap": thin(
            overlap_curve(
                first_distinct(a.hosts, len(a.hosts)), first_distinct(b.hosts, len(b.hosts))
            )
        ),
        "top25_authorities_overlap": round(
            len(set(a.authorities[:25]) & set(b.authorities[:25])) / 25, 3
        ),
        "top25_authority_servers": [servers_a, servers_b],
        "top25_authority_servers_overlap": round(
            len(set(servers_a) & set(servers_b)) / max(len(set(servers_a) | set(servers_b)), 1), 3
        ),
        "harvest": [_share([u in relevant for u in t.urls[:pages]]) for t in traces],
    }
    return result
