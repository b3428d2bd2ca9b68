"""Alembic environment: run migrations on the connection focuscrawl hands over,
or, from the alembic command line, on the configured database."""

from __future__ import annotations

from alembic import context

from focuscrawl.db.schema import metadata

config = context.config


def run_with(connection: object) -> None:
    context.configure(connection=connection, target_metadata=metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run_with(connection)
else:
    from focuscrawl.db.database import database_url, make_engine
    from focuscrawl.settings import load_settings

    engine = make_engine(database_url(load_settings()))
    with engine.begin() as conn:
        run_with(conn)
