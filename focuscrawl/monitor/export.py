"""Crawl results as files other tools read: JSON lines or CSV, streamed.

The rows come through a server-side cursor (``yield_per``), so an export of a crawl of
any size holds a few thousand rows in memory. The file is written beside its final name
and renamed into place when complete: a failed export leaves no half file behind.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import Engine

from focuscrawl.db.queries import queries
from focuscrawl.errors import ConfigError
from focuscrawl.pids import alive

__all__ = ["COLUMNS", "FORMATS", "MOSTLY_LINKS", "RELEVANT", "WHATS", "export"]

WHATS = ("relevant", "fetched", "hubs", "authorities")
FORMATS = ("jsonl", "csv")
COLUMNS = (
    "url",
    "title",
    "relevance",
    "class",
    "fetched_at",
    "status",
    "error",
    "hub",
    "authority",
    "link_share",
)
RELEVANT = 0.5  # --what relevant without --min-relevance: R at least this
#: --what relevant leaves out pages whose link share (``doc_fetch.link_share``) is at
#: least this: most of their text is links (a home page, a section's index, a list), a
#: hub on the topic rather than a page of it. On the generated webs of sites, 2026-12-07,
#: the verdict's precision rose from 0.65 to 0.81 at recall 0.87 (docs/how-to/evaluate.md)
MOSTLY_LINKS = 0.5
ROWS_AT_ONCE = 2_000  # rows the server-side cursor hands over at a time


def _value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _rows(engine: Engine, what: str, min_relevance: float) -> Iterator[Sequence[Any]]:
    if what in ("hubs", "authorities"):
        statement = queries["export_hits"]
        params: dict[str, Any] = {"role": what[:-1] if what == "hubs" else "authority"}
    else:
        statement = queries["export_pages"]
        params = {"max_link_share": MOSTLY_LINKS if what == "relevant" else None}
    params["min_relevance"] = min_relevance
    with engine.connect() as connection:
        result = connection.execution_options(yield_per=ROWS_AT_ONCE).exec_driver_sql(
            statement, params
        )
        yield from result


def _write(rows: Iterator[Sequence[Any]], fmt: str, out: TextIO) -> int:
    count = 0
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(["" if v is None else _value(v) for v in row])
            count += 1
    else:
        for row in rows:
            out.write(json.dumps(dict(zip(COLUMNS, map(_value, row), strict=True))) + "\n")
            count += 1
    return count


#: the end of an export's temporary file, ``.NAME.PID.XXXXXXXX.partial``
PARTIAL = ".partial"


def _sweep_partials(out: Path) -> None:
    """Remove the temporary files an export to ``out`` left when it was killed (its
    PID, in the name, runs no more): the next export to the same file cleans up."""
    for path in out.parent.glob(f".{glob.escape(out.name)}.*{PARTIAL}"):
        pid = path.name.removeprefix(f".{out.name}.").partition(".")[0]
        if pid.isdigit() and not alive(int(pid)):
            path.unlink(missing_ok=True)


def export(
    engine: Engine,
    what: str,
    fmt: str = "jsonl",
    out: Path | None = None,
    min_relevance: float | None = None,
) -> int:
    """Write ``what`` (one of WHATS) as ``fmt`` to ``out`` (None: standard output);
    returns the number of rows. ``min_relevance``: only pages whose R is at least this
    (``relevant`` defaults to RELEVANT, the others to 0: every page); ``relevant`` also
    leaves out the pages that are mostly links (MOSTLY_LINKS)."""
    if what not in WHATS:
        raise ConfigError(f"--what {what!r}: expected one of {', '.join(WHATS)}")
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if min_relevance is None:
        min_relevance = RELEVANT if what == "relevant" else 0.0
    if not 0.0 <= min_relevance <= 1.0:
        raise ConfigError(f"--min-relevance {min_relevance}: R is a probability, 0 to 1")
    rows = _rows(engine, what, min_relevance)
    if out is None:
        return _write(rows, fmt, sys.stdout)
    _sweep_partials(out)
    try:
        handle, partial = tempfile.mkstemp(
            prefix=f".{out.name}.{os.getpid()}.", suffix=PARTIAL, dir=out.parent
        )
    except OSError as exc:
        raise ConfigError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            count = _write(rows, fmt, stream)
        os.chmod(partial, 0o644)  # mkstemp's file is private; an export is not
        os.replace(partial, out)
    except OSError as exc:
        Path(partial).unlink(missing_ok=True)
        raise ConfigError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return count
