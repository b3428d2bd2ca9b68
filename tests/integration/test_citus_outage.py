"""A Citus worker stopped for a while under a running crawl (what clusters do).

The crawler, its store and the classifier wait out a worker's outage as they wait out
one server's: every process goes on when the worker is back and exits 0, and the crawl
ends whole. Skipped with a one-line reason without ../shared/tools/citus-build; under
CI=true it must run."""

from __future__ import annotations

import re
import time
from pathlib import Path

from prometheus_client import generate_latest

from focuscrawl.db.database import make_engine
from focuscrawl.monitor.metrics import CrawlMetrics
from tests.integration.citus_nodes import (
    check_whole,
    cli_environment,
    fetched_once,
    focuscrawl,
    prepare_crawl,
    run_focuscrawl,
    running_cluster,
    soft_crawl,
)

BASE_PORT = 9770  # apart from the other Citus modules' nodes
SHARDS = 4
OUTAGE_S = 10
CRAWLERS = 2


def test_a_crawl_waits_out_a_worker_stopped_twice(tmp_path: Path) -> None:
    with running_cluster(tmp_path / "cluster", BASE_PORT) as nodes:
        url = nodes.url()
        engine = make_engine(url)
        env = cli_environment(url, tmp_path / "home")
        prepare_crawl(env, tmp_path, SHARDS)
        worker = nodes.nodes[1]
        log = tmp_path / "requests.log"
        with soft_crawl(env, CRAWLERS, idle_exit=30, log=log) as crawl:
            for at in (100, 400):
                crawl.wait_for(url, at, 180)
                worker.down()
                started = time.monotonic()
                status = run_focuscrawl(env, "db", "status")
                monitor = run_focuscrawl(env, "monitor", "--once")
                scraped = generate_latest(CrawlMetrics(engine).registry).decode()
                time.sleep(max(OUTAGE_S - (time.monotonic() - started), 0))
                worker.up()
                # a node down is an alarm: db status names it and exits 1; the live view
                # and the crawl's /metrics say so and go on
                assert status.returncode == 1, status.stdout + status.stderr
                assert f":{worker.port}: DOWN" in status.stdout, status.stdout
                assert monitor.returncode == 0, monitor.stderr
                assert f":{worker.port} DOWN" in monitor.stdout, monitor.stdout
                assert "workers            1 of 2 up" in monitor.stdout, monitor.stdout
                assert re.search(rf'focuscrawl_worker_up{{node=".*:{worker.port}"}} 0\.0', scraped)
                assert "focuscrawl_database_up 0.0" in scraped, scraped
            logged = crawl.finish(url)
        assert "event=db_wait" in logged  # the outage reached the crawl
        fetched_once(log)
        healthy = focuscrawl(env, "db", "status")  # exits 0: every worker up
        assert healthy.count(": up") == 2, healthy
        scraped = generate_latest(CrawlMetrics(engine).registry).decode()
        assert re.findall(r'focuscrawl_worker_up\{node="[^"]+"\} (\S+)', scraped) == ["1.0"] * 2
        assert "focuscrawl_database_up 1.0" in scraped, scraped
        engine.dispose()
        focuscrawl(env, "classify", "run", "--once", "--quiet")
        check_whole(url)
