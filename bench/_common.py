"""What the benchmarks share: a scratch database, timing helpers and JSON output."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from focuscrawl.crawler.claims import claim_params as crawler_claim_params
from focuscrawl.db.database import execute, make_engine
from focuscrawl.db.embedded import EmbeddedServer
from focuscrawl.db.migrate import upgrade
from focuscrawl.db.queries import queries
from focuscrawl.db.shards import ShardMap
from focuscrawl.webbox.process import start_server_process

RESULTS = Path(__file__).resolve().parent / "results"

#: the heap pages the next %(claims)s claims of %(batch)s would each touch, on average,
#: if the frontier stood still: how scattered the URLs a claim takes lie
HEAP_PAGES_PER_CLAIM = """
SELECT coalesce(avg(pages), 0) FROM (
    SELECT count(DISTINCT (ctid::text::point)[0]) AS pages
    FROM (
        SELECT ctid, (row_number() OVER (ORDER BY relevance DESC, priority, bytehash) - 1)
                     / %(batch)s AS claim
        FROM doc WHERE state = 0 AND num_tries = 0
        ORDER BY relevance DESC, priority, bytehash
        LIMIT %(claims)s * %(batch)s
    ) AS next_urls
    GROUP BY claim
) AS claims
"""


#: the lines ``crawl run`` and ``classify run`` print at their end (not with --quiet):
#: the pages they fetched or scored, then their CPU a page by stage (focuscrawl.monitor.cpu)
_STAGE_CPU = re.compile(
    r"^(?:fetched|scored) (\d+)\D[^\n]*\nCPU a page, ms: (.*); ([0-9.]+) in all$", re.M
)


def process_log(directory: Path, name: str) -> tuple[Path, Any]:
    """A file for one ``crawl run`` or ``classify run``'s output (run without --quiet, so
    that it prints its CPU by stage), and the handle to give ``subprocess.Popen`` as
    stdout and stderr."""
    path = directory / f"{name}.log"
    return path, path.open("w")


def finish_logged(
    process: subprocess.Popen[bytes], log: Path, out: Any, ok: tuple[int, ...] = (0,)
) -> None:
    """Wait for a process started with ``process_log``'s handle, close the handle, and
    print the tail of its log when it exited with a code not in ``ok``."""
    process.wait()
    out.close()
    if process.returncode not in ok:
        print(log.read_text(errors="replace")[-2000:], file=sys.stderr)


def stage_cpu(logs: list[Path]) -> dict[str, float]:
    """The CPU a page by stage, ms, of processes of one kind, from what each printed at
    its end, weighted by the pages each fetched or scored ("in all": each process's CPU,
    start-up included); empty when none printed it."""
    totals: dict[str, float] = {}
    pages = 0
    for log in logs:
        found = _STAGE_CPU.findall(log.read_text(errors="replace"))
        if not found:
            continue
        count, stages, in_all = found[-1]
        pages += int(count)
        parts = [part.rsplit(" ", 1) for part in stages.split(", ")]
        for stage, ms in [*parts, ("in all", in_all)]:
            totals[stage] = totals.get(stage, 0.0) + float(ms) * int(count)
    return {stage: round(total / pages, 3) for stage, total in totals.items()} if pages else {}


def claim_params(batch: int, lease_seconds: float = 300.0) -> dict[str, Any]:
    """``claim_batch``'s parameters as a crawler on one server passes them with no host
    delay: every bucket, no site skipped, no bound per site (so no read past the batch)."""
    buckets = list(ShardMap.single().groups[0])
    return crawler_claim_params(batch, lease_seconds) | {"buckets": buckets}


@contextmanager
def scratch_engine(database_url: str | None = None) -> Iterator[Engine]:
    """A migrated database nobody else uses: a throw-away embedded server unless a URL is given."""
    if database_url:
        engine = make_engine(database_url)
        upgrade(engine)
        yield engine
        engine.dispose()
        return
    with tempfile.TemporaryDirectory(prefix="focuscrawl-bench-") as home:
        server = EmbeddedServer(Path(home))
        server.up()
        engine = make_engine(server.url())
        try:
            upgrade(engine)
            yield engine
        finally:
            engine.dispose()
            server.down()


@contextmanager
def citus_cluster(shards: int = 8, base_port: int = 9720) -> Iterator[str]:
    """A throw-away local Citus cluster (a coordinator and two workers), migrated and
    distributed as ``db distribute --shards`` lays it out; its coordinator's URL."""
    from focuscrawl.db.cluster import LocalCluster, citus_bin_dir
    from focuscrawl.db.distribute import distribute

    with tempfile.TemporaryDirectory(prefix="focuscrawl-bench-citus-") as home:
        cluster = LocalCluster(Path(home), citus_bin_dir(), base_port=base_port)
        url = cluster.up()
        try:
            engine = make_engine(url)
            upgrade(engine)
            distribute(engine, shards)
            engine.dispose()
            yield url
        finally:
            cluster.down()


def percentiles(samples_s: list[float]) -> dict[str, float]:
    ordered = sorted(samples_s)
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "p90_ms": ordered[int(0.9 * (len(ordered) - 1))] * 1e3,
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1e3,
        "max_ms": ordered[-1] * 1e3,
    }


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def write_results(name: str, results: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {
        "benchmark": name,
        "machine": {"cpus": _cpus(), "python": platform.python_version()},
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **results,
    }
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def _cpus() -> int:
    return os.cpu_count() or 0


def proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds used) of a live process, from /proc; None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pid(connection: Any) -> int | None:
    """The PostgreSQL postmaster's pid (the parent of this connection's backend), when
    the server runs on this machine."""
    backend = int(connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
    stat = proc_stat(backend)
    return None if stat is None else stat[0]


def citus_worker_pids(connection: Any) -> dict[int, str]:
    """The postmasters of a Citus coordinator's workers on this machine, as
    "postgres workers" for :class:`CpuMeter`; none on one server."""
    if not execute(connection, queries["citus_installed"]).scalar_one():
        return {}
    # a long-lived process of each worker, whose parent is its postmaster (the backend
    # that runs the command may be gone by the time /proc is read)
    backends = connection.exec_driver_sql(
        "SELECT result FROM run_command_on_workers($$SELECT pid FROM pg_stat_activity "
        "WHERE backend_type = 'checkpointer'$$) WHERE success"
    ).scalars()
    stats = [proc_stat(int(pid)) for pid in backends]
    return {stat[0]: "postgres workers" for stat in stats if stat is not None}


class CpuMeter:
    """CPU seconds used while it runs, by role, read from /proc twice a second.

    ``roles()`` names the processes to watch (pid -> role); the children of
    ``postmaster`` (PostgreSQL's backends and workers) count as "postgres". A process
    counts until its last reading before it exits. Linux only: elsewhere it reports
    nothing.
    """

    def __init__(
        self,
        roles: Callable[[], dict[int, str]],
        postmaster: int | None,
        more_postmasters: dict[int, str] | None = None,
    ) -> None:
        self._roles = roles
        #: each postmaster whose children count, with their role (a Citus worker's too)
        self._postmasters = {
            **({} if postmaster is None else {postmaster: "postgres"}),
            **(more_postmasters or {}),
        }
        self._first: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _watched(self) -> dict[int, str]:
        watched = dict(self._roles())
        if self._postmasters:
            watched.update(self._postmasters)
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    stat = proc_stat(int(entry.name))
                    if stat is not None and stat[0] in self._postmasters:
                        watched[int(entry.name)] = self._postmasters[stat[0]]
        return watched

    def _read(self, first: bool) -> None:
        for pid, role in self._watched().items():
            stat = proc_stat(pid)
            if stat is None:
                continue
            if first:
                self._first[pid] = stat[1]
            self._last[pid] = (role, stat[1])

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._read(first=False)

    def __enter__(self) -> CpuMeter:
        if Path("/proc/self/stat").exists():
            self._read(first=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()
            self._read(first=False)

    def seconds(self) -> dict[str, float]:
        """CPU seconds by role since the meter started."""
        used: dict[str, float] = {}
        for pid, (role, total) in self._last.items():
            used[role] = used.get(role, 0.0) + total - self._first.get(pid, 0.0)
        return {role: round(value, 1) for role, value in sorted(used.items())}


@contextmanager
def served_web(pages: int, hosts: int, prefix: str) -> Iterator[tuple[str, int]]:
    """A generated web (seed 1, ``pages`` on ``hosts``) served by a web-in-a-box
    subprocess with no faults, from a throw-away home: its proxy URL and process id."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        cli = [sys.executable, "-m", "focuscrawl", "--home", tmp]
        generate = ["webbox", "generate", "--pages", str(pages), "--hosts", str(hosts)]
        subprocess.run([*cli, *generate, "--seed", "1"], check=True, capture_output=True)
        server, proxy = start_server_process(Path(tmp), "synthetic", "--no-faults")
        try:
            yield proxy, server.pid
        finally:
            server.terminate()
            server.communicate()
