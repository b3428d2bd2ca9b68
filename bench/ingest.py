"""Link ingest: rows/s through the crawler's store (COPY to staging, then set-based INSERTs).

    python bench/ingest.py [--pages 20000] [--links 25] [--batch 500]

Feeds the store outcomes as a crawl would: each page fetched with ``--links`` out-links
to URLs on 1,000 hosts, a third of them already known (so deduplication works), in
batches of ``--batch`` pages. Prints link rows/s (links offered per second of store
time) and bytes per link row. Writes bench/results/ingest.json.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results

from focuscrawl.crawler.store import Claim, Outcome, Store
from focuscrawl.schema import DocState
from focuscrawl.seeds import add_seeds
from focuscrawl.urls import oid_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--links", type=int, default=25)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(1)
    urls = [f"http://h{i % 1000}.example/page/{i}" for i in range(args.pages)]
    with scratch_engine() as engine:
        with engine.begin() as connection:
            add_seeds(connection, urls)
            sids = dict(connection.exec_driver_sql("SELECT url, sid FROM doc").all())
        store = Store(engine)
        seconds = 0.0
        offered = 0
        for start in range(0, args.pages, args.batch):
            batch = []
            for url in urls[start : start + args.batch]:
                claim = Claim(oid_of(url), url, sids[url], 0, 0)
                links: list[tuple[str, str | None]] = []
                for n in range(args.links):
                    known = rng.random() < 1 / 3
                    target = (
                        rng.choice(urls)
                        if known
                        else f"http://h{rng.randrange(1000)}.example/new/{start}-{n}-{rng.random()}"
                    )
                    links.append((target, f"anchor {n}"))
                offered += len(links)
                page = Outcome(claim, DocState.FETCHED, 200, content_type="text/html", title="t")
                page.text, page.links = "some words " * 100, links
                batch.append(page)
            began = time.perf_counter()
            store.write(batch)
            seconds += time.perf_counter() - began
        store.close()
        with engine.connect() as connection:
            links_stored, link_bytes = connection.exec_driver_sql(
                "SELECT count(*), pg_total_relation_size('link') FROM link"
            ).one()
    result = {
        "pages": args.pages,
        "links_offered": offered,
        "links_stored": links_stored,
        "store_seconds": round(seconds, 2),
        "link_rows_per_s": round(offered / seconds),
        "bytes_per_link_row": round(link_bytes / links_stored, 1),
    }
    rate, size = result["link_rows_per_s"], result["bytes_per_link_row"]
    print(f"{offered:,} links from {args.pages:,} pages in {seconds:.1f} s of store time:")
    print(f"  {rate:,} link rows/s, with their new doc rows and sites")
    print(f"{links_stored:,} link rows, {size} bytes per row with its index")
    print(f"wrote {write_results('ingest', result)}")


if __name__ == "__main__":
    main()
