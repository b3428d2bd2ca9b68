"""Derive the synthetic web's word distributions from the Wikispeedia text.

    python scripts/build_topic_words.py ../shared/corpora/wikispeedia.tar.gz

Writes focuscrawl/webbox/topic_words.json.gz: word counts (statistics, not text) for
a background distribution and for every Wikispeedia category with at least 20
articles at depth 2 (subject.Top.Second), or depth 1 where a top-level category has no
children. The generator ships this file so it works without the corpus.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import tarfile
from collections import Counter, defaultdict
from pathlib import Path

MIN_ARTICLES = 20
TOPIC_WORDS = 600
BACKGROUND_WORDS = 4000
COMMON_EXCLUDED = 200
WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]")


def main(archive: Path) -> None:
    with tarfile.open(archive, "r:gz") as tar:
        files = {m.name.split("/", 1)[-1]: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    cats: dict[str, str] = {}
    for line in files["categories.tsv"].decode().splitlines():
        if line and not line.startswith("#") and "\t" in line:
            name, cat = line.split("\t")
            cats.setdefault(name, cat)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    sizes: Counter[str] = Counter()
    background: Counter[str] = Counter()
    for name, cat in cats.items():
        text = files[f"plaintext_articles/{name}.txt"].decode("utf-8", "replace").lower()
        text = text.split("retrieved from")[0]
        words = [w for w in WORD.findall(text) if len(w) > 1 and w != "related"]
        parts = cat.split(".")
        topic = ".".join(parts[:3])
        counts[topic].update(words)
        sizes[topic] += 1
        background.update(words)
    common = {w for w, _ in background.most_common(COMMON_EXCLUDED)}
    topics = {}
    for topic, size in sizes.items():
        if size < MIN_ARTICLES:
            continue
        top = [
            (w, c)
            for w, c in counts[topic].most_common(TOPIC_WORDS + COMMON_EXCLUDED)
            if w not in common
        ]
        topics[topic] = {"articles": size, "words": top[:TOPIC_WORDS]}
    data = {
        "source": "Wikispeedia (2007 Schools Wikipedia, GFDL): word counts only",
        "background": background.most_common(BACKGROUND_WORDS),
        "topics": dict(sorted(topics.items())),
    }
    out = Path(__file__).resolve().parents[1] / "focuscrawl" / "webbox" / "topic_words.json.gz"
    out.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0))
    print(f"{len(topics)} topics, {out.stat().st_size:,} bytes -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
