"""The per-page host lease: PostgreSQL's CPU for acquire_site + release_site, as plain
statements and as the prepared statements the crawler uses.

    python bench/site_lease.py [--pages 5000] [--sites 2000]

Runs the two statements of sql/politeness.sql once each per "page", round the sites,
on one connection to a throw-away embedded PostgreSQL, first as they are (parsed and
planned every time) and then through ``focuscrawl.queries.prepared`` (planned once).
Prints the server backend's CPU and the wall time per page (read from /proc, so on
Linux with the server on this machine). Writes bench/results/site_lease.json.
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


def _run(cursor: Any, pid: int, pages: int, sites: int, forms: dict[str, str]) -> dict[str, float]:
    cpu, began = _backend_cpu(pid), time.perf_counter()
    for page in range(pages):
        sid = 1 + page % sites
        cursor.execute(forms["acquire_site"], {"sid": sid, "lease_seconds": 120.0})
        cursor.fetchall()
        cursor.execute(forms["release_site"], {"sid": sid, "delay": 0.0, "taken": 1})
    return {
        "server_cpu_ms_per_page": round(1e3 * (_backend_cpu(pid) - cpu) / pages, 3),
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
                "INSERT INTO site (host, robots_txt, robots_expires_at) "
                "SELECT 'h' || g || '.example', E'User-agent: *\\nDisallow: /x', "
                "now() + interval '1 day' FROM generate_series(1, %(sites)s) g",
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
        result = {
            "pages": args.pages,
            "plain": _run(cursor, pid, args.pages, args.sites, plain),
            "prepared": _run(
                cursor, pid, args.pages, args.sites, {n: f.execute for n, f in forms.items()}
            ),
        }
        connection.close()
    for kind in ("plain", "prepared"):
        row = result[kind]
        print(
            f"{kind:9} server CPU {row['server_cpu_ms_per_page']} ms a page, "
            f"wall {row['wall_ms_per_page']} ms a page"
        )
    print(f"wrote {write_results('site_lease', result)}")


if __name__ == "__main__":
    main()
