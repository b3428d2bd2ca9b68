"""The checkout reads the frontier off its index: no sort, no sequential scan."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import sqlalchemy as sa

from focuscrawl.crawler.claims import claim_params
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries

FRONTIER_ROWS = 20_000
#: on one server a claim names every bucket (focuscrawl.db.shards)
ALL_BUCKETS = list(range(256))


def _params(
    batch: int, lease_seconds: int, full_sites: list[int], per_site: int | None = None
) -> dict[str, Any]:
    """claim_batch's parameters: with no bound per site, as the crawler asks when it
    may take a batch of one site (it then reads no further than the batch)."""
    return claim_params(batch, lease_seconds, per_site, full_sites) | {"buckets": ALL_BUCKETS}


def _fill_frontier(engine: sa.Engine, rows: int) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO site (host, bucket) SELECT h, host_bucket(h) "
            "FROM generate_series(1, 100) g, "
            "LATERAL (SELECT 'h' || g || '.example') AS t(h)"
        )
        connection.exec_driver_sql(
            """
            INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, priority,
                             num_tries, state)
            SELECT url_oid(u), oid_bucket(url_oid(u)), false, p, 1 + g %% 100, url_bytehash(u),
                   -(g %% 97) / 10.0, g %% 13, (g %% 50 = 0)::int,
                   CASE WHEN g %% 10 = 0 THEN 2 ELSE 0 END
            FROM generate_series(1, %(rows)s) g,
                 LATERAL (SELECT '/p' || g) AS t(p),
                 LATERAL (SELECT doc_url(false, 'h' || (1 + g %% 100) || '.example', p)) AS v(u)
            """,
            {"rows": rows},
        )
        connection.exec_driver_sql("ANALYZE doc")


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


def _explain(
    connection: sa.Connection, statement: str, params: dict[str, Any], analyze: bool = False
) -> list[dict[str, Any]]:
    """The plan's nodes; with ``analyze``, as run (in the caller's transaction)."""
    options = "ANALYZE, FORMAT JSON" if analyze else "FORMAT JSON"
    raw = execute(connection, f"EXPLAIN ({options}) " + statement, params).scalar()
    document = raw if isinstance(raw, list) else json.loads(raw)
    return _nodes(document[0]["Plan"])


@pytest.mark.parametrize("per_site", [None, 2])
def test_claim_batch_plan_reads_the_frontier_indexes_and_never_sorts_the_table(
    engine: sa.Engine, per_site: int | None
) -> None:
    """With no bound per site (or one no lower than the batch) the claim locks URLs as
    it reads the index; with one (a focused crawl under a host delay) it reads further,
    with no lock, and sorts what it read by site."""
    _fill_frontier(engine, FRONTIER_ROWS)
    with engine.connect() as connection:
        params = _params(64, 300, [], per_site)
        nodes = _explain(connection, queries["claim_batch"], params, analyze=True)
    types = [n["Node Type"] for n in nodes]
    assert "Incremental Sort" not in types, types
    # the sorts read what the claim has in hand, never the frontier: the URLs seen off
    # the index (by site, to take a few of each), the sites' room (to join it to them),
    # those picked, looked up by key (to lock them in order), and the claimed rows (to
    # return them in claim order)
    allowed = [
        {("CTE Scan", "claimed"), ("CTE Scan", "batch")},
        {("CTE Scan", "seen")},
        {("Bitmap Heap Scan", None), ("Bitmap Index Scan", "doc_pkey")},
        {("Index Scan", "doc_pkey")},
        {("Function Scan", None)},  # the room of sites the crawler holds URLs of
    ]
    sorts = []
    for sort in (n for n in nodes if n["Node Type"] == "Sort"):
        (outer,) = [c for c in sort["Plans"] if c.get("Parent Relationship") == "Outer"]
        if not sort["Actual Loops"] or outer.get("One-Time Filter") == "false":
            continue  # the other kind of claim's: it read nothing
        sorts.append(sort)
        scans = {
            (n["Node Type"], n.get("CTE Name") or n.get("Index Name"))
            for n in _nodes(outer)
            if "Scan" in n["Node Type"]
        }
        assert scans in allowed, scans
    keys = [s.get("Sort Key") for s in sorts]
    assert len(sorts) == (1 if per_site is None else 4), keys
    # ... and the UPDATE looks the claimed URLs' sites up by key
    site_scans = {
        (n["Node Type"], n.get("Index Name")) for n in nodes if n.get("Relation Name") == "site"
    }
    assert site_scans == {("Index Scan", "site_pkey")}, site_scans
    doc_scans = {
        (n["Node Type"], n.get("Index Name"))
        for n in nodes
        if n.get("Relation Name") == "doc" or n.get("Index Name", "").startswith("doc_")
    }
    assert ("Index Scan", "doc_frontier") in doc_scans, doc_scans
    assert ("Index Scan", "doc_frontier_retry") in doc_scans, doc_scans
    assert not any(t == "Seq Scan" for t, _ in doc_scans), doc_scans


def test_sites_at_their_bound_are_skipped_and_the_plan_still_reads_the_index(
    engine: sa.Engine,
) -> None:
    """Site fairness is a bound, not a key: a claim passes over the URLs of sites the
    crawler already holds enough of, in the same order, off the same indexes."""
    _fill_frontier(engine, FRONTIER_ROWS)
    full = list(range(1, 51))  # half the sites
    params = _params(64, 60, full)
    with engine.begin() as connection:
        nodes = _explain(connection, queries["claim_batch"], params)
        claimed = execute(connection, queries["claim_batch"], params).all()
        skipped_best = connection.exec_driver_sql(
            "SELECT max(relevance) FROM doc WHERE state = 0 AND num_tries = 0 "
            "AND sid = ANY(%(full)s)",
            {"full": full},
        ).scalar_one()
        relevance = dict(
            connection.exec_driver_sql("SELECT oid, relevance FROM doc WHERE state = 1").all()
        )
    assert len(claimed) == 64 and all(r.sid not in full for r in claimed)
    assert max(relevance.values()) <= skipped_best  # better URLs of full sites waited
    assert [relevance[r.oid] for r in claimed] == sorted(relevance.values(), reverse=True)
    types = {n["Node Type"] for n in nodes}
    assert "Seq Scan" not in {n["Node Type"] for n in nodes if n.get("Relation Name") == "doc"}
    assert "Incremental Sort" not in types
    assert any(n.get("Index Name") == "doc_frontier" for n in nodes)


def test_claim_batch_returns_urls_in_checkout_order_and_leases_them(engine: sa.Engine) -> None:
    _fill_frontier(engine, 2_000)
    with engine.begin() as connection:
        claimed = execute(
            connection,
            queries["claim_batch"],
            _params(50, 60, []),
        ).all()
        lease = {"oids": [row.oid for row in claimed], "lease_seconds": 60}
        execute(connection, queries["lease_claims"], lease)  # as the crawler does after it
        leased = connection.exec_driver_sql(
            "SELECT oid, num_tries, relevance FROM doc WHERE state = 1 "
            "ORDER BY num_tries, relevance DESC, priority, bytehash"
        ).all()
        leases = connection.exec_driver_sql(
            "SELECT oid FROM doc_lease WHERE until > now() + interval '50 seconds'"
        ).scalars()
        urls = dict(connection.exec_driver_sql("SELECT d.oid, d.url FROM doc AS d").all())
        best_left = connection.exec_driver_sql(
            "SELECT num_tries, relevance FROM doc WHERE state = 0 "
            "ORDER BY num_tries, relevance DESC, priority, bytehash LIMIT 1"
        ).one()
    assert len(claimed) == 50
    assert sorted(r.oid for r in claimed) == sorted(r.oid for r in leased) == sorted(leases)
    assert all(r.url == urls[r.oid] and r.url.startswith("http://h") for r in claimed)
    worst_claimed = max((r.num_tries, -r.relevance) for r in leased)
    assert worst_claimed <= (best_left.num_tries, -best_left.relevance)


def test_urls_waiting_for_another_try_come_after_every_untried_url(engine: sa.Engine) -> None:
    """The order (num_tries, relevance desc, ...) is read off two indexes (untried, then
    retried): the batch takes the untried URLs first and returns rows in that order."""
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO site (host, bucket) VALUES ('a.example', host_bucket('a.example'))"
        )
        connection.exec_driver_sql(
            """
            INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, num_tries)
            SELECT url_oid(u), oid_bucket(url_oid(u)), false, p, 1, url_bytehash(u), r, t
            FROM (VALUES ('/a', -3.0, 0), ('/b', -1.0, 0), ('/c', -2.0, 0),
                         ('/d', 0.0, 2), ('/e', -0.5, 1), ('/f', -9.0, 1), ('/g', 0.0, 1))
                 AS v(p, r, t),
                 LATERAL (SELECT doc_url(false, 'a.example', p)) AS x(u)
            """
        )
    with engine.begin() as connection:
        first = execute(
            connection,
            queries["claim_batch"],
            _params(2, 60, []),
        )
        second = execute(
            connection,
            queries["claim_batch"],
            _params(4, 60, []),
        )
        rest = execute(
            connection,
            queries["claim_batch"],
            _params(9, 60, []),
        )
        paths = [[r.url.removeprefix("http://a.example") for r in c] for c in (first, second, rest)]
    assert paths == [["/b", "/c"], ["/a", "/g", "/e", "/f"], ["/d"]]


def test_two_concurrent_claims_never_take_the_same_url(engine: sa.Engine) -> None:
    _fill_frontier(engine, 1_000)
    with engine.connect() as first, engine.connect() as second:
        a = execute(
            first,
            queries["claim_batch"],
            _params(64, 60, []),
        ).all()
        b = execute(
            second,
            queries["claim_batch"],
            _params(64, 60, []),
        ).all()  # a still uncommitted
        first.commit()
        second.commit()
    assert len(a) == len(b) == 64
    assert not {r.oid for r in a} & {r.oid for r in b}


def _link_parents(engine: sa.Engine, per_page: int) -> list[int]:
    """Give every fetched page ``per_page`` links to unvisited URLs; return the pages."""
    with engine.begin() as connection:
        connection.exec_driver_sql(
            """
            WITH f AS (SELECT oid, sid, row_number() OVER (ORDER BY oid) AS n
                       FROM doc WHERE state = 0),
                 p AS (SELECT oid, sid, row_number() OVER (ORDER BY oid) AS n
                       FROM doc WHERE state = 2)
            INSERT INTO link (oid_src, oid_dst, sid_src, sid_dst, anchor, bucket)
            SELECT p.oid, f.oid, p.sid, f.sid, 'a', oid_bucket(p.oid)
            FROM p CROSS JOIN generate_series(0, %(links)s - 1) AS k
            JOIN f ON f.n = 1 + (p.n * 7 + k * 131) %% (SELECT count(*) FROM f)
            """,
            {"links": per_page},
        )
        connection.exec_driver_sql("ANALYZE link")
        return list(
            connection.exec_driver_sql("SELECT oid FROM doc WHERE state = 2 ORDER BY oid").scalars()
        )


def test_scored_out_links_are_read_off_link_src(engine: sa.Engine) -> None:
    """A classifier batch reads its pages' out-links off link_src: a scan of link would
    cost the whole table for every batch (one variant of the statement hashed all of it)."""
    _fill_frontier(engine, FRONTIER_ROWS)
    parents = _link_parents(engine, 10)[:256]
    for name in ("scored_out_links", "scored_out_link_words"):
        with engine.connect() as connection:
            params = {"oids": parents, "link_model": 1}
            nodes = _explain(connection, queries[name], params)
        scans = [(n["Node Type"], n.get("Relation Name"), n.get("Index Name")) for n in nodes]
        assert not any(t == "Seq Scan" and r in ("link", "doc") for t, r, _ in scans), scans
        assert any(i == "link_src" for _, _, i in scans), scans


def test_the_classifiers_writes_look_their_rows_up_by_key(engine: sa.Engine) -> None:
    """A classifier batch raises the estimates of about a thousand unvisited URLs and
    writes the scores of as many pages: each row found by key, never a scan and a
    hash of the frontier or of the fetched pages (which the planner chose for a join to
    the batch's arrays: a sequential scan of a 90,000-row doc per batch in a polite
    crawl, growing with the frontier)."""
    _fill_frontier(engine, FRONTIER_ROWS)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO doc_fetch (oid, bucket, fetch_seq, fetched_at, http_status) "
            "SELECT oid, bucket, row_number() OVER (ORDER BY oid), now(), 200 "
            "FROM doc WHERE state = 2"
        )
        connection.exec_driver_sql("ANALYZE doc_fetch")
        unvisited = list(
            connection.exec_driver_sql(
                "SELECT oid FROM doc WHERE state = 0 ORDER BY bytehash LIMIT 1200"
            ).scalars()
        )
        fetched = list(
            connection.exec_driver_sql(
                "SELECT oid FROM doc WHERE state = 2 ORDER BY bytehash LIMIT 1200"
            ).scalars()
        )
    raised = {
        "oids": unvisited,
        "relevances": [0.0] * len(unvisited),
        "releases": [False] * len(unvisited),
        "model_id": 1,
        "buckets": ALL_BUCKETS,
    }
    scored = {
        "oids": fetched,
        "relevances": [-1.0] * len(fetched),
        "cids": [None] * len(fetched),
        "model_id": 1,
    }
    rescored = {
        "oids": unvisited,
        "relevances": [0.0] * len(unvisited),
        "model_id": 1,
        "buckets": ALL_BUCKETS,
    }
    with engine.connect() as connection:
        for name, params, tables in [
            ("raise_estimates", raised, {"doc"}),
            ("set_estimates", rescored, {"doc"}),
            ("write_scores", scored, {"doc", "doc_fetch"}),
        ]:
            nodes = _explain(connection, queries[name], params)
            scans = [(n["Node Type"], n.get("Relation Name")) for n in nodes]
            assert not {r for t, r in scans if t == "Seq Scan"} & tables, (name, scans)


def test_claim_revisits_reads_fetched_pages_in_relevance_order_off_doc_revisit(
    engine: sa.Engine,
) -> None:
    """Maintenance takes the most relevant fetched pages first off doc_revisit, each
    page's fetch time looked up by key in doc_fetch: never a sort of all fetched pages
    (an incremental sort orders pages of equal relevance by age)."""
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO site (host, bucket) SELECT h, host_bucket(h) "
            "FROM generate_series(1, 100) g, "
            "LATERAL (SELECT 'h' || g || '.example') AS t(h)"
        )
        connection.exec_driver_sql(
            """
            INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, state)
            SELECT o, oid_bucket(o), false, '/p' || g, 1 + g %% 100, 0, -(g %% 97) / 10.0, 2
            FROM generate_series(1, 12000) g,
                 LATERAL (SELECT url_oid(doc_url(false, 'h' || (1 + g %% 100) || '.example',
                                                 '/p' || g))) AS t(o)
            """
        )
        connection.exec_driver_sql(
            "INSERT INTO doc_fetch (oid, bucket, fetch_seq, fetched_at, http_status, etag) "
            "SELECT oid, bucket, n, now() - n * interval '1 second', 200, "
            "'\"e' || (n %% 7) || '\"' "
            "FROM (SELECT oid, bucket, row_number() OVER (ORDER BY oid) AS n FROM doc) AS numbered"
        )
        connection.exec_driver_sql("ANALYZE doc")
        connection.exec_driver_sql("ANALYZE doc_fetch")
    params = {"batch": 64, "lease_seconds": 60, "min_age_seconds": 60, "buckets": ALL_BUCKETS}
    with engine.connect() as connection:
        nodes = _explain(connection, queries["claim_revisits"], params)
    (batch,) = [n for n in nodes if n.get("Subplan Name") == "CTE batch"]
    chosen = {(n["Node Type"], n.get("Index Name")) for n in _nodes(batch)}
    assert ("Index Scan", "doc_revisit") in chosen, chosen
    assert ("Index Scan", "doc_fetch_pkey") in chosen, chosen
    assert not {t for t, _ in chosen} & {"Sort", "Seq Scan", "Hash Join"}, chosen
    with engine.begin() as connection:
        claimed = execute(connection, queries["claim_revisits"], params).all()
        rows = connection.exec_driver_sql(
            "SELECT d.oid FROM doc AS d JOIN doc_fetch AS f USING (oid) "
            "WHERE f.fetched_at < now() - interval '60 seconds' "
            "ORDER BY d.relevance DESC, f.fetched_at LIMIT 64"
        ).scalars()
        due = list(rows)
    assert sorted(r.oid for r in claimed) == sorted(due)
    assert all(r.etag and r.url.startswith("http://h") for r in claimed)


def test_a_claim_bound_per_site_takes_the_best_urls_of_each_and_shares_with_another(
    engine: sa.Engine,
) -> None:
    """A focused crawl under a host delay may queue only a few URLs of a site: its claim
    takes at most per_site of each, the best of them first, and a claim running beside
    it takes the next ones, none twice."""
    _fill_frontier(engine, 2_000)
    params = _params(30, 60, [], per_site=2)
    with engine.connect() as first, engine.connect() as second:
        a = execute(first, queries["claim_batch"], params).all()
        b = execute(second, queries["claim_batch"], params).all()  # a still uncommitted
        first.commit()
        second.commit()
    with engine.connect() as connection:
        relevance = dict(connection.exec_driver_sql("SELECT oid, relevance FROM doc").all())
        by_site = connection.exec_driver_sql(
            "SELECT sid, array_agg(relevance ORDER BY relevance DESC, priority, bytehash) "
            "FROM doc GROUP BY sid"
        ).all()
    assert len(a) == len(b) == 30 and not {r.oid for r in a} & {r.oid for r in b}
    for claim in (a, b):
        assert max(Counter(r.sid for r in claim).values()) <= 2
        order = [relevance[r.oid] for r in claim]
        assert order == sorted(order, reverse=True)
    # the first claim took its sites' best two: nothing of those sites left beats them
    best = {sid: values for sid, values in by_site}
    for row in a:
        assert relevance[row.oid] >= best[row.sid][1]


def test_a_claim_asks_a_site_with_urls_queued_only_for_the_room_it_has_left(
    engine: sa.Engine,
) -> None:
    """A crawler that holds one URL of a site, under a bound of two a site, asks that
    site for one more only (room_sites): it has nothing to give back."""
    _fill_frontier(engine, 2_000)
    with engine.connect() as connection:  # the sites at the frontier's top
        sites = [
            sid
            for (sid,) in connection.exec_driver_sql(
                "SELECT sid FROM doc WHERE state = 0 GROUP BY sid "
                "ORDER BY max(relevance) DESC LIMIT 5"
            )
        ]
    held, full = sites[:3], sites[3:]
    params = claim_params(150, 60, 2, full, {sid: 1 for sid in held}) | {"buckets": ALL_BUCKETS}
    with engine.begin() as connection:
        claim = execute(connection, queries["claim_batch"], params).all()
    per_site = Counter(r.sid for r in claim)
    assert len(claim) == 150 and not set(full) & set(per_site)
    assert [per_site[sid] for sid in held] == [1, 1, 1]  # two each with no room given
    assert max(per_site.values()) == 2


def test_a_host_that_cannot_be_reached_defers_its_urls_off_the_key_not_a_scan(
    engine: sa.Engine,
) -> None:
    """defer_site reads a host's URLs off doc's key, in the oid range of its bucket (doc
    has no index by site), and moves exactly its untried URLs behind every untried URL."""
    _fill_frontier(engine, FRONTIER_ROWS)
    with engine.begin() as connection:
        sid, bucket = connection.exec_driver_sql(
            "SELECT sid, bucket FROM site WHERE host = 'h7.example'"
        ).one()
        untried = connection.exec_driver_sql(
            "SELECT count(*) FROM doc WHERE sid = %(sid)s AND state = 0 AND num_tries = 0",
            {"sid": sid},
        ).scalar_one()
        untried_elsewhere = "SELECT count(*) FROM doc WHERE state = 0 AND num_tries = 0"
        before = connection.exec_driver_sql(untried_elsewhere).scalar_one() - untried
        params = {"sid": sid, "bucket": bucket}
        nodes = _explain(connection, queries["defer_site"], params)
        scans = [(n["Node Type"], n.get("Relation Name"), n.get("Index Name")) for n in nodes]
        assert not any(t == "Seq Scan" and r == "doc" for t, r, _ in scans), scans
        assert any(i == "doc_pkey" for _, _, i in scans), scans
        deferred = execute(connection, queries["defer_site"], params).all()
        left = connection.exec_driver_sql(
            "SELECT count(*) FROM doc WHERE state = 0 AND num_tries = 0 AND sid = %(sid)s",
            {"sid": sid},
        ).scalar_one()
        after = connection.exec_driver_sql(untried_elsewhere).scalar_one() - left
    assert untried > 100 and len(deferred) == untried and left == 0
    assert after == before  # no other host's URL moved
