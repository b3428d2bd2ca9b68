"""The progress line in a log (no terminal): a line when a step starts, a line every few
seconds while it runs, a line when it ends."""

from __future__ import annotations

import io
import time

import pytest

from focuscrawl.cli import progress
from focuscrawl.cli.progress import ProgressLine


def test_a_long_step_in_a_log_prints_a_line_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.05)
    stream = io.StringIO()
    line = ProgressLine(stream)
    for done in range(0, 101, 10):
        line("crawling", done, 100)
        time.sleep(0.03)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "crawling..." and lines[-1].startswith("crawling: 100/100 in ")
    between = lines[1:-1]
    assert 2 <= len(between) <= 6 and all("crawling [" in x for x in between)


def test_a_short_step_in_a_log_is_two_lines() -> None:
    stream = io.StringIO()
    line = ProgressLine(stream)
    for done in range(0, 101, 10):
        line("scoring", done, 100)
    assert stream.getvalue().splitlines() == ["scoring...", "scoring: 100/100 in 0 s"]
