"""What the benchmarks share: a scratch database, timing helpers and JSON output."""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from focuscrawl.database import make_engine, upgrade
from focuscrawl.embedded import EmbeddedServer

RESULTS = Path(__file__).resolve().parent / "results"


@contextmanager
def scratch_engine(database_url: str | None = None) -> Iterator[Engine]:
    """A migrated database nobody else uses: a throw-away embedded server unless a URL is given."""
    if database_url:
        engine = make_engine(database_url)
        upgrade(engine)
        yield engine
        engine.dispose()
        return
    with tempfile.TemporaryDirectory(prefix="focuscrawl-bench-") as home:
        server = EmbeddedServer(Path(home))
        server.up()
        engine = make_engine(server.url())
        try:
            upgrade(engine)
            yield engine
        finally:
            engine.dispose()
            server.down()


def percentiles(samples_s: list[float]) -> dict[str, float]:
    ordered = sorted(samples_s)
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "p90_ms": ordered[int(0.9 * (len(ordered) - 1))] * 1e3,
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1e3,
        "max_ms": ordered[-1] * 1e3,
    }


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def write_results(name: str, results: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {
        "benchmark": name,
        "machine": {"cpus": _cpus(), "python": platform.python_version()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **results,
    }
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def _cpus() -> int:
    import os

    return os.cpu_count() or 0
