"""Running the distiller: each run is a ``distill_run`` row with its ``hits_score``
rows, computed by ``sql/distill.sql`` inside PostgreSQL (the graph never comes to
Python)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine

from focuscrawl.db.database import execute
from focuscrawl.db.outages import retry_rolled_back
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import shard_map
from focuscrawl.errors import FocuscrawlError, check_range

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_SHARE",
    "DEFAULT_TOLERANCE",
    "HitsRun",
    "boost",
    "latest_run",
    "run_hits",
    "top",
]

DEFAULT_SHARE = 0.15  # candidate authorities: this top share of fetched pages by relevance
DEFAULT_ITERATIONS = 50
DEFAULT_TOLERANCE = 1e-12  # stop early when the L1 change of hubs + authorities is below


@dataclass
class HitsRun:
    run_id: int
    iterations: int
    change: float | None
    hubs: int
    authorities: int
    edges: int
    threshold: float | None


def run_hits(
    engine: Engine,
    share: float = DEFAULT_SHARE,
    iterations: int = DEFAULT_ITERATIONS,
    tolerance: float = DEFAULT_TOLERANCE,
) -> HitsRun:
    """One distillation in one transaction; its scores become visible when it is done."""
    if not 0 < share <= 1:
        raise FocuscrawlError("--share must be above 0 and at most 1")
    check_range("--iterations", iterations, 1)
    check_range("--tolerance", tolerance, 0.0)

    def distil() -> tuple[int, Any]:
        with engine.begin() as connection:
            execute(connection, queries["create_hits_function"])
            run = execute(connection, queries["start_run"], {"share": share}).scalar_one()
            params = {"run": run, "share": share, "iterations": iterations, "tolerance": tolerance}
            row = execute(connection, queries["run_hits"], params).one()
            execute(connection, queries["finish_run"], {"run": run, "iterations": row.iterations})
        return run, row

    run, row = retry_rolled_back(distil)
    return HitsRun(
        run, row.iterations, row.change, row.hubs, row.authorities, row.edges, row.threshold
    )


def latest_run(engine: Engine) -> int:
    with engine.connect() as connection:
        run = execute(connection, queries["latest_run"]).first()
    if run is None:
        raise FocuscrawlError("no distiller run yet; run: focuscrawl distill run")
    return int(run.run_id)


def top(engine: Engine, hubs: bool, limit: int = 25, run: int | None = None) -> list[Any]:
    """(url, score, relevance, host) of the best hubs or authorities of a run (the latest)."""
    run = latest_run(engine) if run is None else run
    name = "top_hubs" if hubs else "top_authorities"
    with engine.connect() as connection:
        return list(execute(connection, queries[name], {"run": run, "limit": limit}))


def boost(engine: Engine, hubs: int = 25, run: int | None = None) -> list[str]:
    """Give unvisited cross-site out-neighbours of the best hubs seed rank; their URLs."""
    run = latest_run(engine) if run is None else run

    def raise_neighbours() -> list[Any]:
        with engine.begin() as connection:
            best = {"run": run, "hubs": hubs}
            targets = [r.oid for r in execute(connection, queries["boost_targets"], best)]
            raised: list[Any] = []
            for buckets, oids in shard_map(connection).split(targets):
                params = {"oids": oids, "buckets": buckets}
                raised += execute(connection, queries["boost"], params).all()
            return raised

    return [r.url for r in retry_rolled_back(raise_neighbours)]
