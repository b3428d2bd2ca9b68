"""A local Citus cluster for a test module: started from citus-build's PostgreSQL,
skipped with a one-line reason without ../shared/tools/citus-build, failed under CI=true."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from focuscrawl.cluster import CITUS_BUILD, LocalCluster, citus_bin_dir


@contextmanager
def local_cluster(home: Path, base_port: int) -> Iterator[str]:
    """A coordinator and two workers under ``home``; yields the coordinator's URL."""
    if not CITUS_BUILD.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no {CITUS_BUILD} to build Citus with")
        pytest.skip(f"no {CITUS_BUILD}: the Citus tests need it")
    cluster = LocalCluster(home, citus_bin_dir(), base_port=base_port)
    try:
        yield cluster.up()
    finally:
        cluster.down()
