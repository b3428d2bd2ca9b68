"""The background a topic is learned against (``build_background``), built from a
corpus's categories: a subject the corpus labels with no level below it (Wikispeedia's
Countries, 229 pages, and Mathematics, 45) is a category of the background too, not
left out of it, and the other categories' excerpts stay as they were drawn without it."""

from __future__ import annotations

import random
from pathlib import Path

from focuscrawl.topics.background import build_background
from tests.classifier.topics import write_labelled_corpus

WORDS = {
    "subject.Science.Physics": "quark force energy field mass particle",
    "subject.Science.Chemistry": "acid molecule bond reaction oxide salt",
    "subject.Countries": "capital republic province border population parliament",
}


def _corpus(directory: Path, categories: list[str], pages: int = 12) -> Path:
    rng = random.Random(5)
    made = []
    for category in categories:
        words = WORDS[category].split()
        for i in range(pages):
            url = f"http://site.example/{category.rsplit('.', 1)[1]}/{i}"
            text = " ".join(rng.choice(words) for _ in range(40))
            title = f"<title>{category} {i}</title>"
            body = f"<html><head>{title}</head><body><p>{text}</p></body></html>"
            made.append((url, body, category))
    return write_labelled_corpus(directory, "subjects", made, categories)


def test_a_subject_with_no_level_below_is_a_category_of_its_own(tmp_path: Path) -> None:
    deep = ["subject.Science.Physics", "subject.Science.Chemistry"]
    corpus = _corpus(tmp_path / "a", [*deep, "subject.Countries"])
    with_countries = build_background(corpus, per_category=5)
    assert sorted(with_countries) == ["Countries", "Science.Chemistry", "Science.Physics"]
    assert len(with_countries["Countries"]) == 5
    assert all("capital" in text or "republic" in text for _, text in with_countries["Countries"])
    without = build_background(_corpus(tmp_path / "b", deep), per_category=5)
    # Countries sorts before Science: drawn first, it would have moved their draws
    assert {c: with_countries[c] for c in without} == without
