"""What this machine can crawl at all: a bare asyncio client against the web-in-a-box.

    python bench/limit.py [--pages 100000] [--hosts 2000] [--fetch 30000]
                          [--connections 64]

The limit every crawl benchmark is read against (``bench/crawl.py`` and
``bench/focus_speed.py`` measure it in the same run and print their ratio to it): the
same generated web served by a web-in-a-box subprocess (no faults), fetched
breadth-first from the same seeds by aiohttp with --connections connections, each page's
links found by selectolax (lexbor) and joined to its URL; it stores nothing, keeps no
politeness, and scores nothing. What a crawler does beyond that is the crawler's cost.
Prints pages/s and the CPU a page of the client and the web-in-a-box; writes
bench/results/limit.json. Needs the ``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import proc_stat, served_web, write_results

from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams


def seeds_of(pages: int, hosts: int) -> list[str]:
    """The seeds bench/crawl.py gives its crawl: every fiftieth of the web's pages."""
    web = SyntheticCorpus(SyntheticParams(pages=pages, hosts=hosts, seed=1))
    return [web.url(p) for p in range(0, pages, pages // 50)]


def check_installed() -> None:
    """Exit with a one-line message when the bare client's libraries are missing."""
    try:
        import aiohttp  # noqa: F401
    except ImportError as missing:
        sys.exit(f"the limit needs the bench extra ({missing.name}): pip install -e '.[bench]'")


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _crawl(seeds: list[str], proxy: str, fetch: int, connections: int) -> tuple[int, int]:
    """Fetch breadth-first from ``seeds`` until ``fetch`` requests are made or nothing is
    left; (pages fetched, requests)."""
    import aiohttp
    from selectolax.lexbor import LexborHTMLParser

    queue: asyncio.Queue[str] = asyncio.Queue()
    for seed in seeds:
        queue.put_nowait(seed)
    seen = set(seeds)
    counts = {"fetched": 0, "requests": 0}
    enough = asyncio.Event()

    async def worker(session: aiohttp.ClientSession) -> None:
        while True:
            url = await queue.get()
            try:
                if counts["requests"] >= fetch:
                    enough.set()
                    continue
                counts["requests"] += 1
                try:
                    async with session.get(url, proxy=proxy, allow_redirects=False) as response:
                        body = await response.read()
                        if response.status != 200 or "html" not in response.content_type:
                            continue
                except (aiohttp.ClientError, TimeoutError):
                    continue
                counts["fetched"] += 1
                for node in LexborHTMLParser(body).css("a[href]"):
                    href = node.attributes.get("href")
                    if href:
                        link = urldefrag(urljoin(url, href))[0]
                        if link.startswith("http") and link not in seen:
                            seen.add(link)
                            queue.put_nowait(link)
            finally:
                queue.task_done()

    connector = aiohttp.TCPConnector(limit=connections)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        workers = [asyncio.create_task(worker(session)) for _ in range(connections)]
        ends = [asyncio.create_task(queue.join()), asyncio.create_task(enough.wait())]
        await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        for task in workers + ends:
            task.cancel()
        await asyncio.gather(*workers, *ends, return_exceptions=True)
    return counts["fetched"], counts["requests"]


def measure(
    proxy: str, server_pid: int, seeds: list[str], fetch: int, connections: int = 64
) -> dict[str, Any]:
    """The bare client's rate against a running web-in-a-box (``proxy``, its process
    ``server_pid``), from ``seeds``, for ``fetch`` requests."""
    webbox_before = proc_stat(server_pid)
    cpu_before = _cpu_self()
    start = time.perf_counter()
    fetched, requests = asyncio.run(_crawl(seeds, proxy, fetch, connections))
    elapsed = time.perf_counter() - start
    client_cpu = _cpu_self() - cpu_before
    webbox_after = proc_stat(server_pid)
    webbox_cpu = (
        webbox_after[1] - webbox_before[1] if webbox_before and webbox_after else float("nan")
    )
    return {
        "client": f"aiohttp, {connections} connections, selectolax (lexbor) links",
        "fetched": fetched,
        "requests": requests,
        "seconds": round(elapsed, 2),
        "pages_per_s": round(fetched / elapsed, 1),
        "cpu_seconds": {"client": round(client_cpu, 2), "webbox": round(webbox_cpu, 2)},
        "cpu_ms_per_page": round(1e3 * (client_cpu + webbox_cpu) / max(fetched, 1), 3),
    }


def ratio(rate: float, limit: dict[str, Any]) -> float:
    """A crawl's pages/s as a share of the limit's."""
    return round(rate / limit["pages_per_s"], 3) if limit.get("pages_per_s") else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="size of the synthetic web")
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--fetch", type=int, default=30_000, help="requests to make in all")
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    check_installed()
    if min(args.pages, args.hosts, args.fetch, args.connections) < 1 or args.pages < 50:
        parser.error("--pages (at least 50), --hosts, --fetch and --connections must be positive")
    with served_web(args.pages, args.hosts, "focuscrawl-bench-limit-") as (proxy, pid):
        seeds = seeds_of(args.pages, args.hosts)
        result = measure(proxy, pid, seeds, args.fetch, args.connections)
    result.update(web_pages=args.pages, hosts=args.hosts)
    cpu = result["cpu_seconds"]
    print(
        f"bare client: {result['fetched']:,} pages in {result['seconds']} s: "
        f"{result['pages_per_s']} pages/s ({result['client']}); CPU seconds: client "
        f"{cpu['client']}, webbox {cpu['webbox']} ({result['cpu_ms_per_page']} ms a page)"
    )
    print(f"wrote {write_results('limit', result)}")


if __name__ == "__main__":
    main()
