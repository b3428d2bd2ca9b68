"""Crashes, signals, outages and rival processes lose nothing and break no rule."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.fetch import FetchConfig
from focuscrawl.crawler.process import Crawler
from focuscrawl.db.database import make_engine
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.db.migrate import upgrade
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import DocState
from focuscrawl.db.seeds import add_seeds
from focuscrawl.webbox import RequestLog, WebBox, WebBoxThread, iter_log
from focuscrawl.webbox.synthetic import SyntheticCorpus, SyntheticParams

from .conftest import host_gaps, requested_pages, states


def _seed(engine: sa.Engine, urls: list[str]) -> None:
    with engine.begin() as connection:
        add_seeds(connection, urls)


def _crawler(db_url: str, proxy: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    command = [sys.executable, "-m", "focuscrawl", "--database-url", db_url, "crawl", "run"]
    return subprocess.Popen(
        [*command, "--proxy", proxy, "--mode", "bfs", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for(engine: sa.Engine, sql: str, minimum: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            if connection.exec_driver_sql(sql).scalar() >= minimum:
                return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {sql} >= {minimum}")


def test_killed_crawler_leases_expire_and_every_url_comes_back_once(
    engine: sa.Engine, db_url: str, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    _seed(engine, [synthetic.url(p) for p in range(0, 3000, 100)])
    process = _crawler(
        db_url, webbox.proxy, "--host-delay", "0.5", "--lease-seconds", "2", "--threads", "4"
    )
    _wait_for(engine, "SELECT count(*) FROM doc WHERE state = 2", 10)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)
    with engine.connect() as connection:
        total = connection.exec_driver_sql("SELECT count(*) FROM doc").scalar()
        leased = set(connection.exec_driver_sql("SELECT oid FROM doc WHERE state = 1").scalars())
        tries = dict(
            connection.exec_driver_sql("SELECT oid, num_tries FROM doc WHERE state = 1").all()
        )
        leases = set(connection.exec_driver_sql("SELECT oid FROM doc_lease").scalars())
    assert leased, "the crawler died holding no lease: the test proves nothing"
    assert leases == leased  # every URL it held, and only those, has a lease
    time.sleep(2.5)
    with engine.begin() as connection:
        connection.exec_driver_sql(queries["recover_expired_leases"])
    with engine.connect() as connection:
        back = dict(
            connection.exec_driver_sql(
                "SELECT oid, num_tries FROM doc WHERE oid = ANY(%(oids)s)", {"oids": list(leased)}
            ).all()
        )
        after = states(engine)
        count = connection.exec_driver_sql("SELECT count(*) FROM doc").scalar()
        leases_left = connection.exec_driver_sql("SELECT count(*) FROM doc_lease").scalar()
    assert DocState.LEASED not in after and leases_left == 0
    assert count == total  # none lost, none duplicated
    assert back == {oid: tries[oid] + 1 for oid in leased}
    with engine.connect() as connection:
        frontier = connection.exec_driver_sql(
            "SELECT count(*) FROM doc WHERE state = 0 AND oid = ANY(%(oids)s)",
            {"oids": list(leased)},
        ).scalar()
    assert frontier == len(leased)


def test_sigterm_finishes_in_flight_work_and_returns_claims(
    engine: sa.Engine, db_url: str, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    _seed(engine, [synthetic.url(p) for p in range(0, 3000, 150)])
    process = _crawler(db_url, webbox.proxy, "--host-delay", "0.3", "--threads", "8")
    _wait_for(engine, "SELECT count(*) FROM doc WHERE state = 2", 20)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "fetched" in out
    assert DocState.LEASED not in states(engine)


def test_a_store_postgresql_refuses_stops_the_crawl_with_one_line_and_loses_nothing(
    engine: sa.Engine, db_url: str, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    """Not an outage nor a deadlock: the store cannot write (here doc_text is renamed
    away under the crawl). The crawler stops with one line instead of fetching on."""
    _seed(engine, [synthetic.url(p) for p in range(0, 3000, 100)])
    process = _crawler(db_url, webbox.proxy, "--host-delay", "0.2", "--threads", "4")
    _wait_for(engine, "SELECT count(*) FROM doc WHERE state = 2", 10)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("ALTER TABLE doc_text RENAME TO doc_text_away")
            kept = connection.exec_driver_sql("SELECT count(*) FROM doc_text_away").scalar()
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        with engine.begin() as connection:
            connection.exec_driver_sql("ALTER TABLE doc_text_away RENAME TO doc_text")
    assert process.returncode == 2, (out, err)
    message = err.strip().splitlines()[-1]
    assert message.startswith("focuscrawl: error: the crawl stopped: storing pages failed")
    assert "doc_text" in message
    with engine.connect() as connection:
        texts = connection.exec_driver_sql("SELECT count(*) FROM doc_text").scalar()
        fetched = connection.exec_driver_sql("SELECT count(*) FROM doc WHERE state = 2").scalar()
        leases = connection.exec_driver_sql("SELECT count(*) FROM doc_lease").scalar()
    assert texts >= kept > 0 and fetched == texts  # what was stored stays, all of a page
    assert leases == 0 and DocState.LEASED not in states(engine)  # the rest: frontier


def test_four_processes_never_fetch_a_url_twice_nor_break_the_host_delay(
    engine: sa.Engine, db_url: str, webbox: WebBoxThread, synthetic: SyntheticCorpus, tmp_path: Path
) -> None:
    _seed(engine, [synthetic.url(p) for p in range(0, 3000, 300)])
    processes = [
        _crawler(
            db_url,
            webbox.proxy,
            "--host-delay",
            "0.2",
            "--threads",
            "16",
            "--max-pages",
            "60",
            "--quiet",
        )
        for _ in range(4)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert webbox.box.log is not None
    webbox.box.log.flush()
    pages = requested_pages(tmp_path / "requests.log")
    assert len(pages) >= 200 and len(pages) == len(set(pages))
    gaps = host_gaps(tmp_path / "requests.log")
    assert min(gaps) >= 0.19, min(gaps)


def test_postgres_down_for_ten_seconds_crawl_waits_and_resumes(
    tmp_path: Path, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    server = EmbeddedServer(tmp_path / "pg")
    server.up()
    engine = make_engine(server.url())
    try:
        upgrade(engine)
        _seed(engine, [synthetic.url(p) for p in range(0, 3000, 100)])
        config = CrawlConfig(
            mode=Mode.BFS,
            threads=4,
            host_delay=0.05,
            max_pages=400,
            idle_exit_seconds=2.0,
            quiet=True,
            fetch=FetchConfig(proxy=webbox.proxy),
        )
        crawler = Crawler(engine, config)
        result: list[object] = []
        runner = threading.Thread(target=lambda: result.append(crawler.run()))
        runner.start()
        _wait_for(engine, "SELECT count(*) FROM doc WHERE state = 2", 30)
        server.down()
        time.sleep(10)
        server.up()
        runner.join(120)
        assert not runner.is_alive() and result, "the crawler did not come back"
        stats = result[0]
        engine.dispose()
        by_state = states(engine)
        assert DocState.LEASED not in by_state
        assert by_state[DocState.FETCHED] == stats.fetched  # type: ignore[attr-defined]
        assert stats.fetched + stats.failed == 400  # type: ignore[attr-defined]
    finally:
        engine.dispose()
        server.down()


def test_a_crawler_restarted_after_kill_9_crawls_other_hosts_at_once(
    engine: sa.Engine, db_url: str, tmp_path: Path
) -> None:
    """A crawler killed holding site leases leaves them live for up to two minutes. A
    crawler started at once must not spend them waiting: the frontier's top is URLs of
    the dead process's hosts, yet hosts nobody holds have work, and it asks them within
    5 s (it had made no request for 100-113 s)."""
    corpus = SyntheticCorpus(SyntheticParams(pages=40_000, hosts=1_000, seed=7))
    by_host: dict[int, list[int]] = {}
    for page in range(corpus.params.pages):
        by_host.setdefault(corpus.host_of(page), []).append(page)
    heavy = sorted(by_host, key=lambda h: -len(by_host[h]))[:200]
    light = [h for h in by_host if h not in heavy]
    assert len(light) >= 700
    # breadth-first takes seeds in the order they came: every page of the heavy hosts first
    first_seeds = [corpus.url(p) for h in heavy for p in by_host[h]]
    _seed(engine, first_seeds)
    _seed(engine, [corpus.url(by_host[h][0]) for h in light])
    log_path = tmp_path / "restart.log"
    with WebBoxThread(WebBox(corpus, faults=False, log=RequestLog(log_path))) as box:
        # at most 5 URLs of a site in hand (lease 20 s, delay 1 s) and 1,000 in all: the
        # dead process's hosts keep most of their URLs in the frontier, and the hosts
        # after them have never been asked
        dead = _crawler(
            db_url, box.proxy, "--host-delay", "1", "--threads", "16", "--lease-seconds", "20",
            "--max-pages", "1000",
        )  # fmt: skip
        held_hosts = (
            "SELECT count(DISTINCT s.sid) FROM site AS s JOIN doc AS d USING (sid) "
            "WHERE s.lease_until > now() + interval '60 seconds' AND d.state = 0"
        )
        _wait_for(engine, "SELECT count(*) FROM doc WHERE state = 2", 150, timeout=60)
        # killed once it holds enough hosts (a slow machine leases them later)
        _wait_for(engine, held_hosts, 45, timeout=60)
        dead.send_signal(signal.SIGKILL)
        dead.communicate(timeout=10)
        killed = time.time()
        with engine.connect() as connection:
            held = connection.exec_driver_sql(held_hosts).scalar()
        # more hosts than a claim's worth (4 threads: 32), so a crawler that waits for
        # them claims nothing else
        assert held >= 40, f"the killed crawler held {held} hosts with work: no test"
        started = time.time()
        restarted = _crawler(db_url, box.proxy, "--host-delay", "1", "--threads", "4", "--quiet")
        try:
            first = None
            while first is None and time.time() - started < 30:
                time.sleep(0.2)
                assert box.box.log is not None
                box.box.log.flush()
                first = next((when for when, *_ in iter_log(log_path) if when > killed), None)
        finally:
            restarted.kill()
            restarted_out = restarted.communicate(timeout=10)
    assert first is not None, f"the restarted crawler made no request in 30 s: {restarted_out}"
    assert first - started < 5.0, f"its first request came {first - started:.1f} s after its start"
