"""The monitoring queries on a crawl of the hand-made topic web, from the CLI."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.classifier import Classifier, train_model
from focuscrawl.cli.monitor import names
from focuscrawl.crawler.config import Mode
from focuscrawl.topics.taxonomy import set_good
from focuscrawl.topics.taxonomy_import import from_directory, store_import
from focuscrawl.web.corpus import StaticCorpus, read_meta
from focuscrawl.webbox import WebBox, WebBoxThread
from tests.classifier.topics import page_url, write_corpus, write_tree_dir
from tests.crawler.conftest import crawl


def _monitor(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "focuscrawl", "--database-url", db_url, "monitor", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_every_monitoring_query_runs_on_a_live_crawl(
    engine: sa.Engine, db_url: str, tmp_path: Path
) -> None:
    assert set(names()) >= {
        "stagnation", "diffusion", "census", "site_rating", "frontier", "fetch_rate", "errors",
        "neglected",
    }  # fmt: skip
    store_import(engine, from_directory(write_tree_dir(tmp_path / "tree")))
    set_good(engine, ["topics.sports"], True)
    train_model(engine)
    directory = write_corpus(tmp_path / "web")
    corpus = StaticCorpus.load(directory, read_meta(directory))
    seeds = [page_url("topics.sports.cycling", 1), "http://missing.topics.example/"]
    with WebBoxThread(WebBox(corpus, faults=False)) as web:
        crawl(engine, web.proxy, seeds, mode=Mode.SOFT, max_pages=30, threads=2)
    Classifier(engine).run(once=True)

    for name in names():
        table = _monitor(db_url, "query", name)
        assert table.returncode == 0, (name, table.stderr)
        header = table.stdout.splitlines()[0]
        as_json = json.loads(_monitor(db_url, "query", name, "--format", "json").stdout)
        as_csv = list(
            csv.reader(io.StringIO(_monitor(db_url, "query", name, "--format", "csv").stdout))
        )
        assert as_csv[0] == header.split()
        assert len(as_json) == len(as_csv) - 1
    with engine.connect() as c:
        fetched = c.exec_driver_sql("SELECT count(*) FROM doc WHERE state = 2").scalar_one()
    assert fetched >= 25
    frontier = json.loads(_monitor(db_url, "query", "frontier", "--format", "json").stdout)
    assert {r["name"]: r["docs"] for r in frontier}["fetched"] == fetched
    census = json.loads(_monitor(db_url, "query", "census", "--format", "json").stdout)
    assert sum(r["pages"] for r in census) == fetched
    assert all(r["category"].startswith("topics.") for r in census)
    errors = json.loads(_monitor(db_url, "query", "errors", "--format", "json").stdout)
    assert [r["error"] for r in errors] == ["dns_error"]  # the unknown host's robots.txt
    stagnation = json.loads(_monitor(db_url, "query", "stagnation", "--format", "json").stdout)
    assert stagnation and stagnation[0]["num_tries"] == 0
    wrong = _monitor(db_url, "query", "nonsense")
    assert wrong.returncode == 2 and "there are: census, dashboard, diffusion" in wrong.stderr


def test_the_live_view_prints_its_numbers(engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    directory = write_corpus(tmp_path / "web")
    corpus = StaticCorpus.load(directory, read_meta(directory))
    with WebBoxThread(WebBox(corpus, faults=False)) as web:
        crawl(engine, web.proxy, [page_url("topics.sports.cycling", 1)], mode=Mode.BFS,
              max_pages=12, threads=2)  # fmt: skip
    shown = _monitor(db_url, "--count", "2", "--interval", "0.2", "--window", "0.1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("focuscrawl monitor") == 2
    assert "pages fetched      12" in shown.stdout and "classifier backlog 12" in shown.stdout
    assert "stagnation alarm" in shown.stdout and "diffusion alarm    no" in shown.stdout
    wrong = _monitor(db_url, "--interval", "0")
    assert wrong.returncode == 2 and "--interval" in wrong.stderr


def test_monitor_list_gives_each_description_whole() -> None:
    import subprocess
    import sys

    listed = subprocess.run(
        [sys.executable, "-m", "focuscrawl", "monitor", "list"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    entries = [e for e in listed.split("\n") if e and not e.startswith(" ")]
    assert len(entries) >= 8
    for entry in listed.replace("\n             ", " ").splitlines():
        assert entry.rstrip().endswith((".", ")")), entry  # no sentence cut off
    assert "from the topic." in listed.replace("\n             ", " ")
