"""The background's leaf of general text (``web.General_text``): on a web whose pages
are mostly words of no topic, unlike the background's encyclopaedia excerpts, the
user's ten examples were the only text of that web the classifier knew, and every page
of it looked like the topic."""

from __future__ import annotations

import random

import pytest
from sklearn.metrics import roc_auc_score

from focuscrawl.classifier.model import HierarchicalModel
from focuscrawl.classifier.tokens import document_text
from focuscrawl.errors import TaxonomyError
from focuscrawl.topics.background import GENERAL, ROOT, load_background, topic_import


def test_pages_of_general_words_are_ordered_by_their_topical_words() -> None:
    background = load_background()
    physics = background["Science.Physics"]
    rest = {c: items[5:] for c, items in background.items() if c != "Science.Physics"}
    general = [w for items in rest.values() for _, text in items for w in text.split()]
    rng = random.Random(1)

    def foreign(text: str) -> str:  # nine tenths words of no topic, a tenth the page's own
        words = rng.sample(general, 720) + text.split()[:80]
        rng.shuffle(words)
        return " ".join(words)

    examples = [(title, foreign(text), (), None) for title, text in physics[:10]]
    made = topic_import(rest, "physics", examples)
    good = made.tree.find(f"{ROOT}.physics")
    model = HierarchicalModel.train(
        made.tree.with_good([good]),
        [document_text(e.title, e.text) for e in made.examples],
        [[e.kcid] for e in made.examples],
    )
    on = [foreign(text) for _, text in physics[10:20]]
    others = ("Science.Chemistry", "Geography.Storms", "History.British_History", "Art.Art")
    off = [foreign(text) for c in others for _, text in background[c][:5]]
    log_r = model.score(on + off).log_relevance([good])
    # AUC 0.71 with the leaf; 0.61 without it
    assert roc_auc_score([1] * len(on) + [0] * len(off), log_r) >= 0.68


def test_the_general_leaf_pools_an_excerpt_of_each_category() -> None:
    background = load_background()
    made = topic_import(background, "physics", [("Quarks", "quark gluon", (), None)])
    general = made.tree.find(f"{ROOT}.{GENERAL}")
    pooled = [e for e in made.examples if e.kcid == general]
    assert len(pooled) == len(background)
    assert {e.text for e in pooled} == {items[0][1] for items in background.values()}
    with pytest.raises(TaxonomyError, match="is a background category"):
        topic_import(background, GENERAL, [("Quarks", "quark gluon", (), None)])
