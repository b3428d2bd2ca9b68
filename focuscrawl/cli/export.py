"""``focuscrawl export``: crawl results as JSON lines or CSV."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import engine_from
from focuscrawl.monitor.export import MOSTLY_LINKS, RELEVANT, export


def export_command(
    ctx: typer.Context,
    what: Annotated[
        str,
        typer.Option(
            help="relevant (pages with R at least --min-relevance, default "
            f"{RELEVANT}, less those whose text is mostly links: link_share at least "
            f"{MOSTLY_LINKS}), fetched (every page tried), hubs or authorities (the "
            "newest distiller run's, best first)."
        ),
    ] = "relevant",
    fmt: Annotated[str, typer.Option("--format", help="jsonl or csv.")] = "jsonl",
    min_relevance: Annotated[
        float | None,
        typer.Option(help="Only pages whose R is at least this (0 to 1).", show_default=False),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="File to write; standard output if not given.", show_default=False),
    ] = None,
) -> None:
    """Stream pages with URL, title, relevance, class, fetch time, status, error, hub
    and authority scores and link share, in bounded memory whatever the crawl's size."""
    count = export(engine_from(ctx), what, fmt, out, min_relevance)
    if out is not None:
        print(f"wrote {count:,} rows to {out}", file=sys.stderr)
