"""The distiller from the command line, on the hand-made topic web."""

from __future__ import annotations

import signal
from pathlib import Path

from acceptance_helpers import crawl_sports_in_rounds  # type: ignore[import-not-found]


def test_distill_run_top_and_boost(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    early = cli("distill", "top", "--hubs", env=env)
    assert early.returncode == 2 and "distill run" in early.stderr
    crawl_sports_in_rounds(cli, env, tmp_path)

    ran = cli("distill", "run", "--share", "0.5", env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("run 1: ") and "cross-site edges" in ran.stdout
    hubs = cli("distill", "top", "--hubs", "-n", "5", env=env).stdout.splitlines()
    authorities = cli("distill", "top", "--authorities", "-n", "5", env=env).stdout.splitlines()
    assert 0 < len(hubs) <= 5 and 0 < len(authorities) <= 5
    scores = [float(line.split()[0]) for line in authorities]
    assert scores == sorted(scores, reverse=True)
    assert all("topics.example" in line for line in hubs + authorities)
    boosted = cli("distill", "boost", "--hubs", "5", env=env)
    assert boosted.returncode == 0 and "boosted" in boosted.stderr

    both = cli("distill", "top", "--hubs", "--authorities", env=env)
    assert both.returncode == 2 and "one of --hubs or --authorities" in both.stderr
    every = cli("distill", "run", "--every", "soon", env=env)
    assert every.returncode == 2
    assert "expected a duration such as 30s, 10m or 1h" in every.stderr


def test_distill_every_says_when_it_runs_next_and_stops_on_sigterm(
    db_url: str, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env.update({"FOCUSCRAWL_DATABASE_URL": db_url, "FOCUSCRAWL_HOME": str(tmp_path / "home")})
    process = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "distill", "run", "--every", "1h"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    first = process.stdout.readline()
    waiting = process.stdout.readline()
    assert first.startswith("run 1: ")
    assert waiting.startswith("next run in 1h (at ") and "SIGTERM" in waiting
    process.send_signal(signal.SIGTERM)
    _, errors = process.communicate(timeout=20)  # closes the pipes
    assert process.returncode == 0, errors
