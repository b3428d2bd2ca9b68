"""COPY text for the store: escaping (the fast path must agree with the full
translation), and the out-link lines of a batch."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from focuscrawl.crawler.estimates import CheckInEstimates
from focuscrawl.crawler.store import Claim, Outcome, _escape, _link_lines
from focuscrawl.db.schema import DocState
from focuscrawl.topics.linkmodel import ANCHOR_FLOOR, FEATURE_BITS, LinkModel, log_sigmoid
from focuscrawl.web.urls import oid_of

#: COPY's text format, as PostgreSQL's documentation gives it (and NUL, which text
#: cannot hold, dropped)
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": None})


@given(st.text(alphabet=st.sampled_from("ab é\\\t\n\r\x00N"), max_size=40))
def test_escape_equals_the_full_translation(text: str) -> None:
    assert _escape(text) == text.translate(_ESCAPES)


def test_escape_leaves_plain_text_alone_and_escapes_the_rest() -> None:
    assert _escape("plain café text") == "plain café text"
    assert _escape("a\\b\tc\nd\re\x00f") == "a\\\\b\\tc\\nd\\ref"


def test_links_to_settled_pages_are_staged_with_no_estimate() -> None:
    """A link to a page the store has written as fetched (or failed, or excluded) gets
    no check-in estimate: store_link_docs leaves such URLs out, whatever it says."""
    weights = np.zeros(2**FEATURE_BITS, dtype=np.float32)
    estimates = CheckInEstimates()
    estimates.model = LinkModel(weights, bias=-1.0, model_id=3)
    page = "http://h.example/page"
    fetched, fresh = "http://h.example/fetched", "http://h.example/fresh"
    outcome = Outcome(
        Claim(oid_of(page), page, 1, 0, 0),
        DocState.FETCHED,
        links=[(fetched, "seen", None), (fresh, "new", "a b | c d")],
    )
    lines, targets = _link_lines([outcome], estimates, {oid_of(fetched)})
    rows = [line.split("\t") for line in lines.getvalue().splitlines()]
    assert targets == {oid_of(fetched), oid_of(fresh)}
    # the estimate (soft's: the anchor's factor at its floor), then the sum of the
    # link's own features' weights (link.own)
    estimate = float(log_sigmoid(np.asarray([-1.0]))[0]) + ANCHOR_FLOOR
    assert [(int(r[1]), r[-3], r[-2]) for r in rows] == [
        (oid_of(fetched), "\\N", "\\N"),
        (oid_of(fresh), repr(estimate), "0.0"),
    ]
    unsettled, _ = _link_lines([outcome], estimates)
    assert "\\N" not in [line.split("\t")[-2] for line in unsettled.getvalue().splitlines()]


def test_links_to_urls_the_store_checked_in_are_staged_as_known() -> None:
    """A link to a URL whose row the store has written is staged as known (an
    unestimated check-in leaves it out); the others are not."""
    page = "http://h.example/page"
    old, new = "http://h.example/old", "http://h.example/new"
    outcome = Outcome(
        Claim(oid_of(page), page, 1, 0, 0),
        DocState.FETCHED,
        links=[(old, "old", None), (new, "new", None)],
    )
    lines, _ = _link_lines([outcome], CheckInEstimates(), known={oid_of(old)})
    rows = [line.split("\t") for line in lines.getvalue().splitlines()]
    assert [(int(r[1]), r[-1]) for r in rows] == [(oid_of(old), "t"), (oid_of(new), "f")]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "/a", "/b%5Cc"]),
            st.none() | st.text(alphabet=st.sampled_from("ab é\\\t\n\r\x00N"), max_size=8),
            st.none() | st.text(alphabet=st.sampled_from("ab é\\\tN|"), max_size=8),
        ),
        max_size=6,
    )
)
def test_link_lines_escape_what_needs_it_in_a_batch_of_plain_links(
    links: list[tuple[str, str | None, str | None]],
) -> None:
    """Out-link lines are checked for escapes a batch at once: a batch with one field to
    escape has every field as COPY reads it, and a plain batch its fields as they are."""
    page = "http://h.example/page"
    outcome = Outcome(
        Claim(oid_of(page), page, 1, 0, 0),
        DocState.FETCHED,
        links=[(f"http://h.example/x{n}{path}", a, c) for n, (path, a, c) in enumerate(links)],
    )
    lines, _ = _link_lines([outcome], CheckInEstimates())
    rows = [line.split("\t") for line in lines.getvalue().split("\n")[:-1]]
    assert len(rows) == len(links)
    for row, (n, (path, anchor, context)) in zip(rows, enumerate(links), strict=True):
        assert len(row) == 11  # ... anchor, context, estimate, own, known
        assert row[4:8] == [
            "h.example",
            f"/x{n}{path}",
            "\\N" if anchor is None else anchor.translate(_ESCAPES),
            "\\N" if context is None else context.translate(_ESCAPES),
        ]
