"""``focuscrawl monitor``: the named monitoring queries of ``sql/monitor/``."""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap
import time
from enum import StrEnum
from typing import Annotated, Any

import typer

from focuscrawl.cli.common import Group, engine_from
from focuscrawl.db.database import execute, plain_value
from focuscrawl.db.queries import queries
from focuscrawl.errors import ConfigError

app = typer.Typer(
    cls=Group,
    help="The live view (no sub-command) and the monitoring queries of a crawl.",
    invoke_without_command=True,
)

PREFIX = "monitor/"


class Format(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


def names() -> list[str]:
    return sorted(k.removeprefix(PREFIX) for k in queries if k.startswith(PREFIX))


def render(columns: list[str], rows: list[tuple[Any, ...]], fmt: Format) -> str:
    """Rows as an aligned table, CSV or JSON (a list of objects)."""
    plain = [[plain_value(v) for v in row] for row in rows]
    if fmt is Format.JSON:
        return json.dumps([dict(zip(columns, row, strict=True)) for row in plain], indent=2)
    if fmt is Format.CSV:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(plain)
        return out.getvalue().rstrip("\n")
    cells = [columns] + [["" if v is None else str(v) for v in row] for row in plain]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@app.command()
def query(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="stagnation, diffusion, census, site_rating, ...")],
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.TABLE,
) -> None:
    """Run one named query of sql/monitor/ and print its rows."""
    if f"{PREFIX}{name}" not in queries:
        raise ConfigError(f"no monitoring query {name!r}; there are: {', '.join(names())}")
    with engine_from(ctx).connect() as connection:
        result = execute(connection, queries[f"{PREFIX}{name}"])
        columns = list(result.keys())
        rows = [tuple(r) for r in result.all()]
    typer.echo(render(columns, rows, fmt))


@app.command("list")
def list_command() -> None:
    """The monitoring queries, with what each shows."""
    for name in names():
        comment = [
            line.removeprefix("-- ").strip()
            for line in queries[f"{PREFIX}{name}"].splitlines()
            if line.startswith("--")
        ]
        # the whole description, wrapped: a first line alone stops mid-sentence
        text = " ".join(comment)
        typer.echo(textwrap.fill(f"{name:12} {text}", width=88, subsequent_indent=" " * 13))


@app.callback()
def live(
    ctx: typer.Context,
    interval: Annotated[float, typer.Option(help="Seconds between refreshes.")] = 2.0,
    window: Annotated[float, typer.Option(help="Seconds over which rates are measured.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="Print one snapshot and exit.")] = False,
    count: Annotated[
        int | None, typer.Option(help="Stop after this many refreshes.", show_default=False)
    ] = None,
) -> None:
    """Refresh a dashboard: pages, pages/s, harvest rate, frontier, classifier backlog,
    errors, and the stagnation and diffusion alarms; on a Citus cluster, each worker the
    coordinator cannot reach. Ctrl-C ends it."""
    if ctx.invoked_subcommand is not None:
        return
    if interval <= 0 or window <= 0:
        raise ConfigError("--interval and --window must be above 0")
    from focuscrawl.monitor.dashboard import Watch, health, render

    engine = engine_from(ctx)
    watch = Watch(window_s=window)
    tty = sys.stdout.isatty()
    shown = 0
    while True:
        snap, state = health(engine)  # a node or the server away is an alarm, not an end
        if snap is not None:
            watch.add(snap)
        text = render(watch, state)
        typer.echo(("\x1b[H\x1b[2J" if tty else "") + text + ("" if tty else "\n"))
        shown += 1
        if once or (count is not None and shown >= count):
            return
        time.sleep(interval)
