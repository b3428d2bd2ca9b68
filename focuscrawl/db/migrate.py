"""The schema at the migrations' head: alembic's revisions and branches, the upgrade
every command makes as it opens the database (one process at a time), and databases
of their own (evaluations and the demo crawl each strategy in one)."""

from __future__ import annotations

import functools
import logging
import re
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.resources import resource_dir
from focuscrawl.errors import DatabaseError, SchemaError
from focuscrawl.settings import Settings

if TYPE_CHECKING:  # alembic is imported where it runs: a tenth of a second at every start
    from alembic.config import Config
    from alembic.script import ScriptDirectory
from focuscrawl.db.database import database_url, error_line, execute, make_engine, unreachable
from focuscrawl.db.queries import queries

_log = logging.getLogger("focuscrawl.db.migrate")

__all__ = [
    "MAIN",
    "OPTIONAL_BRANCHES",
    "alembic_config",
    "applied_revisions",
    "current_heads",
    "current_revision",
    "downgrade",
    "drop_database",
    "ensure_branch",
    "ensure_schema",
    "head_revision",
    "open_database",
    "revision_name",
    "sibling_database",
    "upgrade",
]

#: The main line of migrations, which every database takes.
MAIN = "main@head"


#: Migration branches a database takes only when a feature needs them: ``baselines``
#: holds the frontier indexes of the bfs and unfocused crawl orders.
OPTIONAL_BRANCHES = ("baselines",)


# Serialises automatic upgrades between processes that start at the same time.
_MIGRATION_LOCK_KEY = 0x66C0_0001


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
            if execute(connection, queries["citus_installed"]).scalar():
                execute(connection, queries["migrate_sequentially"])
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
    """Up to ``revision`` (``main@head``, ``baselines@head``, a revision such as
    ``0019``, or a step such as ``+1``); a revision alembic cannot find is a one-line
    SchemaError."""
    _migrate(engine, "upgrade", revision, "main@head, baselines@head, a revision such as 0019")


def downgrade(engine: Engine, revision: str) -> None:
    """Down to ``revision`` (``base``, a revision such as ``0019``, or a step such as
    ``-1``); a revision alembic cannot find is a one-line SchemaError."""
    _migrate(engine, "downgrade", revision, "base, a revision such as 0019")


def _migrate(engine: Engine, direction: str, revision: str, examples: str) -> None:
    from alembic.util import CommandError

    step = "+1" if direction == "upgrade" else "-1"
    try:
        _with_lock(engine, direction, revision)
    except CommandError as exc:
        raise SchemaError(
            f"cannot {direction} to {revision!r}: {exc}; give {examples}, or a number of "
            f"steps such as {step}"
        ) from exc


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
