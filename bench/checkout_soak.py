"""Does checkout decay? Claim batches for many minutes on a frontier that keeps churning.

    python bench/checkout_soak.py [--minutes 30] [--rows 1000000] [--batch 64]

Each cycle claims a batch (timed) and then puts the claimed rows back into the
frontier with a new random relevance, as classification and check-in keep doing in a
real crawl, so dead index entries pile up at the head of the frontier index unless
autovacuum (tuned by migration 0002) keeps pace. Prints the median claim latency per
minute and the change from the first minute to the last.
Writes bench/results/checkout_soak.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import claim_params, scratch_engine, write_results
from checkout import BUILD

from focuscrawl.db.database import engine_dsn, execute
from focuscrawl.db.queries import queries

# what classification and check-in do to claimed rows, compressed: back, re-scored, the
# leases ended (as a store ends them)
PUT_BACK = (
    "WITH ended AS (DELETE FROM doc_lease WHERE oid = ANY(%(oids)s)) "
    "UPDATE doc SET state = 0, relevance = ln(random()) WHERE oid = ANY(%(oids)s)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    per_minute: list[float] = []
    cycles = 0
    with scratch_engine() as engine:
        with engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT")
            for statement in BUILD.split(";"):
                if statement.strip():
                    execute(connection, statement, {"rows": args.rows, "share": 1})
        connection = psycopg2.connect(engine_dsn(engine))
        cursor = connection.cursor()
        claim = queries["claim_batch"]
        end = time.monotonic() + args.minutes * 60
        while time.monotonic() < end:
            minute_end = min(end, time.monotonic() + 60)
            samples = []
            while time.monotonic() < minute_end:
                began = time.perf_counter()
                cursor.execute(claim, claim_params(args.batch))
                oids = [row[0] for row in cursor.fetchall()]
                connection.commit()
                samples.append(time.perf_counter() - began)
                cursor.execute(PUT_BACK, {"oids": oids})
                connection.commit()
                cycles += 1
            per_minute.append(statistics.median(samples) * 1e3)
            print(
                f"minute {len(per_minute):>3}: median claim {per_minute[-1]:.2f} ms "
                f"({len(samples):,} claims)",
                flush=True,
            )
        connection.close()
    change = per_minute[-1] / per_minute[0] - 1
    print(
        f"first minute {per_minute[0]:.2f} ms, last {per_minute[-1]:.2f} ms: {change:+.0%} "
        f"over {args.minutes:g} minutes, {cycles:,} claim-and-return cycles"
    )
    result = {
        "minutes": args.minutes,
        "rows": args.rows,
        "batch": args.batch,
        "cycles": cycles,
        "median_ms_per_minute": [round(m, 3) for m in per_minute],
        "change": round(change, 3),
    }
    print(f"wrote {write_results('checkout_soak', result)}")


if __name__ == "__main__":
    main()
