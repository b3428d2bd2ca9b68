"""Sustained crawl rate end to end: claim, fetch, parse, store, on a generated web.

    python bench/crawl.py [--pages 100000] [--hosts 2000] [--fetch 30000] [--threads 32]
                          [--processes 1] [--classify [--corpus-home DIR] [--max-backlog N]
                          [--classifiers 1] [--mode soft|soft-1999]] [--database-url URL | --citus]
                          [--no-limit]

Serves a synthetic web from a web-in-a-box subprocess, crawls it breadth-first with
``focuscrawl crawl run`` processes against a throw-away embedded PostgreSQL (or an empty
database on this machine, ``--database-url``: one with pg_stat_statements shows where
the server's time goes; CONTRIBUTING says how), host delay 0 as the webbox allows, and
prints pages/s, links stored/s, the storage per row, the frontier index's size per
unvisited URL as the crawl leaves it, and the CPU seconds each part used (crawlers,
classifier, PostgreSQL, web-in-a-box). First, on the same web from the same seeds, the
limit (``bench/limit.py``: a bare client that stores nothing; ``--no-limit`` skips it),
and the crawl's rate as a share of it.
With ``--classify`` the crawl is soft-focused and a ``focuscrawl classify run``
process runs beside the crawlers, with the Wikispeedia taxonomy (the generated web's
topics come from it) trained on a 30% sample and subject.Science marked good; the
end-to-end rate counts until the last fetched page is scored. The link learner's first
version comes from the links between the taxonomy's examples; ``--mode soft`` (the
default) estimates every new URL with it at check-in and again when its parent is
scored, and trains it online; ``--mode soft-1999`` passes the parents' relevance on in
SQL, as before the link learner: the two measure what the learner costs a page.
``--citus`` crawls into a local Citus cluster instead (a coordinator and two workers on
this machine, ``db distribute --shards 8``; focuscrawl.db.cluster): the CPU counted for
PostgreSQL is then the coordinator's alone. Writes bench/results/crawl.json
(crawl_classify.json with --classify; with a ``_citus`` suffix on a cluster).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    HEAP_PAGES_PER_CLAIM,
    CpuMeter,
    citus_cluster,
    citus_worker_pids,
    finish_logged,
    process_log,
    scratch_engine,
    server_pid,
    stage_cpu,
    write_results,
)
from limit import check_installed, ratio, seeds_of
from limit import measure as measure_limit

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.db.seeds import add_seeds
from focuscrawl.db.shards import shard_map
from focuscrawl.webbox.process import start_server_process


def _prepare_classifier(engine: Any, corpus_home: Path) -> None:
    from focuscrawl.classifier import train_model
    from focuscrawl.topics.taxonomy import set_good
    from focuscrawl.topics.taxonomy_import import from_corpus, store_import

    store_import(engine, from_corpus(corpus_home / "corpora" / "wikispeedia", 0.3, seed=1))
    set_good(engine, ["subject.Science"], True)
    train_model(engine)


def run_crawl(
    pages: int,
    hosts: int,
    fetch: int,
    threads: int,
    processes: int,
    classify_with: Path | None = None,
    max_backlog: int | None = None,
    database_url: str | None = None,
    focus: str = "soft",
    limit: bool = True,
    classifiers: int = 1,
) -> dict[str, Any]:
    """Crawl ``fetch`` pages of a synthetic web with focuscrawl; return the measurements.

    ``classify_with``: a focuscrawl home holding the wikispeedia corpus; crawl soft with
    ``classifiers`` classifier processes running; ``max_backlog``: the crawlers'
    ``--max-backlog``; ``database_url``: an empty database to crawl into instead of a
    throw-away server;
    ``limit``: first measure bench/limit.py's bare client on the same web and seeds.
    """
    with (
        tempfile.TemporaryDirectory(prefix="focuscrawl-bench-crawl-") as tmp,
        scratch_engine(database_url) as engine,
    ):
        home = Path(tmp)
        cli = [sys.executable, "-m", "focuscrawl", "--home", str(home)]
        generate = ["webbox", "generate", "--pages", str(pages), "--hosts", str(hosts)]
        subprocess.run([*cli, *generate, "--seed", "1"], check=True, capture_output=True)
        server, proxy = start_server_process(home, "synthetic", "--no-faults")
        seeds = seeds_of(pages, hosts)
        bare = measure_limit(proxy, server.pid, seeds, fetch) if limit else {}
        with engine.begin() as connection:
            add_seeds(connection, seeds)
        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        mode = focus if classify_with else "bfs"
        run = ["crawl", "run", "--mode", mode, "--proxy", proxy, "--host-delay", "0"]
        limits = ["--threads", str(threads), "--max-pages", str(fetch // processes)]
        if max_backlog is not None:
            limits += ["--max-backlog", str(max_backlog)]
        classifying: list[subprocess.Popen[bytes]] = []
        classifier_logs: list[tuple[Path, Any]] = []
        if classify_with is not None:
            _prepare_classifier(engine, classify_with)
            classify = [*cli, "--database-url", url, "classify", "run"]
            classifier_logs = [process_log(home, f"classifier-{n}") for n in range(classifiers)]
            classifying = [
                subprocess.Popen(classify, stdout=out, stderr=out) for _, out in classifier_logs
            ]
        crawlers: list[subprocess.Popen[bytes]] = []

        def roles() -> dict[int, str]:
            watched = {server.pid: "webbox", **{c.pid: "crawler" for c in crawlers}}
            watched.update((c.pid, "classifier") for c in classifying)
            return watched

        with engine.connect() as connection:
            postmaster = server_pid(connection)
            workers = citus_worker_pids(connection)
            # the layout, not the workers found on this machine: a cluster's nodes may
            # be elsewhere, and its sizes are not on the coordinator
            citus = shard_map(connection).distributed
        start = time.perf_counter()
        with CpuMeter(roles, postmaster, workers) as meter, _Timeline(engine) as timeline:
            logs = [process_log(home, f"crawler-{n}") for n in range(processes)]
            crawlers += [
                subprocess.Popen(
                    [*cli, "--database-url", url, *run, *limits], stdout=out, stderr=out
                )
                for _, out in logs
            ]
            for crawler, (log, out) in zip(crawlers, logs, strict=True):
                finish_logged(crawler, log, out)
            elapsed = time.perf_counter() - start
            backlog_at_end = 0
            if classifying:
                with engine.connect() as connection:
                    backlog_at_end = _backlog(connection)
                    while _backlog(connection):
                        if all(classifier.poll() is not None for classifier in classifying):
                            break  # none left to score the rest: its log says why
                        time.sleep(0.2)
                for classifier in classifying:
                    classifier.terminate()
                for classifier, (log, out) in zip(classifying, classifier_logs, strict=True):
                    finish_logged(classifier, log, out)
            end_to_end = time.perf_counter() - start
        server.terminate()
        server.communicate()
        stages = stage_cpu([log for log, _ in logs])
        classifier_stages = stage_cpu([log for log, _ in classifier_logs])
        with engine.connect() as connection:
            fetched, docs = connection.exec_driver_sql(
                "SELECT count(*) FILTER (WHERE state = 2), count(*) FROM doc"
            ).one()
            links = connection.exec_driver_sql("SELECT count(*) FROM link").scalar_one()
            # on a cluster the coordinator holds no shard: sizes are measured on one server
            sizes = {} if citus else _sizes(connection, docs, links)
    extra: dict[str, Any] = {}
    if classify_with is not None:
        extra = {
            "classifier_backlog_when_crawl_ended": backlog_at_end,
            "end_to_end_seconds": round(end_to_end, 1),
            "end_to_end_pages_per_s": round(fetched / end_to_end, 1),
        }
    cpu = meter.seconds()
    if bare:
        rate = extra.get("end_to_end_pages_per_s", fetched / elapsed)
        extra.update(limit=bare, ratio_to_limit=ratio(rate, bare))
    return {
        **extra,
        **sizes,
        "cpu_seconds": cpu,
        "cpu_ms_per_page": round(1e3 * sum(cpu.values()) / max(fetched, 1), 2),
        "crawler_cpu_ms_per_page_by_stage": stages,
        "classifier_cpu_ms_per_page_by_stage": classifier_stages,
        "mode": mode,
        "web_pages": pages,
        "hosts": hosts,
        "processes": processes,
        "classifiers": len(classifying),
        "threads": threads,
        "max_backlog": max_backlog,
        "fetched": fetched,
        "seconds": round(elapsed, 1),
        "pages_per_s": round(fetched / elapsed, 1),
        "links_per_s": round(links / elapsed),
        "doc_rows": docs,
        "link_rows": links,
        "citus": citus,
        "pages_per_s_by_minute": timeline.rates(),
    }


def _sizes(connection: Any, docs: int, links: int) -> dict[str, Any]:
    """Bytes per row and the frontier's shape, as a crawl leaves them."""
    # a URL's row, and what its fetch found apart (doc_fetch, since 0011)
    doc_bytes, fetch_bytes, link_bytes = connection.exec_driver_sql(
        "SELECT pg_total_relation_size('doc'), "
        "pg_total_relation_size('doc_fetch') + pg_total_relation_size('doc_lease'), "
        "pg_total_relation_size('link')"
    ).one()
    # The frontier indexes as a crawl leaves them: every URL enters doc_frontier
    # once and again with each new estimate, and claims leave dead entries at its
    # head (doc_frontier_retry, of URLs waiting for another try, since 0008).
    frontier, frontier_bytes = connection.exec_driver_sql(
        "SELECT count(*), pg_relation_size('doc_frontier') "
        "+ pg_relation_size('doc_frontier_retry') FROM doc WHERE state = 0"
    ).one()
    # how scattered the URLs the next claims take lie: heap pages per 64 in
    # claim order, as bench/checkout.py counts them
    heap_pages = float(
        execute(connection, HEAP_PAGES_PER_CLAIM, {"claims": 100, "batch": 64}).scalar_one()
    )
    return {
        "bytes_per_doc_row": round(doc_bytes / docs, 1),
        "bytes_per_url_with_fetch_results": round((doc_bytes + fetch_bytes) / docs, 1),
        "bytes_per_link_row": round(link_bytes / links, 1),
        "frontier_rows": frontier,
        "frontier_index_bytes_per_frontier_row": round(frontier_bytes / max(frontier, 1), 1),
        "frontier_heap_pages_per_64": round(heap_pages, 1),
    }


class _Timeline:
    """Pages fetched per second in each minute of the crawl, read off the fetch
    numbering (``doc_fetch_seq``: one number a fetched page) every 60 s: whether a crawl
    keeps its rate as its tables grow."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._counts: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _count(self) -> int:
        with self._engine.connect() as connection:
            called = connection.exec_driver_sql(
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM doc_fetch_seq"
            ).scalar_one()
        return int(called)

    def _run(self) -> None:
        while not self._stop.wait(60):
            self._counts.append(self._count())

    def rates(self) -> list[float]:
        counts = [0, *self._counts]
        return [round((b - a) / 60, 1) for a, b in itertools.pairwise(counts)]

    def __enter__(self) -> _Timeline:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _backlog(connection: Any) -> int:
    connection.commit()  # a fresh snapshot each time
    return int(connection.exec_driver_sql(queries["classifier_backlog"]).scalar_one())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="size of the synthetic web")
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--fetch", type=int, default=30_000, help="pages to fetch in all")
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--classify", action="store_true", help="soft focus, classifier running")
    parser.add_argument(
        "--max-backlog",
        type=int,
        default=None,
        help="with --classify: crawlers wait while this many pages wait for the classifier",
    )
    parser.add_argument("--mode", default="soft", choices=["soft", "soft-1999"])
    parser.add_argument(
        "--classifiers", type=int, default=1, help="with --classify: classifier processes"
    )
    parser.add_argument(
        "--corpus-home",
        default=os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl"),
        help="a focuscrawl home with the wikispeedia corpus (for --classify)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        help="an empty database on this machine (e.g. one with pg_stat_statements) "
        "instead of a throw-away embedded server",
    )
    parser.add_argument(
        "--citus", action="store_true", help="crawl into a local Citus cluster, distributed"
    )
    parser.add_argument(
        "--no-limit", action="store_true", help="skip bench/limit.py's bare client first"
    )
    args = parser.parse_args()
    if not args.no_limit:
        check_installed()
    with contextlib.ExitStack() as stack:
        if args.citus:
            args.database_url = stack.enter_context(citus_cluster())
        _run(args)


def _run(args: argparse.Namespace) -> None:
    classify_with = Path(args.corpus_home).expanduser() if args.classify else None
    result = run_crawl(
        args.pages,
        args.hosts,
        args.fetch,
        args.threads,
        args.processes,
        classify_with,
        args.max_backlog if args.classify else None,
        args.database_url,
        args.mode,
        not args.no_limit,
        args.classifiers,
    )
    fetched, docs, links = result["fetched"], result["doc_rows"], result["link_rows"]
    elapsed = result["seconds"]
    shape = f"{args.processes} process(es) x {args.threads} threads"
    print(
        f"fetched {fetched:,} pages in {elapsed:.1f} s: {result['pages_per_s']} pages/s ({shape}), "
        f"{result['links_per_s']:,} links/s"
    )
    if "bytes_per_doc_row" in result:
        print(
            f"stored {docs:,} doc rows ({result['bytes_per_doc_row']} B/row with indexes; "
            f"{result['bytes_per_url_with_fetch_results']} with doc_fetch), "
            f"{links:,} link rows ({result['bytes_per_link_row']} B/row)"
        )
        print(
            f"frontier left: {result['frontier_rows']:,} unvisited URLs, frontier indexes "
            f"{result['frontier_index_bytes_per_frontier_row']} B per unvisited URL; "
            f"the next URLs in claim order lie on {result['frontier_heap_pages_per_64']} heap "
            "pages per 64"
        )
    if args.classify:
        print(
            "classifier backlog when the crawl ended: "
            f"{result['classifier_backlog_when_crawl_ended']:,}; all scored after "
            f"{result['end_to_end_seconds']} s: {result['end_to_end_pages_per_s']} pages/s "
            "end to end"
        )
    if "limit" in result:
        bare = result["limit"]
        rate = "end to end" if args.classify else "pages/s"
        print(
            f"the limit on the same web (bench/limit.py): {bare['pages_per_s']} pages/s; "
            f"this crawl {result['ratio_to_limit']} of it ({rate})"
        )
    if result["pages_per_s_by_minute"]:
        print(f"pages/s by minute: {' '.join(map(str, result['pages_per_s_by_minute']))}")
    if result["cpu_seconds"]:
        spent = ", ".join(f"{role} {seconds}" for role, seconds in result["cpu_seconds"].items())
        print(f"CPU seconds: {spent} ({result['cpu_ms_per_page']} ms a page in all)")
    if result["crawler_cpu_ms_per_page_by_stage"]:
        stages = result["crawler_cpu_ms_per_page_by_stage"].items()
        print("crawler CPU a page, ms, by stage: " + ", ".join(f"{s} {ms}" for s, ms in stages))
    if result["classifier_cpu_ms_per_page_by_stage"]:
        stages = result["classifier_cpu_ms_per_page_by_stage"].items()
        print("classifier CPU a page scored, ms: " + ", ".join(f"{s} {ms}" for s, ms in stages))
    name = ("crawl_classify" if args.classify else "crawl") + ("_citus" if result["citus"] else "")
    print(f"wrote {write_results(name, result)}")


if __name__ == "__main__":
    main()
