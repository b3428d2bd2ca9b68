"""The background category that is the user's topic itself is left out of the topic's
taxonomy (``own_categories``): kept, it splits the topic's pages with the topic."""

from __future__ import annotations

import random

from focuscrawl.topics.background import (
    BackgroundReader,
    load_background,
    own_categories,
    topic_import,
)


def test_the_category_most_examples_fall_in_is_the_topics_own() -> None:
    background = load_background()
    # ten pages of a category as the user's examples, held out of the background
    excerpts = background["Science.Physics"]
    examples = [(title, text, (), None) for title, text in excerpts[:10]]
    held_out = {**background, "Science.Physics": excerpts[10:]}
    assert own_categories(held_out, examples) == ["Science.Physics"]
    made = topic_import(held_out, "physics", examples, leave_out=["Science.Physics"])
    paths = {made.tree.path(k) for k in made.tree.nodes}
    assert "web.physics" in paths and "web.Science.Physics" not in paths
    assert "web.Science.Chemistry" in paths


def test_examples_of_many_categories_leave_nothing_out() -> None:
    background = load_background()
    categories = sorted(background)[::10][:10]  # ten categories apart
    examples = [(*background[c][0], (), None) for c in categories]
    rest = {c: items[1:] for c, items in background.items()}
    assert own_categories(rest, examples) == []
    assert own_categories(rest, []) == []
    # examples with no words of their own have no say (not the largest category's)
    assert own_categories(rest, [("", "", (), None)] * 10) == []


def test_examples_of_general_words_fall_in_their_topic_not_where_general_text_falls() -> None:
    """Pages of a web unlike the background's: each nine tenths words of no topic (drawn
    from the background's whole text) and a tenth its topic's (the start of a held-out
    physics excerpt), as the generated sparse web's pages are. Read whole, they fall where
    general text falls, scattered (at most two in one category); by the words that set
    them apart, in physics."""
    background = load_background()
    physics = background["Science.Physics"]
    held_out = {**background, "Science.Physics": physics[10:]}
    general = [w for items in held_out.values() for _, text in items for w in text.split()]
    rng = random.Random(1)
    examples = []
    for title, text in physics[:10]:
        topical = text.split()[:80]
        words = rng.sample(general, 760) + topical
        rng.shuffle(words)
        examples.append((title, " ".join(words), (), None))
    assert own_categories(held_out, examples) == ["Science.Physics"]


def test_one_reader_of_the_background_serves_topic_after_topic() -> None:
    """An evaluation trains the background's classifier once a sweep: read with it, each
    topic's examples find their own category, as a reader of their own would."""
    background = load_background()
    held = {name: items[10:] for name, items in background.items()}
    reader = BackgroundReader(held)
    for category in ("Science.Physics", "Geography.Storms", "People.USA_Presidents"):
        examples = [(title, text, (), None) for title, text in background[category][:10]]
        assert reader.own_categories(examples) == own_categories(held, examples) == [category]
    assert reader.own_categories([]) == []
    assert (
        BackgroundReader({"Science.Physics": held["Science.Physics"]}).own_categories(
            [(*background["Science.Physics"][0], (), None)]
        )
        == []
    )
