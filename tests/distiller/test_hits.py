"""Weighted HITS in SQL equals a numpy reference on random graphs (hypothesis), and its
iterations run the plans sql/distill.sql promises."""

from __future__ import annotations

import math
import random
import re
from collections import deque
from dataclasses import dataclass

import numpy as np
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.db.queries import queries
from focuscrawl.distiller import run_hits


@dataclass
class Graph:
    sites: list[int]  # site of each page
    relevance: list[float]  # log R
    fetched: list[bool]
    links: list[tuple[int, int]]


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(2, 20))
    n_sites = draw(st.integers(1, 4))
    sites = draw(st.lists(st.integers(0, n_sites - 1), min_size=n, max_size=n))
    probability = st.sampled_from([1.0, 0.5, 0.25]) | st.floats(0.001, 1.0)
    relevance = [math.log(p) for p in draw(st.lists(probability, min_size=n, max_size=n))]
    mostly = st.sampled_from([True, True, True, False])
    fetched = draw(st.lists(mostly, min_size=n, max_size=n).filter(lambda f: sum(f) > 1))
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    # dense enough that pages of one site share targets (h0, a0 > 1); self-links included
    links = draw(st.lists(pairs, min_size=n, max_size=5 * n, unique=True))
    # only fetched pages have out-links
    return Graph(sites, relevance, fetched, [(u, v) for u, v in links if fetched[u]])


def reference(
    g: Graph, share: float, iterations: int, tolerance: float
) -> dict[int, tuple[float, float]]:
    """The issue's definition, straight from the text, with numpy."""
    n = len(g.sites)
    fetched = [i for i in range(n) if g.fetched[i]]
    k = max(math.ceil(share * len(fetched)), 1)
    rho = sorted((g.relevance[i] for i in fetched), reverse=True)[k - 1]
    auth = {i for i in fetched if g.relevance[i] >= rho}
    edges = [(u, v) for u, v in g.links if g.sites[u] != g.sites[v] and v in auth]
    if not edges:
        return {}
    hubs = sorted({u for u, _ in edges})
    auths = sorted({v for _, v in edges})
    hi = {u: i for i, u in enumerate(hubs)}
    ai = {v: i for i, v in enumerate(auths)}
    r = np.exp(np.asarray(g.relevance))
    wa = np.zeros((len(auths), len(hubs)))
    wh = np.zeros((len(hubs), len(auths)))
    for u, v in edges:
        h0 = sum(1 for x, y in edges if y == v and g.sites[x] == g.sites[u])
        a0 = sum(1 for x, y in edges if x == u and g.sites[y] == g.sites[v])
        wa[ai[v], hi[u]] = r[u] / h0
        wh[hi[u], ai[v]] = r[u] / a0
    h = np.full(len(hubs), 1 / len(hubs))
    a = np.full(len(auths), 1 / len(auths))
    delta, i = math.inf, 0
    while i < iterations and delta >= tolerance:
        a_new = wa @ h
        if a_new.sum() > 0:
            a_new = a_new / a_new.sum()
        h_new = wh @ a_new
        if h_new.sum() > 0:
            h_new = h_new / h_new.sum()
        delta = np.abs(a_new - a).sum() + np.abs(h_new - h).sum()
        a, h, i = a_new, h_new, i + 1
    scores: dict[int, tuple[float, float]] = {}
    for u in hubs:
        scores[u] = (float(h[hi[u]]), 0.0)
    for v in auths:
        scores[v] = (scores.get(v, (0.0, 0.0))[0], float(a[ai[v]]))
    return scores


def load(engine: sa.Engine, g: Graph) -> dict[int, int]:
    """Write the graph as sites, docs and links; return oid -> page number."""
    with engine.begin() as c:
        c.exec_driver_sql(
            "TRUNCATE link, doc_text, doc_class, doc_fetch, doc_lease, doc, site, hits_score, "
            "distill_run CASCADE"
        )
        urls = [f"http://s{s}.example/{i}" for i, s in enumerate(g.sites)]
        for s in sorted(set(g.sites)):
            c.exec_driver_sql(
                "INSERT INTO site (host, bucket) VALUES (%(h)s, host_bucket(%(h)s))",
                {"h": f"s{s}.example"},
            )
        c.exec_driver_sql(
            """
            INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, state)
            SELECT url_oid(doc_url(false, u.host, u.path)), site.bucket, false, u.path, site.sid,
                   url_bytehash(doc_url(false, u.host, u.path)), u.r,
                   CASE WHEN u.f THEN 2 ELSE 0 END
            FROM unnest(%(paths)s::text[], %(hosts)s::text[], %(rel)s::float8[], %(f)s::bool[])
                 AS u(path, host, r, f)
            JOIN site ON site.host = u.host
            """,
            {
                "paths": [f"/{i}" for i in range(len(g.sites))],
                "hosts": [f"s{s}.example" for s in g.sites],
                "rel": g.relevance,
                "f": g.fetched,
            },
        )
        c.exec_driver_sql(
            """
            INSERT INTO link (oid_src, oid_dst, sid_src, sid_dst, bucket)
            SELECT da.oid, db.oid, da.sid, db.sid, da.bucket
            FROM unnest(%(a)s::text[], %(b)s::text[]) AS l(a, b)
            JOIN doc AS da ON da.oid = url_oid(l.a)
            JOIN doc AS db ON db.oid = url_oid(l.b)
            """,
            {"a": [urls[u] for u, _ in g.links], "b": [urls[v] for _, v in g.links]},
        )
        rows = c.exec_driver_sql("SELECT d.oid, d.url FROM doc AS d").all()
    return {oid: urls.index(url) for oid, url in rows}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    g=graphs(),
    share=st.sampled_from([0.15, 0.5, 1.0]),
    iterations=st.integers(1, 60),
    tolerance=st.sampled_from([0.0, 1e-6]),
)
def test_sql_hits_equals_the_reference(
    engine: sa.Engine, g: Graph, share: float, iterations: int, tolerance: float
) -> None:
    page_of = load(engine, g)
    result = run_hits(engine, share=share, iterations=iterations, tolerance=tolerance)
    expected = reference(g, share, iterations, tolerance)
    with engine.connect() as c:
        rows = c.exec_driver_sql(
            "SELECT oid, hub, authority FROM hits_score WHERE run_id = %(r)s", {"r": result.run_id}
        ).all()
    got = {page_of[oid]: (hub, authority) for oid, hub, authority in rows}
    assert set(got) == set(expected)
    for page, (hub, authority) in expected.items():
        assert abs(got[page][0] - hub) <= 1e-9
        assert abs(got[page][1] - authority) <= 1e-9
    if expected:
        assert result.edges > 0 and 1 <= result.iterations <= iterations


def test_graph_with_only_same_site_links_has_no_scores(engine: sa.Engine) -> None:
    g = Graph([0, 0, 1], [0.0, -1.0, -2.0], [True, True, True], [(0, 1), (1, 0), (2, 2)])
    load(engine, g)
    result = run_hits(engine)
    assert (result.edges, result.iterations, result.hubs) == (0, 0, 0)


# Plan node names as PostgreSQL prints plan trees (outfuncs.c), e.g. "{INDEXSCAN :...".
_PLAN_NODE = re.compile(
    r"\{(SEQSCAN|INDEXSCAN|INDEXONLYSCAN|BITMAPHEAPSCAN|SORT|INCREMENTALSORT|HASH|HASHJOIN"
    r"|MERGEJOIN|NESTLOOP|MATERIAL|MEMOIZE|AGG)\b"
)


def test_each_iteration_is_an_ordered_index_scan_into_a_group_aggregate(
    engine: sa.Engine,
) -> None:
    """create_hits_function promises that an update of a or h is one ordered index scan
    feeding a group aggregate: no sort, no hash table, no join. The statements run inside
    the plpgsql function, out of EXPLAIN's reach, so the test reads the plans the server
    prints for every statement it plans (debug_print_plan, sent as LOG messages)."""
    rng = random.Random(1)
    n = 60
    g = Graph(
        [i % 5 for i in range(n)],
        [-3 * rng.random() for _ in range(n)],
        [True] * n,
        sorted({(rng.randrange(n), rng.randrange(n)) for _ in range(400)}),
    )
    load(engine, g)
    proxy = engine.raw_connection()
    connection = proxy.dbapi_connection
    assert connection is not None
    messages: deque[str] = deque()
    connection.notices = messages  # a deque: psycopg2 trims a list to its last 50
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL client_min_messages = log")
            cursor.execute("SET LOCAL debug_print_plan = on")
            cursor.execute(queries["create_hits_function"])
            cursor.execute(queries["start_run"], {"share": 0.5})
            params = {"run": cursor.fetchone()[0], "share": 0.5, "iterations": 8, "tolerance": 0}
            cursor.execute(queries["run_hits"], params)
            assert cursor.fetchone()[4] > 100  # edges
            cursor.execute(
                "SELECT 'pg_temp.hits_by_d'::regclass::oid, 'pg_temp.hits_by_s'::regclass::oid"
            )
            by_d, by_s = cursor.fetchone()
    finally:
        connection.rollback()
        connection.notices = []
        proxy.close()
    plans: dict[int, list[str]] = {by_d: [], by_s: []}
    for message in messages:
        for oid, found in plans.items():
            if re.search(rf":relid {oid}\b", message):
                found.append(message)
    assert plans[by_d] and plans[by_s], "no plan read the edge tables"
    for plan in plans[by_d] + plans[by_s]:
        assert sorted(set(_PLAN_NODE.findall(plan))) == ["AGG", "INDEXSCAN"]
        # the inner aggregate groups sorted input (AGG_SORTED); the outer one is plain
        assert sorted(re.findall(r":aggstrategy (\d)", plan)) == ["0", "1"]
