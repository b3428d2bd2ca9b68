"""The paper's hierarchical naive-Bayes classifier, trained and scored with numpy.

Every internal node p holds a multinomial naive-Bayes model over its children, on
its own selected terms F_p. For a document d with term counts x,

    log Pr[c | d, p] = b_c + sum_t x_t log theta_{c,t}  -  logsumexp over siblings
    log Pr[c | d]    = log Pr[p | d] + log Pr[c | d, p]

with theta_{c,t} = (n(c,t) + alpha) / (sum_{t' in F_p} n(c,t') + alpha |F_p|) for t
in F_p and b_c the log prior of c among its siblings. Terms outside F_p add the
same to every sibling, so they drop out.

**Feature selection** per internal node is TAPER's: Fisher's discriminant of each
term's relative frequency across the children,

    F(t) = sum_{c1,c2} (mu_c1(t) - mu_c2(t))^2 / sum_c (1/|c|) sum_{d in c} (x_dt - mu_c(t))^2

and the ``features_per_node`` best terms are kept.

**Scoring** never calls a per-document sklearn method: all nodes' weights sit in
one contiguous matrix W (terms x nodes, nodes in breadth-first order so that
siblings are adjacent columns), so a batch is one sparse-dense product, a
segmented log-sum-exp and one addition per tree level.
"""

from __future__ import annotations

import functools
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from focuscrawl.classifier.calibration import Calibration, log_odds_per_term
from focuscrawl.classifier.tokens import (
    TermIndex,
    count_matrix,
    count_terms,
    matrix_of,
    vocabulary_of,
)
from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.taxonomy import Tree

__all__ = ["DEFAULT_ALPHA", "DEFAULT_FEATURES", "HierarchicalModel", "Scores", "fisher_scores"]

DEFAULT_FEATURES = 20000
DEFAULT_ALPHA = 0.1
CHILD_MODELS = ("mixture", "pooled")
DEFAULT_CHILDREN = "mixture"
#: distinct texts whose relevance ``text_relevance`` remembers, for each good set
READ_KEPT = 1 << 17

Floats = NDArray[np.float64]


@dataclass
class Scores:
    """Scores of a batch: ``logp[i, j]`` = log Pr[node j | doc i], nodes in model order."""

    logp: Floats
    model: HierarchicalModel
    lengths: Floats  # terms of each document the model knows

    def best_leaf(self) -> NDArray[np.int64]:
        """kcid of the most probable leaf of each document. With a calibration, the most
        probable leaf on the side of the calibrated verdict: below a good node when
        R' >= 0.5, elsewhere when not (so hard focus and the census agree with it)."""
        model = self.model
        leaves = model.leaf_columns
        calibration = model.calibration
        if calibration is None:
            return self._best_of(leaves)
        below = model.leaves_below(calibration.good)
        others = np.setdiff1d(leaves, below)
        relevant = self.log_relevance(calibration.good) >= np.log(0.5)
        if len(below) == 0 or len(others) == 0:
            return self._best_of(leaves)
        return np.where(relevant, self._best_of(below), self._best_of(others))

    def _best_of(self, columns: NDArray[np.int64]) -> NDArray[np.int64]:
        best = columns[np.argmax(self.logp[:, columns], axis=1)]
        kcids: NDArray[np.int64] = self.model.kcids[best]
        return kcids

    def log_relevance(self, good: Sequence[int]) -> Floats:
        """log R(d) = log sum of Pr[c|d] over ``good`` kcids (the good frontier); the
        calibrated log R'(d) when the model holds a calibration of this good set
        (``focuscrawl.classifier.calibration``)."""
        if not good:
            return np.full(self.logp.shape[0], -np.inf)
        calibration = self.model.calibration
        if calibration is not None and calibration.applies_to(good):
            return calibration.log_relevance(log_odds_per_term(self, good))
        columns = [self.model.column[k] for k in good]
        part = self.logp[:, columns]
        top = part.max(axis=1)
        return np.asarray(top + np.log(np.exp(part - top[:, None]).sum(axis=1)))


class HierarchicalModel:
    """A trained tree of naive-Bayes models as flat arrays (see the module docstring)."""

    def __init__(
        self,
        kcids: NDArray[np.int64],
        parents: NDArray[np.int64],
        terms: list[str],
        weights: Floats,
        bias: Floats,
        owners: NDArray[np.int64],
        params: dict[str, Any],
    ) -> None:
        self.kcids = kcids  # node order: breadth-first, root first
        self.parents = parents  # column of each node's parent (root: -1)
        self.terms = terms
        self.vocabulary = {term: i for i, term in enumerate(terms)}
        # one weight column per mixture component; owners[i]: the node it belongs to
        # float32: half the memory traffic of the product that dominates scoring; the
        # sums it makes (about -1e4) keep an absolute error near 1e-3 in log space
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)
        self.bias = bias
        self.owners = owners
        self.params = params
        held = params.get("calibration")
        self.calibration = None if held is None else Calibration.from_params(held)
        self._leaves_below: dict[tuple[int, ...], NDArray[np.int64]] = {}
        self._read: dict[tuple[int, ...], dict[str, float]] = {}
        self.column = {int(k): i for i, k in enumerate(kcids)}
        n = len(kcids)
        has_children = np.zeros(n, dtype=bool)
        has_children[parents[1:]] = True
        self.leaf_columns = np.flatnonzero(~has_children)
        # components of one node are adjacent: segments start where the owner changes
        if len(owners):
            starts = [0] + [i for i in range(1, len(owners)) if owners[i] != owners[i - 1]]
        else:
            starts = []
        self.component_starts = np.asarray(starts, dtype=np.int64)
        self.scored_nodes = owners[self.component_starts] if starts else owners[:0]
        self._component_group = np.repeat(
            np.arange(len(starts)), np.diff(np.append(self.component_starts, len(owners)))
        )
        # sibling groups: runs of equal parent among columns 1..n-1
        groups = [1] + [j for j in range(2, n) if parents[j] != parents[j - 1]]
        self.group_starts = np.asarray(groups, dtype=np.int64)
        sizes = np.diff(np.append(self.group_starts, n))
        self.group_of = np.repeat(np.arange(len(groups)), sizes)
        depth = np.zeros(n, dtype=np.int64)
        for j in range(1, n):
            depth[j] = depth[parents[j]] + 1
        self.levels = [np.flatnonzero(depth == d) for d in range(2, int(depth.max()) + 1)]

    def calibrated(self, calibration: Calibration | None) -> HierarchicalModel:
        """This model with ``calibration`` (kept in its params, stored with it)."""
        self.calibration = calibration
        self._read.clear()
        if calibration is None:
            self.params.pop("calibration", None)
        else:
            self.params["calibration"] = calibration.to_params()
        return self

    def leaves_below(self, good: Sequence[int]) -> NDArray[np.int64]:
        """Columns of the leaves at or below any of the kcids ``good``."""
        key = tuple(sorted(int(k) for k in good))
        if key in self._leaves_below:
            return self._leaves_below[key]
        marked = np.zeros(len(self.kcids), dtype=bool)
        marked[[self.column[int(k)] for k in good]] = True
        for j in range(1, len(self.kcids)):  # parents come first (breadth-first order)
            marked[j] |= marked[self.parents[j]]
        below: NDArray[np.int64] = self.leaf_columns[marked[self.leaf_columns]]
        self._leaves_below[key] = below
        return below

    # --- scoring -----------------------------------------------------------------

    @functools.cached_property
    def _index(self) -> TermIndex | None:
        return TermIndex.of(self.vocabulary)

    def vectorize(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Term counts over the vocabulary; through the term index (tokens.TermIndex),
        built on the first call, unless the vocabulary has no index."""
        index = self._index
        return count_matrix(texts, self.vocabulary) if index is None else index.matrix(texts)

    def score_counts(self, counts: sparse.csr_matrix) -> Scores:
        """log Pr[node | doc] for every row of term counts."""
        comp = np.asarray(counts.astype(np.float32) @ self.weights, dtype=np.float64)
        return self._normalise(comp, np.asarray(counts.sum(axis=1), dtype=np.float64).ravel())

    def score_one(self, text: str) -> Scores:
        """One document: gathers the weight rows of its terms instead of multiplying a
        sparse matrix (a third of the time for a single page)."""
        counts = self.vectorize([text])
        comp = counts.data.astype(np.float32) @ self.weights[counts.indices]
        length = np.asarray([counts.data.sum()], dtype=np.float64)
        return self._normalise(comp.astype(np.float64)[None, :], length)

    def _normalise(self, comp: Floats, lengths: Floats) -> Scores:
        n_docs, n_nodes = comp.shape[0], len(self.kcids)
        raw = np.zeros((n_docs, n_nodes))
        if len(self.owners):
            # log Pr[d | c] up to a constant shared by siblings: log-sum-exp over c's components
            comp += self.bias
            top = np.maximum.reduceat(comp, self.component_starts, axis=1)
            total = np.add.reduceat(
                np.exp(comp - top[:, self._component_group]), self.component_starts, axis=1
            )
            raw[:, self.scored_nodes] = top + np.log(total)
        logp = np.zeros_like(raw)
        if n_nodes > 1:
            body = raw[:, 1:]
            top = np.maximum.reduceat(body, self.group_starts - 1, axis=1)
            shifted = body - top[:, self.group_of]
            # log of the sibling sum as log1p(the rest besides one maximum), so that a
            # dominant child keeps a tiny negative log Pr instead of rounding to exactly 0:
            # relevance then still orders pages the classifier is nearly sure of
            exps = np.exp(shifted)
            at_top = shifted == 0
            rest = np.add.reduceat(np.where(at_top, 0.0, exps), self.group_starts - 1, axis=1)
            rest += np.add.reduceat(at_top, self.group_starts - 1, axis=1) - 1
            logp[:, 1:] = shifted - np.log1p(rest)[:, self.group_of]
            for level in self.levels:
                logp[:, level] += logp[:, self.parents[level]]
        return Scores(logp, self, lengths)

    def score(self, texts: Sequence[str]) -> Scores:
        if len(texts) == 1:
            return self.score_one(texts[0])
        return self.score_counts(self.vectorize(texts))

    def text_relevance(self, texts: Sequence[str], good: Sequence[int]) -> Floats:
        """R(text) of each text for the good set ``good``, as ``score(...).log_relevance``
        exponentiated, with the latest ``READ_KEPT`` distinct texts of each good set
        remembered: the anchors a crawl reads recur (a page's title is the anchor of each
        link to it, and "Home" of every site), and each was read afresh every batch."""
        key = tuple(sorted(int(k) for k in good))
        known = self._read.setdefault(key, {})
        new = [text for text in dict.fromkeys(texts) if text not in known]
        if len(known) + len(new) > READ_KEPT:  # forgotten all at once: a cheap bound
            known.clear()
            new = list(dict.fromkeys(texts))
        if new:
            log_r = self.score_counts(self.vectorize(new)).log_relevance(good)
            known.update(zip(new, np.exp(log_r).tolist(), strict=True))
        return np.fromiter((known[text] for text in texts), dtype=np.float64, count=len(texts))

    def score_terms(self, terms: Sequence[Counter[str]]) -> Scores:
        """Score documents already counted with ``tokens.count_terms``."""
        return self.score_counts(matrix_of(terms, self.vocabulary))

    # --- training ----------------------------------------------------------------

    @classmethod
    def train(
        cls,
        tree: Tree,
        documents: Sequence[str],
        labels: Sequence[Sequence[int]],
        features_per_node: int = DEFAULT_FEATURES,
        alpha: float = DEFAULT_ALPHA,
        min_df: int = 2,
        children: str = DEFAULT_CHILDREN,
        counted: Sequence[Counter[str]] | None = None,
    ) -> HierarchicalModel:
        """Train on documents, each with the kcids it is labelled with (one or more).

        ``counted``: the documents' terms already counted (``tokens.count_terms``), for
        documents trained on many times over (a calibration's left-out trainings).

        ``children="mixture"``: a child is modelled as a mixture of one multinomial per
        labelled category below it; ``"pooled"``: as one multinomial of all its documents.
        """
        if len(documents) != len(labels):
            raise ValueError("one label list per document")
        if features_per_node < 1 or alpha <= 0:
            raise TaxonomyError("features per node must be >= 1 and alpha > 0")
        if children not in CHILD_MODELS:
            raise TaxonomyError(f"child model must be one of {', '.join(CHILD_MODELS)}")
        if counted is not None and len(counted) != len(documents):
            raise ValueError("one term count per document")
        terms = count_terms(documents) if counted is None else counted
        vocabulary = vocabulary_of(terms, min_df=min_df)
        if not vocabulary:
            raise TaxonomyError("the examples have no terms in common; add more examples")
        counts = matrix_of(terms, vocabulary)
        lengths = np.asarray(counts.sum(axis=1)).ravel()
        relative = (sparse.diags(1.0 / np.maximum(lengths, 1.0)) @ counts).tocsr()

        order = tree.bfs()
        column = {k: i for i, k in enumerate(order)}
        parents = np.asarray([-1] + [column[tree.nodes[k].pcid] for k in order[1:]])
        own: dict[int, list[int]] = {k: [] for k in order}  # documents labelled k itself
        below: dict[int, set[int]] = {k: set() for k in order}
        for i, doc_labels in enumerate(labels):
            for kcid in doc_labels:
                own[kcid].append(i)
                for a in tree.ancestors(kcid):
                    below[a].add(i)

        chosen_by_node: dict[int, NDArray[np.int64]] = {}
        for p in tree.internal():
            kids = tree.children[p]
            empty = [tree.path(c) for c in kids if not below[c]]
            if empty:
                raise TaxonomyError(f"empty categories (no examples): {', '.join(empty[:5])}")
            if len(kids) > 1:
                if children == "pooled":
                    groups = [sorted(below[c]) for c in kids]
                else:  # tell apart the mixture components, not only the children
                    groups = [own[m] for c in kids for m in tree.subtree(c) if own[m]]
                rows = [np.asarray(g, dtype=np.int64) for g in groups]
                chosen_by_node[p] = _select(relative, rows, features_per_node)
        selected = np.zeros(len(vocabulary), dtype=bool)
        for chosen in chosen_by_node.values():
            selected[chosen] = True
        keep = np.flatnonzero(selected)
        remap = np.full(len(vocabulary), -1)
        remap[keep] = np.arange(len(keep))

        columns: list[Floats] = []
        bias: list[float] = []
        owners: list[int] = []
        for c in order[1:]:  # node order keeps each node's components adjacent
            p = tree.nodes[c].pcid
            if p not in chosen_by_node:
                continue  # an only child: Pr = 1, nothing to score
            siblings = sum(len(below[k]) for k in tree.children[p])
            if children == "pooled":
                parts = [sorted(below[c])]
            else:
                parts = [own[m] for m in tree.subtree(c) if own[m]]
            chosen = chosen_by_node[p]
            for rows_of_part in parts:
                n_ct = np.asarray(counts[rows_of_part][:, chosen].sum(axis=0)).ravel()
                theta = (n_ct + alpha) / (n_ct.sum() + alpha * len(chosen))
                weight = np.zeros(len(keep))
                weight[remap[chosen]] = np.log(theta)
                columns.append(weight)
                bias.append(float(np.log((len(rows_of_part) + 1) / (siblings + len(parts)))))
                owners.append(column[c])
        terms_by_column = sorted(vocabulary, key=vocabulary.__getitem__)
        params = {
            "features_per_node": features_per_node,
            "alpha": alpha,
            "min_df": min_df,
            "children": children,
            "vocabulary": len(vocabulary),
            "terms": len(keep),
            "nodes": len(order),
            "components": len(owners),
            "selection": "fisher",
        }
        weights = np.stack(columns, axis=1) if columns else np.zeros((len(keep), 0))
        return cls(
            np.asarray(order, dtype=np.int64),
            parents,
            [terms_by_column[j] for j in keep],
            weights,
            np.asarray(bias),
            np.asarray(owners, dtype=np.int64),
            params,
        )

    # --- storage -----------------------------------------------------------------

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            kcids=self.kcids,
            parents=self.parents,
            terms=np.asarray(self.terms, dtype=str),
            weights=self.weights.astype(np.float32),
            bias=self.bias,
            owners=self.owners,
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, params: dict[str, Any]) -> HierarchicalModel:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            return cls(
                arrays["kcids"].astype(np.int64),
                arrays["parents"].astype(np.int64),
                [str(t) for t in arrays["terms"]],
                arrays["weights"],
                arrays["bias"],
                arrays["owners"].astype(np.int64),
                params,
            )


def fisher_scores(relative: sparse.csr_matrix, rows: Sequence[NDArray[np.int64]]) -> Floats:
    """Fisher's discriminant of every term across the classes given by ``rows``."""
    k = len(rows)
    means = np.empty((k, relative.shape[1]))
    within = np.zeros(relative.shape[1])
    for i, r in enumerate(rows):
        block = relative[r]
        mean = np.asarray(block.mean(axis=0)).ravel()
        square = np.asarray(block.multiply(block).mean(axis=0)).ravel()
        means[i] = mean
        within += np.maximum(square - mean * mean, 0.0)
    between = 2 * k * (means * means).sum(axis=0) - 2 * means.sum(axis=0) ** 2
    # A term seen in one short document has near-zero spread; a floor on the spread
    # (the mean over terms) keeps such flukes from topping the list.
    floor = float(within.mean()) if within.size else 0.0
    return np.asarray(between / np.maximum(within + floor, 1e-300))


def _select(
    relative: sparse.csr_matrix, rows: Sequence[NDArray[np.int64]], features: int
) -> NDArray[np.int64]:
    score = fisher_scores(relative, rows)
    present = np.flatnonzero(score > 0)
    if len(present) <= features:
        return present
    best = present[np.argpartition(-score[present], features - 1)[:features]]
    return np.sort(best)
