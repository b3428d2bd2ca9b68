"""The host lease: PostgreSQL's CPU for the statements of sql/politeness.sql, a lease
taken and given back for every page, three ways.

    python bench/site_lease.py [--pages 5000] [--sites 2000] [--batch 100]

On one connection to a throw-away embedded PostgreSQL, "pages" go round the sites:
``two``: acquire_site, then release_sites of that one host, planned every time;
``prepared``: the same with acquire_site through ``focuscrawl.db.queries.prepared``
(planned once, as the crawler runs it);
``batched``: the prepared acquire_site, and the hosts given back --batch at a time in
one release_sites, as the crawler gives back the leases it keeps no more
(crawler.leases). Prints the server backend's CPU, the client's and the wall time per
page (the server's read from /proc, so on Linux with the server on this machine).
A crawler keeps a lease between requests, so it takes fewer than one a page: these are
the costs of one. Writes bench/results/site_lease.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import psycopg2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import proc_stat, scratch_engine, write_results

from focuscrawl.db.database import engine_dsn
from focuscrawl.db.queries import prepared, queries


def _backend_cpu(pid: int) -> float:
    stat = proc_stat(pid)
    if stat is None:
        raise SystemExit("cannot read the server backend's CPU from /proc")
    return stat[1]


def _release(cursor: Any, sids: list[int], bucket_of: dict[int, int]) -> None:
    buckets = [bucket_of[sid] for sid in sids]
    cursor.execute(
        queries["release_sites"],
        {
            "sids": sids,
            "site_buckets": buckets,
            "waits": [0.0] * len(sids),
            "taken": [1] * len(sids),
            "buckets": sorted(set(buckets)),
        },
    )


def _run(
    cursor: Any, pid: int, pages: int, bucket_of: dict[int, int], acquire: str, batch: int
) -> dict[str, float]:
    cpu, client, began = _backend_cpu(pid), time.process_time(), time.perf_counter()
    sids = sorted(bucket_of)
    held: list[int] = []
    for page in range(pages):
        sid = sids[page % len(sids)]
        params = {"sid": sid, "bucket": bucket_of[sid], "lease_seconds": 120.0}
        cursor.execute(acquire, params)
        assert cursor.fetchall()[0][0], "a site was not free"
        held.append(sid)
        if len(held) >= batch:
            _release(cursor, held, bucket_of)
            held = []
    if held:
        _release(cursor, held, bucket_of)
    return {
        "server_cpu_ms_per_page": round(1e3 * (_backend_cpu(pid) - cpu) / pages, 3),
        "client_cpu_ms_per_page": round(1e3 * (time.process_time() - client) / pages, 3),
        "wall_ms_per_page": round(1e3 * (time.perf_counter() - began) / pages, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--sites", type=int, default=2_000)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    with scratch_engine() as engine:
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO site (host, bucket, robots_txt, robots_expires_at) "
                "SELECT h, host_bucket(h), E'User-agent: *\\nDisallow: /x', "
                "now() + interval '1 day' FROM generate_series(1, %(sites)s) g, "
                "LATERAL (SELECT 'h' || g || '.example') AS t(h)",
                {"sites": args.sites},
            )
        connection = psycopg2.connect(engine_dsn(engine))
        connection.autocommit = True
        cursor = connection.cursor()
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
        cursor.execute("SET synchronous_commit = off")
        cursor.execute("SELECT sid, bucket FROM site")
        bucket_of = dict(cursor.fetchall())
        form = prepared("acquire_site")
        cursor.execute(form.prepare)
        pages, plain, plan = args.pages, queries["acquire_site"], form.execute
        result = {
            "pages": pages,
            "batch": args.batch,
            "two": _run(cursor, pid, pages, bucket_of, plain, batch=1),
            "prepared": _run(cursor, pid, pages, bucket_of, plan, batch=1),
            "batched": _run(cursor, pid, pages, bucket_of, plan, batch=args.batch),
        }
        connection.close()
    for kind in ("two", "prepared", "batched"):
        row = result[kind]
        print(
            f"{kind:9} server CPU {row['server_cpu_ms_per_page']} ms a page, "
            f"client CPU {row['client_cpu_ms_per_page']} ms, wall {row['wall_ms_per_page']} ms"
        )
    print(f"wrote {write_results('site_lease', result)}")


if __name__ == "__main__":
    main()
