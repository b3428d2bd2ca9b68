"""The link learner's features and its estimate formula (focuscrawl.topics.linkmodel)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from focuscrawl.topics.linkmodel import (
    FEATURE_BITS,
    RELEVANCE_BUCKETS,
    LinkModel,
    LinkParts,
    _hash,
    context_text,
    features_of,
    link_text,
    log_sigmoid,
    max_by_target,
)


def _ids(*names: str) -> set[int]:
    return {_hash(n) for n in names}


def test_features_tag_context_words_with_their_offset() -> None:
    parts = LinkParts(
        "Sodium chloride",
        context_text(["far", "common", "salt"], ["is", "an", "ionic", "compound"]),
        "site-13.wiki.example",
        "/wiki/Sodium_chloride%C3%A9",
    )
    features = set(features_of(parts).tolist())
    expected = _ids(
        "a:sodium", "a:chloride",
        "c-1:salt", "c-2:common", "c-3:far",  # nearest first
        "c+1:is", "c+2:an", "c+3:ionic",  # the fourth word is beyond CONTEXT_WORDS
        "h:site-13.wiki.example", "u:wiki", "u:sodium", "u:chlorideé",
    )  # fmt: skip
    assert features == expected
    # a scored source adds its best leaf and its relevance bucket (the parent's R)
    scored = LinkParts(parts.anchor, parts.context, parts.host, parts.path, 7, 0.6)
    assert set(features_of(scored).tolist()) == expected | _ids("s:7", "r:2")
    assert set(features_of(scored, parent=False).tolist()) == expected | _ids("s:7")


def test_a_link_without_words_still_has_its_url() -> None:
    parts = LinkParts(None, None, "h.example", "/")
    assert set(features_of(parts).tolist()) == _ids("h:h.example")
    assert all(0 <= f < 2**FEATURE_BITS for f in features_of(parts))


def test_the_estimate_is_the_log_sigmoid_of_the_summed_weights() -> None:
    weights = np.zeros(2**FEATURE_BITS, dtype=np.float32)
    weights[_hash("a:gene")] = 2.0
    weights[_hash("h:bio.example")] = 0.5
    for bucket, w in enumerate([-3.0, -1.0, 0.5, 1.5]):
        weights[_hash(f"r:{bucket}")] = w
    weights[_hash("s:4")] = -0.25
    model = LinkModel(weights, bias=-1.0, params={"classes": [4, 5]})
    scored = LinkParts("gene", None, "bio.example", "/", src_cid=4, src_relevance=0.9)
    unscored = LinkParts("gene", None, "bio.example", "/")
    values = model.estimates([scored, unscored])
    assert math.isclose(values[0], math.log(1 / (1 + math.exp(-(-1.0 + 2.0 + 0.5 + 1.5 - 0.25)))))
    # unscored: the lowest the parent's terms can add (bucket 0, and class 4 below 0)
    assert math.isclose(model.floor, -3.0 - 0.25)
    assert math.isclose(values[1], float(log_sigmoid(np.asarray(-1.0 + 2.5 - 3.25))))
    # so a check-in estimate never exceeds what any scored parent can give the link
    for bucket in range(RELEVANCE_BUCKETS):
        for cid in (4, 5):
            relevance = (bucket + 0.5) / RELEVANCE_BUCKETS
            parent = LinkParts("gene", None, "bio.example", "/", cid, relevance)
            assert model.estimates([parent])[0] >= values[1]


def test_a_batch_of_links_from_many_sources_is_estimated_link_by_link() -> None:
    """The batch sums each source's terms once per class and bucket: every link still
    gets bias + the weights of its own features_of (+ the floor when its source is not
    scored), whichever sources share the batch, with and without the parent's terms."""
    rng = np.random.default_rng(7)
    weights = rng.normal(size=2**FEATURE_BITS).astype(np.float32)
    sources = [(None, None), (3, None), (3, 0.1), (3, 0.9), (8, 0.1), (None, 0.6)]
    links = [
        LinkParts(
            anchor, context_text(["salt", "of"], ["the", "sea"]), f"h{n % 3}.example", "/a/b", *src
        )
        for n, (anchor, src) in enumerate(
            (a, s) for a in (None, "sea salt", "ionic") for s in sources
        )
    ]
    for parent in (True, False):
        model = LinkModel(weights, bias=0.4, parent=parent, params={"classes": [3, 8]})
        expected = [
            0.4
            + float(weights[features_of(link, parent)].astype(np.float64).sum())
            + (model.floor if link.src_relevance is None else 0.0)
            for link in links
        ]
        got = model.estimates(links)
        # the own features' sum is rounded to float32, the type link.own keeps it in
        assert np.allclose(got, log_sigmoid(np.asarray(expected)), rtol=0, atol=1e-6)
        # alone or in a batch, a link's estimate is the same
        assert all(model.estimates([link])[0] == v for link, v in zip(links, got, strict=True))
        # and the same from its own sum, as the crawler stores it, as from its words
        own = model.own_sums(links)
        assert own.dtype == np.float32
        assert np.array_equal(model.estimates(links, own), got)
        stored = np.asarray([float(v) for v in own], dtype=np.float32)  # through PostgreSQL
        assert np.array_equal(model.estimates(links, stored), got)


def test_a_model_survives_its_bytes() -> None:
    rng = np.random.default_rng(1)
    weights = np.zeros(2**FEATURE_BITS, dtype=np.float32)
    weights[rng.integers(0, 2**FEATURE_BITS, 500)] = rng.normal(size=500)
    model = LinkModel(weights, 0.3, parent=False, params={"classes": [1]})
    again = LinkModel.from_bytes(model.to_bytes(), 9, model.params)
    assert np.array_equal(again.weights, weights) and again.bias == 0.3
    assert again.parent is False and again.model_id == 9
    assert len(model.to_bytes()) < 10_000  # the nonzero weights only


def test_a_url_keeps_the_best_of_its_in_links() -> None:
    oids, best = max_by_target([1, 2, 1, 3], [-2.0, -1.0, -0.5, float("nan")])
    assert dict(zip(oids, best, strict=True)) == {1: -0.5, 2: -1.0}


def test_failed_requests_teach_their_host_and_type_not_the_words_of_links() -> None:
    """Lessons of failed requests (failure_parts) lower a host where most requests fail
    and the file type that fails, against another host and type; the words of links to
    them are untouched, and the bias keeps its place (the failures' own feature takes
    their share)."""
    from focuscrawl.classifier.apprentice import Example, _Lessons, _Sgd
    from focuscrawl.topics.linkmodel import failure_parts

    links = [
        Example(LinkParts(f"owls {n}", None, host, f"/birds/{n}.html", 1, 0.9), label)
        for n in range(40)
        for host, label in (("good.example", 1.0), ("poor.example", 1.0), ("x.example", 0.0))
    ]
    plain = _Sgd()
    plain.partial_fit(_Lessons.of(links, True), seed=0, epochs=5)
    failed = [Example(failure_parts("poor.example", f"/birds/{n}.html"), 0.0) for n in range(80)]
    failed += [Example(failure_parts("good.example", f"/birds/{n}.pdf"), 0.0) for n in range(40)]
    learner = _Sgd()
    learner.partial_fit(_Lessons.of(links + failed, True), seed=0, epochs=5)
    model, before = learner.model(True, [1]), plain.model(True, [1])

    def estimate(m: LinkModel, host: str, path: str, anchor: str = "owls") -> float:
        """The log-odds of a link (its estimate's order, unsaturated)."""
        return float(m.log_odds([features_of(LinkParts(anchor, None, host, path, 1, 0.9))])[0])

    assert (
        estimate(model, "poor.example", "/birds/1.html")
        < estimate(model, "good.example", "/birds/1.html") - 0.5
    )
    assert estimate(model, "good.example", "/birds/1.pdf") < estimate(
        model, "good.example", "/birds/1.html"
    )
    owls = _hash("a:owls")
    assert abs(model.weights[owls] - before.weights[owls]) < 0.25 * abs(before.weights[owls])
    assert abs(model.bias - before.bias) < 0.5


@pytest.mark.parametrize(
    ("anchor", "path", "expected"),
    [
        ("Isaac Newton", "/wiki/Isaac_Newton", "Isaac Newton Isaac Newton"),
        (None, "/wiki/%C3%81ed%C3%A1n_mac_Gabr%C3%A1in", "\u00c1ed\u00e1n mac Gabr\u00e1in"),
        ("read more", "/2019/05/fixing-a-flat-tyre.html?ref=home", "read more fixing a flat tyre"),
        ("Home", "/", "Home"),
        ("Home", "", "Home"),
        (None, None, ""),
        ("Cycling", "/sport/cycling/", "Cycling cycling"),
    ],
)
def test_soft_reads_a_link_as_its_anchor_and_the_slug_of_its_target(
    anchor: str | None, path: str | None, expected: str
) -> None:
    assert link_text(anchor, path) == expected
