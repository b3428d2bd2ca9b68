"""The evaluation's measures, against brute force."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from focuscrawl.evaluation.metrics import (
    cumulative_share,
    distances_from,
    first_distinct,
    histogram,
    moving_average,
    overlap_curve,
    recall_curve,
    thin,
)
from focuscrawl.evaluation.truth import GroundTruth, under

urls = st.lists(st.sampled_from([f"u{i}" for i in range(12)]), max_size=30, unique=True)


@given(urls, urls)
def test_overlap_curve_is_the_shared_share_of_both_prefixes(a: list[str], b: list[str]) -> None:
    curve = overlap_curve(a, b)
    assert len(curve) == min(len(a), len(b))
    for k, value in enumerate(curve, 1):
        assert value == len(set(a[:k]) & set(b[:k])) / k


@given(st.lists(st.floats(0, 1), max_size=50), st.integers(1, 10))
def test_moving_average_is_the_mean_of_the_trailing_window(values: list[float], w: int) -> None:
    for k, value in enumerate(moving_average(values, w)):
        window = values[max(0, k - w + 1) : k + 1]
        assert abs(value - sum(window) / len(window)) < 1e-9


def test_harvest_and_recall() -> None:
    flags = [True, False, True, True]
    assert cumulative_share(flags) == [1.0, 0.5, 2 / 3, 0.75]
    assert recall_curve(flags, 6) == [1 / 6, 1 / 6, 2 / 6, 3 / 6]


def test_distances_follow_links_breadth_first() -> None:
    edges = [(1, 2), (2, 3), (1, 3), (3, 4), (5, 6)]
    assert distances_from([1], edges, [1, 2, 3, 4, 6]) == {1: 0, 2: 1, 3: 1, 4: 2, 6: None}
    assert histogram([0, 1, 1, None, 2]) == {"0": 1, "1": 2, "2": 1, "none": 1}


def test_thin_keeps_the_last_point_and_first_distinct_keeps_order() -> None:
    values = [float(i) for i in range(1000)]
    points = thin(values, 300)
    assert points[0] == (1, 0.0) and points[-1] == (1000, 999.0) and len(points) <= 301
    assert first_distinct(["a", "b", "a", "c", "b", "d"], 3) == ["a", "b", "c"]


def test_topics_include_their_subtree_only() -> None:
    assert under("s.Science.Biology.Birds", "s.Science.Biology")
    assert not under("s.Science.Biology_extra", "s.Science.Biology")
    truth = GroundTruth({"a": ("s.x.y",), "b": ("s.z",), "c": ("s.x",)})
    assert truth.relevant("s.x") == {"a", "c"}
    assert sorted(truth.seeds("s.x", 2, seed=1)) == ["a", "c"]


def test_sweep_topics_are_second_level_categories_with_enough_pages() -> None:
    from focuscrawl.evaluation.truth import GroundTruth, sweep_topics

    shared = GroundTruth(
        {f"u{i}": (f"subject.{'Science.Biology' if i % 3 else 'Art'}",) for i in range(90)}
        | {"v": ("subject.Science.Biology.Genetics",)}
    )
    # a first component every category shares is not a level; a top-level-only label
    # (subject.Art) is no second-level topic
    assert sweep_topics(shared, 30) == ["subject.Science.Biology"]
    assert sweep_topics(shared, 62) == []  # 60 pages and one of a subtopic
    plain = GroundTruth({f"u{i}": (f"{'Arts' if i % 2 else 'Sci'}.Music.Jazz",) for i in range(40)})
    assert sweep_topics(plain, 20) == ["Arts.Music", "Sci.Music"]
    # a corpus labelled one level below its root: those categories are its topics
    shallow = GroundTruth(
        {f"u{i}": (f"webkb.{'course' if i % 3 else 'faculty'}",) for i in range(90)}
    )
    assert sweep_topics(shallow, 30) == ["webkb.course", "webkb.faculty"]
