"""Two evaluations on one server with the same database prefix: the second stops with a
clear error before it touches the first one's databases (each drops and makes
``<prefix>_*`` WITH (FORCE), which would pull a running crawl's database from under it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from psycopg2 import sql

from focuscrawl.db.database import execute, make_engine
from focuscrawl.db.queries import queries
from focuscrawl.errors import DatabaseError, FocuscrawlError
from focuscrawl.evaluation.experiment import EvalOptions, evaluate
from focuscrawl.evaluation.strategies import Strategy
from tests.conftest import _admin, _database_url


def _locked(engine: sa.Engine, prefix: str) -> bool:
    """Whether another session holds the evaluation lock of ``prefix`` (tried and given
    back at once)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        took = bool(execute(connection, queries["lock_evaluation"], {"prefix": prefix}).scalar())
        if took:
            execute(connection, queries["unlock_evaluation"], {"prefix": prefix})
        return not took


def test_a_second_evaluation_with_the_same_prefix_is_refused_and_drops_nothing(
    admin_url: str, engine: sa.Engine, topics_dir: Path
) -> None:
    prefix = f"{engine.url.database}_first"
    template = f"{prefix}_template"  # the first evaluation's, with what it wrote so far
    options = EvalOptions(["topics.sports"], [Strategy.BFS], pages=5, database_prefix=prefix)
    _admin(admin_url, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(template)))
    written = make_engine(_database_url(admin_url, template))
    try:
        with written.begin() as connection:
            connection.exec_driver_sql("CREATE TABLE written AS SELECT 1 AS n")
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as first:
            assert execute(first, queries["lock_evaluation"], {"prefix": prefix}).scalar_one()
            with pytest.raises(DatabaseError, match=rf"{prefix}_\* .* another --database"):
                evaluate(engine, topics_dir, "http://127.0.0.1:9", options)
            with written.connect() as connection:
                assert connection.exec_driver_sql("SELECT n FROM written").scalar_one() == 1
            execute(first, queries["unlock_evaluation"], {"prefix": prefix})
    finally:
        written.dispose()
        _admin(
            admin_url,
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(template)),
        )
    # an evaluation that fails gives the lock back: the next one may run
    assert not _locked(engine, prefix)
    with pytest.raises(FocuscrawlError):
        evaluate(engine, topics_dir / "missing", "http://127.0.0.1:9", options)
    assert not _locked(engine, prefix)
