"""Connecting to PostgreSQL and keeping its schema at the migrations' head.

The one place that turns settings into an engine: the configured
``FOCUSCRAWL_DATABASE_URL``, or else the embedded server (started if needed).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg2.errors
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.engine.url import make_url

from focuscrawl.db import arrays
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.db.resources import resource_dir
from focuscrawl.errors import DatabaseError, SchemaError
from focuscrawl.settings import Settings

if TYPE_CHECKING:  # alembic is imported where it runs: a tenth of a second at every start
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = [
    "MAIN",
    "OPTIONAL_BRANCHES",
    "alembic_config",
    "applied_revisions",
    "close_quietly",
    "current_heads",
    "current_revision",
    "database_url",
    "downgrade",
    "engine_dsn",
    "ensure_branch",
    "ensure_schema",
    "error_line",
    "execute",
    "head_revision",
    "layout_changed",
    "libpq_url",
    "make_engine",
    "open_database",
    "plain_value",
    "refused",
    "retry_rolled_back",
    "retry_until_done",
    "revision_name",
    "rolled_back",
    "sibling_database",
    "unavailable",
    "unreachable",
    "upgrade",
]

#: The main line of migrations, which every database takes.
MAIN = "main@head"
#: Migration branches a database takes only when a feature needs them: ``baselines``
#: holds the frontier indexes of the bfs and unfocused crawl orders.
OPTIONAL_BRANCHES = ("baselines",)

# Serialises automatic upgrades between processes that start at the same time.
_MIGRATION_LOCK_KEY = 0x66C0_0001


def error_line(exc: BaseException) -> str:
    """The first line of a database error's message (the driver's error, when SQLAlchemy
    wraps one), or its type when it says nothing: what a one-line message quotes."""
    reason = getattr(exc, "orig", None) or exc
    lines = str(reason).strip().splitlines()
    return lines[0] if lines else type(reason).__name__


def unreachable(exc: BaseException) -> DatabaseError:
    """A one-line error for a server that went away or never answered (never the DSN)."""
    return DatabaseError(f"cannot reach PostgreSQL: {error_line(exc)}")


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
    """The configured URL, or the embedded server's (starting it if it is down)."""
    if settings.database_url:
        return str(settings.database_url)
    return EmbeddedServer(settings.home_path, settings.pg_shared_buffers).up().url or ""


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


def alembic_config(connection: Connection | None = None) -> Config:
    """An alembic config that needs no alembic.ini: migrations ship with the package."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resource_dir("migrations")))
    config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    """The migrations that ship with the package (read once per process)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


@functools.cache
def _known_revisions() -> frozenset[str]:
    return frozenset(script.revision for script in _scripts().walk_revisions())


def _unknown(heads: tuple[str, ...]) -> list[str]:
    """Stamped revisions this version of focuscrawl has no migration for."""
    return [head for head in heads if head not in _known_revisions()]


@functools.cache
def _line(target: str) -> tuple[str, ...]:
    """The revisions from ``target`` (``main@head``, ``baselines@head``) down to base,
    newest first, with what it depends on."""
    line = tuple(script.revision for script in _scripts().iterate_revisions(target, "base"))
    assert line, f"the migrations have no revisions for {target}"
    return line


def head_revision() -> str:
    """The newest revision of the main line (what every command needs)."""
    return _line(MAIN)[0]


def current_heads(connection: Connection) -> tuple[str, ...]:
    """The revisions stamped in the database: the newest of each line it has taken."""
    if connection.exec_driver_sql("SELECT to_regclass('alembic_version')").scalar() is None:
        return ()
    stamped = connection.exec_driver_sql("SELECT version_num FROM alembic_version")
    return tuple(sorted(stamped.scalars()))


_MIGRATION_FIELD = re.compile(r"^(revision|down_revision|branch_labels)\b[^=]*=(.*)$", re.M)


@functools.cache
def _shipped_heads() -> tuple[str, frozenset[str]]:
    """(the main line's newest revision, the newest of every line) of the migrations
    that ship with the package, read off their files without alembic: what
    ``ensure_schema`` checks first (tests/integration/test_migrations.py holds it to
    alembic's graph)."""
    below: dict[str, list[str]] = {}
    labelled: set[str] = set()
    for path in (resource_dir("migrations") / "versions").glob("*.py"):
        fields = dict(_MIGRATION_FIELD.findall(path.read_text(encoding="utf-8")))
        revision = re.findall(r'"([^"]+)"', fields.get("revision", ""))[0]
        below[revision] = re.findall(r'"([^"]+)"', fields.get("down_revision", ""))
        if any(label in fields.get("branch_labels", "") for label in OPTIONAL_BRANCHES):
            labelled.add(revision)
    heads = set(below) - {parent for parents in below.values() for parent in parents}

    def optional(revision: str) -> bool:
        return revision in labelled or any(optional(p) for p in below[revision])

    (main,) = (head for head in heads if not optional(head))
    return main, frozenset(heads)


def applied_revisions(heads: tuple[str, ...]) -> set[str]:
    """Every revision that the stamped ``heads`` stand for: themselves, their ancestors
    and what they depend on (heads this version does not know stand for nothing)."""
    known = tuple(head for head in heads if head in _known_revisions())
    if not known:
        return set()
    return {script.revision for script in _scripts().iterate_revisions(known, "base")}


def _own_revisions(label: str) -> set[str]:
    """The revisions of an optional branch that are not on the main line."""
    return set(_line(f"{label}@head")) - set(_line(MAIN))


def _branch_head(label: str) -> str:
    return _line(f"{label}@head")[0]


def current_revision(connection: Connection) -> str | None:
    """The main line's revision the database is at, with the optional branches it has
    taken (``0006 + baselines``); None before the first migration."""
    return revision_name(current_heads(connection))


def revision_name(heads: tuple[str, ...]) -> str | None:
    """What ``current_revision`` says of a database stamped with ``heads``."""
    if not heads:
        return None
    unknown = _unknown(heads)
    if unknown:
        return ", ".join(unknown)
    applied = applied_revisions(heads)
    main = [revision for revision in _line(MAIN) if revision in applied]
    names = [main[0]] if main else []
    for label in OPTIONAL_BRANCHES:
        if _own_revisions(label) & applied:
            names.append(label)
    return " + ".join(names)


def _with_lock(engine: Engine, action: str, revision: str) -> None:
    try:
        with engine.begin() as connection:
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_MIGRATION_LOCK_KEY)))
            from alembic import command

            config = alembic_config(connection)
            if action == "upgrade":
                command.upgrade(config, revision)
            else:
                command.downgrade(config, revision)
    except sa.exc.OperationalError as exc:
        raise unreachable(exc) from exc
    except sa.exc.DBAPIError as exc:
        raise SchemaError(
            f"migration ({action} to {revision}) failed and was rolled back: {error_line(exc)}"
        ) from exc


def upgrade(engine: Engine, revision: str = MAIN) -> None:
    _with_lock(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> None:
    _with_lock(engine, "downgrade", revision)


def _stamped_heads(engine: Engine) -> tuple[str, ...]:
    try:
        with engine.connect() as connection:
            return current_heads(connection)
    except sa.exc.OperationalError as exc:
        raise unreachable(exc) from exc


def ensure_schema(engine: Engine) -> None:
    """Upgrade the main line, and any optional branch the database has taken, to their
    newest revisions; refuse a schema from a newer version of focuscrawl."""
    heads = _stamped_heads(engine)
    main, newest = _shipped_heads()
    if main in heads and newest.issuperset(heads):
        return  # at the newest of every line it has taken: nothing for alembic to do
    unknown = _unknown(heads)
    if unknown:
        raise SchemaError(
            f"the database is at schema revision {', '.join(unknown)}, which this version of "
            "focuscrawl does not know; upgrade focuscrawl"
        )
    applied = applied_revisions(heads)
    if head_revision() not in applied:
        upgrade(engine)
    for label in OPTIONAL_BRANCHES:
        if _own_revisions(label) & applied and _branch_head(label) not in applied:
            upgrade(engine, f"{label}@head")


def ensure_branch(engine: Engine, label: str) -> bool:
    """Apply the optional migration branch ``label`` unless the database has it; true
    when it was applied now."""
    if label not in OPTIONAL_BRANCHES:
        raise SchemaError(f"no optional schema branch {label!r}: one of {OPTIONAL_BRANCHES}")
    if _branch_head(label) in applied_revisions(_stamped_heads(engine)):
        return False
    _log.info("applying the optional schema branch %s", label)
    upgrade(engine, f"{label}@head")
    return True


def open_database(settings: Settings, migrate: bool = True) -> Engine:
    """Engine for the configured database, migrated to head unless ``migrate`` is false."""
    engine = make_engine(database_url(settings))
    if migrate:
        ensure_schema(engine)
    return engine


_T = TypeVar("_T")
_log = logging.getLogger("focuscrawl.db.database")


def rolled_back(exc: BaseException) -> bool:
    """PostgreSQL rolled the transaction back to resolve a deadlock or a serialization
    conflict: nothing was written, and running it again is the cure."""
    orig = getattr(exc, "orig", exc)
    return isinstance(orig, psycopg2.errors.TransactionRollbackError)


def retry_rolled_back(action: Callable[[], _T], attempts: int = 5) -> _T:
    """Run a transaction, again (up to ``attempts`` times) when PostgreSQL rolls it back
    or Citus's shards changed under it (a transaction that reads the layout, as the
    distiller's does, reads the new one)."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except sa.exc.DBAPIError as exc:
            if not (rolled_back(exc) or layout_changed(exc)) or attempt == attempts:
                raise
            _log.warning("event=retry attempt=%d error=%s", attempt, str(exc.orig).strip()[:80])
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")


#: Seconds a long-running program waits before it tries PostgreSQL again.
OUTAGE_RETRY_S = 1.0

#: What Citus says of a statement built on a layout of shards that has since changed
#: (docs/discussions/scale-out.md, "Moving and splitting shards"): a shard split (or
#: dropped) under the statement, or buckets that a split has put in two shards, which a
#: statement that locks rows may not name
_LAYOUT_CHANGED = (
    "could not find valid entry for shard",
    "could not run distributed query with FOR UPDATE/SHARE commands",
)
#: Times a transaction is run again after its layout changed before its error is taken
#: for what it says: a split settles in one try, a statement wrong on every layout must
#: not loop for ever
LAYOUT_RETRIES = 10


def layout_changed(exc: BaseException) -> bool:
    """Citus refused the statement because the shards it was grouped by have changed:
    reading the layout again and running it again is the cure."""
    orig = getattr(exc, "orig", exc)
    if not isinstance(orig, psycopg2.Error):
        return False
    message = str(orig)
    return any(phrase in message for phrase in _LAYOUT_CHANGED)


def unavailable(exc: BaseException) -> bool:
    """PostgreSQL is away (restarting, shut down, unreachable, out of connections or
    disk) rather than refusing the statement: waiting and trying again is the cure.

    Takes psycopg2's errors and SQLAlchemy's wrappers of them alike.
    """
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return True
    orig = getattr(exc, "orig", exc)
    if isinstance(orig, psycopg2.InterfaceError):
        return True  # the connection is closed
    if not isinstance(orig, psycopg2.OperationalError):
        return False
    code = orig.pgcode
    # no code: the client lost or never got the connection; 08: connection exception;
    # 57P01-57P03: the server is shutting down or starting; 53: insufficient resources
    return code is None or code[:2] in ("08", "53") or code in ("57P01", "57P02", "57P03")


def close_quietly(connection: Any) -> None:
    """Close a psycopg2 connection (or None) that a failure may have left broken."""
    if connection is not None:
        with contextlib.suppress(psycopg2.Error):
            connection.close()


def _database_error(exc: BaseException) -> BaseException | None:
    """The database error ``exc`` is, or was raised from (None: it has nothing to do
    with the database)."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; a cycle must not loop forever
        if seen is None:
            return None
        if isinstance(seen, (psycopg2.Error, sa.exc.DBAPIError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def retry_until_done(
    action: Callable[[], _T],
    what: str,
    *,
    stop: threading.Event | None = None,
    on_lost: Callable[[], None] | None = None,
    on_layout: Callable[[], None] | None = None,
) -> _T | None:
    """Run the transaction ``action`` until PostgreSQL lets it finish.

    When PostgreSQL rolls it back (a deadlock) it runs again at once; when the database
    is away (see ``unavailable``) it runs again after ``OUTAGE_RETRY_S``, for as long
    as the outage lasts. Either way ``on_lost`` is called first, to drop the connection
    the failure left behind, and the event is logged. When Citus says the shards have
    changed under it (``layout_changed``), ``on_lost`` and then ``on_layout`` (to read
    the layout again) are called, and it runs again, up to ``LAYOUT_RETRIES`` times.
    Any other error propagates. With ``stop``, a set event ends a wait and the
    result is None: the caller gives up.
    """
    layout_retries = 0
    while True:
        try:
            return action()
        except Exception as raised:
            # psycopg2 can report a connection lost in the middle of COPY as a SystemError
            # raised from the database's error: the error in the chain is what counts
            exc = _database_error(raised)
            if exc is None:
                raise
            relaid = layout_changed(exc) and layout_retries < LAYOUT_RETRIES
            again = rolled_back(exc) or relaid
            if not again and not unavailable(exc):
                raise
            event = "layout_changed" if relaid else "retry" if again else "db_wait"
            _log.warning("event=%s what=%s error=%s", event, what, error_line(exc)[:100])
            if on_lost is not None:
                on_lost()
            if relaid:
                layout_retries += 1
                _read_layout(on_layout)
            pause = 0.05 * layout_retries if relaid else 0.05 if again else OUTAGE_RETRY_S
            if stop is None:
                time.sleep(pause)
            elif stop.wait(pause):
                return None


def _read_layout(read: Callable[[], None] | None) -> None:
    """``read`` the layout again; a database error doing so leaves the old one, and the
    next try of the statement says whether it still fails."""
    if read is None:
        return
    try:
        read()
    except Exception as raised:
        exc = _database_error(raised)
        if exc is None:
            raise
        _log.warning("event=layout_unread error=%s", error_line(exc)[:100])


def sibling_database(engine: Engine, name: str, template: str | None = None) -> Engine:
    """A new, empty, migrated database ``name`` on ``engine``'s server, or a copy of the
    database ``template``; dropped first if it exists (evaluations and the demo crawl
    each strategy in a database of its own)."""
    admin = engine.execution_options(isolation_level="AUTOCOMMIT")
    quote = engine.dialect.identifier_preparer.quote
    quoted = quote(name)
    create = f"CREATE DATABASE {quoted}"
    if template is not None:  # a file copy: no WAL for the copied pages
        create += f" TEMPLATE {quote(template)} STRATEGY FILE_COPY"
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
            connection.exec_driver_sql(create)
    except sa.exc.ProgrammingError as exc:
        raise DatabaseError(
            f"cannot create database {name!r} ({error_line(exc)}); "
            "the evaluation needs a PostgreSQL role with CREATEDB"
        ) from exc
    sibling = make_engine(engine.url.set(database=name).render_as_string(hide_password=False))
    if template is None:
        upgrade(sibling)
    return sibling


def drop_database(engine: Engine, name: str) -> None:
    """Drop the database ``name`` on ``engine``'s server, if it exists."""
    admin = engine.execution_options(isolation_level="AUTOCOMMIT")
    quoted = engine.dialect.identifier_preparer.quote(name)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")


def engine_dsn(engine: Engine) -> str:
    """The engine's URL as libpq takes it, for psycopg2 connections of one's own."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def execute(
    connection: Connection, statement: str, params: Mapping[str, Any] | None = None
) -> sa.CursorResult[Any]:
    """Run a named statement's SQL text as it is, with psycopg2 ``%(name)s`` parameters."""
    return connection.exec_driver_sql(statement, dict(params or {}))


def plain_value(value: Any) -> Any:
    """A value of a result row as JSON, CSV and tables take it: numerics as floats,
    anything but None, numbers, text and booleans as text."""
    if isinstance(value, Decimal):
        return float(value)
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)
