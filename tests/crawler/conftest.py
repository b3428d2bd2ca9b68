"""Crawls against the web-in-a-box on loopback and a fresh PostgreSQL database."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
import sqlalchemy as sa

from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler, CrawlStats
from focuscrawl.db.seeds import add_seeds
from focuscrawl.webbox import RequestLog, WebBox, WebBoxThread, iter_log
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams


@pytest.fixture(scope="session")
def synthetic() -> SyntheticCorpus:
    return SyntheticCorpus(SyntheticParams(pages=3_000, hosts=30, seed=5))


@pytest.fixture
def webbox(synthetic: SyntheticCorpus, tmp_path: Path) -> Iterator[WebBoxThread]:
    log = RequestLog(tmp_path / "requests.log")
    with WebBoxThread(WebBox(synthetic, faults=True, log=log)) as running:
        yield running


def crawl(engine: sa.Engine, proxy: str | None, seeds: list[str], **options: object) -> CrawlStats:
    """Seed and run one crawler process in this process; options override CrawlConfig."""
    with engine.begin() as connection:
        add_seeds(connection, seeds)
    fetch_options = {k: options.pop(k) for k in ("read_timeout", "max_bytes") if k in options}
    if options.pop("proxy_none", False):
        proxy = None
    defaults: dict[str, object] = {
        "mode": Mode.BFS,
        "threads": 8,
        "host_delay": 0.0,
        "idle_exit_seconds": 1.0,
        "quiet": True,
    }
    defaults.update(options)
    config = CrawlConfig(fetch=FetchConfig(proxy=proxy, **fetch_options), **defaults)  # type: ignore[arg-type]
    return Crawler(engine, config).run()


def states(engine: sa.Engine) -> dict[int, int]:
    with engine.connect() as connection:
        return dict(
            connection.exec_driver_sql("SELECT state, count(*) FROM doc GROUP BY state").all()
        )


def host_gaps(log_path: Path) -> list[float]:
    """Seconds between consecutive requests to the same host, from a webbox request log."""
    times: dict[str, list[float]] = defaultdict(list)
    for when, host, _, _, _ in iter_log(log_path):
        times[host].append(when)
    gaps = []
    for series in times.values():
        gaps.extend(b - a for a, b in pairwise(sorted(series)))
    return gaps


def requested_pages(log_path: Path) -> list[tuple[str, str]]:
    """(host, path) of every request but robots.txt, in arrival order."""
    return [(host, path) for _, host, path, _, _ in iter_log(log_path) if path != "/robots.txt"]
