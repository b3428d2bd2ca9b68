"""Which tie-breaker among equal relevance: depth (shipped), discovery order, bytehash?

    python bench/tiebreak.py [--corpus-home DIR] [--topic subject.Science.Biology]
                             [--variants bfs,depth,discovery,bytehash] [--step 10]
                             [--mode soft-1999|soft]

Crawls the Wikispeedia web (a web-in-a-box subprocess; corpus built by
``focuscrawl webbox import-wikispeedia`` under --corpus-home) in soft focus from 10
relevant seeds, with the classifier trained on a 30% sample (seed 1) and run in
lockstep: ``--step`` pages crawled, then every fetched page scored, and again, so the
classifier never lags. With the 1999 estimate (``--mode soft-1999``, the default here)
children of one parent share its relevance exactly, so ties are common; the link
learner's estimates (``soft``) seldom tie. Prints the true harvest rate (ground-truth
share of relevant pages) among the first N pages fetched, N = the number of relevant
pages in the corpus.

Variants swap the keys after relevance in the checkout order, in memory only:
``depth`` is the shipped ``claim_batch`` (priority is the depth, then bytehash);
``discovery`` orders ties by ``found_seq``; ``bytehash`` by the paper's hash alone;
``bfs`` is the breadth-first baseline. Writes bench/results/tiebreak.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results

from focuscrawl.classifier import Classifier, train_model
from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler
from focuscrawl.db.migrate import ensure_branch
from focuscrawl.db.queries import queries, replaced
from focuscrawl.db.seeds import add_seeds
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import from_corpus, store_import
from focuscrawl.web.corpus import read_labels
from focuscrawl.webbox.process import start_server_process

# The ties among equal relevance, as claim_batch breaks them off both frontier indexes
# (untried, then retried); a variant breaks them its own way in both (the crawl then
# sorts the table instead of reading an index: harvest is compared, not speed).
TIES = "relevance DESC, priority, bytehash"
VARIANTS = {
    "depth": TIES,
    "discovery": "relevance DESC, found_seq",
    "bytehash": "relevance DESC, bytehash",
}


def crawl_once(
    home: Path, topic: str, variant: str, step: int, seed: int, focus: Mode
) -> dict[str, float | int | str]:
    directory = home / "corpora" / "wikispeedia"
    truth: dict[str, list[str]] = {}
    for url, category in read_labels(directory):
        truth.setdefault(url, []).append(category)
    relevant = sorted(u for u, cs in truth.items() if any(c.startswith(topic) for c in cs))
    seeds = random.Random(seed).sample(relevant, 10)
    claim = queries["claim_batch"]
    if variant in VARIANTS:
        assert claim.count(TIES) == 2, "claim_batch changed: update this benchmark"
        claim = claim.replace(TIES, VARIANTS[variant])
    server, proxy = start_server_process(home, "wikispeedia", "--no-faults")
    started = time.perf_counter()
    try:
        with replaced("claim_batch", claim), scratch_engine() as engine:
            ensure_branch(engine, "baselines")  # found_seq, for the discovery order; all alike
            store_import(engine, from_corpus(directory, 0.3, seed=1))
            set_good(engine, [topic], True)
            train_model(engine)
            with engine.begin() as connection:
                add_seeds(connection, seeds)
            mode = Mode.BFS if variant == "bfs" else focus
            fetched = 0
            while fetched < len(relevant):
                config = CrawlConfig(
                    mode=mode,
                    threads=4,
                    max_pages=step,
                    host_delay=0.0,
                    idle_exit_seconds=0.5,
                    quiet=True,
                    fetch=FetchConfig(proxy=proxy),
                )
                if Crawler(engine, config).run().fetched == 0:
                    break
                Classifier(engine).run(once=True)
                with engine.connect() as connection:
                    fetched = connection.exec_driver_sql(
                        "SELECT count(*) FROM doc WHERE state = 2"
                    ).scalar_one()
            with engine.connect() as connection:
                urls = connection.exec_driver_sql(
                    "SELECT d.url FROM doc AS d JOIN doc_fetch AS f USING (oid) "
                    "WHERE d.state = 2 ORDER BY f.fetch_seq LIMIT %(n)s",
                    {"n": len(relevant)},
                ).scalars()
                first = list(urls)
    finally:
        server.terminate()
        server.communicate()
    hits = sum(any(c.startswith(topic) for c in truth.get(u, [])) for u in first)
    return {
        "variant": variant,
        "seed": seed,
        "pages": len(first),
        "harvest": round(hits / max(len(first), 1), 3),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_home = os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl")
    parser.add_argument("--corpus-home", default=default_home)
    parser.add_argument("--topic", default="subject.Science.Biology")
    parser.add_argument("--variants", default="bfs,depth,discovery,bytehash")
    parser.add_argument("--mode", default="soft-1999", choices=["soft-1999", "soft"])
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument("--seeds", default="1,2", help="random samples of seed pages")
    args = parser.parse_args()
    home = Path(args.corpus_home).expanduser()
    runs = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for variant in args.variants.split(","):
            result = crawl_once(home, args.topic, variant, args.step, seed, Mode(args.mode))
            print(f"seed sample {seed}  {variant:12} harvest {result['harvest']:.3f} over "
                  f"{result['pages']} pages ({result['seconds']} s)")  # fmt: skip
            runs.append(result)
    means = {}
    for variant in args.variants.split(","):
        values = [float(r["harvest"]) for r in runs if r["variant"] == variant]
        means[variant] = round(sum(values) / len(values), 3)
        print(f"mean {variant:12} {means[variant]:.3f}")
    payload = {"topic": args.topic, "mode": args.mode, "means": means, "runs": runs}
    print(f"wrote {write_results('tiebreak', payload)}")


if __name__ == "__main__":
    main()
