"""Classifier speed on the Wikispeedia taxonomy: one page at a time, in batches, and
the classifier process end to end against PostgreSQL.

    python bench/classify.py [--corpus DIR] [--docs 3000] [--db-docs 20000]

Trains on a 30% sample (seed 1) of the Wikispeedia corpus (built by
``focuscrawl webbox import-wikispeedia``; ``--corpus`` or $FOCUSCRAWL_HOME/corpora/
wikispeedia), then scores held-out pages cut to about 5 KB of text each:

* one page per call, tokenising included (goal: 1,000 pages/s per core);
* batches of 256, tokenising included, and from term counts only (goal: 10,000/s);
* for scale, scikit-learn's ``predict_log_proba`` one page per call on a flat
  multinomial NB over the same categories;
* ``classify run`` as a process: ``--db-docs`` fetched pages with 10 out-links each
  in a scratch database, scored, written and passed on (pages/s), with the 1999
  estimate (the parents' relevance, in SQL) and with the link learner (each out-link
  scored from its anchor, context and URL, the links between the fetched pages queued
  as examples and learned): the difference is what the learner costs a page.

Writes bench/results/classify.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import scratch_engine, write_results
from sklearn.naive_bayes import MultinomialNB

from focuscrawl.classifier import Classifier, HierarchicalModel
from focuscrawl.classifier.apprentice import train_link_model
from focuscrawl.classifier.store import save_model
from focuscrawl.classifier.tokens import count_terms, document_text, matrix_of, vocabulary_of
from focuscrawl.crawler.parse import parse_html
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.topics.taxonomy import load_tree
from focuscrawl.topics.taxonomy_import import from_corpus, store_import
from focuscrawl.web.corpus import StaticCorpus, read_meta

TEXT_BYTES = 5_000


def _corpus(given: str | None) -> Path:
    if given:
        return Path(given)
    home = Path(os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl")).expanduser()
    return home / "corpora" / "wikispeedia"


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="The wikispeedia corpus directory.")
    parser.add_argument("--docs", type=int, default=3_000, help="Held-out pages to score.")
    parser.add_argument("--db-docs", type=int, default=20_000, help="Pages for classify run.")
    args = parser.parse_args()
    directory = _corpus(args.corpus)
    data = from_corpus(directory, 0.3, seed=1)
    documents: dict[str | None, tuple[str, list[int]]] = {}
    labels: dict[str | None, list[int]] = defaultdict(list)
    for e in data.examples:
        documents.setdefault(e.url, (document_text(e.title, e.text), []))
        labels[e.url].append(e.kcid)
    texts = [documents[u][0] for u in documents]
    started = time.perf_counter()
    model = HierarchicalModel.train(data.tree, texts, [labels[u] for u in documents])
    train_s = time.perf_counter() - started

    corpus = StaticCorpus.load(directory, read_meta(directory))
    rng = random.Random(2)
    held = [u for u in corpus.urls() if u not in documents]
    rng.shuffle(held)
    pages: list[str] = []
    for url in held:
        page = corpus.page(url)
        if page is None:
            continue
        parsed = parse_html(page.body, url)
        text = document_text(parsed.title, parsed.text)
        start = rng.randrange(max(1, len(text) - TEXT_BYTES))
        pages.append(text[start : start + TEXT_BYTES])
        if len(pages) == args.docs:
            break
    mean_bytes = sum(len(p.encode()) for p in pages) / len(pages)

    started = time.perf_counter()
    for text in pages:
        model.score([text])
    single_s = time.perf_counter() - started

    started = time.perf_counter()
    for i in range(0, len(pages), 256):
        model.score(pages[i : i + 256])
    batch_s = time.perf_counter() - started

    terms = count_terms(pages)
    counts = matrix_of(terms, model.vocabulary)
    started = time.perf_counter()
    for i in range(0, len(pages), 256):
        model.score_counts(counts[i : i + 256])
    counts_s = time.perf_counter() - started

    train_terms = count_terms(texts)
    vocabulary = vocabulary_of(train_terms)
    rows = [i for i, u in enumerate(documents) for _ in labels[u]]
    flat = MultinomialNB(alpha=0.1).fit(
        matrix_of(train_terms, vocabulary)[rows], [k for u in documents for k in labels[u]]
    )
    sample = matrix_of(terms[:300], vocabulary)
    started = time.perf_counter()
    for i in range(sample.shape[0]):
        flat.predict_log_proba(sample[i])
    sklearn_s = time.perf_counter() - started

    results: dict[str, object] = {
        "pages": len(pages),
        "mean_text_bytes": round(mean_bytes),
        "nodes": model.params["nodes"],
        "terms": model.params["terms"],
        "components": model.params["components"],
        "train_seconds": round(train_s, 2),
        "one_at_a_time_per_s": _rate(len(pages), single_s),
        "batch_with_tokenising_per_s": _rate(len(pages), batch_s),
        "batch_from_counts_per_s": _rate(len(pages), counts_s),
        "sklearn_flat_one_at_a_time_per_s": _rate(sample.shape[0], sklearn_s),
    }
    results["one_at_a_time_vs_sklearn"] = round(
        float(results["one_at_a_time_per_s"]) / float(results["sklearn_flat_one_at_a_time_per_s"]),
        1,
    )
    results["process_pages_per_s"] = _process_rate(data, model, pages, args.db_docs, "soft-1999")
    results["process_link_learner_pages_per_s"] = _process_rate(
        data, model, pages, args.db_docs, "soft"
    )
    for key, value in results.items():
        print(f"{key:36} {value}")
    print(f"wrote {write_results('classify', results)}")


def _process_rate(
    data: object, model: HierarchicalModel, pages: list[str], count: int, estimate: str
) -> float:
    """``classify run --once`` over ``count`` fetched pages with 10 out-links each, nine
    to unvisited URLs and one to another fetched page, with the frontier ``estimate``."""
    with scratch_engine() as engine:
        store_import(engine, data)  # type: ignore[arg-type]
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "UPDATE taxonomy SET good = 1 WHERE kcname = 'Biology'; "
                "INSERT INTO site (host, bucket) "
                "VALUES ('bench.example', host_bucket('bench.example'));"
            )
            save_model(connection, model, data.tree, 0)  # type: ignore[attr-defined]
            train_link_model(connection, load_tree(connection))
            execute(
                connection,
                queries["set_crawl_setting"],
                {"name": "estimate", "value": estimate},
            )
            connection.exec_driver_sql(
                """
                INSERT INTO doc (oid, bucket, https, path, sid, bytehash, state)
                SELECT url_oid(u), oid_bucket(url_oid(u)), false, '/' || i, 1, url_bytehash(u),
                       CASE WHEN i <= %(n)s THEN 2 ELSE 0 END
                FROM generate_series(1, %(n)s * 11) AS i,
                     LATERAL (SELECT 'http://bench.example/' || i AS u) AS url;
                INSERT INTO doc_fetch (oid, bucket, fetch_seq, title)
                SELECT url_oid('http://bench.example/' || i),
                       host_bucket('bench.example'), i, 'page ' || i
                FROM generate_series(1, %(n)s) AS i;
                INSERT INTO doc_text (oid, bucket, text)
                SELECT oid, bucket,
                       (%(texts)s::text[])[1 + fetch_seq %% cardinality(%(texts)s::text[])]
                FROM doc_fetch;
                INSERT INTO link (oid_src, oid_dst, sid_src, sid_dst, anchor, context, bucket)
                SELECT url_oid('http://bench.example/' || i),
                       url_oid('http://bench.example/' || CASE WHEN j = 10
                           THEN 1 + i %% %(n)s ELSE %(n)s + (i - 1) * 10 + j END),
                       1, 1, 'cell protein ' || j, 'the genes of | are found in',
                       host_bucket('bench.example')
                FROM generate_series(1, %(n)s) AS i, generate_series(1, 10) AS j;
                ANALYZE;
                """,
                {"n": count, "texts": pages},
            )
        started = time.perf_counter()
        stats = Classifier(engine).run(once=True)
        seconds = time.perf_counter() - started
        assert stats.scored == count, stats
        return _rate(count, seconds)


if __name__ == "__main__":
    main()
