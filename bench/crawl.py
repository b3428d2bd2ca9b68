"""Sustained crawl rate end to end: claim, fetch, parse, store, on a generated web.

    python bench/crawl.py [--pages 100000] [--hosts 2000] [--fetch 30000] [--threads 32]
                          [--processes 1]

Serves a synthetic web from a web-in-a-box subprocess, crawls it breadth-first with
``focuscrawl crawl run`` processes against a throw-away embedded PostgreSQL (host delay
0, as the webbox allows), and prints pages/s, links stored/s and the storage per row.
Writes bench/results/crawl.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results

from focuscrawl.seeds import add_seeds
from focuscrawl.webbox.process import start_server_process
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams


def run_crawl(pages: int, hosts: int, fetch: int, threads: int, processes: int) -> dict[str, Any]:
    """Crawl ``fetch`` pages of a synthetic web with focuscrawl; return the measurements."""
    web = SyntheticCorpus(SyntheticParams(pages=pages, hosts=hosts, seed=1))
    with (
        tempfile.TemporaryDirectory(prefix="focuscrawl-bench-crawl-") as tmp,
        scratch_engine() as engine,
    ):
        home = Path(tmp)
        cli = [sys.executable, "-m", "focuscrawl", "--home", str(home)]
        generate = ["webbox", "generate", "--pages", str(pages), "--hosts", str(hosts)]
        subprocess.run([*cli, *generate, "--seed", "1"], check=True, capture_output=True)
        server, proxy = start_server_process(home, "synthetic", "--no-faults")
        with engine.begin() as connection:
            add_seeds(connection, [web.url(p) for p in range(0, pages, pages // 50)])
        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        run = ["crawl", "run", "--mode", "bfs", "--proxy", proxy, "--host-delay", "0", "--quiet"]
        limits = ["--threads", str(threads), "--max-pages", str(fetch // processes)]
        start = time.perf_counter()
        crawlers = [
            subprocess.Popen([*cli, "--database-url", url, *run, *limits]) for _ in range(processes)
        ]
        for crawler in crawlers:
            crawler.wait()
        elapsed = time.perf_counter() - start
        server.terminate()
        server.communicate()
        with engine.connect() as connection:
            fetched, docs, links = connection.exec_driver_sql(
                "SELECT count(*) FILTER (WHERE state = 2), count(*), (SELECT count(*) FROM link) "
                "FROM doc"
            ).one()
            doc_bytes, link_bytes = connection.exec_driver_sql(
                "SELECT pg_total_relation_size('doc'), pg_total_relation_size('link')"
            ).one()
    return {
        "web_pages": pages,
        "hosts": hosts,
        "processes": processes,
        "threads": threads,
        "fetched": fetched,
        "seconds": round(elapsed, 1),
        "pages_per_s": round(fetched / elapsed, 1),
        "links_per_s": round(links / elapsed),
        "doc_rows": docs,
        "link_rows": links,
        "bytes_per_doc_row": round(doc_bytes / docs, 1),
        "bytes_per_link_row": round(link_bytes / links, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="size of the synthetic web")
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--fetch", type=int, default=30_000, help="pages to fetch in all")
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    result = run_crawl(args.pages, args.hosts, args.fetch, args.threads, args.processes)
    fetched, docs, links = result["fetched"], result["doc_rows"], result["link_rows"]
    elapsed = result["seconds"]
    shape = f"{args.processes} process(es) x {args.threads} threads"
    print(
        f"fetched {fetched:,} pages in {elapsed:.1f} s: {result['pages_per_s']} pages/s ({shape}), "
        f"{result['links_per_s']:,} links/s"
    )
    print(
        f"stored {docs:,} doc rows ({result['bytes_per_doc_row']} B/row with indexes), "
        f"{links:,} link rows ({result['bytes_per_link_row']} B/row)"
    )
    print(f"wrote {write_results('crawl', result)}")


if __name__ == "__main__":
    main()
