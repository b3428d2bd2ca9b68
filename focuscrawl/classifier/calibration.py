"""Relevance calibrated on the examples themselves, for a topic made from a few of them.

Naive Bayes over whole pages is overconfident: the log-odds of a page are sums over
hundreds of terms, so R(d) is 0 or 1 for nearly every page, and R >= 0.5 takes in most
pages near the topic. A topic made from ten examples has no labelled pages to fit a
calibration on, but it has the examples: each one, left out of the training, is a
relevant page the model has not seen.

The score calibrated is the **log-odds per term** of the good set,

    z(d) = (log R(d) - log(1 - R(d))) / (terms of d the model knows + 1)

(a long page is not more relevant for being long), and

    R'(d) = sigmoid(scale * (z(d) - threshold))

with ``threshold`` the lower quartile of the left-out examples' z (a quarter of pages
like the examples fall below R' = 0.5) and ``scale`` such that their median has R' = 0.9.
Up to ten trainings: leave-one-out for ten examples or fewer, ten folds above that; five
when the crawl's own pages are in every training (self-training, ``classifier.store``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from focuscrawl.classifier.tokens import count_terms
from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.taxonomy import Tree

if TYPE_CHECKING:
    from focuscrawl.classifier.model import HierarchicalModel, Scores

__all__ = ["Calibration", "calibrate", "log_odds_per_term"]

FOLDS = 10
#: folds when the crawl's pages are in every training (self-training), to spend less at
#: every doubling: scikit-learn's default for cross-validation (two folds set R = 0.5 too
#: low: verdict precision 0.69 against 0.71 on Wikispeedia, at half the CPU)
SELF_TRAIN_FOLDS = 5
MIN_HELD = 3  # fewer left-out scores than this give no calibration
QUANTILE = 0.25  # of the left-out examples' z: R' = 0.5 there
MEDIAN_R = 0.9  # R' of the left-out examples' median

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Calibration:
    """The map from z to R' for one good set (sorted kcids)."""

    good: tuple[int, ...]
    threshold: float
    scale: float
    held: tuple[float, ...]  # the left-out examples' z, ascending

    def applies_to(self, good: Sequence[int]) -> bool:
        return self.good == tuple(sorted(int(k) for k in good))

    def log_relevance(self, z: Floats) -> Floats:
        """log R' = log sigmoid(scale * (z - threshold)), stable at both ends."""
        x = self.scale * (z - self.threshold)
        return np.asarray(-np.logaddexp(0.0, -x))

    def to_params(self) -> dict[str, Any]:
        return {
            "good": list(self.good),
            "threshold": self.threshold,
            "scale": self.scale,
            "held": list(self.held),
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Calibration:
        return cls(
            tuple(int(k) for k in params["good"]),
            float(params["threshold"]),
            float(params["scale"]),
            tuple(float(z) for z in params["held"]),
        )

    @classmethod
    def of_held(cls, good: Sequence[int], held: Sequence[float]) -> Calibration:
        values = np.sort(np.asarray(held, dtype=np.float64))
        threshold = float(np.quantile(values, QUANTILE, method="lower"))
        median = float(np.median(values))
        # the median's margin above the threshold, or a tenth of the spread when the
        # examples score alike (never 0: the scale stays finite)
        spread = float(values[-1] - values[0])
        margin = max(median - threshold, spread / 10, 1e-6)
        scale = float(np.log(MEDIAN_R / (1 - MEDIAN_R)) / margin)
        return cls(tuple(sorted(int(k) for k in good)), threshold, scale, tuple(values.tolist()))


def log_odds_per_term(scores: Scores, good: Sequence[int]) -> Floats:
    """z(d) of every scored document for the good set ``good`` (see the module)."""
    model = scores.model
    # the leaves partition the probability: those below a good node sum to R
    below = model.leaves_below(good)
    others = np.setdiff1d(model.leaf_columns, below)
    log_r = _logsumexp(scores.logp[:, below])
    log_not = _logsumexp(scores.logp[:, others])
    return np.asarray((log_r - log_not) / (scores.lengths + 1.0))


def _logsumexp(part: Floats) -> Floats:
    """log of the sum of exp over each row (-inf for none: a set with no leaves)."""
    if part.shape[1] == 0:
        return np.full(part.shape[0], -np.inf)
    return np.asarray(logsumexp(part, axis=1))


def calibrate(
    tree: Tree,
    documents: Sequence[str],
    labels: Sequence[Sequence[int]],
    train: Callable[[Sequence[str], Sequence[Sequence[int]]], HierarchicalModel],
    always: Sequence[tuple[str, Sequence[int]]] = (),
) -> Calibration | None:
    """The calibration of the tree's good set from its examples, each scored by a model
    trained without it (``train``); None when the good set has fewer than three examples
    or no good node. ``always``: documents (text, labels) in every training, never left
    out (the crawl's pages a topic self-trains on: they calibrate nothing)."""
    good = tree.good_frontier()
    if not good:
        return None
    positive = [i for i, doc_labels in enumerate(labels) if any(map(tree.is_good, doc_labels))]
    if len(positive) < MIN_HELD:
        return None
    count = min(SELF_TRAIN_FOLDS if always else FOLDS, len(positive))
    folds = [positive[f::count] for f in range(count)]
    held: list[float] = []
    for fold in folds:
        out = set(fold)
        kept = [i for i in range(len(documents)) if i not in out]
        texts = [documents[i] for i in kept] + [text for text, _ in always]
        kept_labels = [labels[i] for i in kept] + [doc_labels for _, doc_labels in always]
        try:
            model = train(texts, kept_labels)
        except TaxonomyError:
            continue  # the fold took a category's last example: no score from it
        # counted, not model.score: one page's scoring would index the vocabulary first
        scores = model.score_terms(count_terms([documents[i] for i in fold]))
        held += log_odds_per_term(scores, good).tolist()
    if len(held) < MIN_HELD:
        return None
    return Calibration.of_held(good, held)
