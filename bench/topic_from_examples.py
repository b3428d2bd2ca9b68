"""How well a topic learned from ten example pages judges the pages a crawl meets: the
page classifier alone, without crawling, for every topic of a corpus.

    python bench/topic_from_examples.py [--corpus DIR] [--min-pages 30] [--examples 10]
        [--background corpus|shipped] [--web-sample K [--sample-from POOL]]

For each topic with ``--min-pages`` pages or more (as ``eval --sweep`` picks them), the
topic is made as ``eval --taxonomy examples`` makes it: ``--examples`` relevant pages
(seed 1) in a background built from the corpus without the topic's pages (``--background
shipped``: the one ``topic new`` ships, less the categories it finds the examples' own),
trained with the hierarchical model. ``--web-sample K`` adds a background leaf of K pages
of the web itself, unlabelled, drawn from the first 10K pages a breadth-first crawl from
the examples reaches (``--sample-from breadth-first``), the first K of them (``first``),
from a pool of those half of them the topic's, as a focused crawl fetches them
(``focused``), or from that pool with the chance 1 - R' of the topic without the leaf
(``weighted``). It then scores the pages a breadth-first crawl from the examples reaches
first (3N of them, N the topic's size; the examples left out), the pages a crawl must
judge, and reports against the ground truth:

* AUC of log R(d): how well the classifier orders them (what a crawl's order rests on);
* precision and recall of the verdict R >= 0.5 (what ``export --what relevant`` gives);
* the same, with the relevance calibrated on the examples as ``topic new`` trains it
  (``focuscrawl.classifier.calibration``);
* the same AUC for a yardstick: scikit-learn's logistic regression on tf-idf of the same
  examples against the same background (balanced class weights), to show how much a
  discriminative model would order better.

Reads the corpus (``--corpus`` or $FOCUSCRAWL_HOME/corpora/wikispeedia). Writes
bench/results/topic_from_examples[_NAME].json (NAME: the corpus's, unless Wikispeedia, and
the background and web sample when given).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import write_results
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from focuscrawl.classifier.calibration import calibrate
from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.classifier.tokens import document_text
from focuscrawl.crawler.parse import parse_html
from focuscrawl.evaluation.experiment import _short
from focuscrawl.evaluation.truth import link_graph, load_truth, sweep_topics
from focuscrawl.topics.background import (
    Background,
    BackgroundReader,
    build_background,
    load_background,
    topic_import,
)
from focuscrawl.webbox import load_corpus


def first_reached(graph: dict[str, list[str]], seeds: list[str], count: int) -> list[str]:
    """The first ``count`` pages a breadth-first crawl from ``seeds`` fetches."""
    known = set(seeds)
    queue = deque(seeds)
    reached: list[str] = []
    while queue and len(reached) < count:
        url = queue.popleft()
        reached.append(url)
        for target in graph.get(url, ()):
            if target not in known:
                known.add(target)
                queue.append(target)
    return reached


def _made(
    background: Background, name: str, examples: list[Any], leave_out: list[str]
) -> tuple[Any, list[str], list[list[int]], int, Callable[..., HierarchicalModel]]:
    made = topic_import(background, name, examples, leave_out=leave_out)
    texts = [document_text(e.title, e.text) for e in made.examples]
    labels = [[e.kcid] for e in made.examples]
    good = made.tree.find(f"web.{name}")
    tree = made.tree.with_good([good])

    def train(docs: Sequence[str], doc_labels: Sequence[Sequence[int]]) -> HierarchicalModel:
        return HierarchicalModel.train(tree, docs, doc_labels)

    return tree, texts, labels, good, train


def _web_sample(
    pool: list[str],
    relevant: frozenset[str],
    size: int,
    how: str,
    page: Callable[[str], tuple[str, str]],
    judge: Callable[[list[str]], np.ndarray],
) -> list[tuple[str, str]]:
    """``size`` pages of ``pool`` (the breadth-first order from the examples) as a
    background leaf: see the module."""
    rng = np.random.default_rng(1)
    if how == "first":  # the very first pages breadth-first fetches, in its order
        return [page(u) for u in pool[:size]]
    if how != "breadth-first":
        on = [u for u in pool if u in relevant]
        off = [u for u in pool if u not in relevant]
        n = min(len(on), len(off), 2 * size)
        pool = [on[i] for i in rng.choice(len(on), n, replace=False)] + [
            off[i] for i in rng.choice(len(off), n, replace=False)
        ]
    chance = None
    if how == "weighted":
        chance = 1 - np.exp(judge(pool))
        chance = chance / chance.sum()
    chosen = rng.choice(len(pool), min(size, len(pool)), replace=False, p=chance)
    return [page(pool[i]) for i in chosen]


def one_topic(
    corpus: Path,
    topic: str,
    relevant: frozenset[str],
    examples: list[str],
    page: Callable[[str], tuple[str, str]],
    met: list[str],
    reader: BackgroundReader | None = None,
    web_sample: tuple[list[str], int, str] | None = None,
) -> dict[str, Any]:
    name = _short(topic)  # the topic's category, named as the evaluation names it
    given = [(*page(u), (), u) for u in examples]
    if reader is None:
        background = build_background(corpus, exclude=relevant)
        left_out: list[str] = []
    else:  # as topic new: the shipped background less the examples' own categories
        background = dict(reader.background)
        left_out = reader.own_categories(given)
    if web_sample is not None:
        pool, size, how = web_sample

        def judge(urls: list[str]) -> np.ndarray:
            tree, texts, labels, good, train = _made(background, name, given, left_out)
            model = train(texts, labels)
            model.calibrated(calibrate(tree, texts, labels, train))
            return model.score([document_text(*page(u)) for u in urls]).log_relevance([good])

        background["Web.Sample"] = _web_sample(pool, relevant, size, how, page, judge)
    tree, texts, labels, good, train = _made(background, name, given, left_out)
    model = train(texts, labels)
    judged = [document_text(*page(u)) for u in met]
    scores = model.score(judged)
    log_r = scores.log_relevance([good])
    truly = np.asarray([u in relevant for u in met])
    said = log_r >= np.log(0.5)
    hits = int((said & truly).sum())
    # as topic new trains it: calibrated on the examples, each left out once
    model.calibrated(calibrate(tree, texts, labels, train))
    calibrated = model.score(judged).log_relevance([good])
    said_c = calibrated >= np.log(0.5)
    hits_c = int((said_c & truly).sum())

    positives = [document_text(*page(u)) for u in examples]
    negatives = [document_text(t, x) for excerpts in background.values() for t, x in excerpts]
    tfidf = TfidfVectorizer(sublinear_tf=True, min_df=2).fit(positives + negatives)
    x = sparse.vstack([tfidf.transform(positives), tfidf.transform(negatives)])
    y = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
    yardstick = LogisticRegression(C=10, class_weight="balanced", max_iter=1000).fit(x, y)
    decision = yardstick.decision_function(tfidf.transform(judged))
    both = 0 < truly.sum() < len(truly)
    return {
        "topic": topic,
        "pages": len(relevant),
        "judged": len(met),
        "relevant_share": round(float(truly.mean()), 3),
        "auc": round(float(roc_auc_score(truly, log_r)), 3) if both else None,
        "verdict_precision": round(hits / max(int(said.sum()), 1), 3),
        "verdict_recall": round(hits / max(int(truly.sum()), 1), 3),
        "auc_logistic_tfidf": round(float(roc_auc_score(truly, decision)), 3) if both else None,
        "auc_calibrated": round(float(roc_auc_score(truly, calibrated)), 3) if both else None,
        "calibrated_precision": round(hits_c / max(int(said_c.sum()), 1), 3),
        "calibrated_recall": round(hits_c / max(int(truly.sum()), 1), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--min-pages", type=int, default=30)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--background", choices=("corpus", "shipped"), default="corpus")
    parser.add_argument("--web-sample", type=int, default=0, metavar="K")
    parser.add_argument(
        "--sample-from",
        choices=("breadth-first", "first", "focused", "weighted"),
        default="breadth-first",
    )
    args = parser.parse_args()
    reader = BackgroundReader(load_background()) if args.background == "shipped" else None
    home = Path(os.environ.get("FOCUSCRAWL_HOME", "~/.local/share/focuscrawl")).expanduser()
    corpus: Path = args.corpus or home / "corpora" / "wikispeedia"
    started = time.perf_counter()
    truth = load_truth(corpus)
    graph = link_graph(corpus)
    pages = load_corpus(str(corpus), corpus)
    parsed: dict[str, tuple[str, str]] = {}

    def page(url: str) -> tuple[str, str]:
        if url not in parsed:
            served = pages.page(url)
            assert served is not None, url
            html = parse_html(served.body, url)
            parsed[url] = (html.title, html.text)
        return parsed[url]

    rows = []
    for topic in sweep_topics(truth, args.min_pages):
        relevant = truth.relevant(topic)
        examples = truth.seeds(topic, args.examples, 1)
        met = [u for u in first_reached(graph, examples, 3 * len(relevant)) if u not in examples]
        sample = None
        if args.web_sample:
            pool = first_reached(graph, examples, 10 * args.web_sample)
            pool = [u for u in pool if u not in examples]
            sample = (pool, args.web_sample, args.sample_from)
        row = one_topic(corpus, topic, relevant, examples, page, met, reader, sample)
        rows.append(row)
        print(
            f"{topic[:40]:40} {row['pages']:5} AUC {row['auc']}  verdict "
            f"P {row['verdict_precision']} R {row['verdict_recall']}  "
            f"(logistic tf-idf AUC {row['auc_logistic_tfidf']}); calibrated AUC "
            f"{row['auc_calibrated']} P {row['calibrated_precision']} "
            f"R {row['calibrated_recall']}",
            flush=True,
        )
    summary = {
        key: round(float(np.mean([r[key] for r in rows if r[key] is not None])), 3)
        for key in (
            "auc",
            "verdict_precision",
            "verdict_recall",
            "auc_logistic_tfidf",
            "auc_calibrated",
            "calibrated_precision",
            "calibrated_recall",
        )
    }
    print(
        f"mean over {len(rows)} topics: AUC {summary['auc']}, verdict precision "
        f"{summary['verdict_precision']} at recall {summary['verdict_recall']}; "
        f"logistic tf-idf AUC {summary['auc_logistic_tfidf']}; calibrated (as topic new "
        f"trains): AUC {summary['auc_calibrated']}, verdict precision "
        f"{summary['calibrated_precision']} at recall {summary['calibrated_recall']}"
    )
    name = "" if corpus.name == "wikispeedia" else f"_{corpus.name}"
    if args.background == "shipped":
        name += "_shipped"
    if args.web_sample:
        name += f"_web{args.web_sample}_{args.sample_from}"
    path = write_results(
        f"topic_from_examples{name}",
        {
            "corpus": str(corpus),
            "examples": args.examples,
            "min_pages": args.min_pages,
            "background": args.background,
            "web_sample": args.web_sample,
            "sample_from": args.sample_from,
            "mean": summary,
            "topics": rows,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
