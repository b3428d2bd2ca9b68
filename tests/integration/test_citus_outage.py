"""A Citus worker stopped for a while under a running crawl (what clusters do).

The crawler, its store and the classifier wait out a worker's outage as they wait out
one server's: every process goes on when the worker is back and exits 0, and the crawl
ends whole. Skipped with a one-line reason without ../shared/tools/citus-build; under
CI=true it must run."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from focuscrawl.webbox.process import start_server_process
from focuscrawl.webbox.server import iter_log
from focuscrawl.webbox.synthetic import SyntheticCorpus
from tests.classifier.topics import write_tree_dir
from tests.integration.citus_nodes import cli_environment, focuscrawl, running_cluster
from tests.integration.test_citus_reshard import PAGES, SHARDS, WEB, _fetched, _one

BASE_PORT = 9770  # apart from the other Citus modules' nodes
OUTAGE_S = 10
CRAWLERS = 2


def test_a_crawl_waits_out_a_worker_stopped_twice(tmp_path: Path) -> None:
    with running_cluster(tmp_path / "cluster", BASE_PORT) as nodes:
        url = nodes.url()
        home = tmp_path / "home"
        env = cli_environment(url, home)
        focuscrawl(env, "db", "upgrade")
        focuscrawl(env, "db", "distribute", "--shards", str(SHARDS))
        focuscrawl(env, "taxonomy", "import", str(write_tree_dir(tmp_path / "tree")))
        focuscrawl(env, "taxonomy", "mark-good", "topics.sports")
        focuscrawl(env, "classify", "train")
        generate = ["--pages", str(WEB.pages), "--hosts", str(WEB.hosts), "--seed", str(WEB.seed)]
        focuscrawl(env, "webbox", "generate", *generate)
        web = SyntheticCorpus(WEB)
        focuscrawl(env, "seed", "add", *(web.url(p) for p in range(0, WEB.pages, 250)))
        log = tmp_path / "requests.log"
        server, proxy = start_server_process(home, "synthetic", "--no-faults", "--log", str(log))
        processes: list[subprocess.Popen[str]] = []
        worker = nodes.nodes[1]
        try:
            classify = [sys.executable, "-m", "focuscrawl", "classify", "run"]
            crawl = [sys.executable, "-m", "focuscrawl", "crawl", "run", "--mode", "soft"]
            crawl += ["--proxy", proxy, "--host-delay", "0", "--threads", "8"]
            crawl += ["--max-pages", str(PAGES // CRAWLERS), "--idle-exit", "30"]
            quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
            for command in (classify, *[crawl] * CRAWLERS):
                processes.append(subprocess.Popen([*command, "--quiet"], text=True, **quiet))
            classifier, *crawlers = processes
            for at in (100, 400):
                deadline = time.monotonic() + 180
                while _fetched(url) < at:
                    for crawler in crawlers:
                        assert crawler.poll() is None, crawler.communicate()[1][-2000:]
                    assert time.monotonic() < deadline, "the crawl stalled"
                    time.sleep(0.2)
                worker.down()
                started = time.monotonic()
                status = subprocess.run(
                    [sys.executable, "-m", "focuscrawl", "db", "status"],
                    env=env, capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                time.sleep(max(OUTAGE_S - (time.monotonic() - started), 0))
                worker.up()
                # a node down is an alarm: db status names it and exits 1
                assert status.returncode == 1, status.stdout + status.stderr
                assert f":{worker.port}: DOWN" in status.stdout, status.stdout
            crawl_errors = ""
            for crawler in crawlers:
                _, errors = crawler.communicate(timeout=300)
                assert crawler.returncode == 0, errors[-2000:]
                crawl_errors += errors
            classifier.send_signal(signal.SIGINT)
            _, classify_errors = classifier.communicate(timeout=60)
            assert classifier.returncode == 0, classify_errors[-2000:]
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.communicate()
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=10)
        assert "event=db_wait" in crawl_errors  # the outage reached the crawl
        pages = [(host, path) for _, host, path, _, _ in iter_log(log) if path != "/robots.txt"]
        assert len(pages) == len(set(pages)), "a page was fetched twice"
        healthy = focuscrawl(env, "db", "status")  # exits 0: every worker up
        assert healthy.count(": up") == 2, healthy
        focuscrawl(env, "classify", "run", "--once", "--quiet")
        fetched, leased, unscored = _one(
            url,
            """
            SELECT count(*) FILTER (WHERE d.state = 2), count(l.oid),
                   count(*) FILTER (WHERE d.state = 2 AND f.model_id IS NULL)
            FROM doc AS d
            LEFT JOIN doc_lease AS l ON l.oid = d.oid AND l.bucket = d.bucket
            LEFT JOIN doc_fetch AS f ON f.oid = d.oid AND f.bucket = d.bucket
            """,
        )
        assert fetched == PAGES  # the budget, nothing lost
        assert leased == 0 and unscored == 0
