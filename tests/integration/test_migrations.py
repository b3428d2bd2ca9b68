from __future__ import annotations

import warnings

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from focuscrawl.db.database import make_engine
from focuscrawl.db.migrate import (
    OPTIONAL_BRANCHES,
    _branch_head,
    _shipped_heads,
    current_heads,
    current_revision,
    downgrade,
    ensure_branch,
    ensure_schema,
    head_revision,
    upgrade,
)
from focuscrawl.db.schema import metadata
from focuscrawl.errors import SchemaError

TABLES = {
    "taxonomy", "example", "site", "doc", "doc_text", "link", "distill_run", "hits_score",
    "model", "doc_class", "doc_fetch", "doc_lease", "example_link", "link_example",
    "crawl_setting", "page_label",
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


def test_every_table_can_be_moved_by_logical_replication(engine: sa.Engine) -> None:
    """Citus moves shards (its rebalancer) and copies reference tables to a new worker
    by logical replication, which needs a row's identity: a primary key or REPLICA
    IDENTITY FULL. A table with neither stops a rebalance (link_example did)."""
    with engine.connect() as connection:
        unmovable = (
            connection.exec_driver_sql(
                "SELECT c.relname FROM pg_class AS c "
                "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind = 'r' "
                "AND c.relname <> 'alembic_version' AND c.relreplident <> 'f' "
                "AND NOT EXISTS (SELECT FROM pg_constraint AS k "
                "WHERE k.conrelid = c.oid AND k.contype = 'p')"
            )
            .scalars()
            .all()
        )
    assert unmovable == []


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


#: ``count`` unvisited URLs on site 1, a.example, in the schema of 0011 and later
ADD_DOCS = (
    "INSERT INTO doc (oid, bucket, https, path, sid, bytehash) "
    "SELECT url_oid(u), oid_bucket(url_oid(u)), false, p, 1, url_bytehash(u) "
    "FROM generate_series(1, %(count)s) g, "
    "LATERAL (SELECT '/' || g) AS t(p), LATERAL (SELECT doc_url(false, 'a.example', p)) AS v(u)"
)
ADD_SITE = "INSERT INTO site (host, bucket) VALUES ('a.example', host_bucket('a.example'))"
#: the same before 0011, when doc kept whole URLs (and before 0016, sites no bucket)
ADD_DOCS_0010 = (
    "INSERT INTO doc (oid, url, sid, bytehash) "
    "SELECT url_oid(u), u, 1, url_bytehash(u) "
    "FROM generate_series(1, %(count)s) g, LATERAL (SELECT 'http://a.example/' || g) t(u)"
)


def _add_docs(
    engine: sa.Engine, count: int, statement: str = ADD_DOCS, site: str = ADD_SITE
) -> None:
    """One site and ``count`` unvisited URLs on it."""
    with engine.begin() as connection:
        connection.exec_driver_sql(site)
        connection.exec_driver_sql(statement, {"count": count})


def test_analyze_gathers_no_statistics_on_the_node_scores(empty_db_url: str) -> None:
    """Migration 0007: ANALYZE skips doc_class.logp (it cost a tenth of the server's CPU
    in a crawl) and still covers the other columns; downgraded, it covers logp again."""
    engine = make_engine(empty_db_url)
    upgrade(engine)
    _add_docs(engine, 200)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO doc_class (oid, bucket, model_id, logp) "
            "SELECT oid, bucket, 1, ARRAY[-0.5, bytehash %% 7 - 9.0]::real[] FROM doc"
        )

    def analysed() -> set[str]:
        with engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE doc_class")
            rows = connection.exec_driver_sql(
                "SELECT attname FROM pg_stats WHERE tablename = 'doc_class'"
            ).all()
        return {name for (name,) in rows}

    assert analysed() == {"oid", "model_id", "bucket"}
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


def test_the_heads_read_without_alembic_are_alembics(engine: sa.Engine) -> None:
    """ensure_schema's first look (migration files read as text, alembic_version by SQL)
    sees what alembic sees, with and without the optional branch."""
    main, newest = _shipped_heads()
    assert main == head_revision()
    assert newest == {head_revision(), *(_branch_head(label) for label in OPTIONAL_BRANCHES)}
    for _ in range(2):
        with engine.connect() as connection:
            alembics = MigrationContext.configure(connection).get_current_heads()
            assert set(current_heads(connection)) == set(alembics)
        ensure_branch(engine, "baselines")
    with engine.connect() as connection:
        assert set(current_heads(connection)) == newest
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE alembic_version")
        assert current_heads(connection) == ()  # a database no migration has touched


def test_ensure_schema_refuses_a_schema_from_a_newer_version(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = 'ffff_future'")
    with pytest.raises(SchemaError, match="does not know"):
        ensure_schema(engine)


def test_sql_url_hashes_equal_the_python_ones(engine: sa.Engine) -> None:
    from focuscrawl.web.urls import bytehash_of, normalize_url, oid_of, split_url, url_ids

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
    # doc keeps the scheme and path, site the host; SQL doc_url puts them back together
    parts = [split_url(u) for u in urls]
    with engine.connect() as connection:
        joined = connection.exec_driver_sql(
            "SELECT doc_url(h, s, p) FROM unnest(%(h)s::bool[], %(s)s::text[], %(p)s::text[]) "
            "AS t(h, s, p)",
            {
                "h": [h for h, _, _ in parts],
                "s": [s for _, s, _ in parts],
                "p": [p for *_, p in parts],
            },
        ).scalars()
        assert list(joined) == urls


def test_doc_rejects_an_oid_that_is_not_the_url_hash(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        sid = connection.exec_driver_sql(f"{ADD_SITE} RETURNING sid").scalar()
        connection.exec_driver_sql(  # the right oid: stored
            "INSERT INTO doc (oid, bucket, https, path, sid, bytehash) "
            "VALUES (url_oid('https://a.example/x'), oid_bucket(url_oid('https://a.example/x')), "
            "true, '/x', %(sid)s, 0)",
            {"sid": sid},
        )
    wrong = (  # another scheme's, another host's, another path's
        "url_oid('http://a.example/x'), true, '/x'",
        "url_oid('https://b.example/x'), true, '/x'",
        "url_oid('https://a.example/z'), true, '/y'",
    )
    for values in wrong:
        with (
            pytest.raises(sa.exc.IntegrityError, match="is not url_oid of its URL"),
            engine.begin() as connection,
        ):
            connection.exec_driver_sql(
                "INSERT INTO doc (oid, bucket, https, path, sid, bytehash) "
                f"SELECT o, oid_bucket(o), h, p, %(sid)s, 0 FROM (VALUES ({values})) AS v(o, h, p)",
                {"sid": sid},
            )
    with engine.connect() as connection:
        urls = connection.exec_driver_sql("SELECT d.url FROM doc AS d").scalars().all()
    assert urls == ["https://a.example/x"]  # url(doc), a computed field


def test_a_path_that_does_not_start_with_a_slash_is_checked_by_url_oid_itself(
    engine: sa.Engine,
) -> None:
    """The check reads a new row's bucket off its site when the path starts the URL's
    path; any other path (no normalised URL has one) is checked by url_oid, whose host
    then runs on into the path."""
    url = "https://a.example?q"
    insert = (
        "INSERT INTO doc (oid, bucket, https, path, sid, bytehash) "
        "SELECT o, oid_bucket(o), true, '?q', %(sid)s, 0 FROM (VALUES ({oid})) AS v(o)"
    )
    with engine.begin() as connection:
        sid = connection.exec_driver_sql(f"{ADD_SITE} RETURNING sid").scalar()
    site_bucket = "(oid_bucket(url_oid('https://a.example/'))::bigint << 56) | 12345"
    with (
        pytest.raises(sa.exc.IntegrityError, match="is not url_oid of its URL"),
        engine.begin() as connection,
    ):
        connection.exec_driver_sql(insert.format(oid=site_bucket), {"sid": sid})
    with engine.begin() as connection:
        connection.exec_driver_sql(insert.format(oid=f"url_oid('{url}')"), {"sid": sid})
        assert connection.exec_driver_sql("SELECT d.url FROM doc AS d").scalar() == url


def test_a_documents_url_does_not_change(engine: sa.Engine) -> None:
    """Migration 0011: oids are hashes of URLs, so what makes a URL is fixed."""
    _add_docs(engine, 3)
    for statement in (
        "UPDATE doc SET sid = 2",
        "UPDATE doc SET path = '/moved'",
        "UPDATE doc SET https = true",
        "UPDATE site SET host = 'b.example'",
        "UPDATE site SET sid = 5",
    ):
        with (
            pytest.raises(sa.exc.IntegrityError, match="a URL does not change"),
            engine.begin() as connection,
        ):
            connection.exec_driver_sql(statement)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE doc SET relevance = -1, state = 2")  # the rest does
        connection.exec_driver_sql("UPDATE site SET pages_taken = 1")


def test_the_narrow_doc_keeps_every_row_through_a_downgrade(empty_db_url: str) -> None:
    """Migration 0011 splits doc into doc, doc_fetch and doc_lease and rebuilds it; down to
    0010 and up again, every URL keeps its state and what its fetch found."""
    engine = make_engine(empty_db_url)
    upgrade(engine, "0010")
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO site (host) VALUES ('a.example'), ('b.example:8080')"
        )
        connection.exec_driver_sql(
            """
            INSERT INTO doc (oid, url, sid, bytehash, relevance, num_tries, priority, state,
                             depth, http_status, error, lease_until, fetch_seq, fetched_at,
                             title, etag, last_modified, content_type, content_hash, cid,
                             model_id)
            SELECT url_oid(v.u), v.u, v.sid, url_bytehash(v.u), v.rel, v.tries, 3, v.state,
                   2, v.status, v.error, v.lease, v.seq, v.at, v.title, v.etag, v.lm,
                   v.type, v.hash, v.cid, v.model
            FROM (VALUES
                ('http://a.example/new', 1, '-Infinity'::float8, 0, 0, NULL::smallint,
                 NULL::varchar, NULL::timestamptz, NULL::bigint, NULL::timestamptz,
                 NULL::text, NULL::varchar, NULL::varchar, NULL::varchar, NULL::bigint,
                 NULL::smallint, NULL::int),
                ('https://a.example/retry?q=1', 1, -2.5, 1, 0, 503, 'http_503', NULL, NULL,
                 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                ('http://b.example:8080/leased', 2, -1.0, 0, 1, NULL, NULL,
                 '2030-01-01 00:00+00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                ('http://b.example:8080/page', 2, -0.5, 1, 2, 200, NULL, NULL, 7,
                 '2026-11-24 12:00+00', 'A page', '"e1"', 'Tue, 24 Nov 2026 12:00:00 GMT',
                 'text/html', 42, 3, 1),
                ('https://a.example/gone', 1, -3.0, 3, 3, 404, 'http_404', NULL, NULL, NULL,
                 NULL, NULL, NULL, NULL, NULL, NULL, NULL)
            ) AS v(u, sid, rel, tries, state, status, error, lease, seq, at, title, etag, lm,
                   type, hash, cid, model)
            """
        )
    columns = (
        "url, relevance, num_tries, priority, state, depth, http_status, error, lease_until, "
        "fetch_seq, fetched_at, title, etag, last_modified, content_type, content_hash, cid, "
        "model_id"
    )
    before_sql = f"SELECT {columns} FROM doc ORDER BY url"
    with engine.connect() as connection:
        before = connection.exec_driver_sql(before_sql).all()
    upgrade(engine)
    after_sql = (
        "SELECT d.url, d.relevance, d.num_tries, d.priority, d.state, d.depth, f.http_status, "
        "f.error, l.until, f.fetch_seq, f.fetched_at, f.title, f.etag, f.last_modified, "
        "f.content_type, f.content_hash, f.cid, f.model_id "
        "FROM doc AS d LEFT JOIN doc_fetch AS f USING (oid) LEFT JOIN doc_lease AS l USING (oid) "
        "ORDER BY 1"
    )
    with engine.connect() as connection:
        assert connection.exec_driver_sql(after_sql).all() == before
        tried = connection.exec_driver_sql("SELECT count(*) FROM doc_fetch").scalar()
        assert tried == 3  # the untried and the leased URL have no fetch row
        assert (
            connection.exec_driver_sql(
                "SELECT count(*) FROM doc WHERE oid = url_oid(url(doc))"
            ).scalar()
            == 5
        )
    downgrade(engine, "0010")
    with engine.connect() as connection:
        assert connection.exec_driver_sql(before_sql).all() == before
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql(after_sql).all() == before
    engine.dispose()


def test_doc_rows_must_name_an_existing_site(empty_db_url: str) -> None:
    """Migration 0009: the sites of doc rows are checked once per statement (triggers),
    not row by row by a foreign key; the rules are the key's, and downgraded it is back."""
    engine = make_engine(empty_db_url)
    upgrade(engine)
    _add_docs(engine, 3)  # site 1, three URLs
    insert = (
        "INSERT INTO doc (oid, bucket, https, path, sid, bytehash) "
        "SELECT o, oid_bucket(o), false, p, s, 0 "
        "FROM (VALUES ('a.example', '/x', 1), ('b.example', '/y', 99)) AS v(h, p, s), "
        "LATERAL (SELECT url_oid(doc_url(false, h, p))) AS t(o)"
    )
    insert_0010 = (
        "INSERT INTO doc (oid, url, sid, bytehash) SELECT url_oid(u), u, s, url_bytehash(u) "
        "FROM (VALUES ('http://a.example/x', 1), ('http://b.example/y', 99)) AS v(u, s)"
    )

    def refused(statement: str, message: str) -> None:
        with pytest.raises(sa.exc.IntegrityError, match=message), engine.begin() as connection:
            connection.exec_driver_sql(statement)

    refused(insert, "doc rows name site 99 that does not exist")
    refused("UPDATE doc SET sid = 2", "a URL does not change")
    refused("UPDATE site SET sid = 5", "a URL does not change")
    refused("DELETE FROM site", "site 1 still has doc rows")
    with engine.begin() as connection:
        assert connection.exec_driver_sql("SELECT count(*), min(sid) FROM doc").one() == (3, 1)
        connection.exec_driver_sql(ADD_SITE.replace("a.example", "b.example"))
        connection.exec_driver_sql("DELETE FROM site WHERE host = 'b.example'")  # no docs: gone
        connection.exec_driver_sql("UPDATE site SET pages_taken = 1")  # other columns change
    downgrade(engine, "0008")
    refused(insert_0010, "doc_sid_fkey")
    upgrade(engine, "0010")
    refused(insert_0010, "does not exist")
    refused("UPDATE doc SET sid = 2", "doc.sid does not change")
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


def test_the_narrow_doc_keeps_the_baseline_branch(empty_db_url: str) -> None:
    """A database that took the ``baselines`` branch before 0011 keeps its discovery order
    and the baseline indexes through the rebuild of doc, both ways."""
    engine = make_engine(empty_db_url)
    upgrade(engine, "0010")
    upgrade(engine, "baselines@head")
    _add_docs(engine, 20, ADD_DOCS_0010, "INSERT INTO site (host) VALUES ('a.example')")

    def found() -> list[tuple[str, int]]:
        with engine.connect() as connection:
            return connection.exec_driver_sql(
                "SELECT d.url, d.found_seq FROM doc AS d ORDER BY 1"
            ).all()

    before = found()
    upgrade(engine)
    assert found() == before
    assert _baseline_objects(engine) == {"doc_frontier_bfs", "doc_frontier_unfocused", "found_seq"}
    with engine.begin() as connection:  # the sequence still numbers new URLs
        connection.exec_driver_sql(ADD_DOCS.replace("1, %(count)s", "21, 21"))
        newest = connection.exec_driver_sql("SELECT max(found_seq) FROM doc").scalar()
    assert newest == max(seq for _, seq in before) + 1
    downgrade(engine, "0010")
    assert _baseline_objects(engine) == {"doc_frontier_bfs", "doc_frontier_unfocused", "found_seq"}
    assert set(before) <= set(found())
    downgrade(engine, "base")
    assert _tables(engine) == set()
    engine.dispose()


def test_rows_of_doc_children_must_name_a_doc_and_go_with_it(empty_db_url: str) -> None:
    """Migration 0012: doc_text, doc_class and doc_fetch are checked once per statement
    (triggers), not row by row by foreign keys; the rules are the keys', deleting a doc
    deletes its rows (and its lease), and downgraded the keys are back."""
    engine = make_engine(empty_db_url)
    upgrade(engine)
    _add_docs(engine, 3)
    inserts = {
        "doc_text": "INSERT INTO doc_text (oid, bucket, text) SELECT oid, bucket, 'words' FROM doc",
        "doc_class": "INSERT INTO doc_class (oid, bucket, model_id, logp) "
        "SELECT oid, bucket, 1, '{-1}' FROM doc",
        "doc_fetch": "INSERT INTO doc_fetch (oid, bucket, fetch_seq) "
        "SELECT oid, bucket, 1 FROM doc",
    }

    def refused(statement: str, message: str) -> None:
        with pytest.raises(sa.exc.IntegrityError, match=message), engine.begin() as connection:
            connection.exec_driver_sql(statement)

    def with_stray(insert: str) -> str:
        """The insert, for every doc and for oid 42, which names none."""
        return insert.replace(
            "FROM doc", "FROM (SELECT oid, bucket FROM doc UNION ALL SELECT 42, 0) AS d"
        )

    for table, insert in inserts.items():
        # good rows and one naming no doc: the statement stores nothing
        refused(with_stray(insert), f"{table} rows name doc 42")
    with engine.begin() as connection:
        for insert in inserts.values():
            connection.exec_driver_sql(insert)
        connection.exec_driver_sql(
            "INSERT INTO doc_lease (oid, bucket, until) SELECT oid, bucket, now() FROM doc"
        )
    for table in inserts:
        refused(f"UPDATE {table} SET oid = oid + 1", f"{table}.oid does not change")
    refused("UPDATE doc SET oid = oid + 1", "a URL does not change")

    def counts() -> list[int]:
        with engine.connect() as connection:
            return [
                connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()
                for table in ("doc", *inserts, "doc_lease")
            ]

    assert counts() == [3] * 5
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM doc WHERE path = '/1'")
    assert counts() == [2] * 5  # the document's text, scores, fetch and lease went with it
    downgrade(engine, "0011")
    refused("INSERT INTO doc_text (oid, text) VALUES (42, 'w')", "doc_text_oid_fkey")
    upgrade(engine)
    refused("INSERT INTO doc_fetch (oid, bucket) VALUES (42, 0)", "doc_fetch rows name doc 42")
    engine.dispose()
