"""Checking seed URLs into the frontier."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import SEED_PRIORITY, DocState
from focuscrawl.errors import InvalidURL
from focuscrawl.web.urls import normalize_url, oid_of, split_url

__all__ = ["SeedResult", "add_seeds", "read_seed_file"]


@dataclass
class SeedResult:
    """What ``add_seeds`` did with each URL it was given."""

    added: list[str] = field(default_factory=list)
    raised: list[str] = field(default_factory=list)
    already_fetched: list[str] = field(default_factory=list)
    failed_before: list[str] = field(default_factory=list)  # crawl retry tries them again
    duplicates: int = 0
    invalid: list[InvalidURL] = field(default_factory=list)


def read_seed_file(text: str) -> list[str]:
    """URLs from a seed file: one a line; blank lines and lines starting ``#`` are skipped."""
    stripped = (line.strip() for line in text.splitlines())
    return [line for line in stripped if line and not line.startswith("#")]


def add_seeds(connection: Connection, urls: Iterable[str]) -> SeedResult:
    """Normalise, deduplicate and check in ``urls`` at the highest priority.

    Invalid URLs are reported in the result, never raised: the valid ones are added.
    """
    result = SeedResult()
    normalized: dict[str, None] = {}
    for url in urls:
        try:
            canonical = normalize_url(url)
        except InvalidURL as exc:
            result.invalid.append(exc)
            continue
        if canonical in normalized:
            result.duplicates += 1
        normalized[canonical] = None
    if not normalized:
        return result
    seeds = list(normalized)
    parts = [split_url(url) for url in seeds]  # doc keeps scheme and path, site the host
    hosts = [host for _, host, _ in parts]
    execute(connection, queries["upsert_sites"], {"hosts": sorted(set(hosts))})
    params = {
        "https": [https for https, _, _ in parts],
        "hosts": hosts,
        "paths": [path for _, _, path in parts],
        "priority": SEED_PRIORITY,
    }
    rows = execute(connection, queries["add_seeds"], params).all()
    by_oid = {oid_of(url): url for url in seeds}
    touched: set[int] = set()
    for row in rows:
        touched.add(row.oid)
        (result.added if row.inserted else result.raised).append(by_oid[row.oid])
    untouched = [oid for oid in by_oid if oid not in touched]
    if untouched:
        found = execute(connection, queries["seed_states"], {"oids": untouched})
        states = {row.oid: row.state for row in found}
        for oid in untouched:
            failed = states.get(oid) == DocState.FAILED
            (result.failed_before if failed else result.already_fetched).append(by_oid[oid])
    return result
