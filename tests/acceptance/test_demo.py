"""The README's first command, as a newcomer runs it: ``focuscrawl demo`` on the
embedded default with a fresh home, then its report in a real headless browser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from acceptance_helpers import HEADLESS, browser_or_skip  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]


def _browse(browser: str, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, *HEADLESS, *args, page.as_uri()], capture_output=True, text=True, timeout=120
    )


def test_demo_runs_to_the_end_and_its_report_opens_with_charts(
    corpora_dir: Path, tmp_path: Path
) -> None:
    browser = browser_or_skip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env.update({"FOCUSCRAWL_HOME": str(tmp_path / "home"), "FOCUSCRAWL_CORPORA": str(corpora_dir)})
    focuscrawl = [sys.executable, "-m", "focuscrawl"]
    try:
        done = subprocess.run(
            [*focuscrawl, "demo"], env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        subprocess.run([*focuscrawl, "db", "down"], env=env, capture_output=True, timeout=120)
    # | strategy | harvest | first N | ...
    rows = {
        name: (float(harvest), float(first))
        for name, harvest, first in re.findall(
            r"^\| (bfs|soft) \| ([\d.]+) \| ([\d.]+) \|", done.stdout, flags=re.M
        )
    }
    assert set(rows) == {"bfs", "soft"}, done.stdout
    # the quality bar: soft focus beats breadth-first clearly
    assert rows["soft"][1] > rows["bfs"][1] + 0.05, done.stdout
    # the summary says what N is, with the topic's own count
    assert "subject.Science.Biology: 698 relevant pages (N), 1,500 pages a crawl" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()[:-1]) <= 100
    # the figures the README and the tutorial give are what the demo prints
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    said = re.search(r"(0\.\d\d) soft against (0\.\d\d) breadth-first on Wikispeedia", readme)
    assert said, "the README gives the demo's figures"
    assert abs(float(said[1]) - rows["soft"][1]) <= 0.05, (said[0], rows)
    assert abs(float(said[2]) - rows["bfs"][1]) <= 0.05, (said[0], rows)
    tutorial = (REPO / "docs" / "tutorial.md").read_text(encoding="utf-8")
    for name, (harvest, first) in rows.items():
        shown = re.search(rf"^\| {name} \| ([\d.]+) \| ([\d.]+) \|", tutorial, flags=re.M)
        assert shown, f"the tutorial shows the {name} row"
        assert abs(float(shown[1]) - harvest) <= 0.05 and abs(float(shown[2]) - first) <= 0.05
    page = Path(done.stdout.strip().splitlines()[-1].removeprefix("report: "))
    assert page == tmp_path / "home" / "reports" / "demo" / "index.html" and page.is_file()

    dom = _browse(browser, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-1000:]
    assert dom.stdout.count("<svg") >= 6 and "<polyline" in dom.stdout
    assert "Evaluation: subject.Science.Biology" in dom.stdout
    shot = tmp_path / "report.png"
    taken = _browse(browser, page, f"--screenshot={shot}", "--window-size=1100,2000")
    assert taken.returncode == 0 and shot.stat().st_size > 50_000, taken.stderr[-1000:]
