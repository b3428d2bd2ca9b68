"""``focuscrawl label``: an operator's verdict on fetched pages, and what to label next."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import engine_from, read_url_file
from focuscrawl.errors import ConfigError
from focuscrawl.topics.labels import label, suggest


def label_command(
    ctx: typer.Context,
    urls: Annotated[
        list[str] | None,
        typer.Argument(
            help="Fetched pages to label; or the word 'suggest': list the pages whose "
            "labels would teach the most.",
            show_default=False,
        ),
    ] = None,
    good: Annotated[bool, typer.Option("--good", help="The pages are on the topic.")] = False,
    bad: Annotated[bool, typer.Option("--bad", help="The pages are off the topic.")] = False,
    file: Annotated[
        Path | None,
        typer.Option(
            "-f",
            "--file",
            help="Read URLs from this file ('-': standard input).",
            show_default=False,
        ),
    ] = None,
    category: Annotated[
        str | None,
        typer.Option(
            help="Make them examples of this category (default: the good, or not "
            "good, leaf the classifier finds most likely).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("-n", help="suggest: how many pages.")] = 20,
) -> None:
    """Label fetched pages --good or --bad: each becomes a training example; then
    `focuscrawl classify train --rescore`. `focuscrawl label suggest` lists candidates."""
    given = list(urls or [])
    if given == ["suggest"]:
        for s in suggest(engine_from(ctx), limit):
            title = (s.title or "")[:60]
            typer.echo(f"{s.relevance:.3f}  {s.why:<38}  {s.url}  {title}")
        return
    if good == bad:
        raise ConfigError("label: say --good or --bad")
    if file is not None:
        given += read_url_file(file, "URL file")
    done = label(engine_from(ctx), given, good, category)
    for item in done:
        typer.echo(f"{'good' if item.good else 'bad '}  {item.category}  {item.url}")
    print(
        f"labelled {len(done)} pages; train on them: focuscrawl classify train --rescore",
        file=sys.stderr,
    )
