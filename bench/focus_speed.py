"""Focus at full speed: a free-running soft crawl against the same seeds' lockstep crawl.

    python bench/focus_speed.py [--parts wikispeedia,generated,polite] [--topic T]
        [--wikispeedia-pages 4000] [--generated-pages 100000] [--generated-hosts 1000]
        [--generated-budget 10000] [--threads 16] [--max-backlog N] [--backlog-share F]
        [--polite-seconds 60] [--polite-hosts 1000,200] [--polite-crawlers 1]
        [--progress-seconds 10] [--corpus-home DIR] [--database-url URL]

Three measurements, each in databases of their own on one throw-away embedded server,
against a web-in-a-box subprocess:

``wikispeedia`` and ``generated`` (a generated web of --generated-pages pages on
--generated-hosts hosts): 10 relevant seeds of --topic (of the generated web, the
topic nearest 2% of its pages). First the **lockstep** crawl of the evaluation (``focuscrawl eval``:
rounds of 4 URLs, each fetched, stored and scored before the next), the harvest to
match. Then the **free** crawl a user runs: ``focuscrawl crawl run --mode soft`` and
``focuscrawl classify run`` as two processes, woken by each other's notifications, host
delay 0. The classifier starts first, as one that runs before a crawl: the crawler
starts once it listens and has gone idle (its model loaded, the empty queue read).
The end-to-end rate counts from the crawler's start until the last fetched page is
scored. Harvest = the true share of relevant pages among the first N fetched
(N = the topic's size, or the budget when smaller), and over the whole budget.

``polite``: generated webs of --polite-hosts hosts (1,000 and 200) with a 1 s host
delay: a free soft crawl of each for --polite-seconds. The politeness bound is what
the rule allows: each second, one page from every host that has an unvisited URL in
the frontier (sampled every second). The crawl's rate is given as a share of it, and
as a share of the lower of the bound and what the same crawl fetches in the same time
with no delay (``share_of_lower_bound``: on a machine slower than the bound, the
politeness rules' own cost).

After each, the limit (``bench/limit.py``: a bare client that stores nothing, from the
same seeds on the same web, for the budget's requests; --generated-budget on the polite
webs) and the free crawl's end-to-end rate as a share of it (``ratio_to_limit``).

Each free crawl also gives the pages fetched and the relevant pages among them by every
10 s of the crawl (``pages_by_10s``, ``relevant_by_10s``; ``--progress-seconds 2``:
``pages_by_2s``, ...): under a host delay a faster
start can hold fewer relevant pages among its first N and still find as many by a time.

Writes bench/results/focus_speed.json.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CpuMeter,
    finish_logged,
    proc_stat,
    process_log,
    scratch_engine,
    server_pid,
    stage_cpu,
    write_results,
)
from limit import check_installed, ratio
from limit import measure as measure_limit
from sqlalchemy.engine import Engine

from focuscrawl.db.database import execute
from focuscrawl.db.migrate import drop_database, sibling_database
from focuscrawl.db.queries import queries
from focuscrawl.db.seeds import add_seeds
from focuscrawl.evaluation.runs import CrawlPlan, prepare_database, prepare_strategy, run_crawl
from focuscrawl.evaluation.strategies import Strategy
from focuscrawl.evaluation.truth import GroundTruth, load_truth, sweep_topics
from focuscrawl.topics.taxonomy_import import from_corpus
from focuscrawl.webbox.process import start_server_process

DEFAULT_TOPIC = "subject.Science.Biology"
SEEDS = 10
#: unvisited hosts: what the politeness rule lets a crawl ask for in the next second
HOSTS_WITH_WORK = """
SELECT count(DISTINCT sid) FROM doc WHERE state = 0 AND num_tries = 0
"""

LISTENING = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE query LIKE 'LISTEN %%' AND datname = current_database()"
)
LINK_VERSIONS = "SELECT count(*) FROM model WHERE kind = 'link'"
FIRST_FETCH = "SELECT extract(epoch FROM min(fetched_at)) FROM doc_fetch"
#: each fetched page's URL and when it was stored (the epoch)
FETCH_TIMES = """
SELECT doc_url(d.https, s.host, d.path), extract(epoch FROM f.fetched_at)
FROM doc AS d JOIN site AS s ON s.sid = d.sid AND s.bucket = d.bucket
JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
WHERE d.state = 2
"""
#: the crawl's progress is reported every this many seconds
PROGRESS_S = 10  # --progress-seconds


def _url(engine: Engine) -> str:
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def _fetched(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return [r.url for r in execute(connection, queries["fetched_in_order"])]


def _backlog(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(execute(connection, queries["classifier_backlog"]).scalar_one())


def _wait_listening(engine: Engine) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            if connection.exec_driver_sql(LISTENING).scalar_one():
                return
        time.sleep(0.05)
    raise RuntimeError("the classifier did not start listening within 60 s")


def _wait_idle(pid: int) -> float:
    """Wait until process ``pid`` is idle (under 10 ms of CPU in 0.25 s), at most 60 s:
    a classifier that runs before the crawl has loaded its model and looked at the
    empty queue. The seconds waited."""
    start = time.monotonic()
    last = proc_stat(pid)
    while last is not None and time.monotonic() < start + 60:
        time.sleep(0.25)
        now = proc_stat(pid)
        if now is None or now[1] - last[1] < 0.01:
            break
        last = now
    return time.monotonic() - start


def _progress(
    engine: Engine, relevant: frozenset[str], started_at: float, seconds: float
) -> dict[str, list[int]]:
    """Pages fetched and relevant pages among them by each PROGRESS_S seconds of the
    crawl: what a user waits for (a faster crawl's first N pages can hold fewer relevant
    ones when relevant hosts are bound by the host delay, and still find as many by a
    given time)."""
    marks = [PROGRESS_S * (k + 1) for k in range(int(seconds // PROGRESS_S))]
    pages, found = [0] * len(marks), [0] * len(marks)
    with engine.connect() as connection:
        for url, at in connection.exec_driver_sql(FETCH_TIMES):
            for k, mark in enumerate(marks):
                if float(at) - started_at <= mark:
                    pages[k] += 1
                    found[k] += url in relevant
    return {f"pages_by_{PROGRESS_S}s": pages, f"relevant_by_{PROGRESS_S}s": found}


def _harvest(urls: list[str], relevant: frozenset[str], first: int) -> float:
    head = urls[:first]
    return round(sum(url in relevant for url in head) / max(len(head), 1), 3)


class Web:
    """One corpus served, its truth, taxonomy sample and topic, and a template database
    with the taxonomy, the topic marked good and the trained models."""

    def __init__(
        self, server: Engine, home: Path, corpus: Path, topic: str | None, name: str
    ) -> None:
        self.server = server
        self.home = home
        self.truth: GroundTruth = load_truth(corpus)
        if topic is None:  # the topic nearest 2% of the web's pages
            sizes = {t: len(self.truth.relevant(t)) for t in sweep_topics(self.truth)}
            topic = min(sizes, key=lambda t: abs(sizes[t] - len(self.truth.labels) / 50))
        self.topic = topic
        self.relevant = self.truth.relevant(topic)
        self.seeds = self.truth.seeds(topic, SEEDS, 1)
        self.template = f"{name}_template"
        target = sibling_database(server, self.template)
        try:
            prepare_database(target, from_corpus(corpus, 0.3, seed=1), topic)
            prepare_strategy(target, Strategy.SOFT)
        finally:
            target.dispose()
        self.process, self.proxy = start_server_process(home, str(corpus), "--no-faults")

    def database(self, name: str) -> Engine:
        return sibling_database(self.server, name, template=self.template)

    def close(self) -> None:
        self.process.terminate()
        self.process.communicate()
        drop_database(self.server, self.template)

    def measure(self, urls: list[str], budget: int) -> dict[str, Any]:
        first = min(len(self.relevant), budget)
        return {
            "fetched": len(urls),
            "first_n": first,
            "harvest_first_n": _harvest(urls, self.relevant, first),
            "harvest_budget": _harvest(urls, self.relevant, budget),
        }


def lockstep(web: Web, budget: int) -> dict[str, Any]:
    """The evaluation's crawl: rounds of 4 URLs, each scored before the next claim."""
    engine = web.database("focus_speed_lockstep")
    try:
        plan = CrawlPlan(Strategy.SOFT, web.topic, web.seeds, budget, web.proxy, distill_every=0)
        trace = run_crawl(engine, plan, web.truth)
        urls = _fetched(engine)
    finally:
        engine.dispose()
        drop_database(web.server, "focus_speed_lockstep")
    return {**web.measure(urls, budget), "seconds": trace.seconds,
            "pages_per_s": round(len(urls) / trace.seconds, 1)}  # fmt: skip


def free(
    web: Web,
    budget: int | None,
    options: list[str],
    host_delay: float = 0.0,
    seconds: float | None = None,
    crawlers: int = 1,
) -> dict[str, Any]:
    """``focuscrawl crawl run`` (``crawlers`` processes of it) and ``classify run`` side by
    side, until ``budget`` pages or ``seconds``; the end-to-end rate and harvest, and
    each second's hosts with work."""
    name = "focus_speed_free"
    engine = web.database(name)
    cli = [sys.executable, "-m", "focuscrawl", "--home", str(web.home), "--database-url"]
    cli.append(_url(engine))
    run = ["crawl", "run", "--mode", "soft", "--proxy", web.proxy]
    run += ["--host-delay", str(host_delay), *options]
    if budget is not None:
        run += ["--max-pages", str(budget)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    hosts: list[tuple[float, int]] = []
    try:
        with engine.begin() as connection:
            add_seeds(connection, web.seeds)
        classifier_log, classifier_out = process_log(web.home, "classifier")
        classifier = subprocess.Popen(
            [*cli, "classify", "run"], env=env, stdout=classifier_out, stderr=classifier_out
        )
        _wait_listening(engine)  # started, as a classifier that runs before a crawl is:
        classifier_start = _wait_idle(classifier.pid)  # its model loaded, its queue read
        with engine.connect() as connection:
            postmaster = server_pid(connection)
        started: list[subprocess.Popen[bytes]] = []

        def roles() -> dict[int, str]:
            watched = {web.process.pid: "webbox", classifier.pid: "classifier"}
            return {**watched, **{crawler.pid: "crawler" for crawler in started}}

        with CpuMeter(roles, postmaster) as meter:
            start = time.perf_counter()
            started_at = time.time()
            logs = [process_log(web.home, f"crawler-{n}") for n in range(crawlers)]
            started += [
                subprocess.Popen([*cli, *run], env=env, stdout=out, stderr=out) for _, out in logs
            ]
            crawler = started[0]
            spy = os.environ.get("FOCUS_SPEED_PYSPY")  # profile the two with this py-spy
            for role, pid in (
                (("crawler", crawler.pid), ("classifier", classifier.pid)) if spy else ()
            ):
                out = f"/tmp/prof_{role}.txt"
                subprocess.Popen(
                    [spy, "record", "-o", out, "-f", "raw", "-r", "100", "--gil", "--pid", str(pid)]
                )
            done = threading.Event()

            def sample() -> None:  # each second: the hosts a polite crawl may ask a page of
                while not done.wait(1.0):
                    with engine.connect() as connection:
                        count = connection.exec_driver_sql(HOSTS_WITH_WORK).scalar_one()
                    hosts.append((time.perf_counter() - start, int(count)))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            deadline = None if seconds is None else time.perf_counter() + seconds
            for each in started:
                try:
                    left = None if deadline is None else max(deadline - time.perf_counter(), 0)
                    each.wait(timeout=left)
                except subprocess.TimeoutExpired:
                    pass
            for each in started:
                if each.poll() is None:
                    each.send_signal(signal.SIGTERM)
            for each, (log, out) in zip(started, logs, strict=True):
                finish_logged(each, log, out, ok=(0, -signal.SIGTERM))
            crawl_seconds = time.perf_counter() - start
            done.set()
            sampler.join()
            while _backlog(engine) and classifier.poll() is None:  # else its log says why
                time.sleep(0.05)
            end_to_end = time.perf_counter() - start
        classifier.terminate()
        finish_logged(classifier, classifier_log, classifier_out)
        urls = _fetched(engine)
        progress = _progress(engine, web.relevant, started_at, crawl_seconds)
        with engine.connect() as connection:
            versions = connection.exec_driver_sql(LINK_VERSIONS).scalar_one()
            first_fetch = connection.exec_driver_sql(FIRST_FETCH).scalar_one()
    finally:
        engine.dispose()
        drop_database(web.server, name)
    measured = web.measure(urls, budget or len(urls))
    bound = sum(count for _, count in hosts) / max(host_delay, 1e-9)
    return {
        **measured,
        "crawl_seconds": round(crawl_seconds, 1),
        "end_to_end_seconds": round(end_to_end, 1),
        # the crawler's start-up: from its launch to its first page stored
        "first_fetch_seconds": round(float(first_fetch) - started_at, 2) if first_fetch else None,
        # the classifier's own start, from listening until idle, before the crawler's
        "classifier_start_seconds": round(classifier_start, 2),
        "end_to_end_pages_per_s": round(len(urls) / end_to_end, 1),
        "options": options,
        "link_model_versions": versions,
        "cpu_seconds": meter.seconds(),
        "crawler_cpu_ms_per_page_by_stage": stage_cpu([log for log, _ in logs]),
        "classifier_cpu_ms_per_page_by_stage": stage_cpu([classifier_log]),
        **progress,
        **(
            {
                "host_delay": host_delay,
                "hosts_with_work_per_second": [c for _, c in hosts],
                "politeness_bound_pages": round(bound),
                "share_of_politeness_bound": round(len(urls) / max(bound, 1), 3),
            }
            if host_delay
            else {}
        ),
    }


def _generated(server: Engine, home: Path, pages: int, hosts: int) -> Web:
    """A generated web of ``pages`` on ``hosts``, served, with its template database."""
    name = f"generated_{hosts}"
    generate = ["webbox", "generate", "--pages", str(pages), "--hosts", str(hosts)]
    cli = [sys.executable, "-m", "focuscrawl", "--home", str(home)]
    subprocess.run([*cli, *generate, "--seed", "1", "--name", name], check=True)
    return Web(server, home, home / "corpora" / name, None, name)


def compare(
    web: Web, budget: int, options: list[str], skip_lockstep: bool = False
) -> dict[str, Any]:
    locked = {"harvest_first_n": float("nan")} if skip_lockstep else lockstep(web, budget)
    print(f"  lockstep: {locked}", flush=True)
    running = free(web, budget, options)
    print(f"  free:     {running}", flush=True)
    bare = measure_limit(web.proxy, web.process.pid, web.seeds, budget)
    running["ratio_to_limit"] = ratio(running["end_to_end_pages_per_s"], bare)
    print(f"  limit:    {bare} (free end to end: {running['ratio_to_limit']} of it)", flush=True)
    return {
        "limit": bare,
        "topic": web.topic,
        "relevant_pages": len(web.relevant),
        "budget": budget,
        "lockstep": locked,
        "free": running,
        "harvest_difference": round(running["harvest_first_n"] - locked["harvest_first_n"], 3),
    }


def main() -> None:
    global PROGRESS_S  # --progress-seconds
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="wikispeedia,generated,polite")
    parser.add_argument("--topic", default=DEFAULT_TOPIC)
    parser.add_argument("--wikispeedia-pages", type=int, default=4_000)
    parser.add_argument("--generated-pages", type=int, default=100_000)
    parser.add_argument("--generated-hosts", type=int, default=1_000)
    parser.add_argument("--generated-budget", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--max-backlog", type=int, default=None)
    parser.add_argument("--backlog-share", type=float, default=None)
    parser.add_argument("--polite-seconds", type=float, default=60.0)
    parser.add_argument(
        "--progress-seconds",
        type=int,
        default=PROGRESS_S,
        help="pages and relevant pages by every this many seconds of each free crawl",
    )
    parser.add_argument(
        "--polite-crawlers",
        type=int,
        default=1,
        help="the polite crawls as this many crawler processes, each with --threads",
    )
    parser.add_argument(
        "--polite-hosts",
        default="1000,200",
        help="polite: generated webs of these many hosts, one crawl each",
    )
    parser.add_argument("--skip-lockstep", action="store_true", help="free crawls only")
    parser.add_argument(
        "--database-url",
        help="a local PostgreSQL server to use instead of a throw-away embedded one "
        "(its databases are created and dropped; its CPU is counted)",
    )
    parser.add_argument(
        "--corpus-home",
        default=os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl"),
        help="a focuscrawl home with the wikispeedia corpus imported",
    )
    args = parser.parse_args()
    check_installed()
    if args.progress_seconds < 1:
        parser.error("--progress-seconds must be at least 1")
    parts = args.parts.split(",")
    PROGRESS_S = args.progress_seconds
    options = ["--threads", str(args.threads)]
    if args.max_backlog is not None:
        options += ["--max-backlog", str(args.max_backlog)]
    if args.backlog_share is not None:
        options += ["--backlog-share", str(args.backlog_share)]
    results: dict[str, Any] = {"threads": args.threads, "options": options}
    results["polite_crawlers"] = args.polite_crawlers
    corpus_home = Path(args.corpus_home).expanduser()
    with (
        tempfile.TemporaryDirectory(prefix="focuscrawl-bench-focus-") as tmp,
        scratch_engine(args.database_url) as server,
    ):
        home = Path(tmp)
        if "wikispeedia" in parts:
            corpus = corpus_home / "corpora" / "wikispeedia"
            if not (corpus / "corpus.json").is_file():
                sys.exit(f"no Wikispeedia corpus in {corpus}: focuscrawl webbox import-wikispeedia")
            print(f"wikispeedia, {args.wikispeedia_pages} pages:", flush=True)
            web = Web(server, home, corpus, args.topic, "wikispeedia")
            try:
                results["wikispeedia"] = compare(
                    web, args.wikispeedia_pages, options, args.skip_lockstep
                )
            finally:
                web.close()
        if "generated" in parts:
            print(f"generated web, {args.generated_budget} pages:", flush=True)
            web = _generated(server, home, args.generated_pages, args.generated_hosts)
            try:
                budget = args.generated_budget
                results["generated"] = compare(web, budget, options, args.skip_lockstep)
            finally:
                web.close()
        if "polite" in parts:
            results["polite"] = {}
            for hosts in (int(h) for h in args.polite_hosts.split(",")):
                print(f"{hosts} hosts, host delay 1 s, {args.polite_seconds:.0f} s:", flush=True)
                web = _generated(server, home, args.generated_pages, hosts)
                try:
                    polite = free(
                        web,
                        None,
                        options,
                        host_delay=1.0,
                        seconds=args.polite_seconds,
                        crawlers=args.polite_crawlers,
                    )
                    # the same crawl with no delay: what the machine itself allows
                    unthrottled = free(
                        web,
                        None,
                        options,
                        seconds=args.polite_seconds,
                        crawlers=args.polite_crawlers,
                    )
                    # what the machine allows at all: the bare client, no delay
                    budget = args.generated_budget
                    bare = measure_limit(web.proxy, web.process.pid, web.seeds, budget)
                finally:
                    web.close()
                polite["limit"] = bare
                fetched = unthrottled["fetched"]
                polite["unthrottled_pages"] = fetched
                polite["unthrottled_pages_per_s"] = round(fetched / unthrottled["crawl_seconds"], 1)
                polite["unthrottled_cpu_seconds"] = unthrottled["cpu_seconds"]
                ceiling = min(polite["politeness_bound_pages"], fetched)
                polite["share_of_lower_bound"] = round(polite["fetched"] / max(ceiling, 1), 3)
                print(f"  {polite}", flush=True)
                results["polite"][str(hosts)] = polite
    path = write_results("focus_speed", results)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
