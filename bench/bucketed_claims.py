"""Claims inside a host bucket (issue 26): how far does the harvest fall from today's
global frontier order?

    python bench/bucketed_claims.py [--corpus-home DIR] [--corpus wikispeedia]
        [--variants global,turn,best,merge,shards] [--buckets 256] [--shards 8]
        [--samples 1] [--min-pages 30]

On a Citus cluster a claim can lock rows (``FOR UPDATE SKIP LOCKED``) only when it
names one value of the distribution column: one bucket, a hash of the host. This runs
the evaluation sweep (every topic of at least --min-pages pages, soft focus, lockstep
rounds, the product's defaults) with the claim statement swapped in memory (in this
process only; ``queries.replaced``) for one that claims inside one bucket, and compares:

``global``  today's claim: the whole frontier in the paper's order.
``turn``    each claim takes the next bucket (in bucket order, cycling) that holds
            untried URLs; inside it, the same order as today.
``best``    each claim takes the bucket whose best untried URL has the highest
            estimate (a query over every bucket's head, which Citus runs on every
            shard, no rows locked); inside it, the same order.
``merge``   two steps: read the global top of the untried frontier (the claim's size,
            no rows locked: on Citus one query on every shard, merged), count how many
            of them each bucket holds, then claim that many from each of those buckets
            in today's order, with FOR UPDATE SKIP LOCKED inside the bucket (on Citus a
            statement routed to one shard each).
``shards``  the product's own claim on a cluster (focuscrawl.crawler.process,
            ``Crawler._claim_frontier``; migration 0016's buckets): the crawler, its
            store and the classifier are handed a layout of --shards shards (bucket
            modulo --shards), as on a Citus cluster, and claim, lock and score shard by
            shard; on one server the statements run unchanged.

The bucket of a host is the first byte of the MD5 of its name, modulo --buckets. The
bucket is chosen by a query of its own here; the product would keep the choice in the
crawler. Writes bench/results/bucketed_claims.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results

from focuscrawl.classifier import process as classifier_process
from focuscrawl.crawler import process
from focuscrawl.db import shards as shards_module
from focuscrawl.db.queries import queries, replaced
from focuscrawl.db.shards import BUCKETS as ALL_BUCKETS
from focuscrawl.db.shards import ShardMap
from focuscrawl.evaluation.experiment import EvalOptions, evaluate
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.evaluation.summary import sweep_summary
from focuscrawl.evaluation.truth import load_truth, sweep_topics
from focuscrawl.webbox.process import start_server_process

#: every frontier bucket with its best untried estimate and its sites
BUCKETS = """
SELECT get_byte(decode(md5(s.host), 'hex'), 0) %% %(buckets)s AS bucket,
       max(d.relevance) FILTER (WHERE d.num_tries = 0) AS head, array_agg(DISTINCT s.sid) AS sids
FROM doc AS d JOIN site AS s ON s.sid = d.sid
WHERE d.state = 0
GROUP BY 1
"""
#: the buckets of the global top of the untried frontier, with how many each holds
TOP_BUCKETS = """
SELECT get_byte(decode(md5(s.host), 'hex'), 0) %% %(buckets)s AS bucket, count(*) AS urls,
       array_agg(DISTINCT s.sid) AS sids
FROM (SELECT sid FROM doc
      WHERE state = 0 AND num_tries = 0 AND sid <> ALL(%(full_sites)s::int[])
      ORDER BY relevance DESC, priority, bytehash LIMIT %(batch)s) AS top
JOIN site AS s ON s.sid = top.sid
GROUP BY 1
ORDER BY 1
"""
#: the frontier filter of claim_batch's three reads of the frontier; the bucketed claim
#: adds its sites
FILTER = "sid <> ALL(%(full_sites)s::int[])"
BUCKETED = FILTER + " AND sid = ANY(%(bucket_sids)s::int[])"


class BucketChooser:
    """Picks the bucket of each claim, and hands the claim statement its sites."""

    def __init__(self, variant: str, buckets: int) -> None:
        self.variant = variant
        self.buckets = buckets
        self.last = -1
        self.claims = 0
        self.sizes: list[int] = []

    def parts(self, cursor: Any, params: dict[str, Any]) -> list[tuple[int, list[int]]]:
        """merge: (URLs to claim, sites) of each bucket of the global top."""
        cursor.execute(TOP_BUCKETS, {**params, "buckets": self.buckets})
        rows = cursor.fetchall()
        self.claims += 1
        self.sizes.extend(len(r[2]) for r in rows)
        return [(int(r[1]), list(r[2])) for r in rows]

    def sids(self, cursor: Any) -> list[int]:
        cursor.execute(BUCKETS, {"buckets": self.buckets})
        rows = cursor.fetchall()
        if not rows:
            return []
        if self.variant == "best":
            untried = [r for r in rows if r[1] is not None] or rows
            bucket, _, sids = max(untried, key=lambda r: (r[1] or float("-inf"), -r[0]))
        else:  # turn: the next bucket after the last one, cycling
            ordered = sorted(rows, key=lambda r: (r[0] - self.last - 1) % self.buckets)
            bucket, _, sids = ordered[0]
        self.last = bucket
        self.claims += 1
        self.sizes.append(len(sids))
        return list(sids)


def _patched_sql(chooser: BucketChooser) -> Any:
    """Crawler._sql, with the chosen bucket's sites added to every claim_batch."""
    original = process.Crawler._sql

    def _sql(self: Any, name: str, params: dict[str, Any], fetch: bool = False) -> Any:
        if name != "claim_batch":
            return original(self, name, params, fetch)
        raw = self.engine.raw_connection()
        try:
            with raw.cursor() as cursor:
                if chooser.variant == "merge":
                    parts = chooser.parts(cursor, params)
                else:
                    parts = [(params["batch"], chooser.sids(cursor))]
            raw.commit()
        finally:
            raw.close()
        rows: list[Any] = []
        for urls, sids in parts:  # one claim inside each bucket
            rows += original(self, name, {**params, "batch": urls, "bucket_sids": sids}, fetch)
        return rows  # merge: bucket by bucket (a round is fetched whole before the next)

    return _sql


def sweep(
    home: Path,
    corpus: str,
    variant: str,
    buckets: int,
    samples: int,
    topics: list[str],
    shards: int = 8,
) -> dict[str, Any]:
    directory = home / "corpora" / corpus
    options = EvalOptions(
        topics=topics, strategies=[Strategy.SOFT], samples=samples, keep_databases=False
    )
    chooser = BucketChooser(variant, buckets)
    claim = queries["claim_batch"]
    assert claim.count(FILTER) == 3, "claim_batch changed: update this benchmark"
    server, proxy = start_server_process(home, str(directory), "--no-faults")
    started = time.perf_counter()
    original = process.Crawler._sql
    layouts = (shards_module.shard_map, classifier_process.shard_map)
    try:
        with scratch_engine() as engine:
            if variant == "global":
                result = evaluate(engine, directory, proxy, options)
            elif variant == "shards":
                layout = ShardMap.of([bucket % shards for bucket in ALL_BUCKETS])
                shards_module.shard_map = classifier_process.shard_map = lambda _: layout  # type: ignore[assignment]
                result = evaluate(engine, directory, proxy, options)
            else:
                process.Crawler._sql = _patched_sql(chooser)  # type: ignore[method-assign]
                with replaced("claim_batch", claim.replace(FILTER, BUCKETED)):
                    result = evaluate(engine, directory, proxy, options)
    finally:
        process.Crawler._sql = original  # type: ignore[method-assign]
        shards_module.shard_map, classifier_process.shard_map = layouts
        server.terminate()
        server.communicate()
    harvests = {t["topic"]: t["strategies"]["soft"]["harvest"] for t in result["topics"]}
    summary = sweep_summary(result)["soft"]
    mean_sites = sum(chooser.sizes) / len(chooser.sizes) if chooser.sizes else None
    return {
        "variant": variant,
        "mean_harvest": summary["mean_harvest"],
        "harvests": harvests,
        "claims": chooser.claims,
        "mean_sites_per_bucket_claimed": mean_sites,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_home = os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl")
    parser.add_argument("--corpus-home", default=default_home)
    parser.add_argument("--corpus", default="wikispeedia")
    parser.add_argument("--variants", default="global,turn,best,merge")
    parser.add_argument("--buckets", type=int, default=256)
    parser.add_argument("--shards", type=int, default=8, help="for the shards variant")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--min-pages", type=int, default=30)
    parser.add_argument("--topics", default=None, help="comma-separated (default: the sweep)")
    args = parser.parse_args()
    home = Path(args.corpus_home).expanduser()
    topics = (
        args.topics.split(",")
        if args.topics
        else sweep_topics(load_truth(home / "corpora" / args.corpus), args.min_pages)
    )
    runs = {}
    for variant in args.variants.split(","):
        run = sweep(home, args.corpus, variant, args.buckets, args.samples, topics, args.shards)
        runs[variant] = run
        print(
            f"{variant:8} mean harvest {run['mean_harvest']:.3f} over {len(run['harvests'])} "
            f"topics ({run['seconds']} s, {run['claims']} bucketed claims)",
            flush=True,
        )
    if "global" in runs:
        base = runs["global"]["harvests"]
        for variant, run in runs.items():
            if variant == "global":
                continue
            diffs = [run["harvests"][t] - base[t] for t in base]
            run["mean_difference"] = round(sum(diffs) / len(diffs), 4)
            run["worst_difference"] = round(min(diffs), 3)
            run["topics_within_0.02"] = sum(abs(d) <= 0.02 for d in diffs)
            print(f"{variant:8} against global: mean {run['mean_difference']:+.4f}, worst "
                  f"{run['worst_difference']:+.3f}, {run['topics_within_0.02']} of {len(diffs)} "
                  "topics within 0.02")  # fmt: skip
    payload = {"corpus": args.corpus, "buckets": args.buckets, "samples": args.samples,
               "runs": runs}  # fmt: skip
    print(f"wrote {write_results('bucketed_claims', payload)}")


if __name__ == "__main__":
    main()
