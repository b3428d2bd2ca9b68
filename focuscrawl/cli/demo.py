"""``focuscrawl demo``: the whole system, end to end, on the embedded default.

Serves the Wikispeedia web (or a generated one when the archive is nowhere to be
found), builds the taxonomy from a 30% labelled sample, marks the topic good, and
crawls from 10 relevant seeds with breadth-first and with soft focus (crawler,
classifier and distiller running together), each in a database of its own. Then it
writes the report of the soft crawl with both crawls' evaluation, and prints a
summary and the report's path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import settings_from
from focuscrawl.cli.evaluate import DEFAULT_TOPIC, run_evaluation, summary_table
from focuscrawl.cli.progress import ProgressLine
from focuscrawl.errors import ConfigError, CorpusError
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.settings import Settings
from focuscrawl.web.corpus import read_meta
from focuscrawl.webbox.synthetic import SyntheticParams, define_synthetic
from focuscrawl.webbox.wikispeedia import (
    ARCHIVE_NAME,
    archive_places,
    find_archive,
    import_wikispeedia,
)

#: The web generated when no Wikispeedia archive is found. Its pages and anchors carry
#: few words of their topic (5% and 20%), and few links stay in it (20%), so that a
#: crawl must learn its way: with whole-topic text and anchors a soft crawl's harvest is
#: 0.99-1.00 on any such web.
GENERATED = SyntheticParams(
    pages=20_000,
    hosts=200,
    seed=1,
    locality=0.2,
    sibling=0.3,
    site_purity=0.4,
    topic_share=0.05,
    anchor_share=0.2,
)
#: the name under FOCUSCRAWL_HOME/corpora by which other commands find the demo's web
DEMO_WEB = "demo"


def _remember(settings: Settings, directory: Path) -> Path:
    """Make ``directory`` the demo's web (``--corpus demo``): a link under corpora/."""
    link = settings.home_path / "corpora" / DEMO_WEB
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        raise CorpusError(f"{link} is a directory, not the demo's link; move it away")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(directory.resolve(), target_is_directory=True)
    return directory


def _corpus(settings: Settings, given: Path | None, progress: ProgressLine) -> Path:
    """The corpus directory to serve: given, already imported, imported now, or generated."""
    corpora = settings.home_path / "corpora"
    if given is not None and (given / "corpus.json").is_file():
        return given
    if given is not None and not given.is_file():
        raise CorpusError(f"--corpus {given}: neither a corpus directory nor an archive")
    wikispeedia = corpora / "wikispeedia"
    if given is None and (wikispeedia / "corpus.json").is_file():
        read_meta(wikispeedia)  # a readable, current corpus
        return wikispeedia
    archive = given or find_archive(settings.corpora)
    if archive is not None:
        import_wikispeedia(
            archive, wikispeedia, lambda n, total: progress("importing Wikispeedia", n, total)
        )
        return wikispeedia
    generated = corpora / "demo-generated"
    looked = ", ".join(str(d) for d in archive_places(settings.corpora))
    progress(
        f"no {ARCHIVE_NAME} in {looked} (give --corpus PATH or FOCUSCRAWL_CORPORA): "
        "generating a web",
        0,
        0,
    )
    define_synthetic(generated, GENERATED, "demo-generated")
    return generated


def demo_command(
    ctx: typer.Context,
    topic: Annotated[str, typer.Option(help="The good category.")] = DEFAULT_TOPIC,
    corpus: Annotated[
        Path | None,
        typer.Option(
            help="wikispeedia.tar.gz or a corpus directory (default: found in ../shared/corpora).",
            show_default=False,
        ),
    ] = None,
    pages: Annotated[int, typer.Option(help="Pages per crawl.")] = 1_500,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Report directory (default FOCUSCRAWL_HOME/reports/demo).", show_default=False
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
) -> None:
    """Run the whole system on a local web and write a report: the first command to try."""
    from sqlalchemy.engine import make_url

    from focuscrawl.db.database import database_url, make_engine
    from focuscrawl.evaluation import EvalOptions
    from focuscrawl.report import write_report

    if pages < 1:
        raise ConfigError("--pages must be at least 1")
    settings = settings_from(ctx)
    progress = ProgressLine(quiet=quiet)
    directory = _remember(settings, _corpus(settings, corpus, progress))
    base = make_url(database_url(settings))
    options = EvalOptions(
        topics=[topic],
        strategies=[Strategy.BFS, Strategy.SOFT],
        pages=pages,
        seeds=10,
        database_prefix=f"{base.database}_demo",
    )
    result = run_evaluation(ctx, str(directory), options, progress)
    soft_url = base.set(database=result["databases"][f"{topic} soft"])
    engine = make_engine(soft_url.render_as_string(hide_password=False))
    try:
        target = out or settings.home_path / "reports" / "demo"
        page = write_report(engine, target, result, title=f"focuscrawl demo: {topic}")
    finally:
        engine.dispose()
    typer.echo(summary_table(result))
    kept = f"\nThe soft crawl stays in database {soft_url.database}"
    if not settings.database_url:
        kept += ";\nthe embedded PostgreSQL keeps running (focuscrawl db down stops it)"
    look = f"focuscrawl --database {soft_url.database} monitor --once"
    typer.echo(f"{kept}. Look at the crawl:\n  {look}")
    typer.echo(f"report: {page}")
