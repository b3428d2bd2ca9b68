"""Weighted HITS in SQL against scipy: edge-visits per second at several graph sizes.

    python bench/distill.py [--edges 100000,1000000,5000000] [--iterations 50]

For each size, builds a random crawl in a scratch database: edges/10 fetched pages on
edges/500 sites, relevance uniform in probability, and ``edges`` links between
pages on different sites, then runs the distiller (``focuscrawl.distiller.run_hits``,
tolerance 0 so that every iteration runs) with 1 and with ``--iterations``
iterations; the difference is the iterations' cost, the rest is building the edge
table. The same weighted HITS in scipy.sparse on the same edges gives the ratio.
An edge-visit is one edge read by one update (two per iteration). Writes
bench/results/distill.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import scratch_engine, write_results
from scipy import sparse
from sqlalchemy.engine import Engine

from focuscrawl.distiller import run_hits

BUILD = """
TRUNCATE link, doc_text, doc_class, doc_fetch, doc_lease, doc, site, hits_score, distill_run
    RESTART IDENTITY CASCADE;
INSERT INTO site (host, bucket)
SELECT h, host_bucket(h)
FROM generate_series(1, %(sites)s) AS i, LATERAL (SELECT 's' || i || '.example') t(h);
INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, state)
SELECT url_oid(u), oid_bucket(url_oid(u)), false, '/' || i, 1 + (i %% %(sites)s), url_bytehash(u),
       ln(greatest(random(), 1e-6)), 2
FROM generate_series(1, %(pages)s) AS i,
     LATERAL (SELECT doc_url(false, 's' || (1 + (i %% %(sites)s)) || '.example', '/' || i)) AS x(u);
CREATE TEMP TABLE ids AS SELECT row_number() OVER () AS i, oid, sid FROM doc;
CREATE INDEX ON ids (i);
INSERT INTO link (oid_src, oid_dst, sid_src, sid_dst, bucket)
SELECT a.oid, b.oid, a.sid, b.sid, oid_bucket(a.oid)
FROM (SELECT DISTINCT 1 + (random() * (%(pages)s - 1))::bigint AS x,
             1 + (random() * (%(pages)s - 1))::bigint AS y
      FROM generate_series(1, %(links)s)) AS r
JOIN ids AS a ON a.i = r.x JOIN ids AS b ON b.i = r.y
WHERE a.sid <> b.sid;
DROP TABLE ids;
ANALYZE doc;
ANALYZE link;
"""


def scipy_hits(engine: Engine, share: float, iterations: int) -> tuple[int, float]:
    """The same computation in scipy.sparse; returns (edges, seconds for the iterations)."""
    with engine.connect() as c:
        rel = dict(c.exec_driver_sql("SELECT oid, relevance FROM doc WHERE state = 2").all())
        ordered = sorted(rel.values(), reverse=True)
        rho = ordered[max(int(np.ceil(share * len(ordered))) - 1, 0)]
        rows = c.exec_driver_sql(
            "SELECT oid_src, oid_dst, sid_src, sid_dst FROM link WHERE sid_src <> sid_dst"
        ).all()
    edges = [(u, v, su, sv) for u, v, su, sv in rows if rel.get(v, -np.inf) >= rho and u in rel]
    src = np.asarray([e[0] for e in edges])
    dst = np.asarray([e[1] for e in edges])
    ssrc = np.asarray([e[2] for e in edges])
    sdst = np.asarray([e[3] for e in edges])
    hubs, s = np.unique(src, return_inverse=True)
    auths, d = np.unique(dst, return_inverse=True)
    _, h0_key = np.unique(np.stack([ssrc, d]), axis=1, return_inverse=True)
    _, a0_key = np.unique(np.stack([s, sdst]), axis=1, return_inverse=True)
    h0 = np.bincount(h0_key.ravel())[h0_key.ravel()]
    a0 = np.bincount(a0_key.ravel())[a0_key.ravel()]
    r = np.exp(np.asarray([rel[u] for u in src]))
    wa = sparse.csr_matrix((r / h0, (d, s)), shape=(len(auths), len(hubs)))
    wh = sparse.csr_matrix((r / a0, (s, d)), shape=(len(hubs), len(auths)))
    h = np.full(len(hubs), 1 / len(hubs))
    started = time.perf_counter()
    for _ in range(iterations):
        a = wa @ h
        a /= a.sum()
        h = wh @ a
        h /= h.sum()
    return len(edges), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", default="100000,1000000,5000000")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--share", type=float, default=0.15)
    args = parser.parse_args()
    curve = []
    with scratch_engine() as engine:
        for size in (int(x) for x in args.edges.split(",")):
            started = time.perf_counter()
            with engine.begin() as c:
                params = {"pages": size // 10, "sites": max(size // 500, 2), "links": size}
                c.exec_driver_sql(BUILD, params)
            build_s = time.perf_counter() - started
            with engine.connect() as c:
                links = c.exec_driver_sql("SELECT count(*) FROM link").scalar_one()
            started = time.perf_counter()
            run_hits(engine, args.share, 1, 0.0)
            one_s = time.perf_counter() - started
            started = time.perf_counter()
            full = run_hits(engine, args.share, args.iterations, 0.0)
            full_s = time.perf_counter() - started
            per_iteration = (full_s - one_s) / (args.iterations - 1)
            edges, scipy_s = scipy_hits(engine, args.share, args.iterations)
            assert edges == full.edges, (edges, full.edges)
            visits = 2 * full.edges / per_iteration
            point = {
                "links": links,
                "cross_site_edges_to_authorities": full.edges,
                "hubs": full.hubs,
                "authorities": full.authorities,
                "build_graph_seconds": round(build_s, 1),
                "sql_total_seconds": round(full_s, 2),
                "sql_edge_table_seconds": round(one_s - per_iteration, 2),
                "sql_per_iteration_ms": round(per_iteration * 1e3, 1),
                "sql_edge_visits_per_s": round(visits),
                "scipy_per_iteration_ms": round(scipy_s / args.iterations * 1e3, 2),
                "sql_over_scipy": round(per_iteration / (scipy_s / args.iterations), 1),
            }
            curve.append(point)
            print(
                f"{links:>9,} links, {full.edges:>9,} edges: {args.iterations} iterations in "
                f"{full_s:.2f} s ({point['sql_edge_table_seconds']} s edge table, "
                f"{point['sql_per_iteration_ms']} ms/iteration = "
                f"{visits / 1e6:.1f}M edge-visits/s); scipy {point['scipy_per_iteration_ms']} "
                f"ms/iteration; SQL/scipy {point['sql_over_scipy']}x"
            )
    print(f"wrote {write_results('distill', {'iterations': args.iterations, 'curve': curve})}")


if __name__ == "__main__":
    main()
