"""``focuscrawl eval`` and ``focuscrawl report`` from the command line, on the
hand-made topic web (its ground truth is truth/labels.tsv)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg2
from psycopg2 import sql
from sqlalchemy.engine import make_url

from focuscrawl.evaluation.truth import load_truth, sweep_topics
from tests.acceptance.conftest import user_environment
from tests.classifier.topics import write_corpus

TOPIC = "topics.sports.cycling"


def _drop_siblings(db_url: str) -> None:
    url = make_url(db_url)
    connection = psycopg2.connect(url.set(drivername="postgresql").render_as_string(False))
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{url.database}_%",)
        )
        for (name,) in cursor.fetchall():
            cursor.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
    connection.close()


def test_eval_four_strategies_robustness_and_the_report(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    corpus = write_corpus(tmp_path / "web")
    out = tmp_path / "eval.json"
    try:
        done = cli(
            "eval", "--corpus", str(corpus), "--topic", TOPIC, "--strategies",
            "bfs,unfocused,soft,hard,soft-perfect,oracle", "--seeds", "4", "--pages", "40",
            "--robustness", "--distill-every", "20", "--out", str(out), env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(out.read_text())
        topic = result["topics"][0]
        assert topic["topic"] == TOPIC and topic["relevant_pages"] == 30 and topic["pages"] == 40
        names = {"bfs", "unfocused", "soft", "hard", "soft-perfect", "oracle"}
        assert set(topic["strategies"]) == names
        for name, s in topic["strategies"].items():
            assert s["fetched"] == 40, name
            assert 0 < s["harvest"] <= 1 and 0 < s["recall"] <= 1
            # recall and harvest count the same relevant pages among the first 40
            assert abs(s["harvest"] * 40 - s["recall"] * 30) < 0.1
            assert s["harvest_curve"][-1][0] == 40
            assert sum(s["authority_distance"].values()) > 0
        assert topic["strategies"]["soft"]["distiller_runs"] >= 1
        # links stay mostly within topics, so every crawl from relevant seeds beats the
        # base rate of 30 relevant pages in 120 (soft against bfs is tested on Wikispeedia)
        assert all(s["harvest"] > 0.3 for s in topic["strategies"].values())
        # the oracle knows every link's label: nothing does better; the perfect classifier
        # scores exactly the truth
        harvests = {name: s["harvest"] for name, s in topic["strategies"].items()}
        assert harvests["oracle"] == max(harvests.values())
        perfect = topic["strategies"]["soft-perfect"]
        assert perfect["mean_estimate"] == perfect["harvest"]
        robust = topic["robustness"]
        assert len(robust["seed_samples"]) == 2
        assert not set(robust["seed_samples"][0]) & set(robust["seed_samples"][1])
        assert 0 <= robust["relevant_url_overlap"][-1][1] <= 1
        assert f"{TOPIC}: 30 relevant pages (N), 40 pages a crawl" in done.stdout
        assert "\n| soft | " in done.stdout
        assert set(result["databases"]) == {f"{TOPIC} {m}" for m in topic["strategies"]}

        # the report of the soft crawl's database, with the evaluation's charts
        soft = make_url(db_url).set(database=result["databases"][f"{TOPIC} soft"])
        page_dir = tmp_path / "report"
        soft_env = {"FOCUSCRAWL_DATABASE_URL": soft.render_as_string(hide_password=False)}
        report = cli("report", "--out", str(page_dir), "--eval", str(out), env=soft_env)
        assert report.returncode == 0, report.stderr
        html = (page_dir / "index.html").read_text()
        assert html.count("<svg") >= 7 and "Top authorities" in html
        assert f"Evaluation: {TOPIC}" in html and "Robustness" in html
        # the strategies compared come first; every chart's title is visible on it
        assert html.index(f"Evaluation: {TOPIC}") < html.index("<h2>Crawl</h2>")
        assert html.count('class="title"') == html.count("<svg")
        # the relevance histogram keeps its empty bins: 11 decades and 9 tenths
        histogram = html[html.index("Relevance distribution") :]
        assert histogram[: histogram.index("</svg>")].count('class="bar"') == 20
        assert json.loads((page_dir / "evaluation.json").read_text()) == result

        no_pages = cli("demo", "--pages", "0", env=env)
        assert no_pages.returncode == 2 and "--pages" in no_pages.stderr
        bad = cli("eval", "--corpus", str(corpus), "--strategies", "bfs,greedy", env=env)
        assert bad.returncode == 2 and "--strategies" in bad.stderr
        missing = cli(
            "report", "--out", str(page_dir), "--eval", str(tmp_path / "no.json"), env=env
        )
        assert missing.returncode == 2 and "--eval" in missing.stderr
    finally:
        _drop_siblings(db_url)


def test_report_escapes_what_pages_and_the_taxonomy_say(
    cli, db_url: str, engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    hostile = '/"><script>alert(1)</script>'
    with engine.begin() as c:
        c.exec_driver_sql(
            "INSERT INTO site (host, bucket) VALUES ('evil.example', host_bucket('evil.example'))"
        )
        c.exec_driver_sql(
            "INSERT INTO doc (oid, bucket, https, path, sid, bytehash, state, relevance) "
            "SELECT url_oid(doc_url(false, host, %(p)s)), bucket, false, %(p)s, sid, 0, 3, 0 "
            "FROM site",
            {"p": hostile},
        )
        c.exec_driver_sql(
            "INSERT INTO doc_fetch (oid, bucket, fetch_seq, error, http_status) "
            "SELECT oid, bucket, 1, '<b>bad</b>', 500 FROM doc"
        )
    done = cli("report", "--out", str(tmp_path / "r"), env={"FOCUSCRAWL_DATABASE_URL": db_url})
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r" / "index.html").read_text()
    assert "<script>" not in html and "<b>bad</b>" not in html and "&lt;b&gt;bad" in html
    assert "No page has been scored" in html and "No distiller run yet" in html


def test_eval_on_a_generated_web(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A generated web labels every page with its topic: training and truth come from it."""
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    made = cli("webbox", "generate", "--pages", "3000", "--hosts", "40", "--name", "gen")
    assert made.returncode == 0, made.stderr
    corpus = tmp_path / "home" / "corpora" / "gen"
    out = tmp_path / "eval.json"
    try:
        done = cli(
            "eval", "--corpus", str(corpus), "--topic", "subject.Science", "--strategies",
            "bfs,soft", "--seeds", "5", "--pages", "60", "--samples", "2", "--out", str(out),
            env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(out.read_text())
        topic = result["topics"][0]
        assert topic["relevant_pages"] > 100 and topic["pages"] == 60
        assert all(s["fetched"] == 60 for s in topic["strategies"].values())
        first, second = topic["seed_samples"]
        assert first == topic["seeds"] and len(second) == 5 and first != second
        for s in topic["strategies"].values():
            per_sample = s["samples"]["harvest"]
            assert len(per_sample) == 2 and s["harvest"] == round(sum(per_sample) / 2, 3)
        assert len(result["databases"]) == 4
        soft = topic["strategies"]["soft"]
        a, b = soft["samples"]["harvest"]
        assert f"| soft | {soft['harvest']:.3f} ({a:.3f} / {b:.3f}) |" in done.stdout
        # no fixed figures of another run beside this one's
        report = cli("report", "--out", str(tmp_path / "report"), "--eval", str(out), env=env)
        assert report.returncode == 0, report.stderr
        html = (tmp_path / "report" / "index.html").read_text()
        assert "Evaluation: subject.Science" in html and "Reference figures" not in html
    finally:
        _drop_siblings(db_url)


def test_report_to_a_place_it_cannot_write_is_one_line(cli, db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    (tmp_path / "a-file").write_text("x")
    for out in ("/proc/forbidden", str(tmp_path / "a-file")):
        done = cli("report", "--out", out, env=env)
        assert done.returncode == 2 and f"--out {out}: cannot write the report" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_report_says_why_an_off_topic_page_is_among_the_authorities(
    cli, db_url: str, engine, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Candidate authorities are a share of the fetched pages by relevance, so with few
    relevant pages an off-topic one can top the list; the report says so."""
    with engine.begin() as c:
        c.exec_driver_sql(
            "INSERT INTO site (host, bucket) "
            "SELECT h, host_bucket(h) FROM unnest(ARRAY['a.example', 'b.example']) AS t(h)"
        )
        c.exec_driver_sql(
            "INSERT INTO doc (oid, bucket, https, path, sid, bytehash, state, relevance) "
            "SELECT url_oid(doc_url(false, host, '/')), bucket, false, '/', sid, 0, 2, ln(0.001) "
            "FROM site"
        )
        c.exec_driver_sql("INSERT INTO distill_run (rho, finished_at) VALUES (0.15, now())")
        c.exec_driver_sql(
            "INSERT INTO hits_score (run_id, oid, bucket, hub, authority) "
            "SELECT (SELECT max(run_id) FROM distill_run), oid, bucket, 0.5, 0.5 FROM doc"
        )
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    done = cli("report", "--out", str(tmp_path / "r"), env=env)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r" / "index.html").read_text()
    assert "Top authorities" in html
    assert "Candidate authorities are the top 15% of fetched pages by relevance" in html


def test_a_topic_from_examples_needs_a_background_and_distant_seeds_are_not_relevant(
    cli, db_url: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """On a web whose categories are one level deep the background is built from those
    categories; with too few of them outside the topic, no background can be: one line,
    exit 2. On the topic web, seeds 2 links from cycling are none of cycling's."""
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    flat = write_corpus(tmp_path / "flat")
    labels = flat / "truth" / "labels.tsv"
    rows = [line.split("\t") for line in labels.read_text().splitlines()]

    def flatten(name: Callable[[str], str]) -> None:
        labels.write_text("".join(f"{url}\ttopics.{name(c)}\n" for url, c in rows))
        leaves = sorted({f"topics.{name(c)}" for _, c in rows})
        (flat / "truth" / "taxonomy.txt").write_text("\n".join(leaves) + "\n")

    out = tmp_path / "eval.json"
    try:
        flatten(lambda category: category.rsplit(".", 1)[1])  # cycling, football, ...
        flat_run = cli(
            "eval", "--corpus", str(flat), "--topic", "topics.cycling", "--taxonomy", "examples",
            "--strategies", "soft", "--seeds", "4", "--pages", "20", "--quiet", "--out",
            str(out), env=env, timeout=600,
        )  # fmt: skip
        assert flat_run.returncode == 0, flat_run.stderr
        assert json.loads(out.read_text())["topics"][0]["strategies"]["soft"]["attempts"] == 20
        flatten(lambda category: "cycling" if category.endswith(".cycling") else "other")
        refused = cli(
            "eval", "--corpus", str(flat), "--topic", "topics.cycling", "--taxonomy", "examples",
            "--seeds", "4", "--pages", "20", "--quiet", "--out", str(out), env=env, timeout=600,
        )  # fmt: skip
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.count("\n") == 1 and "--taxonomy examples" in refused.stderr

        corpus = write_corpus(tmp_path / "web")
        done = cli(
            "eval", "--corpus", str(corpus), "--topic", TOPIC, "--taxonomy", "examples",
            "--strategies", "bfs,soft,soft-perfect", "--seeds", "4", "--pages", "30",
            "--budgets", "1,2", "--seed-distance", "2", "--out", str(out), env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        topic = json.loads(out.read_text())["topics"][0]
        relevant = {
            line.split("\t")[0]
            for line in (corpus / "truth" / "labels.tsv").read_text().splitlines()
            if line.endswith("\t" + TOPIC)
        }
        assert len(topic["seeds"]) == 4 and not set(topic["seeds"]) & relevant
        for s in topic["strategies"].values():
            assert s["attempts"] == 60 and s["failed_attempts"] == 0
            assert 0 <= s["verdict_precision"] <= 1 and s["recall_2n"] >= s["recall"]
            assert s["selection_ms_per_page"] > 0  # the classifier scored its pages
        # the yardstick scores by the truth in a tree without the corpus's categories
        perfect = topic["strategies"]["soft-perfect"]
        assert perfect["recall_2n"] > 0
        assert perfect["verdict_precision"] == 1.0 and perfect["verdict_recall"] == 1.0

        # the background topic new ships, as on a web it was not made from
        wrong = cli("eval", "--corpus", str(corpus), "--background", "shipped", env=env)
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
        assert "--taxonomy examples" in wrong.stderr
        shipped = cli(
            "eval", "--corpus", str(corpus), "--topic", TOPIC, "--taxonomy", "examples",
            "--background", "shipped", "--strategies", "soft", "--seeds", "4", "--pages", "20",
            "--quiet", "--out", str(out), env=env, timeout=600,
        )  # fmt: skip
        assert shipped.returncode == 0, shipped.stderr
        result = json.loads(out.read_text())
        assert (result["taxonomy"], result["background"]) == ("examples", "shipped")
        assert result["topics"][0]["strategies"]["soft"]["attempts"] == 20
    finally:
        _drop_siblings(db_url)


def test_a_sweep_of_topics_smaller_than_its_seeds_stops_before_it_crawls(
    cli, db_url: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """It used to crawl every larger topic first (six minutes of Wikispeedia at
    --min-pages 5) and then fail at the first one too small, writing nothing."""
    made = cli("webbox", "generate", "--pages", "300", "--hosts", "10", "--name", "tiny")
    assert made.returncode == 0, made.stderr
    corpus = tmp_path / "home" / "corpora" / "tiny"
    done = cli("eval", "--corpus", str(corpus), "--sweep", "--min-pages", "1", "--seeds", "10",
               env={"FOCUSCRAWL_DATABASE_URL": db_url})  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "--min-pages 10 or more" in done.stderr
    assert "preparing" not in done.stdout + done.stderr
    far = cli("eval", "--corpus", str(corpus), "--sweep", "--min-pages", "10", "--seeds", "1",
              "--seed-distance", "40", env={"FOCUSCRAWL_DATABASE_URL": db_url})  # fmt: skip
    assert far.returncode == 2 and "40 links from its nearest page" in far.stderr, far.stderr
    assert "preparing" not in far.stdout + far.stderr


def test_a_sweep_stopped_part_way_keeps_the_topics_it_measured(
    cli, db_url: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A sweep stopped after some topics (Ctrl-C here; a failure alike) used to write
    nothing: --out is written after each topic, marked partial until the sweep ends.
    (Three samples a topic: the rest of the sweep lasts about 50 s after the first
    topic is written, so that a loaded machine still interrupts it part-way.)"""
    made = cli("webbox", "generate", "--pages", "600", "--hosts", "10", "--name", "small")
    assert made.returncode == 0, made.stderr
    corpus = tmp_path / "home" / "corpora" / "small"
    topics = sweep_topics(load_truth(corpus), 10)
    assert len(topics) >= 3
    out = tmp_path / "sweep.json"
    environment = user_environment(tmp_path / "home", {"FOCUSCRAWL_DATABASE_URL": db_url})
    sweep = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "eval", "--corpus", str(corpus), "--sweep",
         "--min-pages", "10", "--seeds", "3", "--samples", "3", "--strategies", "bfs",
         "--out", str(out), "--quiet"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl-C as at a terminal: a test run started in the background by a script
        # (as `cmd &`) ignores SIGINT, and its children would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not out.exists() and sweep.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sweep.poll() is None, sweep.communicate()
        sweep.send_signal(signal.SIGINT)
        sweep.communicate(timeout=120)
    finally:
        sweep.kill()
        _drop_siblings(db_url)
    assert sweep.returncode != 0
    kept = json.loads(out.read_text())
    assert kept["partial"] is True
    assert 1 <= len(kept["topics"]) < len(topics)
    assert [t["topic"] for t in kept["topics"]] == topics[: len(kept["topics"])]
    assert kept["topics"][0]["strategies"]["bfs"]["fetched"] > 0
    assert not list(tmp_path.glob("*.part"))
