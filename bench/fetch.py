"""The crawler's HTTP client alone: its CPU a fetch, against the web-in-a-box.

    python bench/fetch.py [--pages 100000] [--hosts 1000] [--fetch 8000] [--threads 8]

``Fetcher`` (libcurl through pycurl, with the crawler's limits and body decoding) in
--threads threads, each with its own handle as a crawler's worker threads have, fetching
--fetch pages of a generated web served by a web-in-a-box subprocess (no faults), as the
crawler does: through the web-in-a-box as a forward proxy. Nothing is parsed or stored.
Prints pages/s and the client's CPU a page (the process's own, every thread); writes
bench/results/fetch.json. What a crawl spends beyond that is parsing, storing and
politeness (``bench/crawl.py``).
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import served_web, write_results

from focuscrawl.crawler.fetch import FetchConfig, Fetcher
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(proxy: str, urls: list[str], threads: int) -> dict[str, Any]:
    """Fetch ``urls`` through ``proxy`` in ``threads`` threads sharing one Fetcher."""
    fetcher = Fetcher(FetchConfig(proxy=proxy))
    todo = iter(urls)
    lock = threading.Lock()
    sizes: list[int] = []
    errors: list[str] = []

    def work() -> None:
        while True:
            with lock:
                url = next(todo, None)
            if url is None:
                return
            result = fetcher.fetch(url)
            if result.error:
                errors.append(result.error)
            else:
                sizes.append(len(result.body))

    cpu_before, start = _cpu_self(), time.perf_counter()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed, cpu = time.perf_counter() - start, _cpu_self() - cpu_before
    fetcher.close()
    return {
        "client": f"focuscrawl Fetcher ({Fetcher.__module__})",
        "threads": threads,
        "fetched": len(sizes),
        "errors": len(errors),
        "mean_body_bytes": round(sum(sizes) / max(len(sizes), 1)),
        "seconds": round(elapsed, 2),
        "pages_per_s": round(len(sizes) / elapsed, 1),
        "client_cpu_ms_per_page": round(1e3 * cpu / max(len(sizes), 1), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="size of the synthetic web")
    parser.add_argument("--hosts", type=int, default=1_000)
    parser.add_argument("--fetch", type=int, default=8_000, help="pages to fetch")
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    if min(args.pages, args.hosts, args.fetch, args.threads) < 1:
        parser.error("--pages, --hosts, --fetch and --threads must be positive")
    web = SyntheticCorpus(SyntheticParams(pages=args.pages, hosts=args.hosts, seed=1))
    # every page once, spread over the hosts as a crawl's claims spread them
    step = next(s for s in itertools.count(7) if args.pages % s)
    urls = [web.url(i * step % args.pages) for i in range(min(args.fetch, args.pages))]
    with served_web(args.pages, args.hosts, "focuscrawl-bench-fetch-") as (proxy, _):
        result = measure(proxy, urls, args.threads)
    result.update(web_pages=args.pages, hosts=args.hosts)
    print(
        f"{result['client']}, {result['threads']} threads: {result['fetched']:,} pages "
        f"({result['errors']} errors, {result['mean_body_bytes']:,} B each) in "
        f"{result['seconds']} s, {result['pages_per_s']} pages/s; client CPU "
        f"{result['client_cpu_ms_per_page']} ms a page"
    )
    print(f"wrote {write_results('fetch', result)}")


if __name__ == "__main__":
    main()
