"""The taxonomy and the classifier from the command line: a hand-made tree, and the
Wikispeedia taxonomy against the flat baseline."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from focuscrawl.web.corpus import StaticCorpus, read_meta
from focuscrawl.webbox.process import start_server_process
from tests.classifier.topics import page_url, write_corpus, write_tree_dir


def test_hand_made_tree_from_import_to_evaluation(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    tree = write_tree_dir(tmp_path / "tree")
    corpus = write_corpus(tmp_path / "web")

    done = cli("taxonomy", "import", str(tree), env=env)
    assert done.returncode == 0, done.stderr
    assert "imported 7 categories, 24 examples" in done.stdout
    again = cli("taxonomy", "import", str(tree), env=env)
    assert again.returncode == 2 and "--replace" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1

    marked = cli("taxonomy", "mark-good", "topics.sports", env=env)
    assert marked.returncode == 0 and "good: topics.sports" in marked.stdout
    wrong = cli("taxonomy", "mark-good", "topics.sports.rowing", env=env)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        "focuscrawl: error: unknown category 'topics.sports.rowing': "
        "'topics.sports' has no child 'rowing'"
    )
    shown = cli("taxonomy", "show", env=env).stdout.splitlines()
    assert "  sports  #1  12 examples [good]" in shown
    assert "    cycling  #2  6 examples (good)" in shown

    untrained = cli("classify", "run", "--once", env=env)
    assert untrained.returncode == 2 and "classify train" in untrained.stderr
    trained = cli("classify", "train", env=env)
    assert trained.returncode == 0, trained.stderr
    assert "model 1: 7 nodes" in trained.stdout
    info = cli("classify", "info", env=env).stdout
    assert "model 1 (in use)" in info
    # text examples have no links between them: the link learner waits for the crawl
    assert "link learner: no version yet" in info and "frontier estimate soft" in info

    page = tmp_path / "page.html"
    page.write_text("<title>x</title><p>the bike and the saddle, a pedal and a wheel</p>")
    suggested = cli("taxonomy", "suggest", str(page), env=env)
    assert suggested.returncode == 0, suggested.stderr
    assert "topics.sports.cycling  Pr=" in suggested.stdout

    process, proxy = start_server_process(tmp_path, str(corpus), "--no-faults")
    try:
        seeds = [page_url("topics.sports.cycling", 1), page_url("topics.sports.football", 2)]
        assert cli("seed", "add", *seeds, env=env).returncode == 0
        crawl = ("crawl", "run", "--mode", "soft", "--proxy", proxy, "--host-delay", "0")
        done = cli(*crawl, "--max-pages", "30", "--idle-exit", "1", "--quiet", env=env)
        assert done.returncode == 0, done.stderr
        via_proxy = cli("taxonomy", "suggest", seeds[0], "--proxy", proxy, env=env)
        assert "topics.sports.cycling  Pr=" in via_proxy.stdout, via_proxy.stderr
        # with no proxy it fetches as the crawler does: no loopback or private address
        direct = cli("taxonomy", "suggest", f"{proxy}/index.html", env=env)
        assert direct.returncode == 2 and "private_address" in direct.stderr, direct.stderr
        assert len(direct.stderr.strip().splitlines()) == 1
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)

    scored = cli("classify", "run", "--once", env=env)
    assert scored.returncode == 0, scored.stderr
    assert "scored 30 pages" in scored.stdout
    cpu = scored.stdout.strip().splitlines()[-1]  # where its CPU went, ms a page
    stages = cpu.removeprefix("CPU a page, ms: ").partition("; ")[0].split(", ")
    assert [stage.rsplit(" ", 1)[0] for stage in stages] == [
        "claim", "score", "estimates", "learn", "frontier", "self_train"
    ], cpu  # fmt: skip
    info = cli("classify", "info", env=env).stdout
    assert "backlog: 0 " in info
    # crawl run --mode soft set the crawl's estimate; the crawl's links taught a version
    assert "frontier estimate soft" in info and "link learner: " in info, info
    assert cli("taxonomy", "unmark", "topics.sports", env=env).returncode == 0
    assert cli("taxonomy", "mark-good", "topics.science.biology", env=env).returncode == 0
    rescored = cli("classify", "rescore", env=env)
    assert rescored.returncode == 0 and "rescored 30 pages" in rescored.stdout

    evaluated = cli("classify", "evaluate", "--corpus", str(corpus), "--json", env=env)
    assert evaluated.returncode == 0, evaluated.stderr
    result = json.loads(evaluated.stdout)
    assert result["documents"] == 120  # the examples came from elsewhere: nothing to skip
    assert result["hierarchical"]["leaf"] >= 0.9
    [topic] = result["topics"]
    assert topic["good"] == ["topics.science.biology"] and topic["relevant"] == 30
    assert topic["hierarchical"]["f1"] >= 0.9
    table = cli("classify", "evaluate", "--corpus", str(corpus), env=env).stdout
    assert "hierarchical" in table and "flat NB" in table


def test_wikispeedia_hierarchy_is_not_worse_than_flat(  # type: ignore[no-untyped-def]
    cli, db_url: str, wikispeedia_home: Path
) -> None:
    env = {"FOCUSCRAWL_DATABASE_URL": db_url, "FOCUSCRAWL_HOME": str(wikispeedia_home)}
    imported = cli(
        "taxonomy", "import", "--from-webbox", "wikispeedia", "--train-fraction", "0.3",
        "--seed", "1", env=env,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert cli("classify", "train", env=env, timeout=300).returncode == 0
    topics = ["subject.Science.Biology", "subject.Science.Chemistry"]
    args = [a for t in topics for a in ("--topic", t)]
    evaluated = cli("classify", "evaluate", *args, "--json", env=env, timeout=300)
    assert evaluated.returncode == 0, evaluated.stderr
    result = json.loads(evaluated.stdout)
    # the 30% sample is left out: 4,598 labelled pages less the examples
    assert 3_000 < result["documents"] < 3_300
    assert result["hierarchical"]["level"]["1"] >= result["flat"]["level"]["1"] >= 0.75
    assert [t["good"] for t in result["topics"]] == [[t] for t in topics]
    for topic in result["topics"]:
        assert topic["hierarchical"]["f1"] >= topic["flat"]["f1"] >= 0.8

    shown = cli("taxonomy", "show", env=env).stdout.splitlines()
    assert shown[0].startswith("subject  #0  ") and any("Biology" in line for line in shown)
    corpus = StaticCorpus.load(wikispeedia_home / "corpora" / "wikispeedia",
                               read_meta(wikispeedia_home / "corpora" / "wikispeedia"))  # fmt: skip
    bird = next(u for u in corpus.urls() if u.endswith("/wiki/Bald_Eagle"))
    page = wikispeedia_home.parent / "bald-eagle.html"
    page.write_bytes(corpus.page(bird).body)  # type: ignore[union-attr]
    suggested = cli("taxonomy", "suggest", str(page), env=env)
    assert "subject.Science.Biology.Birds  Pr=" in suggested.stdout, suggested.stderr
    assert cli("taxonomy", "mark-good", "subject.Science.Biology", env=env).returncode == 0
    rescored = cli("classify", "rescore", env=env)
    assert rescored.returncode == 0 and "rescored 0 pages" in rescored.stdout


def test_taxonomy_show_says_one_example_not_one_examples(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    tree = write_tree_dir(tmp_path / "tree", examples_per_leaf=1)
    imported = cli("taxonomy", "import", str(tree), env=env)
    assert imported.returncode == 0 and "examples (" in imported.stdout
    shown = cli("taxonomy", "show", env=env).stdout
    assert "    cycling  #2  1 example" in shown and "1 examples" not in shown
    assert "  sports  #1  2 examples" in shown
