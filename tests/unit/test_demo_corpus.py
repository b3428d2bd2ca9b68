"""The demo's choice of web: without an archive it says where it looked and how to
point it at one, then generates a web."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.cli import demo
from focuscrawl.cli.demo import _corpus
from focuscrawl.settings import load_settings
from focuscrawl.webbox import wikispeedia


def test_without_an_archive_the_demo_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-archives"
    empty.mkdir()
    # only the configured place: ../shared/corpora beside the checkout has an archive
    monkeypatch.setattr(wikispeedia, "archive_places", lambda configured: [Path(configured)])
    monkeypatch.setattr(demo, "archive_places", lambda configured: [Path(configured)])
    settings = load_settings({"home": str(tmp_path / "home"), "corpora": str(empty)})
    said: list[str] = []
    chosen = _corpus(settings, None, lambda what, n, total: said.append(what))  # type: ignore[arg-type]
    assert chosen.name == "demo-generated" and (chosen / "corpus.json").is_file()
    assert len(said) == 1 and str(empty) in said[0]
    assert "wikispeedia.tar.gz" in said[0] and "--corpus PATH" in said[0]
