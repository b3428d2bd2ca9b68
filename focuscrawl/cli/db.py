"""``focuscrawl db``: the embedded server and the schema."""

from __future__ import annotations

from typing import Annotated

import typer

from focuscrawl.cli.common import Group, engine_from, settings_from
from focuscrawl.db import database, migrate
from focuscrawl.db.distribute import worker_health
from focuscrawl.db.embedded import EmbeddedServer

app = typer.Typer(
    cls=Group,
    help="Manage the database: the embedded server and schema migrations.",
    no_args_is_help=True,
)


def _embedded(ctx: typer.Context) -> EmbeddedServer | None:
    settings = settings_from(ctx)
    if settings.database_url:
        typer.echo("FOCUSCRAWL_DATABASE_URL is set: the embedded server is not used.")
        return None
    return EmbeddedServer(settings.home_path, settings.pg_shared_buffers)


@app.command()
def up(ctx: typer.Context) -> None:
    """Start the embedded PostgreSQL (creating it on first use) and migrate to head."""
    server = _embedded(ctx)
    if server is not None:
        was_running = server.status().running
        status = server.up()
        verb = "already running" if was_running else "started"
        typer.echo(f"embedded PostgreSQL {verb} (pid {status.pid}, data {status.pgdata})")
    engine = engine_from(ctx)
    with engine.connect() as connection:
        typer.echo(f"schema at revision {migrate.current_revision(connection)}")


@app.command()
def down(ctx: typer.Context) -> None:
    """Stop the embedded PostgreSQL; its data stays in FOCUSCRAWL_HOME."""
    server = _embedded(ctx)
    if server is None:
        return
    typer.echo("stopped" if server.down() else "not running")


@app.command()
def status(ctx: typer.Context) -> None:
    """Show whether the database is up and at which schema revision; on a Citus
    coordinator, whether it reaches each worker (exit 1 when one is down)."""
    settings = settings_from(ctx)
    if not settings.database_url:
        state = EmbeddedServer(settings.home_path, settings.pg_shared_buffers).status()
        if not state.running:
            typer.echo(f"embedded PostgreSQL: not running (data {state.pgdata})")
            raise typer.Exit(1)
        typer.echo(f"embedded PostgreSQL: running (pid {state.pid}, data {state.pgdata})")
    engine = database.make_engine(database.database_url(settings))
    with engine.connect() as connection:
        version = connection.exec_driver_sql("SHOW server_version").scalar()
        heads = migrate.current_heads(connection)
        workers = worker_health(connection)
    current = migrate.revision_name(heads)
    applied = migrate.applied_revisions(heads)
    head = migrate.head_revision()
    note = "up to date" if head in applied else f"behind head {head}: run focuscrawl db upgrade"
    typer.echo(f"PostgreSQL {version}; schema revision {current or 'none'} ({note})")
    for worker in workers:
        health = "up" if worker.reachable else "DOWN: the coordinator cannot reach it"
        inactive = "" if worker.active else " (not active)"
        typer.echo(f"worker {worker.node}{inactive}: {health}")
    if any(not worker.reachable for worker in workers):
        raise typer.Exit(1)  # a node down is an alarm for whoever runs this


@app.command()
def url(ctx: typer.Context) -> None:
    """Print the database URL (for psql; starts the embedded server if it is down)."""
    typer.echo(database.libpq_url(database.database_url(settings_from(ctx))))


@app.command()
def upgrade(
    ctx: typer.Context,
    revision: Annotated[
        str, typer.Argument(help="main@head, or baselines@head for the bfs/unfocused indexes")
    ] = migrate.MAIN,
) -> None:
    """Run alembic migrations up to REVISION (default: the main line's head)."""
    engine = engine_from(ctx, migrate=False)
    migrate.upgrade(engine, revision)
    with engine.connect() as connection:
        typer.echo(f"schema at revision {migrate.current_revision(connection)}")


# "-1" (a relative revision) is an argument, not an unknown option
@app.command(context_settings={"ignore_unknown_options": True})
def downgrade(
    ctx: typer.Context, revision: Annotated[str, typer.Argument(help="e.g. base or -1")]
) -> None:
    """Run alembic migrations down to REVISION ('base' drops every table)."""
    engine = engine_from(ctx, migrate=False)
    migrate.downgrade(engine, revision)
    with engine.connect() as connection:
        typer.echo(f"schema at revision {migrate.current_revision(connection) or 'base'}")


@app.command()
def distribute(
    ctx: typer.Context,
    shards: Annotated[
        int,
        typer.Option(
            min=1,
            help="shards of each distributed table (a few per worker core; more shards "
            "make a claim touch more of them)",
        ),
    ] = 8,
) -> None:
    """Lay the crawl out on the Citus coordinator FOCUSCRAWL_DATABASE_URL names: per-page
    tables distributed by host bucket, the rest reference tables (docs/scale-out.md)."""
    from focuscrawl.db.distribute import distribute as lay_out

    if not settings_from(ctx).database_url:
        raise typer.BadParameter(
            "db distribute needs FOCUSCRAWL_DATABASE_URL (or --database-url) naming a "
            "Citus coordinator; the embedded server is one PostgreSQL"
        )
    done = lay_out(engine_from(ctx), shards)
    if done.triggers_dropped:
        typer.echo(f"dropped statement triggers: {', '.join(done.triggers_dropped)}")
    if done.reference_tables:
        typer.echo(f"reference tables: {', '.join(done.reference_tables)}")
    if done.tables_distributed:
        typer.echo(f"distributed by bucket: {', '.join(done.tables_distributed)}")
    typer.echo(f"the crawl is distributed: {done.shards} shards of doc")
