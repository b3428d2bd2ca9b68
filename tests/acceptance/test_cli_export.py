"""``focuscrawl export`` on a crawl of the hand-made topic web: every kind and format,
and bad input that writes nothing."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from acceptance_helpers import crawl_sports_in_rounds  # type: ignore[import-not-found]

from focuscrawl.monitor.export import export


def test_export_every_kind_as_jsonl_and_csv(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    seeds = crawl_sports_in_rounds(cli, env, tmp_path)
    assert cli("distill", "run", "--share", "0.5", env=env).returncode == 0

    with engine.connect() as c:
        tried = c.exec_driver_sql("SELECT count(*) FROM doc_fetch").scalar_one()
        # a relevant page that is mostly links (an index of the topic's pages) is a hub
        # on the topic, not a page of it: --what relevant leaves it out
        hub = c.exec_driver_sql(
            "UPDATE doc_fetch SET link_share = 0.9 WHERE oid = (SELECT f.oid FROM doc_fetch "
            "AS f JOIN doc AS d USING (oid) WHERE f.model_id IS NOT NULL "
            "AND d.relevance >= ln(0.5) ORDER BY f.fetch_seq DESC LIMIT 1) RETURNING oid"
        ).scalar_one()
        c.commit()
        relevant = c.exec_driver_sql(
            "SELECT count(*) FROM doc_fetch AS f JOIN doc AS d USING (oid) "
            "WHERE f.model_id IS NOT NULL AND d.relevance >= ln(0.5) "
            "AND coalesce(f.link_share, 0) < 0.5"
        ).scalar_one()
        hub_url = c.exec_driver_sql(
            "SELECT doc_url(d.https, s.host, d.path) FROM doc AS d JOIN site AS s USING (sid) "
            f"WHERE d.oid = {hub}"
        ).scalar_one()
        authorities = c.exec_driver_sql(
            "SELECT count(*) FROM hits_score WHERE authority > 0 "
            "AND run_id = (SELECT max(run_id) FROM distill_run)"
        ).scalar_one()
    assert 0 < relevant < tried and authorities > 0

    # fetched, JSON lines to standard output: every page tried, in fetch order
    fetched = cli("export", "--what", "fetched", "--format", "jsonl", env=env)
    assert fetched.returncode == 0, fetched.stderr
    rows = [json.loads(line) for line in fetched.stdout.splitlines()]
    assert len(rows) == tried
    assert set(rows[0]) == {
        "url", "title", "relevance", "class", "fetched_at", "status", "error", "hub", "authority",
        "link_share",
    }  # fmt: skip
    assert rows[0]["url"] in seeds and rows[0]["status"] == 200
    # the crawler measured each fetched page's links' share of its text
    pages = [r for r in rows if r["status"] == 200]
    assert pages and all(0.0 <= r["link_share"] < 0.5 for r in pages if r["url"] != hub_url)
    assert [r["link_share"] for r in rows if r["url"] == hub_url] == [pytest.approx(0.9)]
    assert all(r["class"].startswith("topics.") for r in rows if r["relevance"] is not None)
    assert any(r["authority"] for r in rows) and any(r["hub"] for r in rows)

    # relevant, CSV to a file: R at least 0.5 by default, and --min-relevance
    out = tmp_path / "relevant.csv"
    done = cli("export", "--what", "relevant", "--format", "csv", "--out", str(out), env=env)
    assert done.returncode == 0 and f"wrote {relevant:,} rows" in done.stderr
    with out.open(newline="") as stream:
        table = list(csv.DictReader(stream))
    assert len(table) == relevant and all(float(r["relevance"]) >= 0.5 for r in table)
    assert hub_url not in {r["url"] for r in table}
    assert all(r["class"].startswith("topics.sports") for r in table)
    everything = cli("export", "--min-relevance", "0", env=env).stdout.splitlines()
    assert len(everything) == tried - 1  # every page but the one that is mostly links
    assert hub_url not in {json.loads(line)["url"] for line in everything}

    # authorities and hubs of the newest run, best first
    listed = [
        json.loads(x)
        for x in cli("export", "--what", "authorities", env=env).stdout.split("\n")
        if x
    ]
    assert len(listed) == authorities
    scores = [r["authority"] for r in listed]
    assert scores == sorted(scores, reverse=True) and not any(math.isnan(s) for s in scores)
    hubs = [json.loads(x) for x in cli("export", "--what", "hubs", env=env).stdout.split("\n") if x]
    assert hubs and all(r["hub"] > 0 for r in hubs)

    # bad input: one line, exit 2, nothing written
    for args, says in (
        (("--what", "everything"), "--what 'everything'"),
        (("--format", "xml"), "--format 'xml'"),
        (("--min-relevance", "2"), "--min-relevance 2"),
        (("--out", "/proc/forbidden/out.jsonl"), "cannot write /proc/forbidden/out.jsonl"),
        (("--out", str(tmp_path)), f"cannot write {tmp_path}"),
    ):
        bad = cli("export", *args, env=env)
        assert bad.returncode == 2 and says in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1 and bad.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_an_export_killed_midway_leaves_a_file_the_next_export_removes(
    db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:
    """kill -9 in the middle of writing left ``.NAME.XXXX`` (7.5 MB in a real crawl) for
    good: the next export to the same file removes what a dead export left, and nothing
    a running one is writing."""
    out = tmp_path / "fetched.jsonl"
    writer = (
        "import os, signal, sys\n"
        "from focuscrawl.monitor import export as module\n"
        "from focuscrawl.db.database import make_engine\n"
        "def write(rows, fmt, stream):\n"
        '    stream.write(\'{"url": "half a row\')\n'
        "    stream.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "module._write = write\n"
        "module.export(make_engine(sys.argv[1]), 'fetched', 'jsonl', module.Path(sys.argv[2]))\n"
    )
    killed = subprocess.run([sys.executable, "-c", writer, db_url, str(out)], timeout=60)
    assert killed.returncode == -signal.SIGKILL
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".fetched.jsonl.") and left.stat().st_size > 0
    running = tmp_path / f".fetched.jsonl.{os.getpid()}.abcdefgh.partial"
    running.write_text("a live export's rows")

    assert export(engine, "fetched", "jsonl", out) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [running.name, "fetched.jsonl"]
