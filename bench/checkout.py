"""Checkout latency: claim batches of 64 off a frontier of N unvisited URLs.

    python bench/checkout.py [--rows 1000000] [--claims 1000] [--batch 64]

Builds the frontier in a throw-away embedded PostgreSQL (or --database-url), then
runs the crawler's claim statement (sql/frontier.sql: claim_batch), each claim a
statement of its own (autocommit) as a crawler runs it, and prints the latency
distribution, the WAL, full-page images and buffer reads a claim costs, the plan's node
types and the bytes per frontier row. The frontier starts from a checkpoint, so every
size is measured in the same phase.

Every URL gets a random relevance, so a claim takes its 64 URLs from 64 heap pages,
as a crawl's frontier lies (bench/crawl.py: 56 pages per 64 after a soft crawl). With
--share N, N URLs written one after another share their relevance, so a claim takes
its URLs from fewer pages; the benchmark prints how many a claim touched.
Writes bench/results/checkout-N[-shareS].json (PostgreSQL 14 or later).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg2
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    HEAP_PAGES_PER_CLAIM,
    Timer,
    claim_params,
    percentiles,
    scratch_engine,
    write_results,
)

from focuscrawl.db.database import engine_dsn, execute
from focuscrawl.db.embedded import _bin_dir
from focuscrawl.db.queries import queries

BUILD = """
INSERT INTO site (host, bucket)
SELECT h, host_bucket(h)
FROM generate_series(1, 1000) g, LATERAL (SELECT 'h' || g || '.example') t(h);
INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, priority)
SELECT url_oid(u), oid_bucket(url_oid(u)), false, p, 1 + g %% 1000, url_bytehash(u),
       -- one pseudo-random relevance for each run of %(share)s URLs
       ln((('x' || left(md5((g / %(share)s)::text), 8))::bit(32)::bigint + 1) / 4294967297.0),
       (random() * 50)::int
FROM generate_series(1, %(rows)s) g,
     LATERAL (SELECT '/page/' || g) AS t(p),
     LATERAL (SELECT doc_url(false, 'h' || (1 + g %% 1000) || '.example', p)) AS v(u);
VACUUM ANALYZE doc;
CHECKPOINT;
"""


def _plan_nodes(plan: dict) -> list[str]:  # type: ignore[type-arg]
    names = [plan["Node Type"] + (f" ({plan['Index Name']})" if "Index Name" in plan else "")]
    for child in plan.get("Plans", []):
        names.extend(_plan_nodes(child))
    return names


def _crawler_connection(dsn: str) -> Any:
    """A connection as a crawler's watchdog has one: each claim is a statement of its own
    (autocommit), one round trip, as pgbench sends it (not BEGIN, claim, COMMIT)."""
    connection = psycopg2.connect(dsn)
    connection.autocommit = True
    return connection


#: server-wide counters read around the claims: WAL (full-page images are 8 KB page
#: copies, written on the first change of a page after a checkpoint) and buffer reads
#: from outside shared_buffers
COUNTERS = """
SELECT (SELECT wal_bytes FROM pg_stat_wal), (SELECT wal_fpi FROM pg_stat_wal),
       blks_read, blks_hit
FROM pg_stat_database WHERE datname = current_database()
"""


def _counters(engine: Engine) -> tuple[float, ...]:
    with engine.connect() as connection:
        return tuple(float(v) for v in connection.exec_driver_sql(COUNTERS).one())


def _claim_latencies(engine: Engine, claims: int, batch: int) -> list[float]:
    """Seconds each of ``claims`` claims of ``batch`` took, one connection, autocommit."""
    samples: list[float] = []
    raw = _crawler_connection(engine_dsn(engine))
    try:
        cursor = raw.cursor()
        sql = queries["claim_batch"]
        for _ in range(claims):
            with Timer() as t:
                cursor.execute(sql, claim_params(batch))
                claimed = cursor.fetchall()
            assert len(claimed) == batch, "frontier ran dry: use more --rows"
            samples.append(t.seconds)
    finally:
        raw.close()
    time.sleep(0.5)  # a closing backend flushes its statistics
    return samples


def _refill(engine: Engine) -> None:
    """Put every claimed URL back in the frontier, then vacuum: each run starts full."""
    with engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT")
        connection.exec_driver_sql("UPDATE doc SET state = 0 WHERE state = 1")
        connection.exec_driver_sql("TRUNCATE doc_lease")
        connection.exec_driver_sql("VACUUM doc")


def _leased(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.exec_driver_sql("SELECT count(*) FROM doc WHERE state = 1").scalar())


def _compare_with_pgbench(engine: Engine, batch: int, seconds: float, rows: int) -> dict[str, Any]:
    """Rows/s claimed by pgbench and by Python (two clients each) with the same statement,
    each from a full frontier, counted as the rows each left leased."""
    dsn = engine_dsn(engine)
    with psycopg2.connect(dsn) as connection, connection.cursor() as cursor:
        statement = cursor.mogrify(queries["claim_batch"], claim_params(batch)).decode()
    duration = max(1, int(seconds))
    _refill(engine)
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        # pgbench reads one statement a line: drop the comments, join the lines
        lines = [ln for ln in statement.splitlines() if not ln.strip().startswith("--")]
        script.write(" ".join(lines).strip().rstrip(";") + ";\n")
        script.flush()
        os.chmod(script.name, 0o644)
        done = subprocess.run(
            [str(_bin_dir() / "pgbench"), "-n", "-f", script.name, "-c", "2", "-j", "2",
             "-T", str(duration), dsn],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    pgbench_claimed = _leased(engine)
    # pgbench's own count: transactions a second (its clock excludes connecting)
    tps = float(re.search(r"tps = ([0-9.]+)", done.stdout).group(1))  # type: ignore[union-attr]
    _refill(engine)
    claimed = [0, 0]

    def client(index: int) -> None:
        connection = _crawler_connection(dsn)
        cursor = connection.cursor()
        sql = queries["claim_batch"]
        deadline = time.perf_counter() + duration
        while time.perf_counter() < deadline:
            cursor.execute(sql, claim_params(batch))
            claimed[index] += len(cursor.fetchall())
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    python_claimed = sum(claimed)
    return {
        "pgbench_rows_per_s": round(pgbench_claimed / duration),
        "pgbench_tps_x_batch": round(tps * batch),
        "python_rows_per_s": round(python_claimed / duration),
        "python_vs_pgbench": round(python_claimed / max(pgbench_claimed, 1), 3),
        # a frontier claimed to the end idles the clients: the rates say nothing then
        "ran_dry": max(pgbench_claimed, python_claimed) > rows - 4 * batch,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--claims", type=int, default=1_000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--share", type=int, default=1, help="URLs in a row that share one relevance"
    )
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--seconds", type=float, default=10, help="duration of each throughput run")
    parser.add_argument("--no-compare", action="store_true", help="skip the pgbench comparison")
    args = parser.parse_args()

    with scratch_engine(args.database_url) as engine:
        with Timer() as build, engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT")
            for statement in BUILD.split(";"):
                if statement.strip():
                    execute(connection, statement, {"rows": args.rows, "share": args.share})
        with engine.connect() as connection:
            size = connection.exec_driver_sql(
                "SELECT pg_total_relation_size('doc'), pg_relation_size('doc'), "
                "pg_relation_size('doc_frontier'), pg_relation_size('doc_pkey')"
            ).one()
            plan = execute(
                connection,
                "EXPLAIN (FORMAT JSON) " + queries["claim_batch"],
                claim_params(args.batch),
            ).scalar()
            connection.rollback()
        plan = plan if isinstance(plan, list) else json.loads(plan)
        nodes = _plan_nodes(plan[0]["Plan"])

        with engine.connect() as connection:
            params = {"claims": args.claims, "batch": args.batch}
            heap_pages = float(execute(connection, HEAP_PAGES_PER_CLAIM, params).scalar_one())
        before = _counters(engine)
        samples = _claim_latencies(engine, args.claims, args.batch)
        per_claim = [(b - a) / args.claims for a, b in zip(before, _counters(engine), strict=True)]

        throughput = (
            {}
            if args.no_compare
            else _compare_with_pgbench(engine, args.batch, args.seconds, args.rows)
        )

    stats = percentiles(samples)
    rows_per_s = args.batch / (sum(samples) / len(samples))
    result = {
        "frontier_rows": args.rows,
        "share": args.share,
        "batch": args.batch,
        "claims": args.claims,
        "build_s": round(build.seconds, 1),
        **{k: round(v, 3) for k, v in stats.items()},
        "rows_per_s": round(rows_per_s),
        "bytes_per_frontier_row": round(size[0] / args.rows, 1),
        "heap_bytes_per_row": round(size[1] / args.rows, 1),
        "frontier_index_bytes_per_row": round(size[2] / args.rows, 1),
        "pkey_bytes_per_row": round(size[3] / args.rows, 1),
        "wal_bytes_per_claim": round(per_claim[0]),
        "full_page_images_per_claim": round(per_claim[1], 1),
        "blocks_read_per_claim": round(per_claim[2], 1),
        "buffer_hits_per_claim": round(per_claim[3], 1),
        "plan": nodes,
        "heap_pages_per_claim": round(heap_pages, 1),
        **throughput,
    }
    shared = f", {args.share} in a row sharing a relevance" if args.share > 1 else ""
    print(f"frontier of {args.rows:,} unvisited URLs{shared} built in {build.seconds:.1f} s")
    print("claim plan: " + " > ".join(nodes))
    print(
        f"claim {args.batch} x {args.claims}: median {stats['median_ms']:.2f} ms, "
        f"p90 {stats['p90_ms']:.2f} ms, p99 {stats['p99_ms']:.2f} ms, max {stats['max_ms']:.2f} ms "
        f"({rows_per_s:,.0f} rows/s, one connection; {heap_pages:.1f} heap pages a claim)"
    )
    print(
        f"per claim (server-wide, from a checkpoint): "
        f"{result['wal_bytes_per_claim'] / 1024:.0f} KB of WAL, "
        f"{result['full_page_images_per_claim']} full-page images, "
        f"{result['blocks_read_per_claim']} blocks read from outside shared_buffers, "
        f"{result['buffer_hits_per_claim']} buffer hits"
    )
    parts = (
        f"heap {result['heap_bytes_per_row']}",
        f"doc_frontier {result['frontier_index_bytes_per_row']}",
        f"doc_pkey {result['pkey_bytes_per_row']}",
    )
    total = result["bytes_per_frontier_row"]
    print(f"storage: {total} bytes per frontier row, indexes included ({', '.join(parts)})")
    if throughput:
        pgbench, python = throughput["pgbench_rows_per_s"], throughput["python_rows_per_s"]
        share = throughput["python_vs_pgbench"]
        print(
            f"claim throughput, 2 clients x {args.seconds:g} s: pgbench {pgbench:,} rows/s "
            f"(its tps x {args.batch}: {throughput['pgbench_tps_x_batch']:,}),"
        )
        print(f"  Python {python:,} rows/s ({share:.0%} of pgbench)")
        if throughput["ran_dry"]:
            print("  the frontier ran dry: these rates are not comparable; use more --rows")
    name = f"checkout-{args.rows}" + (f"-share{args.share}" if args.share > 1 else "")
    print(f"wrote {write_results(name, result)}")


if __name__ == "__main__":
    main()
