"""A small hand-made topic tree and web, written to disk for tests.

Four leaves under two branches, each with its own words; pages mix topic words with
common words, link mostly within their topic, and live on a host per branch plus a
shared portal. The same pages serve as the generic taxonomy format (tree.txt +
examples/) and as a static web-in-a-box corpus with ground truth.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from focuscrawl.evaluation.truth import GroundTruth

LEAVES = {
    "topics.sports.cycling": "bike pedal saddle wheel tour ride gear cyclist peloton climb",
    "topics.sports.football": "goal ball striker league pitch keeper penalty match referee",
    "topics.science.biology": "cell gene protein organism species evolution enzyme tissue",
    "topics.science.chemistry": "molecule acid reaction bond atom solvent catalyst oxide",
}
COMMON = [
    "the",
    "of",
    "and",
    "a",
    "in",
    "to",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "it",
    "from",
    "at",
    "are",
    "this",
    "be",
]
PAGES_PER_LEAF = 30


def page_text(rng: random.Random, leaf: str, words: int = 120) -> str:
    topic = LEAVES[leaf].split()
    return " ".join(
        rng.choice(topic) if rng.random() < 0.3 else rng.choice(COMMON) for _ in range(words)
    )


def host_of(leaf: str, index: int) -> str:
    branch = leaf.split(".")[1]
    return "portal.topics.example" if index % 5 == 0 else f"{branch}.topics.example"


def page_url(leaf: str, index: int) -> str:
    return f"http://{host_of(leaf, index)}/{leaf.split('.')[-1]}/{index}"


def write_tree_dir(directory: Path, examples_per_leaf: int = 6, seed: int = 3) -> Path:
    """The generic format: tree.txt and examples/<path>/*.txt|*.html."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tree.txt").write_text("# a hand-made tree\n" + "\n".join(LEAVES) + "\n")
    for leaf in LEAVES:
        folder = directory / "examples" / leaf
        folder.mkdir(parents=True)
        for i in range(examples_per_leaf):
            text = page_text(rng, leaf)
            if i == 0:
                name = leaf.split(".")[-1]
                (folder / f"{i}.html").write_text(
                    f"<html><head><title>{name}</title><script>var x = 'gene';</script>"
                    f"</head><body><p>{text}</p></body></html>"
                )
            else:
                (folder / f"{i}.txt").write_text(text)
    return directory


def write_corpus(directory: Path, seed: int = 4) -> Path:
    """A static web: 120 linked pages with truth/labels.tsv and truth/taxonomy.txt."""
    rng = random.Random(seed)
    urls = {leaf: [page_url(leaf, i) for i in range(PAGES_PER_LEAF)] for leaf in LEAVES}
    made: list[tuple[str, str, str]] = []
    for leaf, pages in urls.items():
        for url in pages:
            links = []
            for _ in range(5):
                target_leaf = leaf if rng.random() < 0.7 else rng.choice(list(LEAVES))
                links.append(rng.choice(urls[target_leaf]))
            anchors = "".join(f'<a href="{u}">more</a> ' for u in links)
            body = (
                f"<html><head><title>{leaf.split('.')[-1]}</title></head><body>"
                f"<p>{page_text(rng, leaf)}</p><p>{anchors}</p></body></html>"
            )
            made.append((url, body, leaf))
    return write_labelled_corpus(directory, "topics", made, list(LEAVES))


def write_labelled_corpus(
    directory: Path, name: str, pages: list[tuple[str, str, str]], taxonomy: list[str]
) -> Path:
    """A static web-in-a-box corpus of ``pages`` (URL, HTML body, category) with its ground
    truth (truth/labels.tsv, truth/taxonomy.txt)."""
    (directory / "truth").mkdir(parents=True, exist_ok=True)
    headers = {"Content-Type": "text/html; charset=utf-8"}
    lines = [json.dumps({"url": url, "headers": headers, "body": body}) for url, body, _ in pages]
    (directory / "corpus.json").write_text(
        json.dumps({"format": 1, "name": name, "kind": "static", "faults": False})
    )
    (directory / "pages.jsonl").write_text("\n".join(lines) + "\n")
    labels = [f"{url}\t{category}" for url, _, category in pages]
    (directory / "truth" / "labels.tsv").write_text("\n".join(labels) + "\n")
    (directory / "truth" / "taxonomy.txt").write_text("\n".join(taxonomy) + "\n")
    return directory


#: every page's leaf, as the evaluation reads a corpus's ground truth
TRUTH = GroundTruth({page_url(leaf, i): (leaf,) for leaf in LEAVES for i in range(PAGES_PER_LEAF)})
