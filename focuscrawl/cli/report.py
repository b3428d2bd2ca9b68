"""``focuscrawl report``: a static HTML report of the crawl in the database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import engine_from
from focuscrawl.errors import ConfigError


def report_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write index.html in.")],
    evaluation: Annotated[
        Path | None,
        typer.Option(
            "--eval", help="JSON written by focuscrawl eval, for its charts.", show_default=False
        ),
    ] = None,
    title: Annotated[str, typer.Option(help="Title of the page.")] = "focuscrawl report",
) -> None:
    """Write a static HTML report (inline SVG charts, no network) and print its path."""
    from focuscrawl.report import write_report

    data = None
    if evaluation is not None:
        try:
            data = json.loads(evaluation.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"--eval {evaluation}: not a readable evaluation JSON ({exc})"
            ) from exc
        if not isinstance(data, dict) or "topics" not in data:
            raise ConfigError(f"--eval {evaluation}: not written by focuscrawl eval")
    try:
        page = write_report(engine_from(ctx), out, data, title)
    except OSError as exc:
        why = exc.strerror or exc
        raise ConfigError(f"--out {out}: cannot write the report there ({why})") from None
    typer.echo(str(page))
