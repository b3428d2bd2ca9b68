"""focuscrawl against Scrapy on the same web-in-a-box, in the same run.

    pip install scrapy   # (or: pip install -e '.[bench]')
    python bench/peer_scrapy.py [--fetch 10000] [--threads 8] [--processes 1]

Scrapy crawls the synthetic web breadth-first through the web-in-a-box proxy, keeping
nothing (32 concurrent requests, no delay, no robots.txt); then focuscrawl crawls the
same web breadth-first storing every page, its text and its links in PostgreSQL
(bench/crawl.py). Prints both rates and their ratio; writes bench/results/peer_scrapy.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results
from crawl import run_crawl

from focuscrawl.webbox.process import start_server_process
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams

SPIDER = """
import sys, time, scrapy
from scrapy.crawler import CrawlerProcess

proxy, limit, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
count = [0]

class Peer(scrapy.Spider):
    name = "peer"
    custom_settings = {
        "CONCURRENT_REQUESTS": 32, "CONCURRENT_REQUESTS_PER_DOMAIN": 32, "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False, "COOKIES_ENABLED": False, "LOG_LEVEL": "ERROR",
        "DEPTH_PRIORITY": 1, "CLOSESPIDER_PAGECOUNT": limit,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    async def start(self):
        for url in seeds:
            yield scrapy.Request(url, meta={"proxy": proxy})

    def parse(self, response):
        count[0] += 1
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, meta={"proxy": proxy})

process = CrawlerProcess()
failure = []
process.crawl(Peer).addErrback(lambda f: failure.append(f.getTraceback()))
start = time.perf_counter()
process.start()
if failure:
    sys.exit("scrapy failed: " + failure[0])
print(count[0], time.perf_counter() - start)
"""


def run_scrapy(pages: int, hosts: int, fetch: int) -> dict[str, float]:
    web = SyntheticCorpus(SyntheticParams(pages=pages, hosts=hosts, seed=1))
    with tempfile.TemporaryDirectory(prefix="focuscrawl-bench-scrapy-") as tmp:
        home = Path(tmp)
        cli = [sys.executable, "-m", "focuscrawl", "--home", str(home)]
        generate = [
            "webbox",
            "generate",
            "--pages",
            str(pages),
            "--hosts",
            str(hosts),
            "--seed",
            "1",
        ]
        subprocess.run([*cli, *generate], check=True, capture_output=True)
        server, proxy = start_server_process(home, "synthetic", "--no-faults")
        try:
            seeds = [web.url(p) for p in range(0, pages, pages // 50)]
            done = subprocess.run(
                [sys.executable, "-c", SPIDER, proxy, str(fetch), *seeds],
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            server.terminate()
            server.communicate()
    count, seconds = done.stdout.split()[-2:]
    return {
        "fetched": int(count),
        "seconds": round(float(seconds), 1),
        "pages_per_s": round(int(count) / float(seconds), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--fetch", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    began = time.perf_counter()
    scrapy = run_scrapy(args.pages, args.hosts, args.fetch)
    ours = run_crawl(args.pages, args.hosts, args.fetch, args.threads, args.processes)
    ratio = ours["pages_per_s"] / scrapy["pages_per_s"]
    print(f"Scrapy (breadth-first, stores nothing): {scrapy['pages_per_s']:>8} pages/s")
    print(
        f"focuscrawl ({args.processes} x {args.threads} threads, stores all in PostgreSQL): "
        f"{ours['pages_per_s']:>8} pages/s"
    )
    took = time.perf_counter() - began
    print(f"ratio focuscrawl / Scrapy: {ratio:.2f}x (goal 3x); run took {took:.0f} s")
    result = {"scrapy": scrapy, "focuscrawl": ours, "ratio": round(ratio, 2)}
    print(f"wrote {write_results('peer_scrapy', result)}")


if __name__ == "__main__":
    main()
