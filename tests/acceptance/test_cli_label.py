"""``focuscrawl label``: labelled pages become examples, suggestions, bad input."""

from __future__ import annotations

import signal
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus, write_tree_dir


def test_labels_become_examples_and_the_new_model_rescores(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert (
        cli("taxonomy", "import", str(write_tree_dir(tmp_path / "tree")), env=env).returncode == 0
    )
    assert cli("taxonomy", "mark-good", "topics.sports", env=env).returncode == 0
    assert cli("classify", "train", env=env).returncode == 0
    process, proxy = start_server_process(
        tmp_path, str(write_corpus(tmp_path / "web")), "--no-faults"
    )
    try:
        seeds = [page_url("topics.sports.cycling", 1), page_url("topics.science.biology", 1)]
        assert cli("seed", "add", *seeds, env=env).returncode == 0
        crawl = cli("crawl", "run", "--mode", "soft", "--proxy", proxy, "--host-delay", "0",
                    "--idle-exit", "1", "--quiet", "--max-pages", "40", "--max-backlog", "0",
                    env=env)  # fmt: skip
        assert crawl.returncode == 0, crawl.stderr
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    assert cli("classify", "run", "--once", "--quiet", env=env).returncode == 0

    def count(sql: str) -> int:
        with engine.connect() as c:
            return int(c.exec_driver_sql(sql).scalar_one())

    examples = count("SELECT count(*) FROM example")
    suggested = cli("label", "suggest", "-n", "6", env=env)
    assert suggested.returncode == 0, suggested.stderr
    lines = suggested.stdout.splitlines()
    assert 0 < len(lines) <= 6 and all("http://" in line for line in lines)

    # bad input: one line, nothing stored
    for args, says in (
        (("http://sports.topics.example/nowhere", "--good"), "not a page of this crawl"),
        ((page_url("topics.sports.cycling", 1),), "say --good or --bad"),
        ((page_url("topics.sports.cycling", 1), "--good", "--bad"), "say --good or --bad"),
        (
            (page_url("topics.sports.cycling", 1), "--good", "--category", "topics.science"),
            "is not a good category",
        ),
        (("--good", "-f", str(tmp_path / "missing.txt")), "missing.txt"),
        (("ftp://x.example/", "--bad"), "only http and https"),
    ):
        bad = cli("label", *args, env=env)
        assert bad.returncode == 2 and says in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1
    assert count("SELECT count(*) FROM page_label") == 0
    assert count("SELECT count(*) FROM example") == examples

    # a biology page labelled good (the operator's topic differs from the classifier's
    # view) and a cycling page bad, from a file
    biology, cycling = page_url("topics.science.biology", 1), page_url("topics.sports.cycling", 1)
    (tmp_path / "bad.txt").write_text(f"# pages off my topic\n{cycling}\n")
    good = cli("label", biology, "--good", env=env)
    assert good.returncode == 0, good.stderr
    assert good.stdout.startswith("good  topics.sports.")
    bad = cli("label", "--bad", "-f", str(tmp_path / "bad.txt"), env=env)
    assert bad.returncode == 0 and bad.stdout.startswith("bad   topics.science."), bad.stdout
    assert count("SELECT count(*) FROM page_label") == 2
    assert count("SELECT count(*) FROM example") == examples + 2
    # labelled again, a page keeps one label and one example
    again = cli("label", cycling, "--good", "--category", "topics.sports.cycling", env=env)
    assert again.returncode == 0 and "topics.sports.cycling" in again.stdout
    assert count("SELECT count(*) FROM page_label WHERE good") == 2
    assert count("SELECT count(*) FROM example") == examples + 2
    listed = cli("label", "suggest", "-n", "50", env=env).stdout.split()
    assert cycling not in listed and biology not in listed

    scored = count("SELECT count(*) FROM doc_fetch WHERE model_id IS NOT NULL")
    trained = cli("classify", "train", "--rescore", env=env)
    assert trained.returncode == 0 and f"{scored:,} pages queued" in trained.stdout
    assert count("SELECT count(*) FROM doc_fetch WHERE model_id IS NOT NULL") == 0
    assert cli("classify", "run", "--once", "--quiet", env=env).returncode == 0
    newest = count("SELECT max(model_id) FROM model WHERE kind = 'page'")
    assert count(f"SELECT count(*) FROM doc_fetch WHERE model_id = {newest}") == scored
