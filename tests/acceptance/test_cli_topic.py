"""``focuscrawl topic new``: a topic from a handful of examples, in the shipped
background taxonomy; then a focused crawl of it; and bad examples refused."""

from __future__ import annotations

import signal
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.topics.background import load_background
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


def test_a_topic_from_examples_then_a_focused_crawl(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    corpus = write_corpus(tmp_path / "web")
    process, proxy = start_server_process(tmp_path, str(corpus), "--no-faults")
    env["FOCUSCRAWL_PROXY"] = proxy
    examples = tmp_path / "mine"
    examples.mkdir()
    (examples / "notes.txt").write_text("bike pedal saddle wheel tour ride gear cyclist peloton")

    def count(sql: str) -> int:
        with engine.connect() as c:
            return int(c.exec_driver_sql(sql).scalar_one())

    try:
        # bad examples: one line each, nothing stored
        (tmp_path / "photo.html").write_bytes(PNG)
        (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4\n")
        for args, says in (
            (("cycling", "--good", str(tmp_path / "photo.html")), "not HTML or text (image/png)"),
            (("cycling", "--good", str(tmp_path / "paper.pdf")), "not HTML or text (.html"),
            (("cycling", "--good", str(tmp_path / "nowhere")), "no such file, directory"),
            (("cycling", "--good", "http://sports.topics.example/none"), "could not fetch it"),
            (("my topic", "--good", str(examples)), "topic name 'my topic'"),
            (("Science", "--good", str(examples)), "is a background category"),
        ):
            bad = cli("topic", "new", *args, env=env)
            assert bad.returncode == 2 and says in bad.stderr, bad.stderr
            assert len(bad.stderr.strip().splitlines()) == 1
        assert count("SELECT count(*) FROM taxonomy") == 0

        good = [page_url("topics.sports.cycling", i) for i in (1, 2, 3)]
        made = cli("topic", "new", "cycling", *(f"--good={u}" for u in good),
                   "--good", str(examples), "--bad", page_url("topics.sports.football", 1),
                   "--seed", env=env)  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert "topic web.cycling: 4 good and 1 bad examples" in made.stdout
        assert "seeds added:" in made.stdout and good[0] in made.stdout
        categories = len(load_background()) + 2  # with cycling and cycling_not
        assert count("SELECT count(*) FROM taxonomy WHERE kcid > 0") >= categories
        assert count("SELECT count(*) FROM taxonomy WHERE good = 1 AND kcname = 'cycling'") == 1
        assert count("SELECT count(*) FROM model WHERE kind = 'page'") == 1
        assert "relevance calibrated on the examples" in made.stdout
        calibrated = (
            "SELECT count(*) FROM model WHERE kind = 'page' AND model_id = "
            "(SELECT max(model_id) FROM model WHERE kind = 'page') "
            "AND params::jsonb ? 'calibration'"
        )
        assert count(calibrated) == 1
        # a retraining keeps the calibration unless told not to
        for args, held in (((), 1), (("--no-calibrate",), 0), (("--calibrate",), 1)):
            trained = cli("classify", "train", *args, env=env)
            assert trained.returncode == 0, trained.stderr
            assert ("relevance calibrated on 4 left-out" in trained.stdout) == bool(held)
            assert count(calibrated) == held
        again = cli("topic", "new", "cycling", "--good", str(examples), env=env)
        assert again.returncode == 2 and "--replace" in again.stderr

        crawl = cli("crawl", "run", "--host-delay", "0", "--idle-exit", "1", "--quiet",
                    "--max-pages", "30", "--max-backlog", "0", env=env)  # fmt: skip
        assert crawl.returncode == 0, crawl.stderr
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    assert cli("classify", "run", "--once", "--quiet", env=env).returncode == 0
    with engine.connect() as c:
        rows = c.exec_driver_sql(
            "SELECT d.url, exp(d.relevance) AS r FROM doc AS d JOIN doc_fetch AS f USING (oid) "
            "WHERE f.model_id IS NOT NULL AND f.cid IS NOT NULL"
        ).all()
    cycling = [r.r for r in rows if "/cycling/" in r.url]
    other = [r.r for r in rows if "/cycling/" not in r.url]
    # the classifier made of four examples tells the topic's pages from the rest
    assert cycling and other
    assert sum(cycling) / len(cycling) > 0.5 > sum(other) / len(other)
    # a calibrated R needs the pages' lengths: not rescored in SQL, retrained instead
    rescored = cli("classify", "rescore", env=env)
    assert rescored.returncode == 2 and "classify train --rescore" in rescored.stderr


def test_the_backgrounds_own_category_of_the_topic_is_left_out(
    cli, db_url: str, engine: sa.Engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    examples = tmp_path / "storms"
    examples.mkdir()
    for n, (title, text) in enumerate(load_background()["Geography.Storms"][:5]):
        (examples / f"{n}.txt").write_text(f"{title}\n{text}")

    def storms_nodes() -> int:
        with engine.connect() as c:
            sql = "SELECT count(*) FROM taxonomy WHERE kcname = 'Storms'"
            return int(c.exec_driver_sql(sql).scalar_one())

    made = cli("topic", "new", "weather", "--good", str(examples), env=env)
    assert made.returncode == 0, made.stderr
    assert "left out the background's Geography.Storms" in made.stdout
    assert storms_nodes() == 0
    kept = cli("topic", "new", "weather", "--good", str(examples), "--replace",
               "--keep-background", env=env)  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert "left out the background" not in kept.stdout
    assert storms_nodes() == 1
