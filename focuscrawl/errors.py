"""Exceptions that focuscrawl raises on purpose.

Every error a user can act on is a ``FocuscrawlError``; the CLI prints its message
on one line and exits with status 2. Library errors (psycopg2, libcurl, OSError) are
translated at exactly one boundary each, with ``raise ... from exc``.

    FocuscrawlError
    ├── ConfigError        a setting, flag or config file is wrong
    ├── DatabaseError      PostgreSQL cannot be reached, started or migrated
    │   └── SchemaError    the database schema is newer than this code, or broken
    ├── InvalidURL         a URL that cannot be crawled (bad scheme, no host, ...)
    ├── FetchError         fetching a page failed (expected; stored as row state)
    ├── CorpusError        a web-in-a-box corpus is missing or malformed
    └── TaxonomyError      a topic tree or its examples are malformed
"""

from __future__ import annotations

import json
import math

from pydantic import ValidationError

__all__ = [
    "ConfigError",
    "CorpusError",
    "DatabaseError",
    "FetchError",
    "FocuscrawlError",
    "InvalidURL",
    "SchemaError",
    "TaxonomyError",
    "check_range",
    "check_tcp_port",
    "first_invalid",
]


class FocuscrawlError(Exception):
    """Base class: the message is meant for the user and fits on one line."""


class ConfigError(FocuscrawlError):
    """A setting, command-line flag or configuration file is wrong."""


class DatabaseError(FocuscrawlError):
    """PostgreSQL cannot be reached, started or migrated."""


class SchemaError(DatabaseError):
    """The database schema does not match what this version of focuscrawl expects."""


class InvalidURL(FocuscrawlError):
    """A URL focuscrawl cannot crawl."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"invalid URL {url!r}: {reason}")
        self.url = url
        self.reason = reason


class FetchError(FocuscrawlError):
    """Fetching a page failed."""


class CorpusError(FocuscrawlError):
    """A web-in-a-box corpus is missing or malformed."""


class TaxonomyError(FocuscrawlError):
    """A topic tree or its example documents are malformed."""


def first_invalid(exc: ValidationError) -> str:
    """The first fault pydantic found, as one line: where (``headers."a b"``,
    ``allow_domains.0``; a key that is no plain name is quoted, so a key holding a
    line break cannot break the line) and why, in lower case."""
    error = exc.errors()[0]
    where = ".".join(
        part if isinstance(part, str) and part.isidentifier() else json.dumps(part)
        for part in error["loc"]
    )
    reason = error.get("ctx", {}).get("error")  # a validator's own ValueError
    why = str(reason) if reason is not None else str(error["msg"])
    why = " ".join((why[:1].lower() + why[1:]).split())
    return f"{where}: {why}" if where else why


def check_range(name: str, value: float, low: float, high: float | None = None) -> None:
    """A ConfigError naming ``name`` unless ``low <= value <= high`` (None: no upper
    bound; NaN is in no range)."""
    if low <= value <= (math.inf if high is None else high):
        return
    bounds = f"at least {low:g}" if high is None else f"between {low:g} and {high:g}"
    raise ConfigError(f"{name} must be {bounds}, not {value}")


def check_tcp_port(option: str, port: int) -> None:
    """A ConfigError naming ``option`` unless ``port`` is a TCP port (0: any free one)."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"{option} {port}: not a TCP port (0-65535)")
