"""``focuscrawl distill``: weighted HITS, the best hubs and authorities, and the boost."""

from __future__ import annotations

import re
import signal
import threading
import time
from typing import Annotated

import typer

from focuscrawl.cli.common import Group, engine_from
from focuscrawl.distiller import (
    DEFAULT_ITERATIONS,
    DEFAULT_SHARE,
    DEFAULT_TOLERANCE,
    run_hits,
)
from focuscrawl.distiller import (
    boost as boost_neighbours,
)
from focuscrawl.distiller import (
    top as top_pages,
)
from focuscrawl.errors import ConfigError

app = typer.Typer(cls=Group, help="The distiller: hubs and authorities.", no_args_is_help=True)

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smh]?)$")


def parse_duration(text: str) -> float:
    """'90', '90s', '10m', '1.5h' -> seconds."""
    match = _DURATION.match(text.strip())
    if not match or float(match.group(1)) <= 0:
        raise ConfigError(f"--every {text!r}: expected a duration such as 30s, 10m or 1h")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


@app.command()
def run(
    ctx: typer.Context,
    share: Annotated[
        float,
        typer.Option(help="Top share of fetched pages (by relevance) that may be authorities."),
    ] = DEFAULT_SHARE,
    iterations: Annotated[int, typer.Option(help="At most this many iterations.")] = (
        DEFAULT_ITERATIONS
    ),
    tolerance: Annotated[float, typer.Option(help="Stop when the L1 change is below.")] = (
        DEFAULT_TOLERANCE
    ),
    every: Annotated[
        str | None,
        typer.Option(
            help="Run again every DURATION (30s, 10m, 1h) until SIGTERM.", show_default=False
        ),
    ] = None,
    boost: Annotated[bool, typer.Option("--boost", help="Boost after each run.")] = False,
    boost_hubs: Annotated[int, typer.Option(help="How many best hubs --boost follows.")] = 25,
) -> None:
    """Compute hub and authority scores over cross-site links and store them as a run."""
    interval = parse_duration(every) if every else None
    engine = engine_from(ctx)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    while True:
        result = run_hits(engine, share, iterations, tolerance)
        change = "-" if result.change is None else f"{result.change:.2e}"
        typer.echo(
            f"run {result.run_id}: {result.edges} cross-site edges, {result.hubs} hubs, "
            f"{result.authorities} authorities; {result.iterations} iterations, "
            f"last change {change}"
        )
        if boost:
            raised = boost_neighbours(engine, boost_hubs_count(boost_hubs), result.run_id)
            typer.echo(f"boosted {len(raised)} unvisited neighbours of the best hubs")
        if interval is None:
            return
        at = time.strftime("%H:%M:%S", time.localtime(time.time() + interval))
        typer.echo(f"next run in {(every or '').strip()} (at {at}); SIGTERM or Ctrl-C stops")
        if stop.wait(interval):
            return


def boost_hubs_count(value: int) -> int:
    if value < 1:
        raise ConfigError("--boost-hubs must be at least 1")
    return value


@app.command()
def top(
    ctx: typer.Context,
    hubs: Annotated[bool, typer.Option("--hubs", help="The best hubs.")] = False,
    authorities: Annotated[bool, typer.Option("--authorities", help="The best authorities.")] = (
        False
    ),
    n: Annotated[int, typer.Option("-n", help="How many.")] = 25,
) -> None:
    """Print URL, score, relevance and site of the best hubs or authorities (latest run)."""
    if hubs == authorities:
        raise ConfigError("give one of --hubs or --authorities")
    for row in top_pages(engine_from(ctx), hubs=hubs, limit=n):
        typer.echo(f"{row.score:.6f}  R={row.relevance:.3f}  {row.host}  {row.url}")


@app.command()
def boost(
    ctx: typer.Context,
    hubs: Annotated[int, typer.Option(help="How many of the best hubs to follow.")] = 25,
) -> None:
    """Give the unvisited cross-site neighbours of the best hubs seed rank (section 5.7)."""
    raised = boost_neighbours(engine_from(ctx), boost_hubs_count(hubs))
    for url in raised:
        typer.echo(url)
    typer.echo(f"boosted {len(raised)} URLs", err=True)
