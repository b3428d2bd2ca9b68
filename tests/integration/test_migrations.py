from __future__ import annotations

import warnings

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from focuscrawl.database import (
    current_revision,
    downgrade,
    ensure_branch,
    ensure_schema,
    head_revision,
    make_engine,
    upgrade,
)
from focuscrawl.errors import SchemaError
from focuscrawl.schema import metadata

TABLES = {
    "taxonomy", "example", "site", "doc", "doc_text", "link", "distill_run", "hits_score",
    "model", "doc_class",
}  # fmt: skip


def _tables(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}


def test_migrations_go_up_down_and_up_again(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    upgrade(engine)
    assert _tables(engine) == TABLES
    downgrade(engine, "base")
    assert _tables(engine) == set()
    with engine.connect() as connection:
        assert (
            connection.exec_driver_sql(
                "SELECT count(*) FROM pg_proc WHERE proname IN ('url_oid', 'url_bytehash')"
            ).scalar()
            == 0
        )
    upgrade(engine)
    assert _tables(engine) == TABLES
    with engine.connect() as connection:
        assert current_revision(connection) == head_revision()
    engine.dispose()


def test_schema_module_matches_the_migrations(engine: sa.Engine) -> None:
    with engine.connect() as connection, warnings.catch_warnings():
        # alembic warns that it cannot compare expression indexes; the index is checked below.
        warnings.simplefilter("ignore")
        diff = compare_metadata(
            MigrationContext.configure(connection, opts={"compare_type": True}), metadata
        )
    assert diff == []
    with engine.connect() as connection:
        indexdefs = dict(
            connection.exec_driver_sql(
                "SELECT indexname, indexdef FROM pg_indexes "
                "WHERE indexname IN ('doc_frontier', 'doc_frontier_retry')"
            ).all()
        )
    assert (
        "(relevance DESC, priority, bytehash) WHERE ((state = 0) AND (num_tries = 0))"
        in indexdefs["doc_frontier"]
    )
    assert (
        "(num_tries, relevance DESC, priority, bytehash) WHERE ((state = 0) AND (num_tries > 0))"
        in indexdefs["doc_frontier_retry"]
    )


def _add_docs(engine: sa.Engine, count: int) -> None:
    """One site and ``count`` unvisited URLs on it."""
    with engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO site (host) VALUES ('a.example')")
        connection.exec_driver_sql(
            "INSERT INTO doc (oid, url, sid, bytehash) "
            "SELECT url_oid(u), u, 1, url_bytehash(u) "
            "FROM generate_series(1, %(count)s) g, LATERAL (SELECT 'http://a.example/' || g) t(u)",
            {"count": count},
        )


def test_analyze_gathers_no_statistics_on_the_node_scores(empty_db_url: str) -> None:
    """Migration 0007: ANALYZE skips doc_class.logp (it cost a tenth of the server's CPU
    in a crawl) and still covers the other columns; downgraded, it covers logp again."""
    engine = make_engine(empty_db_url)
    upgrade(engine)
    _add_docs(engine, 200)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO doc_class (oid, model_id, logp) "
            "SELECT oid, 1, ARRAY[-0.5, bytehash %% 7 - 9.0]::real[] FROM doc"
        )

    def analysed() -> set[str]:
        with engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE doc_class")
            rows = connection.exec_driver_sql(
                "SELECT attname FROM pg_stats WHERE tablename = 'doc_class'"
            ).all()
        return {name for (name,) in rows}

    assert analysed() == {"oid", "model_id"}
    downgrade(engine, "0006")
    assert analysed() == {"oid", "model_id", "logp"}
    upgrade(engine)  # ANALYZE leaves the statistics it no longer gathers in place
    with engine.connect() as connection:
        target = connection.exec_driver_sql(
            "SELECT attstattarget FROM pg_attribute "
            "WHERE attrelid = 'doc_class'::regclass AND attname = 'logp'"
        ).scalar()
    assert target == 0
    engine.dispose()


def test_ensure_schema_upgrades_a_database_that_is_behind(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    ensure_schema(engine)
    ensure_schema(engine)  # at head: nothing to do
    with engine.connect() as connection:
        assert current_revision(connection) == head_revision()
    engine.dispose()


def test_ensure_schema_refuses_a_schema_from_a_newer_version(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = 'ffff_future'")
    with pytest.raises(SchemaError, match="does not know"):
        ensure_schema(engine)


def test_sql_url_hashes_equal_the_python_ones(engine: sa.Engine) -> None:
    from focuscrawl.urls import bytehash_of, normalize_url, oid_of, url_ids

    urls = [
        normalize_url(u)
        for u in ("http://example.com/", "http://bücher.de/ä?x=1", "https://a.b:8443/%20")
    ]
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT u, url_oid(u), url_bytehash(u) FROM unnest(%(urls)s::text[]) AS t(u)",
            {"urls": urls},
        ).all()
    assert [(u, oid_of(u), bytehash_of(u)) for u in urls] == [tuple(r) for r in rows]
    assert [url_ids(u) for u in urls] == [(r[1], r[2]) for r in rows]


def test_doc_rejects_an_oid_that_is_not_the_url_hash(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        sid = connection.exec_driver_sql(
            "INSERT INTO site (host) VALUES ('a.example') RETURNING sid"
        ).scalar()
    with (
        pytest.raises(sa.exc.IntegrityError, match="doc_oid_is_url_hash"),
        engine.begin() as connection,
    ):
        connection.exec_driver_sql(
            "INSERT INTO doc (oid, url, sid, bytehash) VALUES (1, 'http://a.example/', %(sid)s, 0)",
            {"sid": sid},
        )


def test_doc_rows_must_name_an_existing_site(empty_db_url: str) -> None:
    """Migration 0009: the sites of doc rows are checked once per statement (triggers),
    not row by row by a foreign key; the rules are the key's, and downgraded it is back."""
    engine = make_engine(empty_db_url)
    upgrade(engine)
    _add_docs(engine, 3)  # site 1, three URLs
    insert = (
        "INSERT INTO doc (oid, url, sid, bytehash) SELECT url_oid(u), u, s, url_bytehash(u) "
        "FROM (VALUES ('http://a.example/x', 1), ('http://b.example/y', 99)) AS v(u, s)"
    )

    def refused(statement: str, message: str) -> None:
        with pytest.raises(sa.exc.IntegrityError, match=message), engine.begin() as connection:
            connection.exec_driver_sql(statement)

    refused(insert, "doc rows name site 99 that does not exist")
    refused("UPDATE doc SET sid = 2", "doc.sid does not change")
    refused("UPDATE site SET sid = 5", "site.sid does not change")
    refused("DELETE FROM site", "site 1 still has doc rows")
    with engine.begin() as connection:
        assert connection.exec_driver_sql("SELECT count(*), min(sid) FROM doc").one() == (3, 1)
        connection.exec_driver_sql("INSERT INTO site (host) VALUES ('b.example')")
        connection.exec_driver_sql("DELETE FROM site WHERE host = 'b.example'")  # no docs: gone
        connection.exec_driver_sql("UPDATE site SET pages_taken = 1")  # other columns change
    downgrade(engine, "0008")
    refused(insert, "doc_sid_fkey")
    upgrade(engine)
    refused(insert, "does not exist")
    engine.dispose()


def _baseline_objects(engine: sa.Engine) -> set[str]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            """
            SELECT indexname FROM pg_indexes
            WHERE tablename = 'doc' AND indexname IN ('doc_frontier_bfs', 'doc_frontier_unfocused')
            UNION ALL
            SELECT column_name FROM information_schema.columns
            WHERE table_name = 'doc' AND column_name = 'found_seq'
            """
        ).scalars()
        return set(rows)


def test_the_baseline_orders_are_a_branch_taken_on_demand(engine: sa.Engine) -> None:
    assert _baseline_objects(engine) == set()  # a focused crawl does not pay for them
    _add_docs(engine, 50)
    assert ensure_branch(engine, "baselines") is True
    assert ensure_branch(engine, "baselines") is False  # taken: nothing to do
    assert _baseline_objects(engine) == {"doc_frontier_bfs", "doc_frontier_unfocused", "found_seq"}
    with engine.connect() as connection:
        assert current_revision(connection) == f"{head_revision()} + baselines"
        # the rows already there are numbered in the order they were stored
        found = connection.exec_driver_sql("SELECT found_seq FROM doc ORDER BY ctid").scalars()
        numbers = list(found)
        assert len(numbers) == 50 and numbers == sorted(set(numbers))
        indexdef = connection.exec_driver_sql(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'doc_frontier_bfs'"
        ).scalar()
    assert "(num_tries, depth, found_seq) WHERE (state = 0)" in str(indexdef)
    ensure_schema(engine)  # main line and branch at their heads: nothing to do
    downgrade(engine, "base")
    assert _tables(engine) == set()


def test_an_unknown_branch_is_refused(engine: sa.Engine) -> None:
    with pytest.raises(SchemaError, match="no optional schema branch 'nope'"):
        ensure_branch(engine, "nope")
