"""The crawler's parse alone: CPU a page of ``parse_html`` on a corpus's own pages.

    python bench/parse.py [--corpus wikispeedia,sites5k] [--pages 1500] [--rounds 3]

Reads each corpus's pages as the web-in-a-box would serve them (no server, no
database), the first --pages URLs that answer 200 with HTML, and parses them all
--rounds times, with link contexts (what a soft crawl reads) and without (what a
breadth-first crawl reads). Prints the best round's CPU milliseconds a page and the
links a page; writes bench/results/parse.json. Corpora are names under
$FOCUSCRAWL_HOME/corpora (``focuscrawl webbox import-wikispeedia``, ``focuscrawl webbox
generate --profile sites --pages 5000 --hosts 300 --name sites5k``) or directories.
One thread's CPU time, so it holds steadier on a busy machine than a crawl's rate.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_results

from focuscrawl.crawler.parse import parse_html
from focuscrawl.webbox import load_corpus


def _pages(name: str, count: int) -> list[tuple[str, bytes]]:
    home = Path(os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl")).expanduser()
    corpus = load_corpus(name, home)
    pages: list[tuple[str, bytes]] = []
    for url in itertools.islice(corpus.urls(), count * 3):
        page = corpus.page(url)
        if page is None or page.status != 200:
            continue
        types = [value for key, value in page.headers if key.lower() == "content-type"]
        if types and "html" not in types[0]:
            continue
        pages.append((url, page.body))
        if len(pages) == count:
            break
    if not pages:
        sys.exit(f"{name}: no HTML pages answer 200")
    return pages


def _best_ms(pages: list[tuple[str, bytes]], contexts: bool, rounds: int) -> tuple[float, float]:
    """Best round's CPU ms a page, and links a page."""
    best = float("inf")
    links = 0
    for _ in range(rounds):
        start = time.process_time()
        links = sum(len(parse_html(body, url, None, contexts).links) for url, body in pages)
        best = min(best, time.process_time() - start)
    return round(1000 * best / len(pages), 3), round(links / len(pages), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="wikispeedia,sites5k")
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, dict[str, float | int]] = {}
    print(f"{'corpus':<14}{'pages':>7}{'links/page':>12}{'ms, contexts':>14}{'ms, none':>10}")
    for name in args.corpus.split(","):
        pages = _pages(name, args.pages)
        with_contexts, links = _best_ms(pages, True, args.rounds)
        without, _ = _best_ms(pages, False, args.rounds)
        results[name] = {
            "pages": len(pages),
            "links_per_page": links,
            "cpu_ms_per_page_contexts": with_contexts,
            "cpu_ms_per_page_no_contexts": without,
        }
        print(f"{name:<14}{len(pages):>7}{links:>12}{with_contexts:>14}{without:>10}")
    print(f"wrote {write_results('parse', {'rounds': args.rounds, 'corpora': results})}")


if __name__ == "__main__":
    main()
