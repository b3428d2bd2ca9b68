"""The hierarchical naive-Bayes model: probabilities, relevance and speed-independent
properties, on the hand-made tree."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import sparse

from focuscrawl.classifier.model import HierarchicalModel, fisher_scores
from focuscrawl.classifier.tokens import (
    TermIndex,
    count_matrix,
    count_terms,
    count_text,
    tokenize,
    vocabulary_of,
)
from focuscrawl.topics.taxonomy import ROOT, Node, Tree
from focuscrawl.topics.taxonomy_import import from_directory
from tests.classifier.topics import LEAVES, page_text, write_tree_dir


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tree, HierarchicalModel]:
    data = from_directory(write_tree_dir(tmp_path_factory.mktemp("tree")))
    texts = [f"{e.title}\n{e.text}" for e in data.examples]
    return data.tree, HierarchicalModel.train(data.tree, texts, [[e.kcid] for e in data.examples])


def _held_out(n: int = 40) -> tuple[list[str], list[str]]:
    rng = random.Random(99)
    leaves = [rng.choice(list(LEAVES)) for _ in range(n)]
    return [page_text(rng, leaf) for leaf in leaves], leaves


def test_tokens_are_lowercase_letter_runs() -> None:
    assert tokenize("The CAT's 2 cats, naïve x Zoë") == ["the", "cat", "cats", "naïve", "zoë"]
    assert tokenize("plain ascii Only") == ["plain", "ascii", "only"]
    vocabulary = vocabulary_of(count_terms(["a bb cc", "bb cc dd", "cc"]), min_df=2)
    assert vocabulary == {"bb": 0, "cc": 1}
    counts = count_matrix(["cc cc bb zz"], vocabulary).toarray()
    assert counts.tolist() == [[1.0, 2.0]]


@given(
    st.text(alphabet=st.sampled_from("aZq x_1-'\n\tÉéK\u212a\u0130ß—\u00a0٣\u0301ﬁ"), max_size=30)
)
def test_counted_terms_are_the_regex_definition_of_a_term(text: str) -> None:
    """The byte-table path for ASCII and the regex path agree with the definition:
    runs of two or more letters of the lower-cased text."""
    expected = re.findall(r"[^\W\d_]{2,}", text.lower())
    assert tokenize(text) == expected
    assert count_text(text) == Counter(expected)


#: terms with letters outside ASCII: an astral one (fraktur a), sigma and final sigma
_TERMS = ["zq", "éé", "kk", "aza", "\U0001d51e\U0001d51e", "ss", "zoë", "\u03c3\u03c2", "ﬁq"]
_VOCABULARY = {term: i for i, term in enumerate(_TERMS)}


@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(
                "aZq x_1-'\n\tÉéK\u212a\u0130ß—\u00a0٣\u0301ﬁ\U0001d51e\U0001f600Σ\u03c3\ud800"
            ),
            max_size=40,
        ),
        max_size=4,
    ),
    st.sampled_from([1, 60]),
)
def test_the_term_index_counts_as_the_counter_does(texts: list[str], repeat: int) -> None:
    """Counting into a vocabulary by hashes (TermIndex) gives the counts of the regex
    definition of a term, looked up in the vocabulary; astral letters, a lone surrogate
    (which the Counter path cannot encode) and letters that lower-case to two included.
    Texts repeated 60 times are long enough to be counted text by text, the others all
    at once."""
    texts = [" ".join([text] * repeat) for text in texts]
    index = TermIndex.of(_VOCABULARY)
    assert index is not None
    expected = np.zeros((len(texts), len(_VOCABULARY)))
    for i, text in enumerate(texts):
        for term, n in Counter(re.findall(r"[^\W\d_]{2,}", text.lower())).items():
            if term in _VOCABULARY:
                expected[i, _VOCABULARY[term]] = n
    assert index.matrix(texts).toarray().tolist() == expected.tolist()


def test_a_vocabulary_of_other_than_terms_has_no_index() -> None:
    assert TermIndex.of({"two words": 0}) is None
    assert TermIndex.of({"Upper": 0}) is None
    assert TermIndex.of({"x": 0}) is None
    assert TermIndex.of({}) is None
    assert TermIndex.of({"ab": 0, "cd": 1}) is not None


def test_children_probabilities_sum_to_their_parent(
    trained: tuple[Tree, HierarchicalModel],
) -> None:
    tree, model = trained
    texts, _ = _held_out()
    logp = model.score(texts).logp
    assert np.allclose(logp[:, model.column[ROOT]], 0.0)
    for parent in tree.internal():
        columns = [model.column[c] for c in tree.children[parent]]
        children = np.exp(logp[:, columns]).sum(axis=1)
        assert np.allclose(children, np.exp(logp[:, model.column[parent]]), atol=1e-12)
        # the conditional Pr[c | d, parent] sums to one
        conditional = np.exp(logp[:, columns] - logp[:, [model.column[parent]]]).sum(axis=1)
        assert np.allclose(conditional, 1.0, atol=1e-12)


def test_best_leaf_finds_the_topic(trained: tuple[Tree, HierarchicalModel]) -> None:
    tree, model = trained
    texts, leaves = _held_out()
    best = model.score(texts).best_leaf()
    right = sum(tree.path(int(k)) == leaf for k, leaf in zip(best, leaves, strict=True))
    assert right / len(leaves) >= 0.95


def test_relevance_counts_each_good_subtree_once(trained: tuple[Tree, HierarchicalModel]) -> None:
    tree, model = trained
    scores = model.score(_held_out()[0])
    sports, cycling = tree.find("sports"), tree.find("sports.cycling")
    marked = Tree.of(
        Node(n.kcid, n.pcid, n.name, n.kcid in (sports, cycling)) for n in tree.nodes.values()
    )
    assert marked.good_frontier() == [sports]
    relevance = scores.log_relevance(marked.good_frontier())
    assert np.allclose(relevance, scores.logp[:, model.column[sports]])
    assert np.all(relevance <= 1e-12)  # R(d) is a probability: never above log 1
    both = scores.log_relevance([sports, tree.find("science")])
    assert np.allclose(both, 0.0, atol=1e-9)  # the two top branches cover everything
    assert np.all(np.isneginf(scores.log_relevance([])))


def test_one_at_a_time_equals_batch_and_storage_round_trips(
    trained: tuple[Tree, HierarchicalModel],
) -> None:
    _, model = trained
    texts, _ = _held_out(10)
    batch = model.score(texts).logp
    single = np.vstack([model.score([t]).logp for t in texts])
    # float32 weights summed in another order: log-probabilities agree to about 1e-2
    assert np.allclose(batch, single, rtol=0, atol=0.1)
    assert (np.argmax(batch, axis=1) == np.argmax(single, axis=1)).all()
    again = HierarchicalModel.from_bytes(model.to_bytes(), model.params)
    assert np.allclose(again.score(texts).logp, batch, atol=1e-6)


def test_terms_counted_beforehand_train_the_same_model(tmp_path: Path) -> None:
    data = from_directory(write_tree_dir(tmp_path / "tree"))
    texts = [f"{e.title}\n{e.text}" for e in data.examples]
    labels = [[e.kcid] for e in data.examples]
    plain = HierarchicalModel.train(data.tree, texts, labels)
    counted = HierarchicalModel.train(data.tree, texts, labels, counted=count_terms(texts))
    assert counted.terms == plain.terms
    assert np.array_equal(counted.weights, plain.weights)
    assert np.array_equal(counted.bias, plain.bias)
    with pytest.raises(ValueError, match="one term count per document"):
        HierarchicalModel.train(data.tree, texts, labels, counted=count_terms(texts[1:]))


def test_pooled_children_train_too(tmp_path: Path) -> None:
    data = from_directory(write_tree_dir(tmp_path / "tree"))
    texts = [e.text for e in data.examples]
    model = HierarchicalModel.train(
        data.tree, texts, [[e.kcid] for e in data.examples], children="pooled"
    )
    assert model.params["components"] == len(data.tree.nodes) - 1
    held, leaves = _held_out()
    best = model.score(held).best_leaf()
    assert sum(data.tree.path(int(k)) == leaf for k, leaf in zip(best, leaves, strict=True)) >= 36


def test_fisher_prefers_the_term_that_separates_classes() -> None:
    # columns: a term only class 0 uses, a term both use alike, a rare fluke
    relative = sparse.csr_matrix(
        np.array([[0.5, 0.5, 0.0], [0.4, 0.6, 0.0], [0.0, 0.5, 0.0], [0.0, 0.6, 0.1]])
    )
    score = fisher_scores(relative, [np.array([0, 1]), np.array([2, 3])])
    assert score[0] > score[2] > score[1] >= 0


def test_cli_defaults_agree_with_the_classifier() -> None:
    from focuscrawl.classifier import model, process
    from focuscrawl.cli import classify

    assert classify.DEFAULT_FEATURES == model.DEFAULT_FEATURES
    assert classify.DEFAULT_ALPHA == model.DEFAULT_ALPHA
    assert classify.DEFAULT_CHILDREN == model.DEFAULT_CHILDREN
    assert classify.BATCH == process.BATCH
