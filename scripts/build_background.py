"""Build focuscrawl/topics/background.json.gz, the background taxonomy of ``topic new``, from
the Wikispeedia corpus (``focuscrawl webbox import-wikispeedia`` first).

    python scripts/build_background.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.topics.background import build_background, save_background


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path.home() / ".local/share/focuscrawl/corpora/wikispeedia"
    parser.add_argument("--corpus", type=Path, default=default)
    args = parser.parse_args()
    background = build_background(args.corpus)
    target = Path(__file__).resolve().parent.parent / "focuscrawl" / "topics" / "background.json.gz"
    save_background(background, target, "Wikispeedia (scripts/build_background.py, seed 1)")
    excerpts = sum(len(v) for v in background.values())
    print(f"{len(background)} categories, {excerpts} excerpts -> {target} "
          f"({target.stat().st_size:,} bytes)")  # fmt: skip


if __name__ == "__main__":
    main()
