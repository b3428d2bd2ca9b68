"""The background a topic is learned against (``build_background``), built from a
corpus's categories: a subject the corpus labels with no level below it is a category
of the background when its pages are its own (Wikispeedia's Mathematics, 43 of 45
pages), not when they all lie in other subjects too (Wikispeedia's Countries, each
also its region's geography); the other categories' excerpts stay as they were drawn
without it."""

from __future__ import annotations

import random
from pathlib import Path

from focuscrawl.topics.background import build_background
from tests.classifier.topics import write_labelled_corpus

WORDS = {
    "subject.Science.Physics": "quark force energy field mass particle",
    "subject.Geography.Europe": "capital republic province border population parliament",
    "subject.Mathematics": "theorem proof integer algebra matrix equation",
}


def _corpus(directory: Path, categories: list[str], countries: bool, pages: int = 12) -> Path:
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
    taxonomy = [*categories, "subject.Countries"] if countries else categories
    directory = write_labelled_corpus(directory, "subjects", made, taxonomy)
    if countries:  # every page of Europe is a country too
        europe = [url for url, _, category in made if category == "subject.Geography.Europe"]
        with (directory / "truth" / "labels.tsv").open("a") as labels:
            labels.writelines(f"{url}\tsubject.Countries\n" for url in europe)
    return directory


def test_a_subject_with_no_level_below_is_a_category_when_its_pages_are_its_own(
    tmp_path: Path,
) -> None:
    deep = ["subject.Science.Physics", "subject.Geography.Europe"]
    corpus = _corpus(tmp_path / "a", [*deep, "subject.Mathematics"], countries=True)
    background = build_background(corpus, per_category=5)
    assert sorted(background) == ["Geography.Europe", "Mathematics", "Science.Physics"]
    assert len(background["Mathematics"]) == 5
    assert all("theorem" in text or "proof" in text for _, text in background["Mathematics"])
    without = build_background(_corpus(tmp_path / "b", deep, countries=False), per_category=5)
    # Mathematics sorts before Science: drawn first, it would have moved its draws
    assert {c: background[c] for c in without} == without
