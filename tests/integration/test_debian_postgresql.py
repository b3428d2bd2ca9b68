"""The schema on Debian's PostgreSQL 15 as its packages ship it today (15.20), besides
pgserver's 16.2 that every other test runs on: newer minor releases refuse to add or drop
a column of a table whose row type a function with a SQL-standard body uses (doc and
url(doc)). Skipped without apt (tests/integration/debian_postgresql.py); under CI=true it
must run."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from focuscrawl.db.database import make_engine
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.db.migrate import current_revision, downgrade, head_revision, upgrade
from tests.integration.debian_postgresql import debian_bin_or_skip

PORT = 5499  # names the server's socket file only: it opens no TCP port


def test_the_schema_migrates_up_down_and_up_on_debians_postgresql(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "server", "128MB", bin_dir=debian_bin_or_skip(), port=PORT)
    server.up()
    engine = make_engine(server.url())
    try:
        with engine.connect() as connection:
            version = connection.exec_driver_sql("SELECT version()").scalar_one()
        assert "Debian" in version, version
        upgrade(engine)  # failed at migration 0013 ("function url(doc) uses its row type")
        downgrade(engine, "base")
        assert set(sa.inspect(engine).get_table_names()) <= {"alembic_version"}
        upgrade(engine)
        with engine.connect() as connection:
            assert current_revision(connection) == head_revision()
            # url(doc), dropped around the change of doc's columns, is there again
            functions = connection.exec_driver_sql(
                "SELECT count(*) FROM pg_proc WHERE proname = 'url' "
                "AND proargtypes[0] = 'doc'::regtype"
            ).scalar_one()
            assert functions == 1
    finally:
        engine.dispose()
        server.down()
