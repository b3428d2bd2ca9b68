"""The per-page host lease: PostgreSQL's CPU for the statements of sql/politeness.sql
that run for every page, three ways.

    python bench/site_lease.py [--pages 5000] [--sites 2000]

On one connection to a throw-away embedded PostgreSQL, "pages" go round the sites:
``two``: acquire_site, then release_site, as statements planned every time;
``prepared``: the same through ``focuscrawl.queries.prepared`` (planned once);
``merged``: what the crawler runs, one prepared acquire_site a page that also releases
the host of the page before. Prints the server backend's CPU, the client's and the
wall time per page (the server's read from /proc, so on Linux with the server on this
machine). Writes bench/results/site_lease.json.
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

from focuscrawl.database import engine_dsn
from focuscrawl.queries import prepared, queries

STATEMENTS = ("acquire_site", "release_site")


def _backend_cpu(pid: int) -> float:
    stat = proc_stat(pid)
    if stat is None:
        raise SystemExit("cannot read the server backend's CPU from /proc")
    return stat[1]


def _run(
    cursor: Any, pid: int, pages: int, sites: int, forms: dict[str, str], merged: bool
) -> dict[str, float]:
    cpu, client, began = _backend_cpu(pid), time.process_time(), time.perf_counter()
    nothing = {"release_sid": None, "delay": 0.0, "taken": 0}
    previous = None
    for page in range(pages):
        sid = 1 + page % sites
        release = {**nothing, "release_sid": previous} if merged else nothing
        cursor.execute(forms["acquire_site"], {"sid": sid, "lease_seconds": 120.0, **release})
        assert cursor.fetchall()[0][0], "a site was not free"
        if merged:
            previous = sid
        else:
            cursor.execute(forms["release_site"], {"sid": sid, "delay": 0.0, "taken": 1})
    if merged and previous is not None:
        cursor.execute(forms["release_site"], {"sid": previous, "delay": 0.0, "taken": 1})
    return {
        "server_cpu_ms_per_page": round(1e3 * (_backend_cpu(pid) - cpu) / pages, 3),
        "client_cpu_ms_per_page": round(1e3 * (time.process_time() - client) / pages, 3),
        "wall_ms_per_page": round(1e3 * (time.perf_counter() - began) / pages, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--sites", type=int, default=2_000)
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
        plain = {name: queries[name] for name in STATEMENTS}
        forms = {name: prepared(name) for name in STATEMENTS}
        for form in forms.values():
            cursor.execute(form.prepare)
        plans = {name: form.execute for name, form in forms.items()}
        result = {
            "pages": args.pages,
            "two": _run(cursor, pid, args.pages, args.sites, plain, merged=False),
            "prepared": _run(cursor, pid, args.pages, args.sites, plans, merged=False),
            "merged": _run(cursor, pid, args.pages, args.sites, plans, merged=True),
        }
        connection.close()
    for kind in ("two", "prepared", "merged"):
        row = result[kind]
        print(
            f"{kind:9} server CPU {row['server_cpu_ms_per_page']} ms a page, "
            f"client CPU {row['client_cpu_ms_per_page']} ms, wall {row['wall_ms_per_page']} ms"
        )
    print(f"wrote {write_results('site_lease', result)}")


if __name__ == "__main__":
    main()
