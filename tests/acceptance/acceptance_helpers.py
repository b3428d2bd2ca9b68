"""Helpers for acceptance tests (imported by name; pytest puts this folder on sys.path)."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.db.embedded import _bin_dir
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus, write_tree_dir

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
HEADLESS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars")


def browser_or_skip() -> str:
    """A headless-capable chromium; skips without one, fails without one when CI=true."""
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but no headless browser: .ci/run installs Debian's chromium")
    pytest.skip("no chromium to open the page in")


def psql_binary() -> str:
    """psql from the embedded PostgreSQL, else the one on PATH."""
    bundled = _bin_dir() / "psql"
    return str(bundled) if bundled.exists() else (shutil.which("psql") or "psql")


def crawl_sports_in_rounds(cli: Any, env: dict[str, str], tmp_path: Path) -> list[str]:
    """The hand-made topic tree with ``topics.sports`` good and trained, then three soft
    crawls of 15 pages of the topic web from two sports seeds, each scored before the
    next; returns the seeds."""
    tree = write_tree_dir(tmp_path / "tree")
    assert cli("taxonomy", "import", str(tree), env=env).returncode == 0
    assert cli("taxonomy", "mark-good", "topics.sports", env=env).returncode == 0
    assert cli("classify", "train", env=env).returncode == 0
    corpus = write_corpus(tmp_path / "web")
    process, proxy = start_server_process(tmp_path, str(corpus), "--no-faults")
    try:
        seeds = [page_url("topics.sports.cycling", 1), page_url("topics.sports.football", 1)]
        assert cli("seed", "add", *seeds, env=env).returncode == 0
        crawl = ("crawl", "run", "--mode", "soft", "--proxy", proxy, "--host-delay", "0")
        for _ in range(3):
            done = cli(*crawl, "--max-pages", "15", "--idle-exit", "1", "--quiet", env=env)
            assert done.returncode == 0, done.stderr
            assert cli("classify", "run", "--once", "--quiet", env=env).returncode == 0
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    return seeds
