"""A local Citus cluster for a test module: started from citus-build's PostgreSQL,
skipped with a one-line reason without ../shared/tools/citus-build, failed under CI=true;
the command line run against it as a user runs it; and a soft crawl on it, prepared,
run and checked as the cluster's crawl tests share them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from focuscrawl.db.cluster import CITUS_BUILD, LocalCluster, citus_bin_dir
from focuscrawl.webbox.process import start_server_process
from focuscrawl.webbox.server import iter_log
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams
from tests.classifier.topics import write_tree_dir


def citus_or_skip() -> Path:
    """The bin directory of PostgreSQL with Citus, built on first use (~90 s); skipped
    with a one-line reason without ../shared/tools/citus-build, failed under CI=true."""
    if not CITUS_BUILD.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no {CITUS_BUILD} to build Citus with")
        pytest.skip(f"no {CITUS_BUILD}: the Citus tests need it")
    return citus_bin_dir()


@contextmanager
def running_cluster(home: Path, base_port: int) -> Iterator[LocalCluster]:
    """A coordinator and two workers from port ``base_port``, brought up and down as a
    user does (``focuscrawl cluster up`` with ``home`` as FOCUSCRAWL_HOME); the cluster,
    for what a test does to its nodes."""
    citus_or_skip()
    env = home_environment(home)
    try:
        focuscrawl(env, "cluster", "up", "--port", str(base_port))
        cluster = LocalCluster.existing(home / "cluster")
        assert cluster is not None and cluster.base_port == base_port
        yield cluster
    finally:
        run_focuscrawl(env, "cluster", "down")


@contextmanager
def local_cluster(home: Path, base_port: int) -> Iterator[str]:
    """A coordinator and two workers (``running_cluster``); yields the coordinator's URL."""
    with running_cluster(home, base_port) as cluster:
        yield cluster.url()


def home_environment(home: Path) -> dict[str, str]:
    """The environment of a user's ``focuscrawl`` commands with ``home`` as their home
    (nothing of the test runner's own settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env["FOCUSCRAWL_HOME"] = str(home)
    return env


def cli_environment(url: str, home: Path) -> dict[str, str]:
    """The environment a user's ``focuscrawl`` commands run in against the cluster at
    ``url``, with ``home`` as their home."""
    return {**home_environment(home), "FOCUSCRAWL_DATABASE_URL": url}


def run_focuscrawl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``focuscrawl ARGS...`` as a user does, whatever it exits with."""
    return subprocess.run(
        [sys.executable, "-m", "focuscrawl", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def focuscrawl(env: dict[str, str], *args: str) -> str:
    """Run ``focuscrawl ARGS...`` as a user does; its output, after it exited 0."""
    done = run_focuscrawl(env, *args)
    assert done.returncode == 0, f"focuscrawl {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout


#: the web the cluster's crawl tests crawl, and their budget: long enough on the cluster
#: to outlast what a test does to it meanwhile
WEB = SyntheticParams(pages=5000, hosts=40, seed=2)
PAGES = 1200


def prepare_crawl(env: dict[str, str], tmp_path: Path, shards: int) -> None:
    """What a user does before a soft crawl on the cluster: the schema, laid out in
    ``shards`` shards; the test taxonomy with sports good and its model; the generated
    web ``WEB`` and its seeds."""
    focuscrawl(env, "db", "upgrade")
    focuscrawl(env, "db", "distribute", "--shards", str(shards))
    focuscrawl(env, "taxonomy", "import", str(write_tree_dir(tmp_path / "tree")))
    focuscrawl(env, "taxonomy", "mark-good", "topics.sports")
    focuscrawl(env, "classify", "train")
    generate = ["--pages", str(WEB.pages), "--hosts", str(WEB.hosts), "--seed", str(WEB.seed)]
    focuscrawl(env, "webbox", "generate", *generate)
    web = SyntheticCorpus(WEB)
    focuscrawl(env, "seed", "add", *(web.url(p) for p in range(0, WEB.pages, 250)))


@dataclass
class SoftCrawl:
    """A classifier and crawler processes running against the cluster."""

    classifier: subprocess.Popen[str]
    crawlers: list[subprocess.Popen[str]]

    def check_running(self) -> None:
        for crawler in self.crawlers:
            assert crawler.poll() is None, crawler.communicate()[1][-2000:]

    def wait_for(self, url: str, pages: int, seconds: float = 120) -> None:
        """Until the crawl has fetched ``pages``, its crawlers running all the while."""
        deadline = time.monotonic() + seconds
        while fetched(url) < pages:
            self.check_running()
            assert time.monotonic() < deadline, "the crawl stalled"
            time.sleep(0.2)

    def stop(self) -> None:
        """Ask the crawlers to stop as a user's Ctrl-C or systemd does: they finish what
        they hold, store it, and exit 0."""
        for crawler in self.crawlers:
            crawler.send_signal(signal.SIGTERM)

    def finish(self, url: str, seconds: float = 120) -> str:
        """Wait for the crawlers to end and the classifier to score every page they
        fetched (on a busy machine it may lag them by a batch), then stop it; every one
        must exit 0. What they logged."""
        logged = ""
        for crawler in self.crawlers:
            _, errors = crawler.communicate(timeout=300)
            assert crawler.returncode == 0, errors[-2000:]
            logged += errors
        deadline = time.monotonic() + seconds
        while unscored(url) > 0:
            assert self.classifier.poll() is None, self.classifier.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the classifier left fetched pages unscored"
            time.sleep(0.2)
        self.classifier.send_signal(signal.SIGINT)
        _, errors = self.classifier.communicate(timeout=60)
        assert self.classifier.returncode == 0, errors[-2000:]
        return logged + errors


@contextmanager
def soft_crawl(
    env: dict[str, str],
    crawlers: int = 1,
    idle_exit: int = 5,
    log: Path | None = None,
    pages: int = PAGES,
    host_delay: float = 0,
) -> Iterator[SoftCrawl]:
    """``classify run`` and ``crawlers`` ``crawl run --mode soft`` processes sharing the
    budget ``pages``, against the web-in-a-box serving the home's generated web (its
    requests logged to ``log``), ``host_delay`` seconds between requests to a host;
    whatever is left running is killed at the end."""
    options = ["--log", str(log)] if log else []
    server, proxy = start_server_process(
        Path(env["FOCUSCRAWL_HOME"]), "synthetic", "--no-faults", *options
    )
    processes: list[subprocess.Popen[str]] = []
    try:
        classify = [sys.executable, "-m", "focuscrawl", "classify", "run"]
        crawl = [sys.executable, "-m", "focuscrawl", "crawl", "run", "--mode", "soft"]
        crawl += ["--proxy", proxy, "--host-delay", str(host_delay), "--threads", "8"]
        crawl += ["--max-pages", str(pages // crawlers), "--idle-exit", str(idle_exit)]
        quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
        for command in (classify, *[crawl] * crawlers):
            processes.append(subprocess.Popen([*command, "--quiet"], text=True, **quiet))
        yield SoftCrawl(processes[0], processes[1:])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()  # its pipe closed, whether it ran or had ended
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=10)


def one_row(url: str, statement: str, params: tuple[object, ...] = ()) -> tuple[Any, ...]:
    connection = psycopg2.connect(url)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
            assert row is not None
            return tuple(row)
    finally:
        connection.close()


def fetched(url: str) -> int:
    return int(one_row(url, "SELECT count(*) FROM doc WHERE state = 2")[0])


def unscored(url: str) -> int:
    """Fetched pages the classifier has not scored yet."""
    statement = (
        "SELECT count(*) FROM doc AS d JOIN doc_fetch AS f ON f.oid = d.oid "
        "AND f.bucket = d.bucket WHERE d.state = 2 AND f.model_id IS NULL"
    )
    return int(one_row(url, statement)[0])


def fetched_once(log: Path) -> int:
    """The pages the web-in-a-box's request ``log`` shows the crawl asked for (robots.txt
    aside), after checking that none was asked twice."""
    pages = [(host, path) for _, host, path, _, _ in iter_log(log) if path != "/robots.txt"]
    assert len(pages) == len(set(pages)), "a page was fetched twice"
    return len(pages)


def check_whole(url: str, pages: int = PAGES) -> None:
    """The crawl ended whole: its budget fetched and scored, no lease left, every row in
    its bucket, each fetched page's text once."""
    count, leased, unscored, misplaced = one_row(
        url,
        """
        SELECT count(*) FILTER (WHERE d.state = 2), count(l.oid),
               count(*) FILTER (WHERE d.state = 2 AND f.model_id IS NULL),
               count(*) FILTER (WHERE d.bucket <> oid_bucket(d.oid))
        FROM doc AS d
        LEFT JOIN doc_lease AS l ON l.oid = d.oid AND l.bucket = d.bucket
        LEFT JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
        """,
    )
    assert count == pages  # the budget, no page fetched twice nor lost
    assert leased == 0 and unscored == 0 and misplaced == 0
    texts, stored = one_row(
        url,
        "SELECT count(*), count(*) FILTER (WHERE d.state = 2) FROM doc_text AS t "
        "JOIN doc AS d ON d.oid = t.oid AND d.bucket = t.bucket",
    )
    assert texts == stored == pages  # each fetched page's text, once
