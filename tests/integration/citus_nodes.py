"""A local Citus cluster for a test module: started from citus-build's PostgreSQL,
skipped with a one-line reason without ../shared/tools/citus-build, failed under CI=true;
and the command line run against it as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from focuscrawl.db.cluster import CITUS_BUILD, LocalCluster, citus_bin_dir


@contextmanager
def running_cluster(home: Path, base_port: int) -> Iterator[LocalCluster]:
    """A coordinator and two workers under ``home``, up."""
    if not CITUS_BUILD.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no {CITUS_BUILD} to build Citus with")
        pytest.skip(f"no {CITUS_BUILD}: the Citus tests need it")
    cluster = LocalCluster(home, citus_bin_dir(), base_port=base_port)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


@contextmanager
def local_cluster(home: Path, base_port: int) -> Iterator[str]:
    """A coordinator and two workers under ``home``; yields the coordinator's URL."""
    with running_cluster(home, base_port) as cluster:
        yield cluster.url()


def cli_environment(url: str, home: Path) -> dict[str, str]:
    """The environment a user's ``focuscrawl`` commands run in against the cluster at
    ``url``, with ``home`` as their home (nothing of the test runner's own settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env.update({"FOCUSCRAWL_DATABASE_URL": url, "FOCUSCRAWL_HOME": str(home)})
    return env


def focuscrawl(env: dict[str, str], *args: str) -> str:
    """Run ``focuscrawl ARGS...`` as a user does; its output, after it exited 0."""
    done = subprocess.run(
        [sys.executable, "-m", "focuscrawl", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"focuscrawl {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout
