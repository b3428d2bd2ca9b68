"""Debian's PostgreSQL with Citus, for the tests that need a server other than pgserver's:
TLS (pgserver's PostgreSQL has no SSL support) and Debian's newer minor releases (which
refuse statements PostgreSQL 16.2 allowed). ``scripts/citus-build-ssl`` unpacks it from
Debian's packages and builds Citus into it, once (about 90 s; then cached, and a lock
makes a second caller wait for the first build). The tests that use it run in the Citus
tests' worker (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CITUS_BUILD_SSL = Path(__file__).resolve().parents[2] / "scripts" / "citus-build-ssl"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; under CI=true, fail: there every test must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def debian_bin_or_skip() -> Path:
    """The bin directory of Debian's PostgreSQL 15 with Citus; skipped with a one-line
    reason where it cannot be had, failed under CI=true."""
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            skip_or_fail(f"no {tool}: this test needs Debian's PostgreSQL")
    done = subprocess.run(
        [str(CITUS_BUILD_SSL)],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        skip_or_fail(f"Debian's PostgreSQL with Citus could not be had: {done.stderr.strip()}")
    return Path(lines[-1])
