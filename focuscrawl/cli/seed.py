"""``focuscrawl seed``: check seed URLs into the frontier."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import Group, engine_from, read_url_file
from focuscrawl.db.seeds import add_seeds
from focuscrawl.errors import ConfigError

app = typer.Typer(cls=Group, help="Check seed URLs into the frontier.", no_args_is_help=True)


@app.command()
def add(
    ctx: typer.Context,
    urls: Annotated[list[str] | None, typer.Argument(help="Seed URLs.", show_default=False)] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "-f",
            "--file",
            help="A file of URLs, one a line ('-' reads standard input).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Add seed URLs at the highest priority, normalised and deduplicated.

    Invalid URLs are reported and skipped; the valid ones are still added.
    Exits 1 when any URL was invalid.
    """
    given = list(urls or [])
    if file is not None:
        given.extend(read_url_file(file, "seed file"))
    if not given:
        raise ConfigError("no seed URLs given: name them, or use -f FILE")
    engine = engine_from(ctx)
    with engine.begin() as connection:
        result = add_seeds(connection, given)
    for error in result.invalid:
        typer.echo(f"skipped {error}", err=True)
    typer.echo(
        f"{len(result.added)} added, {len(result.raised)} raised to seed priority, "
        f"{len(result.already_fetched)} already crawled, {result.duplicates} duplicates, "
        f"{len(result.invalid)} invalid"
    )
    if result.failed_before:
        typer.echo(
            f"{len(result.failed_before)} failed before, for good; once the cause is mended, "
            "focuscrawl crawl retry puts them back in the frontier",
            err=True,
        )
    if result.invalid:
        raise typer.Exit(1)
