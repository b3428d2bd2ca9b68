"""``focuscrawl classify``: train, run, rescore and evaluate the classifier."""

from __future__ import annotations

import json
import logging
import signal
import time
from typing import Annotated

import typer

from focuscrawl.cli.common import (
    Group,
    MetricsHost,
    MetricsPort,
    engine_from,
    serve_metrics,
    settings_from,
)
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.topics.taxonomy import load_tree
from focuscrawl.web.corpus import corpus_dir

app = typer.Typer(cls=Group, help="The hierarchical classifier.", no_args_is_help=True)

# Defaults repeated from focuscrawl.classifier (a test checks they agree): the
# classifier's modules load numpy, scipy and scikit-learn, a second at the start of
# every command, so commands import them only when they run.
DEFAULT_FEATURES = 20000
DEFAULT_ALPHA = 0.1
DEFAULT_CHILDREN = "mixture"
BATCH = 256


@app.command()
def train(
    ctx: typer.Context,
    features: Annotated[int, typer.Option(help="Terms kept per internal node (Fisher).")] = (
        DEFAULT_FEATURES
    ),
    alpha: Annotated[float, typer.Option(help="Laplace smoothing of term probabilities.")] = (
        DEFAULT_ALPHA
    ),
    children: Annotated[
        str,
        typer.Option(
            help="How a node models its children: 'mixture' (one multinomial per labelled "
            "category below each child) or 'pooled' (one per child)."
        ),
    ] = DEFAULT_CHILDREN,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore",
            help="Then put every scored page back in the classifier's queue, to be scored "
            "by the new model (after labels: focuscrawl label).",
        ),
    ] = False,
    calibrate: Annotated[
        bool | None,
        typer.Option(
            "--calibrate/--no-calibrate",
            help="Calibrate the relevance on the good categories' examples, each left out "
            "of a training (up to ten more trainings; topic new does). Default: as the "
            "model in use was.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Train on the stored examples (labelled pages among them) and store the model;
    classifiers switch to it."""
    from focuscrawl.classifier.store import requeue_scored, train_model

    engine = engine_from(ctx)
    model_id, model = train_model(
        engine, features, alpha, children, with_crawl=rescore, calibrate=calibrate
    )
    p = model.params
    typer.echo(
        f"model {model_id}: {p['nodes']} nodes, {p['terms']} terms "
        f"(of {p['vocabulary']}), {features} per node, {p['components']} {children} "
        f"components, alpha {alpha}"
    )
    if model.calibration is not None:
        c = model.calibration
        typer.echo(
            f"relevance calibrated on {len(c.held)} left-out examples: R = 0.5 at "
            f"{c.threshold:.4f} log-odds per term"
        )
    if rescore:
        pages = requeue_scored(engine)
        typer.echo(f"{pages:,} pages queued to be scored again: focuscrawl classify run")


@app.command()
def info(ctx: typer.Context) -> None:
    """Show the trained models, newest (the one in use) first."""
    engine = engine_from(ctx)
    with engine.connect() as connection:
        rows = execute(connection, queries["model_summaries"]).all()
        digest = load_tree(connection).digest()
        backlog = execute(connection, queries["classifier_backlog"]).scalar()
        links = execute(connection, queries["link_learner_summary"]).one()
    if not rows:
        typer.echo("no model; run: focuscrawl classify train")
    for i, row in enumerate(rows):
        p = row.params
        status = "in use" if i == 0 else "old"
        if row.taxonomy_digest != digest:
            status += ", other taxonomy"
        typer.echo(
            f"model {row.model_id} ({status}): trained {row.created_at:%Y-%m-%d %H:%M:%S} on "
            f"{row.examples} documents; {p['nodes']} nodes, {p['terms']} terms, "
            f"{p['features_per_node']} per node ({p['selection']}), alpha {p['alpha']}; "
            f"{row.bytes:,} bytes; scored {row.scored} pages"
        )
    typer.echo(f"backlog: {backlog} fetched pages not yet scored")
    if links.versions:
        typer.echo(
            f"link learner: versions {links.versions}, the newest ({links.newest}) learned "
            f"from {links.learned:,} links; {links.queued:,} queued; frontier estimate "
            f"{links.estimate}"
        )
    else:
        typer.echo(
            f"link learner: no version yet (no links between examples; it learns from the "
            f"crawl); frontier estimate {links.estimate}"
        )


@app.command()
def run(
    ctx: typer.Context,
    batch: Annotated[int, typer.Option(help="Pages per transaction.")] = BATCH,
    once: Annotated[bool, typer.Option("--once", help="Exit when the queue is empty.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    metrics_port: MetricsPort = None,
    metrics_host: MetricsHost = "127.0.0.1",
) -> None:
    """Score fetched pages and pass relevance to their out-links, until SIGTERM."""
    from focuscrawl import heap
    from focuscrawl.classifier.apprentice import LinkLearner
    from focuscrawl.classifier.process import Classifier, ClassifyStats

    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )

    def progress(stats: ClassifyStats) -> None:
        if not quiet and stats.batches % 10 == 1:
            typer.echo(f"scored {stats.scored} pages, {stats.rate():.0f} pages/s", err=True)

    classifier = Classifier(engine_from(ctx), batch=batch, on_batch=progress)
    serve_metrics(classifier.metrics.registry, metrics_port, metrics_host)

    def stop(signum: int, frame: object) -> None:
        classifier.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not once:  # a process that runs for hours: its imports are never walked again
        LinkLearner.warm_up()
        heap.settle()
    stats = classifier.run(once=once)
    if not quiet:
        typer.echo(f"scored {stats.scored} pages; {stats.rate():.0f} pages/s")
        if stats.scored:
            typer.echo(stats.cpu.describe(stats.scored, time.process_time()))


@app.command()
def rescore(ctx: typer.Context) -> None:
    """Recompute relevance after good marks changed (no retraining), and the frontier."""
    from focuscrawl.classifier.rescore import rescore as rescore_all

    result = rescore_all(engine_from(ctx))
    typer.echo(f"rescored {result.pages} pages; {result.frontier} frontier URLs re-estimated")
    if result.skipped_models:
        typer.echo(
            f"left pages of models {result.skipped_models}: trained on another taxonomy; "
            "run classify train, then reclassify"
        )


@app.command()
def evaluate(
    ctx: typer.Context,
    corpus: Annotated[str, typer.Option(help="Web-in-a-box corpus with ground truth.")] = (
        "wikispeedia"
    ),
    topic: Annotated[
        list[str] | None,
        typer.Option(
            help="Evaluate relevance with these categories as the good set (repeat for "
            "several topics; comma-separated paths form one set). Default: the marked ones.",
            show_default=False,
        ),
    ] = None,
    threshold: Annotated[float, typer.Option(help="R(d) above this counts as relevant.")] = 0.5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Accuracy per level and relevance F1 on labelled pages that were not examples,
    against a flat naive Bayes in the same run."""
    from focuscrawl.evaluation.classifier import evaluate as evaluate_model

    settings = settings_from(ctx)
    topics = [t.split(",") for t in topic] if topic else None
    result = evaluate_model(
        engine_from(ctx), corpus_dir(corpus, settings.home_path), threshold, topics
    )
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
        return
    typer.echo(f"model {result.model_id}: {result.documents} labelled pages not used for training")
    levels = sorted(result.hierarchical.level)
    typer.echo(f"{'accuracy':<14}" + "".join(f"  level {k}" for k in levels) + "     leaf")
    for name, a in (("hierarchical", result.hierarchical), ("flat NB", result.flat)):
        cells = "".join(f"  {a.level.get(k, 0):7.3f}" for k in levels)
        typer.echo(f"{name:<14}{cells}  {a.leaf:7.3f}")
    typer.echo(f"relevance (R > {result.threshold})  precision  recall     F1")
    for t in result.topics:
        typer.echo(f"{', '.join(t.good) or '(nothing marked)'}: {t.relevant} relevant pages")
        for name, r in (("hierarchical", t.hierarchical), ("flat NB", t.flat)):
            typer.echo(f"  {name:<22}{r.precision:9.3f}  {r.recall:6.3f}  {r.f1:5.3f}")
