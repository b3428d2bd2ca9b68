"""Frontier claims on a local Citus cluster against one PostgreSQL (issue 26).

    python bench/citus_claims.py [--rows 1000000,10000000] [--claims 500] [--batch 64]
        [--buckets 256] [--shards 32]

A frontier table of the claim's columns plus ``bucket`` (a hash of the host into
--buckets), keyed (bucket, oid), with today's frontier index, and one that leads with
the bucket. On the embedded server it is a plain table; on a local cluster (a
coordinator and two workers from ``../shared/tools/citus-build``, one machine) it is
distributed on ``bucket`` in --shards shards. Each claim takes --batch URLs, marks them
claimed and commits; the median and 90th percentile of --claims claims are printed:

``global``  today's claim: the top of the whole frontier, FOR UPDATE SKIP LOCKED.
            Citus refuses it (no equality on the distribution column); printed with
            its error.
``bucket``  the top of one bucket (the buckets in turn), FOR UPDATE SKIP LOCKED: one
            shard, one round trip.
``merge``   the top of the whole frontier read with no lock (on Citus: every shard
            reads its own top, the coordinator merges), then from each bucket among
            them as many as it holds, FOR UPDATE SKIP LOCKED inside the bucket: the
            global order (bench/bucketed_claims.py measures what each costs the harvest).
``shards``  as merge, but one claim per shard rather than per bucket: Citus routes a
            statement naming several buckets of one shard (``bucket = ANY(...)``) to
            that shard, FOR UPDATE included, and a shard's share of the global top is
            its own top. On the single server all buckets are one group.

Writes bench/results/citus_claims.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results

from focuscrawl.db.cluster import LocalCluster, citus_bin_dir
from focuscrawl.db.embedded import EmbeddedServer

SCHEMA = """
DROP TABLE IF EXISTS frontier;
CREATE TABLE frontier (
    bucket smallint NOT NULL, oid bigint NOT NULL, relevance float8 NOT NULL,
    priority smallint NOT NULL DEFAULT 0, bytehash int NOT NULL,
    num_tries smallint NOT NULL DEFAULT 0, state smallint NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, oid));
CREATE INDEX frontier_order ON frontier (relevance DESC, priority, bytehash)
    WHERE state = 0 AND num_tries = 0;
CREATE INDEX frontier_bucket_order ON frontier (bucket, relevance DESC, priority, bytehash)
    WHERE state = 0 AND num_tries = 0;
"""
LOAD = """
INSERT INTO frontier (bucket, oid, relevance, bytehash)
SELECT g %% %(buckets)s, g, -random() * 20, (random() * 2e9 - 1e9)::int
FROM generate_series(1, %(rows)s) AS g
"""
GLOBAL = """
WITH c AS (SELECT bucket, oid FROM frontier WHERE state = 0 AND num_tries = 0
           ORDER BY relevance DESC, priority, bytehash LIMIT %(batch)s FOR UPDATE SKIP LOCKED)
UPDATE frontier AS f SET state = 1 FROM c WHERE f.bucket = c.bucket AND f.oid = c.oid
RETURNING f.oid
"""
BUCKET = """
WITH c AS (SELECT oid FROM frontier WHERE bucket = %(bucket)s AND state = 0 AND num_tries = 0
           ORDER BY relevance DESC, priority, bytehash LIMIT %(batch)s FOR UPDATE SKIP LOCKED)
UPDATE frontier SET state = 1 WHERE bucket = %(bucket)s AND oid IN (SELECT oid FROM c)
RETURNING oid
"""
GROUP = """
WITH c AS (SELECT bucket, oid FROM frontier
           WHERE bucket = ANY(%(buckets)s::smallint[]) AND state = 0 AND num_tries = 0
           ORDER BY relevance DESC, priority, bytehash LIMIT %(batch)s FOR UPDATE SKIP LOCKED)
UPDATE frontier AS f SET state = 1 FROM c
WHERE f.bucket = ANY(%(buckets)s::smallint[]) AND f.bucket = c.bucket AND f.oid = c.oid
RETURNING f.oid
"""
TOP = """
SELECT bucket, count(*) FROM (
    SELECT bucket FROM frontier WHERE state = 0 AND num_tries = 0
    ORDER BY relevance DESC, priority, bytehash LIMIT %(batch)s) AS top
GROUP BY bucket
"""


def _time(cursor: Any, claim: Callable[[Any, int], int], claims: int) -> dict[str, Any]:
    times, rows = [], 0
    for n in range(claims):
        started = time.perf_counter()
        rows += claim(cursor, n)
        cursor.connection.commit()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 3),
        "p90_ms": round(times[int(len(times) * 0.9)], 3),
        "urls_per_claim": round(rows / claims, 1),
    }


def measure(url: str, rows: int, args: argparse.Namespace, citus: bool) -> dict[str, Any]:
    connection = psycopg2.connect(url)
    cursor = connection.cursor()
    cursor.execute(SCHEMA)
    if citus:
        cursor.execute(
            "SELECT create_distributed_table('frontier', 'bucket', shard_count => %s)",
            (args.shards,),
        )
    connection.commit()
    started = time.perf_counter()
    cursor.execute(LOAD, {"rows": rows, "buckets": args.buckets})
    connection.commit()
    connection.autocommit = True
    cursor.execute("VACUUM ANALYZE frontier")
    connection.autocommit = False
    loaded = round(time.perf_counter() - started, 1)
    batch = args.batch
    out: dict[str, Any] = {"rows": rows, "load_seconds": loaded}

    def global_claim(c: Any, n: int) -> int:
        c.execute(GLOBAL, {"batch": batch})
        return len(c.fetchall())

    def bucket_claim(c: Any, n: int) -> int:
        c.execute(BUCKET, {"batch": batch, "bucket": n % args.buckets})
        return len(c.fetchall())

    shard_of: dict[int, int] = {b: 0 for b in range(args.buckets)}
    if citus:
        cursor.execute(
            "SELECT b, get_shard_id_for_distribution_column('frontier', b) "
            "FROM generate_series(0, %s - 1) AS b",
            (args.buckets,),
        )
        shard_of = {int(b): int(shard) for b, shard in cursor.fetchall()}
        connection.commit()
    members: dict[int, list[int]] = {}
    for bucket, shard in shard_of.items():
        members.setdefault(shard, []).append(bucket)

    def shards_claim(c: Any, n: int) -> int:
        c.execute(TOP, {"batch": batch})
        wanted: dict[int, int] = {}
        for bucket, urls in c.fetchall():
            wanted[shard_of[bucket]] = wanted.get(shard_of[bucket], 0) + urls
        got = 0
        for shard, urls in wanted.items():
            c.execute(GROUP, {"batch": urls, "buckets": members[shard]})
            got += len(c.fetchall())
        return got

    def merge_claim(c: Any, n: int) -> int:
        c.execute(TOP, {"batch": batch})
        got = 0
        for bucket, urls in c.fetchall():
            c.execute(BUCKET, {"batch": urls, "bucket": bucket})
            got += len(c.fetchall())
        return got

    for name, claim in (("global", global_claim), ("bucket", bucket_claim),
                        ("merge", merge_claim), ("shards", shards_claim)):  # fmt: skip
        try:
            out[name] = _time(cursor, claim, args.claims)
        except psycopg2.Error as exc:
            connection.rollback()
            out[name] = {"error": str(exc).strip().splitlines()[0]}
    connection.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--buckets", type=int, default=256)
    parser.add_argument("--shards", type=int, default=32)
    args = parser.parse_args()
    sizes = [int(r) for r in args.rows.split(",")]
    results: dict[str, list[dict[str, Any]]] = {"single": [], "citus": []}
    with tempfile.TemporaryDirectory(prefix="focuscrawl-citus-bench-") as home:
        single = EmbeddedServer(Path(home) / "single", "2GB")
        cluster = LocalCluster(Path(home) / "cluster", citus_bin_dir())
        try:
            single.up()
            cluster.up()
            for rows in sizes:
                for where, url, citus in (("single", single.url(), False),
                                          ("citus", cluster.url(), True)):  # fmt: skip
                    result = measure(url, rows, args, citus)
                    results[where].append(result)
                    cells = "  ".join(
                        f"{name} {r['median_ms']:.2f} ms (p90 {r['p90_ms']:.2f}, "
                        f"{r['urls_per_claim']:.0f} URLs)" if "error" not in r
                        else f"{name}: {r['error']}"
                        for name in ("global", "bucket", "merge", "shards") for r in [result[name]]
                    )  # fmt: skip
                    print(f"{where:6} {rows:>10,} rows (loaded in {result['load_seconds']} s): "
                          f"{cells}", flush=True)  # fmt: skip
        finally:
            cluster.down()
            single.down()
    payload = {"batch": args.batch, "buckets": args.buckets, "shards": args.shards,
               "claims": args.claims, "results": results}  # fmt: skip
    print(f"wrote {write_results('citus_claims', payload)}")


if __name__ == "__main__":
    main()
