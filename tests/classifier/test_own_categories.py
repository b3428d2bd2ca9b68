"""The background category that is the user's topic itself is left out of the topic's
taxonomy (``own_categories``): kept, it splits the topic's pages with the topic."""

from __future__ import annotations

from focuscrawl.topics.background import load_background, own_categories, topic_import


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
