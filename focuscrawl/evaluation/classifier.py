"""Evaluating the classifier on labelled pages that were not training examples.

Reports, for the hierarchical model and, in the same run, a flat multinomial naive
Bayes over the labelled categories (scikit-learn, same terms, no feature selection):

* accuracy per tree level: the predicted node at depth k is the depth-k ancestor of
  one of the page's labels (pages whose labels stop above depth k do not count);
* leaf accuracy: the predicted leaf lies at or below one of the page's labels;
* precision, recall and F1 of "relevant" (R(d) > threshold) against the truth that
  some label lies at or below a good node, for the current good marks.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.naive_bayes import MultinomialNB
from sqlalchemy.engine import Engine

from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.classifier.store import latest_model, training_documents
from focuscrawl.classifier.tokens import count_terms, document_text, matrix_of, vocabulary_of
from focuscrawl.crawler.parse import parse_html
from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import CorpusError, TaxonomyError
from focuscrawl.topics.taxonomy import Tree, load_tree
from focuscrawl.topics.taxonomy_import import corpus_labels

__all__ = ["Accuracy", "Evaluation", "Relevance", "TopicResult", "evaluate"]


@dataclass
class Accuracy:
    level: dict[int, float]
    leaf: float


@dataclass
class Relevance:
    precision: float
    recall: float
    f1: float


@dataclass
class TopicResult:
    """Relevance quality when ``good`` are the good categories."""

    good: list[str]
    relevant: int
    hierarchical: Relevance
    flat: Relevance


@dataclass
class Evaluation:
    model_id: int
    documents: int
    threshold: float
    hierarchical: Accuracy
    flat: Accuracy
    topics: list[TopicResult]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _labelled_pages(
    directory: Path, tree: Tree, skip: set[str]
) -> tuple[list[str], list[list[int]]]:
    corpus, labels = corpus_labels(directory, tree)
    if not set(labels) - skip:
        raise CorpusError(f"{directory}: no labelled pages outside the training examples")
    texts, truth = [], []
    for url in sorted(set(labels) - skip):
        page = corpus.page(url)
        if page is None or page.status != 200:
            continue
        parsed = parse_html(page.body, url)
        texts.append(document_text(parsed.title, parsed.text))
        truth.append(labels[url])
    return texts, truth


def _accuracy(tree: Tree, predicted: Sequence[int], truth: Sequence[Sequence[int]]) -> Accuracy:
    max_depth = max(tree.depth(k) for k in tree.nodes)
    level_accuracy: dict[int, float] = {}
    for level in range(1, max_depth + 1):
        hits = total = 0
        for guess, labels in zip(predicted, truth, strict=True):
            wanted = {_at(tree, k, level) for k in labels} - {None}
            if wanted:
                total += 1
                hits += _at(tree, guess, level) in wanted
        if total:
            level_accuracy[level] = hits / total
    leaf_hits = sum(
        any(k in tree.ancestors(guess) for k in labels)
        for guess, labels in zip(predicted, truth, strict=True)
    )
    return Accuracy(level_accuracy, leaf_hits / len(truth))


def _relevance(said: NDArray[np.bool_], truly: NDArray[np.bool_]) -> Relevance:
    tp = int((said & truly).sum())
    precision = tp / max(int(said.sum()), 1)
    recall = tp / max(int(truly.sum()), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Relevance(precision, recall, f1)


def _at(tree: Tree, kcid: int, level: int) -> int | None:
    chain = tree.ancestors(kcid)[::-1]  # root first
    return chain[level] if level < len(chain) else None


def _flat(
    train_texts: list[str], train_labels: list[list[int]], terms: Sequence[Counter[str]]
) -> tuple[list[int], NDArray[np.float64]]:
    """The baseline: one multinomial NB over every labelled category; (classes, Pr)."""
    train_terms = count_terms(train_texts)
    vocabulary = vocabulary_of(train_terms)
    x = matrix_of(train_terms, vocabulary)
    rows = [i for i, labels in enumerate(train_labels) for _ in labels]
    y = [k for labels in train_labels for k in labels]
    flat = MultinomialNB(alpha=0.1).fit(x[rows], y)
    probability = flat.predict_proba(matrix_of(terms, vocabulary))
    return [int(c) for c in flat.classes_], np.asarray(probability)


def evaluate(
    engine: Engine,
    corpus: Path,
    threshold: float = 0.5,
    topics: Sequence[Sequence[str]] | None = None,
) -> Evaluation:
    """Evaluate the newest model on the corpus's labelled pages that were not examples.

    ``topics``: sets of categories to evaluate relevance for, each in turn as the good
    set; by default the categories marked good now.
    """
    if not 0 < threshold < 1:
        raise TaxonomyError("--threshold must be between 0 and 1")
    started = time.monotonic()
    with engine.connect() as connection:
        tree = load_tree(connection)
        stored = latest_model(connection)
        stored.check_tree(tree)
        skip = {row.url for row in execute(connection, queries["example_urls"])}
        train_texts, train_labels = training_documents(connection)
    good_sets = (
        [[tree.find(ref) for ref in refs] for refs in topics] if topics else [tree.good_frontier()]
    )
    texts, truth = _labelled_pages(corpus, tree, skip)
    model: HierarchicalModel = stored.model
    terms = count_terms(texts)
    scores = model.score_terms(terms)
    classes, probability = _flat(train_texts, train_labels, terms)
    flat_best = [classes[i] for i in np.argmax(probability, axis=1)]
    results = []
    for good in good_sets:
        frontier = tree.frontier_of(good)
        below = {k for g in frontier for k in tree.subtree(g)}
        truly = np.asarray([any(k in below for k in labels) for labels in truth])
        hierarchical = np.exp(scores.log_relevance(frontier)) > threshold
        columns = np.asarray([c in below for c in classes])
        flat = probability[:, columns].sum(axis=1) > threshold
        results.append(
            TopicResult(
                [tree.path(k) for k in frontier],
                int(truly.sum()),
                _relevance(hierarchical, truly),
                _relevance(flat, truly),
            )
        )
    return Evaluation(
        model_id=stored.model_id,
        documents=len(texts),
        threshold=threshold,
        hierarchical=_accuracy(tree, [int(k) for k in scores.best_leaf()], truth),
        flat=_accuracy(tree, flat_best, truth),
        topics=results,
        seconds=time.monotonic() - started,
    )
