"""``focuscrawl eval --sweep`` on a small generated web: every topic of 100 pages or
more, bfs against the default focused crawl (the link learner)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acceptance.test_cli_eval_report import _drop_siblings


def test_the_sweep_beats_breadth_first_on_every_topic_of_a_generated_web(  # type: ignore[no-untyped-def]
    cli, db_url: str, tmp_path: Path
) -> None:
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    made = cli("webbox", "generate", "--pages", "3000", "--hosts", "30", "--seed", "5",
               "--name", "small", env=env)  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = tmp_path / "sweep.json"
    try:
        done = cli(
            "eval", "--sweep", "--corpus", "small", "--min-pages", "100", "--samples", "1",
            "--strategies", "bfs,soft", "--budgets", "1,2", "--out", str(out), env=env,
            timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads(out.read_text())
        topics = [t["topic"] for t in result["topics"]]
        assert len(topics) >= 4 and "subject.Science.Biology" in topics
        assert result["databases"] == {}  # a sweep drops its crawls' databases
        for topic in result["topics"]:
            soft, bfs = topic["strategies"]["soft"], topic["strategies"]["bfs"]
            assert soft["harvest"] >= bfs["harvest"] + 0.02, topic["topic"]
            assert soft["recall_2n"] >= soft["recall"] and soft["fetched"] == 2 * topic["pages"]
        summary = result["summary"]["soft"]
        assert summary["wins"] == len(topics) and summary["mean_ratio_to_bfs"] > 1.3
        assert f"beats bfs by 0.02 on {len(topics)}/{len(topics)} topics" in done.stdout
        assert "reference, first N" not in done.stdout
    finally:
        _drop_siblings(db_url)
