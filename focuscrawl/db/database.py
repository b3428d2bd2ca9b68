"""Connecting to PostgreSQL: the engine the settings give (the configured
``FOCUSCRAWL_DATABASE_URL``, or else the embedded server, started if needed), the
errors a user can act on, and running named statements."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.engine.url import make_url

from focuscrawl.db import arrays
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.errors import DatabaseError
from focuscrawl.settings import Settings

__all__ = [
    "database_url",
    "engine_dsn",
    "error_line",
    "execute",
    "libpq_url",
    "make_engine",
    "plain_value",
    "refused",
    "tuples",
    "unreachable",
]


def error_line(exc: BaseException) -> str:
    """The first line of a database error's message (the driver's error, when SQLAlchemy
    wraps one), or its type when it says nothing: what a one-line message quotes."""
    reason = getattr(exc, "orig", None) or exc
    lines = str(reason).strip().splitlines()
    return lines[0] if lines else type(reason).__name__


def unreachable(exc: BaseException) -> DatabaseError:
    """A one-line error for a server that went away or never answered (never the DSN)."""
    line = error_line(exc)
    missing = re.search(r'database "([^"]+)" does not exist', line)
    if missing:
        return DatabaseError(
            f"the server has no database {missing[1]!r}: check --database, "
            "FOCUSCRAWL_DATABASE or the URL (the demo's soft crawl is focuscrawl_demo_soft, "
            "there after focuscrawl demo)"
        )
    return DatabaseError(f"cannot reach PostgreSQL: {line}")


#: What PostgreSQL refuses for reasons its administrator fixes, not the code: the
#: SQLSTATE, and what to tell the user
_REFUSALS = {
    "42501": "the database role lacks a privilege this command needs",
    "25006": "the database is read-only (a standby, or default_transaction_read_only)",
    "57014": "a statement was cancelled (statement_timeout, or by an administrator)",
}


def refused(exc: BaseException) -> DatabaseError | None:
    """A one-line error for a statement PostgreSQL refused for a reason its administrator
    fixes (a missing privilege, a read-only server), or None: any other error is the
    code's, and keeps its traceback."""
    orig = getattr(exc, "orig", exc)
    reason = _REFUSALS.get(getattr(orig, "pgcode", None) or "")
    if reason is None:
        return None
    return DatabaseError(f"PostgreSQL refused: {error_line(exc)} ({reason})")


def database_url(settings: Settings) -> str:
    """The configured URL, or the embedded server's (starting it if it is down), on the
    configured ``database`` when one is set."""
    if settings.database_url:
        url = str(settings.database_url)
    else:
        url = EmbeddedServer(settings.home_path, settings.pg_shared_buffers).up().url or ""
    if not settings.database:
        return url
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError as exc:
        raise DatabaseError(f"not a database URL: {exc}") from exc
    return parsed.set(database=settings.database).render_as_string(hide_password=False)


def libpq_url(url: str) -> str:
    """The URL as psql and libpq take it (no SQLAlchemy driver suffix)."""
    _, sep, rest = url.partition("://")
    return "postgresql" + sep + rest if sep else url


def make_engine(url: str) -> Engine:
    """An engine on psycopg2 whatever spelling of the URL was configured."""
    try:
        parsed = make_url(libpq_url(url)).set(drivername="postgresql+psycopg2")
    except sa.exc.ArgumentError as exc:
        raise DatabaseError(f"not a database URL: {exc}") from exc
    arrays.register()  # lists go as one array literal each (focuscrawl.db.arrays)
    return sa.create_engine(parsed, pool_pre_ping=True, pool_size=8, max_overflow=32)


def engine_dsn(engine: Engine) -> str:
    """The engine's URL as libpq takes it, for psycopg2 connections of one's own."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def execute(
    connection: Connection, statement: str, params: Mapping[str, Any] | None = None
) -> sa.CursorResult[Any]:
    """Run a named statement's SQL text as it is, with psycopg2 ``%(name)s`` parameters."""
    return connection.exec_driver_sql(statement, dict(params or {}))


def tuples(
    connection: Connection,
    statement: str,
    params: Mapping[str, Any] | None = None,
    columns: tuple[str, ...] | None = None,
) -> list[tuple[Any, ...]]:
    """Every row of a named statement as a plain tuple, read through the DBAPI cursor of
    ``connection``, in its transaction: for the classifier's reads of every link of a
    batch of pages (30,000 rows: 14 ms, against 58 ms through SQLAlchemy's rows made into
    tuples). ``columns``: the statement's columns, in the order the caller reads them by
    position (by name costs three times as much in a loop over every link of a crawl):
    a statement edited in sql/ fails here, not silently."""
    cursor = connection.connection.cursor()
    try:
        cursor.execute(statement, dict(params or {}))
        if columns is not None:
            got = tuple(d[0] for d in cursor.description or ())
            if got != columns:
                raise RuntimeError(f"a statement gives the columns {got}, where {columns} are read")
        return cast(list[tuple[Any, ...]], cursor.fetchall())
    finally:
        cursor.close()


def plain_value(value: Any) -> Any:
    """A value of a result row as JSON, CSV and tables take it: numerics as floats,
    anything but None, numbers, text and booleans as text."""
    if isinstance(value, Decimal):
        return float(value)
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)
