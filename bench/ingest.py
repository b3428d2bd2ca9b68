"""Link ingest: rows/s through the crawler's store (COPY to staging, then set-based INSERTs).

    python bench/ingest.py [--pages 20000] [--links 25] [--batch 500] [--stores 1 2]

Feeds the store outcomes as a crawl would: each page fetched with ``--links`` out-links
to URLs on 1,000 hosts, a third of them already known (so deduplication works), in
batches of ``--batch`` pages. Each count of ``--stores`` runs in a database of its own:
1 is one crawler process's store; 2 is two crawler processes storing at once (threads
here, each with its own ``Store`` and connection), as in a crawl with two processes.
Prints link rows/s (links offered per second of wall time while storing) and bytes per
link row. Each link has an anchor and the words around it (three either side, as the
parser keeps them); with ``--link-model`` a link learner version is stored first, so the
store estimates every new URL at check-in as a soft crawl's does. Writes
bench/results/ingest.json.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import json

import numpy as np
from _common import scratch_engine, write_results

from focuscrawl.crawler.store import Claim, Outcome, Store
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import DocState
from focuscrawl.db.seeds import add_seeds
from focuscrawl.topics.linkmodel import FEATURE_BITS, LinkModel
from focuscrawl.web.urls import oid_of

#: words of the lengths English text has (the contexts' words)
WORDS = [
    "the",
    "of",
    "and",
    "river",
    "county",
    "railway",
    "station",
    "history",
    "was",
    "in",
    "built",
    "century",
    "population",
    "species",
    "its",
    "from",
    "national",
    "church",
]


def _store_link_model(engine: Any) -> None:
    """A link learner version with 50,000 weights, as a crawl's learner has."""
    rng = np.random.default_rng(2)
    weights = np.zeros(1 << FEATURE_BITS, dtype=np.float32)
    weights[rng.integers(0, 1 << FEATURE_BITS, 50_000)] = rng.normal(size=50_000)
    model = LinkModel(weights, -1.0, params={"classes": list(range(1, 100))})
    with engine.begin() as connection:
        execute(
            connection,
            queries["save_link_model"],
            {"digest": "bench", "examples": 0, "params": json.dumps(model.params),
             "weights": model.to_bytes()},
        )  # fmt: skip


def _batches(urls: list[str], sids: dict[str, int], links: int, size: int) -> list[list[Outcome]]:
    rng = random.Random(1)
    batches = []
    for start in range(0, len(urls), size):
        batch = []
        for url in urls[start : start + size]:
            claim = Claim(oid_of(url), url, sids[url], 0, 0)
            out: list[tuple[str, str | None, str | None]] = []
            for n in range(links):
                known = rng.random() < 1 / 3
                target = (
                    rng.choice(urls)
                    if known
                    else f"http://h{rng.randrange(1000)}.example/new/{start}-{n}-{rng.random()}"
                )
                words = [WORDS[rng.randrange(len(WORDS))] for _ in range(6)]
                context = " ".join(words[:3]) + " | " + " ".join(words[3:])
                out.append((target, f"anchor {n}", context))
            page = Outcome(claim, DocState.FETCHED, 200, content_type="text/html", title="t")
            page.text, page.links = "some words " * 100, out
            batch.append(page)
        batches.append(batch)
    return batches


def _ingest(args: argparse.Namespace, stores: int) -> dict[str, Any]:
    urls = [f"http://h{i % 1000}.example/page/{i}" for i in range(args.pages)]
    with scratch_engine() as engine:
        with engine.begin() as connection:
            add_seeds(connection, urls)
            sids = dict(connection.exec_driver_sql("SELECT d.url, d.sid FROM doc AS d").all())
            # claimed, as a crawler's pages are while it fetches and stores them
            connection.exec_driver_sql(f"UPDATE doc SET state = {int(DocState.LEASED)}")
        batches = _batches(urls, sids, args.links, args.batch)
        if args.link_model:
            _store_link_model(engine)
        failures: list[BaseException] = []

        def write(share: list[list[Outcome]]) -> None:
            store = Store(engine)
            try:
                for batch in share:
                    store.write(batch)
            except BaseException as exc:  # reported below, not lost in the thread
                failures.append(exc)
            finally:
                store.close()

        threads = [
            threading.Thread(target=write, args=(batches[i::stores],)) for i in range(stores)
        ]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - began
        if failures:
            raise failures[0]
        with engine.connect() as connection:
            links_stored, link_bytes, heap, context = connection.exec_driver_sql(
                "SELECT count(*), pg_total_relation_size('link'), pg_relation_size('link'), "
                "sum(pg_column_size(context)) FROM link"
            ).one()
    offered = args.pages * args.links
    return {
        "stores": stores,
        "links_offered": offered,
        "links_stored": links_stored,
        "store_seconds": round(seconds, 2),
        "link_rows_per_s": round(offered / seconds),
        "bytes_per_link_row": round(link_bytes / links_stored, 1),
        "heap_bytes_per_link_row": round(heap / links_stored, 1),
        "context_bytes_per_link_row": round((context or 0) / links_stored, 1),
        "index_bytes_per_link_row": round((link_bytes - heap) / links_stored, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--links", type=int, default=25)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--stores", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--link-model", action="store_true", help="estimate new URLs at check-in (soft crawl)"
    )
    args = parser.parse_args()
    runs = [_ingest(args, stores) for stores in args.stores]
    for run in runs:
        print(
            f"{run['stores']} store(s): {run['links_offered']:,} links from {args.pages:,} pages "
            f"in {run['store_seconds']:.1f} s: {run['link_rows_per_s']:,} link rows/s, "
            "with their new doc rows and sites"
        )
    first = runs[0]
    print(
        f"{first['links_stored']:,} link rows, {first['bytes_per_link_row']} bytes per row with "
        f"its index: heap {first['heap_bytes_per_link_row']} (of which the context "
        f"{first['context_bytes_per_link_row']}), index {first['index_bytes_per_link_row']}"
    )
    result = {
        "pages": args.pages,
        "links_per_page": args.links,
        "batch": args.batch,
        "link_model": args.link_model,
        "runs": runs,
    }
    print(f"wrote {write_results('ingest', result)}")


if __name__ == "__main__":
    main()
