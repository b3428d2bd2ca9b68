"""The crawler's claim on the real schema, one PostgreSQL against a local Citus cluster
(issue 26).

    python bench/claim_latency.py [--rows 1000000,10000000] [--claims 300] [--batch 64]
        [--shards 8] [--targets single,citus]

For each target a database is made as a user makes one (``db upgrade``, and on the
cluster, a coordinator and two workers on this machine, ``db distribute --shards``), and
its frontier filled with --rows unvisited URLs on 10,000 hosts (in steps: the smaller
sizes first). Then a crawler claims --claims batches of --batch URLs, each through the
crawler's own code (``Crawler._claim_frontier``: on one server one ``claim_batch``; on
the cluster ``frontier_top`` and then each shard's share, each claim with its leases in
one transaction). The median, 90th and 99th percentile and the largest claim are
printed. The URLs' estimates are random: a claim's shares spread over every shard.

Writes bench/results/claim_latency.json.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import citus_cluster, claim_params, percentiles, scratch_engine, write_results
from sqlalchemy.engine import Engine

from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.process import Crawler

HOSTS = 10_000
STEP = 1_000_000
#: the hosts, in a reference table on the cluster (joined to fill doc on any node)
SITES = """
CREATE TABLE bench_host AS
    SELECT n, 'h' || n || '.bench.test' AS host FROM generate_series(0, %(hosts)s - 1) AS n;
INSERT INTO site (host, bucket) SELECT host, host_bucket(host) FROM bench_host;
"""
#: URLs %(lo)s to %(hi)s, on host n mod HOSTS, with random estimates
FILL = """
INSERT INTO doc (oid, bucket, https, path, sid, bytehash, relevance, priority, depth, state)
SELECT url_oid(u.url), oid_bucket(url_oid(u.url)), false, u.path, s.sid, url_bytehash(u.url),
       -100 * random(), 1, 1, 0
FROM generate_series(%(lo)s, %(hi)s - 1) AS i
JOIN bench_host AS h ON h.n = mod(i, %(hosts)s)
JOIN bench_site AS s ON s.host = h.host,
LATERAL (SELECT '/p' || i AS path, 'http://' || h.host || '/p' || i AS url) AS u;
"""


@contextlib.contextmanager
def _database(kind: str, shards: int) -> Iterator[Engine]:
    """A migrated database: a throw-away embedded server, or a local cluster laid out
    by ``db distribute``."""
    with contextlib.ExitStack() as stack:
        url = None
        if kind == "citus":
            url = stack.enter_context(citus_cluster(shards, base_port=9740))
        yield stack.enter_context(scratch_engine(url))


def _add_hosts(engine: Engine, kind: str) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(SITES % {"hosts": HOSTS})
        # the sites' ids by host, where a fill on any node can join them
        connection.exec_driver_sql("CREATE TABLE bench_site AS SELECT host, sid FROM site")
        if kind == "citus":
            connection.exec_driver_sql("SELECT create_reference_table('bench_host')")
            connection.exec_driver_sql("SELECT create_reference_table('bench_site')")


def _fill(engine: Engine, have: int, want: int) -> float:
    start = time.perf_counter()
    for lo in range(have, want, STEP):
        with engine.begin() as connection:
            params = {"lo": lo, "hi": min(lo + STEP, want), "hosts": HOSTS}
            connection.exec_driver_sql(FILL % params)
    with engine.begin() as connection:
        connection.exec_driver_sql("ANALYZE doc")
    return time.perf_counter() - start


def _claims(engine: Engine, claims: int, batch: int) -> dict[str, Any]:
    config = CrawlConfig(mode=Mode.SOFT, threads=1, quiet=True)
    crawler = Crawler(engine, config)
    crawler._read_shards()
    params = claim_params(batch, 600.0)
    samples, claimed = [], 0
    for _ in range(claims):
        start = time.perf_counter()
        rows = crawler._claim_frontier(params)
        samples.append(time.perf_counter() - start)
        claimed += len(rows)
    crawler.fetcher.close()
    return {
        **{k: round(v, 2) for k, v in percentiles(samples).items()},
        "claims": claims,
        "urls_claimed": claimed,
        "shards": len(crawler.shards.groups),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--targets", default="single,citus")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.rows.split(","))
    results: dict[str, Any] = {"batch": args.batch, "hosts": HOSTS, "targets": {}}
    for kind in args.targets.split(","):
        with _database(kind, args.shards) as engine:
            _add_hosts(engine, kind)
            have = 0
            rows: dict[str, Any] = {}
            for size in sizes:
                seconds = _fill(engine, have, size)
                have = size
                measured = {**_claims(engine, args.claims, args.batch), "fill_s": round(seconds)}
                rows[str(size)] = measured
                print(
                    f"{kind:6s} {size:>11,} URLs: claim of {args.batch} median "
                    f"{measured['median_ms']:.2f} ms, p90 {measured['p90_ms']:.2f}, p99 "
                    f"{measured['p99_ms']:.2f}, max {measured['max_ms']:.2f} "
                    f"({measured['shards']} shard(s); filled in {seconds:.0f} s)",
                    flush=True,
                )
            results["targets"][kind] = rows
    print(f"wrote {write_results('claim_latency', results)}")


if __name__ == "__main__":
    main()
